// kernels/cuda/bodies.hpp — what each CUDA thread does, and the order of launches for one
// shot, written once for two executors: the real GPU (kernels/cuda/propagate.cu) and the
// host launch-emulation shim of the tests (tests/cuda_emulation.hpp), which loops over
// blocks and threads standing in for blockIdx/threadIdx (docs/design.md §7). Every body is a thin
// index mapping around the per-point functions of kernels/stencil.hpp, so a CUDA worker
// computes the same bits as the CPU loops (docs/design.md §3).
//
// Launches are fused so that a time step costs few of them (on a 2-D grid each launch
// costs more than its work):
//   forward step m:  1. `side`   — reads u[m] only: the ψ pass over the absorbing-layer
//                                  cells, sample n of the traces, store slot m;
//                    2. `update` — u[m+1] over the grid, the source and the free surface.
//   adjoint step m:  1. `image`  — the imaging of step m over the model cells (and the
//                                  re-creation of u[m−1]), the β pass over the layer cells,
//                                  the store's ring of u[m−1], the layers' imaging;
//                    2. `alpha`  — the α pass over the layer cells (and, with full
//                                  storage, u[m−1] from the store);
//                    3. `mu`     — μ[m] over the grid, the free-surface fold, the
//                                  receivers' adjoint sources and the mirror;
//   after the last step: the layers' imaging folded into the model's edge cells.
// A per-cell sequence of operations is the CPU kernel's: fusing changes which thread does
// what, never the order of the operations on a value.
//
// In 3-D the u and μ launches can stream along z: a thread owns a column (y, x) and updates
// a run of planes top down (ShotProblem::column_run()), a block a 32 × 8 tile of columns.
// An order-8 stencil reads 9 planes of its column; moving down one plane, 8 of them were
// just read by the same thread and its block's neighbours, so they come from the SM's
// cache rather than from memory. By default a run is one plane, one thread per cell
// (longer runs were slower on an H200: docs/gpu.md).
//
// Even fused, a launch costs the host more than the GPU's work on a 2-D grid, so runs of
// 2 × kChunkSteps steps are issued once and replayed (on a GPU: captured as a CUDA graph,
// launched as many times as they fit). A replayed launch cannot be given a new step
// number, so it reads it from a counter in device memory (Step).
#pragma once

#include "kernels/stencil.hpp"
#include "kernels/store_cells.hpp"

namespace starwave::cuda_bodies {

/// Thread-block shape of the 2-D sweeps (columns x × thread rows) and size of the 1-D
/// ones, shared by the GPU and the emulation.
constexpr int kBlockX = 32;
constexpr int kBlockZ = 8;
constexpr int kBlock1D = 256;

/// Steps per replayed chunk; a replay covers two chunks (an even number of steps, so the
/// wavefield buffers come back to where they started).
constexpr int kChunkSteps = 16;

/// The step a launch works on. Launched alone: `offset`. In a replayed chunk: clock[0] +
/// offset; the chunk's last launch (`next` set) then writes the next chunk's first step,
/// m + advance, to `next` (the other of ShotProblem::clocks(), read by the next chunk, so
/// no thread reads what another writes).
struct Step {
  const int* clock = nullptr;
  int* next = nullptr;
  int offset = 0;
  int advance = 0;
  SW_HD int m() const { return clock ? *clock + offset : offset; }
  /// Called by one thread of the chunk's last launch, after it has read m.
  SW_HD void move_on(int m) const {
    if (next) *next = m + advance;
  }
};

/// The trace sample recorded (forward) or injected (adjoint) at internal step m, or −1.
template <typename T>
SW_HD int sample_at(const ShotProblem<T>& p, int m) {
  return m % p.record_every == 0 && m / p.record_every < p.nt ? m / p.record_every : -1;
}

/// The cells of thread row r of a u or μ launch: row y and planes [z0, z1) of column
/// run r / ny (ShotProblem::column_run() planes; in 2-D one plane, so r is the plane).
/// The launch's row count, ShotProblem::column_rows(), is computed once on the host and
/// handed to the bodies (a division per thread, in 2-D per cell, is ~20 instructions).
template <typename T>
SW_HD void column_cells(const ShotProblem<T>& p, int run, int r, int& y, int& z0, int& z1) {
  int k;
  if (p.ny == 1) {
    k = r;
    y = 0;
  } else {
    k = int(unsigned(r) / unsigned(p.ny));
    y = int(unsigned(r) % unsigned(p.ny));
  }
  z0 = k * run;
  z1 = z0 + run < p.nz ? z0 + run : p.nz;
}

/// Model cell t as its cell (z, y, x) (the model region, z slowest, x fastest), with the
/// divisors set on the host (of()).
struct ModelCells {
  int z0 = 0, y0 = 0, x0 = 0, rows = 1;  // rows: the model's rows y
  Divisor by_width, by_rows;
  template <typename T>
  static ModelCells of(const ShotProblem<T>& p) {
    ModelCells c;
    c.z0 = p.mz0();
    c.y0 = p.my0();
    c.x0 = p.mx0();
    c.rows = p.my1() - p.my0();
    c.by_width = Divisor(unsigned(p.mx1() - p.mx0()));
    c.by_rows = Divisor(unsigned(c.rows));
    return c;
  }
  SW_HD void cell(long t, int& z, int& y, int& x) const {
    const unsigned r = by_width.div(unsigned(t));
    x = x0 + int(unsigned(t) - r * by_width.d);
    z = z0 + int(rows == 1 ? r : by_rows.div(r));
    y = y0 + int(rows == 1 ? 0 : by_rows.mod(r));
  }
};

/// The adjoint sources of entry cell `i` (grid offset, in grid row r) at trace sample n,
/// added to `out` in entry order: v²Δt² × (weight × residual) (the CPU kernel's
/// inject_residual).
template <typename T>
SW_HD T add_receiver_sources(const ShotProblem<T>& p, const T* residual, int n, long i, int r, T v, T out) {
  long lo = p.rec_row[r], hi = p.rec_row[r + 1];
  if (lo == hi) return out;
  const long end = hi;
  while (lo < hi) {  // the first receiver cell ≥ i in this row
    const long mid = (lo + hi) / 2;
    if (p.rec_cell[mid] < i)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == end || p.rec_cell[lo] != i) return out;
  for (long k = p.rec_first[lo]; k < p.rec_first[lo + 1]; ++k) {
    const long e = p.rec_order[k];
    out += v * (p.entry_weight[e] * residual[p.entry_receiver[e] * p.nt + n]);
  }
  return out;
}

/// Free surface, after the cell's last update of the step: u = 0 on plane `top`, and each
/// of the `halo` planes below writes its value, negated, to its mirror plane above (docs/design.md
/// §2; stencil::mirror_free_surface, cell by cell).
template <typename T>
SW_HD void mirror_cell(T* out, long plane, int z, int top, int halo) {
  const int k = z - top;
  if (k == 0)
    out[0] = T(0);
  else if (k > 0 && k <= halo)
    out[-2L * k * plane] = -out[0];
}

// ---- the forward ------------------------------------------------------------------------

/// Launch 1 of forward step m, thread t: the ψ pass at layer cell t < npsi, then the trace
/// sample of step m (if it is one) at receiver t − npsi < nrec, then store slot m at element
/// t − npsi − nrec. Everything reads u[m] (a.u) only.
template <int Order, typename T>
SW_HD void side_body(const stencil::StepArgs<T>& a, const ShotProblem<T>& p, const StoreCells& sc, long npsi, Step step,
                     long t) {
  if (t < npsi) {
    int z, y, x;
    a.layer_cell(t, z, y, x);
    stencil::update_psi_point<Order>(a, z, y, x);
    return;
  }
  t -= npsi;
  const int m = step.m();
  if (t < p.nrec) {
    const int n = sample_at(p, m);
    if (n >= 0) p.traces[t * p.nt + n] = p.sample(a.u, int(t));
    return;
  }
  t -= p.nrec;
  T* slot = p.store + sc.offset(m);
  if (sc.compression == pack16::kNone) {
    slot[t] = a.u[sc.cell(t)];
    return;
  }
  // A compressed slot: the largest magnitude (the store-max launch's) in the header, the
  // value in 16 bits at its scale; thread 0 also writes the header's and the tail's zeros
  // and clears the next step's maximum.
  using U = typename pack16::Layout<T>::U;
  unsigned long long* largest = p.store_max();
  const T top = pack16::from_bits<T>(U(largest[m & 1]));
  ShotProblem<T>::slot_words(slot)[t] = pack16::encode(a.u[sc.cell(t)], pack16::scale_exponent(top), sc.compression);
  if (t == 0) {
    largest[(m + 1) & 1] = 0;
    slot[0] = top;
    for (int i = 1; i < ShotProblem<T>::kAlign; ++i) slot[i] = T(0);
    std::uint16_t* words = ShotProblem<T>::slot_words(slot);
    const long n = long(sc.first[sc.n]), end = (sc.stride - ShotProblem<T>::kAlign) * long(sizeof(T)) / 2;
    for (long k = n; k < end; ++k) words[k] = 0;
  }
}

/// The store-max launch of forward step m (compressed store), thread t: the magnitude of
/// slot element t into the step's running maximum (ShotProblem::store_max()). On a GPU a
/// full warp's maximum first, one lane then updates the running one if it exceeds it (one
/// address updated by every thread costs more than the step's stencil; same maximum).
template <typename T>
SW_HD void store_max_body(const T* u, const ShotProblem<T>& p, const StoreCells& sc, Step step, long t) {
  unsigned long long v = pack16::magnitude_bits(u[sc.cell(t)]);
  unsigned long long* at = p.store_max() + (step.m() & 1);
#if defined(__CUDA_ARCH__)
  const unsigned warp = __activemask();
  if (warp == 0xffffffffu) {
    for (int lane = 16; lane > 0; lane >>= 1) v = max(v, __shfl_xor_sync(warp, v, lane));
    if ((threadIdx.x & 31u) != 0) return;
  }
  if (v > __ldcg(at)) atomicMax(at, v);
#else
  if (v > *at) *at = v;  // the host emulation runs one thread at a time
#endif
}

/// Launch 2 of forward step m, thread (row r, x): for each cell of its column run, top
/// down, u[m+1], then the source s[m] if the cell is one of its nodes, then the free
/// surface (whose mirror writes only the guard planes above plane 0, which no thread
/// computes). `Runs` false: runs of one plane (2-D), a kernel without the loop — with it,
/// the loop's hoisted values overflow the 32-register cap and spill (~250 bytes a thread
/// for order 8 in float), which a thread of one cell would pay in full.
template <int Order, bool Runs, typename T>
SW_HD void update_body(const stencil::StepArgs<T>& a, const ShotProblem<T>& p, Step step, int run, int rows, int r,
                       int x) {
  if (r >= rows || x >= a.nx) return;
  int y, z0, z1;
  column_cells(p, run, r, y, z0, z1);
  const int m = step.m();
  auto cell = [&](int z) {
    stencil::update_point<Order>(a, z, y, x);
    const long i = a.cell(z, y, x);
    T* out = a.u_prev_next + i;
    const int j = p.source_at(i, z * p.ny + y);
    if (j >= 0) out[0] += a.vdt2[i] * (p.source_weight[j] * p.source[m]);
    if (p.free_surface) mirror_cell(out, a.plane, z, p.pml_top, p.halo);
  };
  if (Runs) {
    for (int z = z0; z < z1; ++z) cell(z);
  } else {
    cell(z0);
  }
  if (r == 0 && x == 0) step.move_on(m);
}

template <typename T, typename Exec>
void copy_grid(const char* name, const T* from, T* to, std::size_t n, Exec& ex) {
  ex.sweep1d(
      name, [=] SW_LAMBDA(long i) { to[i] = from[i]; }, long(n));
}

/// Forward step `step`'s launches on `p` (u = u[m], up = u[m−1], p.work's layer arrays);
/// `last` (m = nsteps): the side launch alone, which records and saves u[nsteps].
template <int Order, typename T, typename Exec>
void issue_forward_step(const ShotProblem<T>& p, const StoreCells& sc, const T* u, T* up, Exec& e, Step step,
                        bool last) {
  const stencil::StepArgs<T> a = stencil::make_step_args(p, u, up);
  const long npsi = last ? 0 : a.layer_cells();
  const long saved = p.store ? long(sc.first[sc.n]) : 0;
  if (saved > 0 && sc.compression != pack16::kNone)
    e.sweep1d(
        "forward store max", [=] SW_LAMBDA(long t) { store_max_body(a.u, p, sc, step, t); }, saved);
  e.sweep1d(
      "forward side (psi, traces, store)", [=] SW_LAMBDA(long t) { side_body<Order>(a, p, sc, npsi, step, t); },
      npsi + p.nrec + saved);
  if (last) return;
  const int run = p.column_run(), rows = p.column_rows();
  if (run == 1)
    e.sweep2d(
        "forward update", [=] SW_LAMBDA(int r, int x) { update_body<Order, false>(a, p, step, 1, rows, r, x); }, rows,
        p.nx);
  else
    e.sweep2d(
        "forward update", [=] SW_LAMBDA(int r, int x) { update_body<Order, true>(a, p, step, run, rows, r, x); }, rows,
        p.nx);
}

/// A forward state (ShotProblem::checkpoint_size()): u, up, then p.work's layer arrays, copied
/// to `to` (`save`) or from it.
template <typename T, typename Exec>
void copy_state(const ShotProblem<T>& p, T* u, T* up, T* to, bool save, Exec& ex) {
  const std::size_t G = p.grid_size(), L = p.checkpoint_size() - 2 * G;
  const char* name = save ? "forward checkpoint" : "adjoint re-run from a checkpoint";
  copy_grid(name, save ? u : to, save ? to : u, G, ex);
  copy_grid(name, save ? up : to + G, save ? to + G : up, G, ex);
  copy_grid(name, save ? p.cpml_z1() : to + 2 * G, save ? to + 2 * G : p.cpml_z1(), L, ex);
}

/// One shot as a sequence of launches (kernels/cpu/propagate.cpp's forward()). `Exec`
/// provides zero(ptr, count), sweep2d(name, body, rows, nx), sweep1d(name, body, n),
/// replay(name, times, issue) (issue(exec) once, its launches run `times` times) and
/// ok(); bodies are callables of (grid row, x) or (t). Returns ok(). With checkpoints,
/// steps are issued one by one (a checkpoint's copies break the replayed runs).
template <int Order, typename T, typename Exec>
bool run_shot(const ShotProblem<T>& p, Exec& ex) {
  if (!ex.zero(p.work, p.work_size())) return false;
  T* u = p.u0();
  T* up = p.u1();
  int* clocks = p.clocks();
  const StoreCells sc = StoreCells::of(p);
  const bool checkpoints = p.checkpoints && p.intervals() > 1;
  // Step `step`'s launches (the last, m = nsteps, only records and saves u[nsteps]).
  auto issue_step = [&](Exec& e, Step step, bool last) {
    issue_forward_step<Order>(p, sc, u, up, e, step, last);
    if (last) return;
    T* tmp = u;  // u now holds u[m+1]
    u = up;
    up = tmp;
  };
  const int replays = checkpoints ? 0 : p.nsteps / (2 * kChunkSteps);
  if (replays > 0) {
    ex.sweep1d(
        "forward clock", [=] SW_LAMBDA(long) { clocks[0] = 0; }, 1);
    ex.replay("forward steps (replayed)", replays, [&](Exec& e) {
      for (int chunk = 0; chunk < 2; ++chunk)
        for (int j = 0; j < kChunkSteps; ++j)
          issue_step(e, Step{clocks + chunk, j == kChunkSteps - 1 ? clocks + 1 - chunk : nullptr, j, 1}, false);
    });
  }
  if (checkpoints && p.checkpoint_after(0)) copy_state(p, u, up, p.checkpoints, true, ex);
  for (int m = 2 * kChunkSteps * replays; m < p.nsteps && ex.ok(); ++m) {
    issue_step(ex, Step{nullptr, nullptr, m, 0}, false);
    if (checkpoints && p.checkpoint_after(m + 1))
      copy_state(p, u, up, p.checkpoints + std::size_t((m + 2) / p.checkpoint_every - 1) * p.checkpoint_size(), true,
                 ex);
  }
  issue_step(ex, Step{nullptr, nullptr, p.nsteps, 0}, true);
  if (p.final_state) {
    copy_grid("forward final state", u, p.final_state, p.grid_size(), ex);
    copy_grid("forward final state", up, p.final_state + p.grid_size(), p.grid_size(), ex);
  }
  return ex.ok();
}

/// The re-run of interval j of a checkpointed store (kernels/cpu/adjoint.cpp's
/// rerun_interval): from checkpoint j (j = 0: from rest) in `scratch` (work_size() values),
/// store slots jL − 1 … min(N, (j+1)L) (from 0 for j = 0), no traces.
template <int Order, typename T, typename Exec>
void issue_rerun(const ShotProblem<T>& p, T* scratch, int j, Exec& ex) {
  ShotProblem<T> q = p;
  q.work = scratch;
  q.nrec = 0;  // no trace samples
  T* u = q.u0();
  T* up = q.u1();
  const StoreCells sc = StoreCells::of(q);
  const int L = p.checkpoint_every, first = j == 0 ? 0 : j * L - 1,
            last = p.nsteps < (j + 1) * L ? p.nsteps : (j + 1) * L;
  if (j == 0) {
    ex.zero(scratch, p.work_size());
  } else {
    copy_state(q, u, up, p.checkpoints + std::size_t(j - 1) * p.checkpoint_size(), false, ex);
    ex.zero(reinterpret_cast<T*>(q.clocks()), std::size_t(ShotProblem<T>::kAlign));  // the clocks and store maxima
  }
  for (int m = first; m < last && ex.ok(); ++m) {
    issue_forward_step<Order>(q, sc, u, up, ex, Step{nullptr, nullptr, m, 0}, false);
    T* tmp = u;
    u = up;
    up = tmp;
  }
  issue_forward_step<Order>(q, sc, u, up, ex, Step{nullptr, nullptr, last, 0}, true);
}

// ---- the adjoint (kernels/stencil.hpp "the adjoint step"; kernels/cpu/adjoint.cpp) ----

/// The state of one backward step m, pointers at grid cell (0, 0) where they are fields:
/// u = u[m], u_next = u[m+1] (re-created into u[m−1]), mu = μ[m+1] (in a.u), μ[m+2] → μ[m]
/// (in a.u_prev_next).
template <typename T>
struct BackwardStep {
  stencil::StepArgs<T> a;
  const T* u;
  T* u_next;
  T* corr;   // model region, row-major
  T* illum;  // model region, row-major
  const T* residual;
  T inv_dz2, inv_dy2, inv_dx2;  // as the CPU kernel computes them: T(1) / (h·h)
  Step step;
  T* acc;     // the layers' accumulators (ShotProblem::layer_term), grid layout, pointer at cell (0, 0, 0)
  bool full;  // full storage: u[m−1] comes from the store, never re-created
  long model_cells, layer_cells, ring, slot, layers;  // thread ranges of the image launch
  ModelCells cells;
  StoreCells stored;                                            // the store's elements
  SW_HD bool recreate(int m) const { return !full && m >= 1; }  // u_next ← u[m−1]
};

/// Image launch, thread t: model cell t < model_cells (the imaging of step m: correlation,
/// illumination, the re-created u[m−1], the source term, the free surface's zero row);
/// then the β pass at layer cell t − model_cells; then element t − model_cells −
/// layer_cells of the store's ring of u[m−1] (boundary storage, m ≥ 1); then, at store
/// element t − model_cells − layer_cells − ring if it is a layer cell, the layers' imaging
/// term of step m (ShotProblem::layer_term, slots m + 1, m, m − 1).
template <int Order, typename T>
SW_HD void image_body(const BackwardStep<T>& b, const ShotProblem<T>& p, long t) {
  const int m = b.step.m();
  if (t < b.model_cells) {
    const bool recreate = b.recreate(m);
    int z, y, x;
    b.cells.cell(t, z, y, x);
    const long i = p.row_offset(z, y) + x;
    const T* u = b.u + i;
    const T lap = stencil::laplacian<Order>(u, p.plane, b.a.ystep, b.inv_dz2, b.inv_dy2, b.inv_dx2);
    b.corr[t] += b.a.u[i] * lap;
    b.illum[t] += u[0] * u[0];
    const T v = b.a.vdt2[i];
    if (recreate) b.u_next[i] = T(2) * u[0] - b.u_next[i] + v * lap;
    const int j = p.source_at(i, z * p.ny + y);
    if (j >= 0) {
      const T f = p.source_weight[j] * p.source[m];
      b.corr[t] += b.a.u[i] * f;
      if (recreate) b.u_next[i] += v * f;
    }
    if (recreate && p.free_surface && z == p.pml_top) b.u_next[i] = T(0);
    return;
  }
  t -= b.model_cells;
  if (t < b.layer_cells) {
    int z, y, x;
    b.a.layer_cell(t, z, y, x);
    stencil::adjoint_beta_point<Order>(b.a, z, y, x);
    return;
  }
  t -= b.layer_cells;
  if (t < b.ring) {
    if (b.recreate(m)) b.u_next[b.stored.cell(t)] = b.stored.load(p.store, m - 1, t);
    return;
  }
  t -= b.ring;
  int z, y, x;
  b.stored.point(t, z, y, x);
  if (!p.layer_point(z, y, x)) return;
  const long i = long(z) * b.stored.zstep + long(y) * b.stored.ystep + x;
  const StoreCells& sc = b.stored;
  b.acc[i] = ShotProblem<T>::layer_term(b.acc[i], b.a.u[i], sc.load(p.store, m + 1, t), sc.load(p.store, m, t),
                                        m >= 1 ? sc.load(p.store, m - 1, t) : T(0));
}

/// Alpha launch, thread t: the α pass at layer cell t < layer_cells; then (full storage,
/// m ≥ 1) element t − layer_cells of store slot m − 1 into u, for the next step's imaging.
template <int Order, typename T>
SW_HD void alpha_body(const BackwardStep<T>& b, const ShotProblem<T>& p, T* u, long t) {
  if (t < b.layer_cells) {
    int z, y, x;
    b.a.layer_cell(t, z, y, x);
    stencil::adjoint_alpha_point<Order>(b.a, z, y, x);
    return;
  }
  t -= b.layer_cells;
  const int m = b.step.m();
  if (m >= 1) u[b.stored.cell(t)] = b.stored.load(p.store, m - 1, t);
}

/// Mu launch, thread (row r, x): for each cell of its column run, top down, μ[m] (with
/// `update`; without it, only what follows, for μ[N] before the first step), the
/// free-surface fold, the receivers' adjoint sources of step m, the mirror. `Runs` as in
/// update_body().
template <int Order, bool Runs, typename T>
SW_HD void mu_body(const BackwardStep<T>& b, const ShotProblem<T>& p, bool update, int run, int rows, int r, int x) {
  const stencil::StepArgs<T>& a = b.a;
  if (r >= rows || x >= a.nx) return;
  int y, z0, z1;
  column_cells(p, run, r, y, z0, z1);
  const int m = b.step.m();
  const int n = sample_at(p, m);
  auto cell = [&](int z) {
    if (update) {
      stencil::update_adjoint_point<Order>(a, z, y, x);
      if (p.free_surface && z >= 1 && z <= p.halo) stencil::adjoint_fold_point<Order>(a, z, y, x);
    }
    const long i = a.cell(z, y, x);
    T* out = a.u_prev_next + i;
    if (n >= 0) out[0] = add_receiver_sources(p, b.residual, n, i, z * p.ny + y, a.vdt2[i], out[0]);
    if (p.free_surface) mirror_cell(out, a.plane, z, p.pml_top, p.halo);
  };
  if (Runs) {
    for (int z = z0; z < z1; ++z) cell(z);
  } else {
    cell(z0);
  }
  if (r == 0 && x == 0) b.step.move_on(m);
}

/// One shot's adjoint as a sequence of launches, the same operations as cpu::adjoint():
/// `p` as there (store and final state from run_shot, work of adjoint_work_size());
/// `corr` and `illum` (model region, row-major) are added to.
template <int Order, typename T, typename Exec>
bool run_adjoint(const ShotProblem<T>& p, const T* residual, T* corr, T* illum, Exec& ex) {
  if (!ex.zero(p.work, p.adjoint_work_size())) return false;
  const std::size_t G = p.grid_size();
  T* mu_next = p.u0();
  T* mu = p.u1();
  T* u_next = p.work + p.work_size();
  T* u = u_next + G;
  int* clocks = p.clocks();
  copy_grid("adjoint final state", p.final_state, u_next, G, ex);
  copy_grid("adjoint final state", p.final_state + G, u, G, ex);
  const long o = p.origin();
  const int N = p.nsteps;
  const int run = p.column_run(), rows = p.column_rows();

  BackwardStep<T> base;
  base.corr = corr;
  base.illum = illum;
  base.residual = residual;
  base.inv_dz2 = T(1) / (p.dz * p.dz);
  base.inv_dy2 = T(1) / (p.dy * p.dy);
  base.inv_dx2 = T(1) / (p.dx * p.dx);
  base.full = p.storage == ShotProblem<T>::kStoreFull;
  base.model_cells = p.model_cells();
  base.cells = ModelCells::of(p);
  base.stored = StoreCells::of(p);
  base.layer_cells = stencil::make_step_args(p, mu_next, mu).layer_cells();
  base.slot = p.store_step_size();
  base.ring = base.full ? 0 : base.slot;
  base.layers = p.layer_share() ? base.slot : 0;
  base.acc = u + G + o;  // the CPU kernel's correlation grid
  {                      // μ[N]: the adjoint sources of the last sample, mirrored; the last state's illumination
    BackwardStep<T> b = base;
    b.a = stencil::make_step_args(p, mu_next, mu);  // only u_prev_next (μ[N]) and vdt2 are used
    b.step = Step{nullptr, nullptr, N, 0};
    if (run == 1)
      ex.sweep2d(
          "adjoint sources", [=] SW_LAMBDA(int r, int x) { mu_body<Order, false>(b, p, false, 1, rows, r, x); }, rows,
          p.nx);
    else
      ex.sweep2d(
          "adjoint sources", [=] SW_LAMBDA(int r, int x) { mu_body<Order, true>(b, p, false, run, rows, r, x); }, rows,
          p.nx);
    const T* un = u_next + o;
    const ModelCells cells = base.cells;
    ex.sweep1d(
        "adjoint illumination",
        [=] SW_LAMBDA(long t) {
          int z, y, x;
          cells.cell(t, z, y, x);
          const T v = un[p.row_offset(z, y) + x];
          illum[t] += v * v;
        },
        b.model_cells);
  }
  // Backward step `step`'s launches; `recreate`: whether its m ≥ 1 re-creates u[m−1].
  auto issue_step = [&](Exec& e, Step step, bool recreate) {
    BackwardStep<T> b = base;
    b.a = stencil::make_step_args(p, mu, mu_next);
    b.u = u + o;
    b.u_next = u_next + o;
    b.step = step;
    e.sweep1d(
        "adjoint image (image, beta, ring, layers)", [=] SW_LAMBDA(long t) { image_body<Order>(b, p, t); },
        b.model_cells + b.layer_cells + b.ring + b.layers);
    T* uo = u + o;
    e.sweep1d(
        "adjoint alpha", [=] SW_LAMBDA(long t) { alpha_body<Order>(b, p, uo, t); },
        b.layer_cells + (b.full ? p.store_step_size() : 0));
    if (run == 1)
      e.sweep2d(
          "adjoint mu", [=] SW_LAMBDA(int r, int x) { mu_body<Order, false>(b, p, true, 1, rows, r, x); }, rows, p.nx);
    else
      e.sweep2d(
          "adjoint mu", [=] SW_LAMBDA(int r, int x) { mu_body<Order, true>(b, p, true, run, rows, r, x); }, rows, p.nx);
    if (recreate) {
      T* t = u;
      u = u_next;
      u_next = t;
    }
    T* t = mu;
    mu = mu_next;
    mu_next = t;
  };
  // Steps N−1 … 1 all re-create (boundary storage), so they replay alike; step 0 does not.
  // With checkpoints, one by one, each interval's re-run before its first step.
  const int L = p.checkpoint_every, K = p.intervals();
  T* rerun = p.work + p.work_size() + 4 * G;  // a forward's arrays, with checkpoints
  const int replays = K > 1 ? 0 : (N - 1) / (2 * kChunkSteps);
  if (replays > 0) {
    ex.sweep1d(
        "adjoint clock", [=] SW_LAMBDA(long) { clocks[0] = N - 1; }, 1);
    ex.replay("adjoint steps (replayed)", replays, [&](Exec& e) {
      for (int chunk = 0; chunk < 2; ++chunk)
        for (int j = 0; j < kChunkSteps; ++j)
          issue_step(e, Step{clocks + chunk, j == kChunkSteps - 1 ? clocks + 1 - chunk : nullptr, -j, -1}, !base.full);
    });
  }
  for (int m = N - 1 - 2 * kChunkSteps * replays; m >= 0 && ex.ok(); --m) {
    if (K > 1 && (m + 1) % L == 0 && m / L < K - 1) issue_rerun<Order>(p, rerun, m / L, ex);
    issue_step(ex, Step{nullptr, nullptr, m, 0}, base.recreate(m));
  }
  const ModelCells cells = base.cells;
  const T* acc = base.acc;
  if (p.layer_share())
    ex.sweep1d(
        "adjoint edge fold",
        [=] SW_LAMBDA(long t) {
          int z, y, x;
          cells.cell(t, z, y, x);
          T fold;
          if (p.edge_fold(acc, z, y, x, fold)) corr[t] += fold;
        },
        base.model_cells);
  return ex.ok();
}

}  // namespace starwave::cuda_bodies
