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
//                                  the store's ring of u[m−1], the layers' imaging (3-D
//                                  marching: the CPML interior's imaging a march of its own);
//                    2. `alpha`  — the α pass over the layer cells (and, with full
//                                  storage, u[m−1] from the store; with a source
//                                  gradient, its value of step m);
//                    3. `mu`     — μ[m] over the grid, the free-surface fold, the
//                                  receivers' adjoint sources and the mirror;
//   after the last step: the layers' imaging folded into the model's edge cells.
// A per-cell sequence of operations is the CPU kernel's: fusing changes which thread does
// what, never the order of the operations on a value.
//
// The u and μ launches stream along z away from the layers: a thread owns a column (y, x)
// of the interior (for μ, out of the rim's reach) and updates a run of planes top down
// (InteriorRuns), reading kColumnWindow + Order planes of its column once into registers
// for kColumnWindow cells — an order-8 stencil reads 9 planes of a column per cell — and
// without the layers' tests; the layer (rim) cells follow in the same launch, one a thread.
//
// Even fused, a launch costs the host more than the GPU's work on a 2-D grid, so runs of
// 2 × kChunkSteps steps are issued once and replayed (on a GPU: captured as a CUDA graph,
// launched as many times as they fit). A replayed launch cannot be given a new step
// number, so it reads it from a counter in device memory (Step).
#pragma once

#include <utility>

#include "kernels/cuda/forward.hpp"

namespace starwave::cuda_bodies {

// ---- the adjoint (kernels/stencil.hpp "the adjoint step"; kernels/cpu/adjoint.cpp) ----

/// The state of one backward step m, pointers at grid cell (0, 0) where they are fields:
/// u = u[m], u_next = u[m+1] (re-created into u[m−1]), mu = μ[m+1] (in a.u), μ[m+2] → μ[m]
/// (in a.u_prev_next).
template <typename T>
struct BackwardStep {
  stencil::StepArgs<T> a;
  const T* u;
  T* u_next;
  T* corr;      // model region, row-major
  T* illum;     // model region, row-major
  T* receiver;  // Σμ² (ShotProblem::receiver_illumination), model region, row-major; or null
  const T* residual;
  T inv_dz2, inv_dy2, inv_dx2;  // as the CPU kernel computes them: T(1) / (h·h)
  Step step;
  T* acc;     // the layers' accumulators (ShotProblem::layer_term), grid layout, pointer at cell (0, 0, 0)
  bool full;  // full storage: u[m−1] comes from the store, never re-created
  long model_cells, layer_cells, ring, slot, layers;  // thread ranges of the image launch
  ModelCells cells;
  // Marching (3-D, ShotProblem::march_planes, not ISIC): the model cells the image launch
  // takes are the frame outside the CPML interior (`frame`: model-region coordinates), the
  // interior's march a launch of its own (issue_image).
  bool framed = false;
  stencil::LayerBox frame{};
  long image_cells = 0;  // the image launch's model cells: model_cells, or the frame's
  StoreCells stored;     // the store's elements
  SW_HD bool recreate(int m) const { return !full && m >= 1; }  // u_next ← u[m−1]
  SW_HD long stored_slot() const { return full ? slot : 0; }    // the alpha launch's store elements
};

/// The imaging of step m at interior cell (z, y, x) (grid offset i, model-region index t)
/// after its correlation with the Laplacian `lap` of u (value `u`, u_next's `prev`, v²Δt² `v`):
/// the re-created u[m−1], the source term, the free surface's zero row.
template <typename T>
SW_HD void image_finish(const BackwardStep<T>& b, const ShotProblem<T>& p, int m, long t, int z, int y, long i, T lap,
                        T u, T prev, T v) {
  const bool recreate = b.recreate(m);
  if (recreate) b.u_next[i] = stencil::leapfrog(u, prev, v, lap);
  const int j = p.source_at(i, z * p.ny + y);
  if (j >= 0) {
    const T f = p.source_weight[j] * p.source[m];
    b.corr[t] += b.a.u[i] * f;
    if (recreate) b.u_next[i] += v * f;
  }
  if (recreate && p.free_surface && z == p.pml_top) b.u_next[i] = T(0);
}

/// Image launch, thread t: model cell t < image_cells (the imaging of step m: correlation,
/// illumination, the re-created u[m−1], the source term, the free surface's zero row; when
/// marching, the frame's cells alone); then the β pass at layer cell t − image_cells; then
/// element t − image_cells − layer_cells of the store's ring of u[m−1] (boundary storage,
/// m ≥ 1); then, at store element t − image_cells − layer_cells − ring if it is a layer cell,
/// the layers' imaging term of step m (ShotProblem::layer_term, slots m + 1, m, m − 1).
template <int Order, bool Framed, typename T>
SW_HD void image_body(const BackwardStep<T>& b, const ShotProblem<T>& p, long t) {
  const int m = b.step.m();
  if (t < b.image_cells) {
    int z, y, x;
    if (Framed) {  // frame cell t: its model-region index (b.framed; a launch of its own code)
      b.frame.layer_cell(t, z, y, x);
      t = (long(z) * b.frame.ny + y) * b.frame.nx + x;
      z += b.cells.z0;
      y += b.cells.y0;
      x += b.cells.x0;
    } else {
      b.cells.cell(t, z, y, x);
    }
    const long i = p.row_offset(z, y) + x;
    const T* u = b.u + i;
    b.illum[t] += u[0] * u[0];
    if (b.receiver) b.receiver[t] += b.a.u[i] * b.a.u[i];
    if (!p.interior_point(z, y, x)) return;  // stored and imaged by its time difference
    const T lap = stencil::laplacian<Order>(u, p.plane, b.a.ystep, b.inv_dz2, b.inv_dy2, b.inv_dx2);
    b.corr[t] += b.a.u[i] * lap;
    if (p.isic)
      b.corr[t] += stencil::gradient_dot<Order>(u, b.a.u + i, p.plane, b.a.ystep, b.inv_dz2, b.inv_dy2, b.inv_dx2);
    return image_finish(b, p, m, t, z, y, i, lap, u[0], b.u_next[i], b.a.vdt2[i]);
  }
  t -= b.image_cells;
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
  if (p.interior_point(z, y, x)) return;
  const long i = long(z) * b.stored.zstep + long(y) * b.stored.ystep + x;
  const StoreCells& sc = b.stored;
  // u[−1] at step 0: the initial state's (its u_prev: kernels/shot_state.hpp), or zero.
  const long s0 = p.initial_state && m == 0 ? p.state_cell(z, y, x) : -1;
  const T before = m >= 1 ? sc.load(p.store, m - 1, t) : s0 >= 0 ? p.initial_state[long(p.state_field()) + s0] : T(0);
  b.acc[i] = ShotProblem<T>::layer_term(b.acc[i], b.a.u[i], sc.load(p.store, m + 1, t), sc.load(p.store, m, t), before);
}

/// Alpha launch, thread t: the α pass at layer cell t < layer_cells; then (full storage,
/// m ≥ 1) element t − layer_cells of store slot m − 1 into u, for the next step's imaging;
/// then, with a source gradient, one thread for step m's (ShotProblem::source_gradient):
/// Σ_j w_j μ[m+1] at the source's nodes, in their order (cpu::adjoint_steps's). Neither pass
/// writes μ[m+1].
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
  if (t < b.stored_slot()) {
    if (m >= 1) u[b.stored.cell(t)] = b.stored.load(p.store, m - 1, t);
    return;
  }
  const T* mu = b.a.u;
  T acc = p.nsrc > 0 ? p.source_weight[0] * mu[p.source_node[0]] : T(0);
  for (int j = 1; j < p.nsrc; ++j) acc += p.source_weight[j] * mu[p.source_node[j]];
  p.source_gradient[m] = acc;
}

/// The alpha launch's threads (alpha_body) for shot `p`.
template <typename T>
long alpha_threads(const BackwardStep<T>& b, const ShotProblem<T>& p) {
  return b.layer_cells + b.stored_slot() + (p.source_gradient ? 1 : 0);
}

/// Backward step m at cell (z, y, x): μ[m] (`update`: the interior update and the rim's
/// corrections), the free-surface fold (`fold`), the receivers' adjoint sources of sample
/// n, the mirror.
template <int Order, typename T>
SW_HD void mu_cell(const BackwardStep<T>& b, const ShotProblem<T>& p, bool update, bool fold, int n, int z, int y,
                   int x) {
  const stencil::StepArgs<T>& a = b.a;
  if (update) stencil::update_adjoint_point<Order>(a, z, y, x);
  if (fold && p.free_surface && z >= 1 && z <= p.halo) stencil::adjoint_fold_point<Order>(a, z, y, x);
  const long i = a.cell(z, y, x);
  T* out = a.u_prev_next + i;
  if (n >= 0) out[0] = add_receiver_sources(p, b.residual, n, i, z * p.ny + y, a.vdt2[i], out[0]);
  if (p.free_surface) mirror_cell(out, a.plane, z, p.pml_top, p.halo);
}

/// Mu launch, thread t: with `update`, μ[m]; without it, only what follows it in mu_cell()
/// (μ[N] before the first step). An interior run (InteriorRuns of the cells out of the
/// rim's reach) for t < in.threads, kColumnWindow planes at a time from registers; then
/// rim cell t − in.threads (`rim`: the layers widened by the stencil's reach), whole.
template <int Order, typename T>
SW_HD void mu_body(const BackwardStep<T>& b, const ShotProblem<T>& p, bool update, const InteriorRuns& in,
                   const stencil::LayerBox& rim, long t) {
  const stencil::StepArgs<T>& a = b.a;
  const int m = b.step.m();
  const int n = sample_at(p, m);
  if (t == 0) b.step.move_on(m);
  int z, z1, y, x;
  if (t >= in.threads) {
    rim.layer_cell(t - in.threads, z, y, x);
    return mu_cell<Order>(b, p, update, update, n, z, y, x);
  }
  in.at(t, z, z1, y, x);
  for (; z + kColumnWindow <= z1; z += kColumnWindow) {
    const long i = a.cell(z, y, x);
    if (update)
      stencil::interior_column<Order, kColumnWindow>(a.u + i, a.u_prev_next + i, a.vdt2 + i, a.plane, a.ystep,
                                                     a.inv_dz2, a.inv_dy2, a.inv_dx2);
    // In 2-D the rows of the run are its planes: most runs have no receiver node.
    const bool sources = n >= 0 && (p.ny > 1 || p.rec_row[z] != p.rec_row[z + kColumnWindow]);
    if (sources || (p.free_surface && z <= p.pml_top + p.halo))
      for (int k = 0; k < kColumnWindow; ++k) mu_cell<Order>(b, p, false, update, n, z + k, y, x);
  }
  for (; z < z1; ++z) mu_cell<Order>(b, p, update, update, n, z, y, x);
}

/// What every backward step of shot `p` shares: the images and the residual, the thread
/// ranges of the image launch, the model's and the store's cells; `acc` the layers'
/// accumulators (the CPU kernel's correlation grid, at cell (0, 0, 0)).
template <typename T>
BackwardStep<T> backward_base(const ShotProblem<T>& p, const T* residual, T* corr, T* illum, T* acc) {
  BackwardStep<T> base;
  base.corr = corr;
  base.illum = illum;
  base.receiver = p.receiver_illumination ? illum + p.model_cells() : nullptr;
  base.residual = residual;
  base.inv_dz2 = T(1) / (p.dz * p.dz);
  base.inv_dy2 = T(1) / (p.dy * p.dy);
  base.inv_dx2 = T(1) / (p.dx * p.dx);
  base.full = p.storage == ShotProblem<T>::kStoreFull;
  base.model_cells = p.model_cells();
  base.cells = ModelCells::of(p);
  base.image_cells = base.model_cells;
  if (marches(p) && !p.isic) {  // the CPML interior marches (issue_image); the frame around it here
    base.framed = true;
    const int z0 = p.mz0(), y0 = p.my0(), x0 = p.mx0();
    base.frame = stencil::LayerBox{p.mz1() - z0, p.my1() - y0, p.mx1() - x0, p.iz0() - z0, p.iz1() - z0,
                                   p.iy0() - y0, p.iy1() - y0, p.ix0() - x0, p.ix1() - x0};
    base.frame.set_divisors();
    base.image_cells = base.frame.layer_cells();
  }
  base.stored = StoreCells::of(p);
  base.layer_cells = stencil::make_step_args(p, p.u0(), p.u1()).layer_cells();
  base.slot = p.store_step_size();
  base.ring = base.full ? 0 : base.slot;
  base.layers = base.slot;
  base.acc = acc;
  return base;
}

/// Before the first backward step: the final state into `u_next` and `u` (u[N], u[N−1]: grid
/// allocations), p.adjoint_start (if set) into μ[N], μ[N+1], α, β; μ[N] (the adjoint sources of
/// the last sample, mirrored: the μ launch without its update, into `mu`) and the last state's
/// illumination.
template <int Order, typename T, typename Exec>
void issue_adjoint_start(const BackwardStep<T>& base, const ShotProblem<T>& p, T* mu_next, T* mu, T* u_next, T* u,
                         const InteriorRuns& in, const stencil::LayerBox& rim, Exec& ex) {
  const std::size_t G = p.grid_size();
  copy_grid("adjoint final state", p.final_state, u_next, G, ex);
  copy_grid("adjoint final state", p.final_state + G, u, G, ex);
  if (p.adjoint_start) load_state(p, mu, mu_next, p.adjoint_start, "adjoint start", ex);
  const T* un = u_next + p.origin();
  BackwardStep<T> b = base;
  b.a = stencil::make_step_args(p, mu_next, mu);  // only u_prev_next (μ[N]) and vdt2 are used
  b.step = Step{nullptr, nullptr, p.nsteps, 0};
  ex.sweep_wide(
      "adjoint sources", [=] SW_LAMBDA(long t) { mu_body<Order>(b, p, false, in, rim, t); },
      in.threads + rim.layer_cells());
  const ModelCells cells = base.cells;
  T* illum = base.illum;
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

/// After the last backward step: the layers' imaging folded into the model's edge cells.
template <typename T, typename Exec>
void issue_edge_fold(const BackwardStep<T>& base, const ShotProblem<T>& p, Exec& ex) {
  const ModelCells cells = base.cells;
  const T* acc = base.acc;
  T* corr = base.corr;
  ex.sweep1d(
      "adjoint edge fold",
      [=] SW_LAMBDA(long t) {
        int z, y, x;
        cells.cell(t, z, y, x);
        T fold;
        if (p.edge_fold(acc, z, y, x, p.layer_share(), fold)) corr[t] += fold;
      },
      base.model_cells);
}

/// `base` at backward step `step`: μ[m+1] in `mu`, μ[m+2] → μ[m] in `mu_next`, u[m] in `u`,
/// u[m+1] (re-created into u[m−1]) in `u_next` (grid allocations).
template <typename T>
BackwardStep<T> at_step(BackwardStep<T> b, const ShotProblem<T>& p, T* mu, T* mu_next, T* u, T* u_next, Step step) {
  b.a = stencil::make_step_args(p, mu, mu_next);
  b.u = u + p.origin();
  b.u_next = u_next + p.origin();
  b.step = step;
  return b;
}

/// Backward step b.step's image launch (image_body); when marching (BackwardStep::framed), the
/// CPML interior's imaging first, its cells marching down z (the u[m] tile and line the
/// Laplacian's; March without the leapfrog), each finished as image_body finishes it.
template <int Order, typename T, typename Exec>
void issue_image(const BackwardStep<T>& b, const ShotProblem<T>& p, Exec& e) {
  if (b.framed) {
    Step still = b.step;  // the μ launch moves the clock on
    still.next = nullptr;
    const ModelCells c = b.cells;
    const long width = b.frame.nx, rows = b.frame.ny;
    auto finish = [=] SW_LAMBDA(int m, int z, int y, int x, T lap, T u, T prev, T v) {
      const long i = p.row_offset(z, y) + x, t = (long(z - c.z0) * rows + (y - c.y0)) * width + (x - c.x0);
      b.illum[t] += u * u;
      if (b.receiver) b.receiver[t] += b.a.u[i] * b.a.u[i];
      b.corr[t] += b.a.u[i] * lap;
      image_finish(b, p, m, t, z, y, i, lap, u, prev, v);
    };
    using Imaging = March<Order, T, decltype(finish), false>;
    e.march("adjoint image (marching)",
            Imaging{MarchGrid::box(p.iz0(), p.iy0(), p.ix0(), p.iz1() - p.iz0(), p.iy1() - p.iy0(), p.ix1() - p.ix0(),
                                   p.ny, p.nx, p.march_planes),
                    b.u, b.u_next, b.a.vdt2, b.a.plane, b.a.stride, b.inv_dz2, b.inv_dy2, b.inv_dx2, still, finish});
  }
  const long threads = b.image_cells + b.layer_cells + b.ring + b.layers;
  if (b.framed)
    e.sweep1d(
        "adjoint image (frame, beta, ring, layers)", [=] SW_LAMBDA(long t) { image_body<Order, true>(b, p, t); },
        threads);
  else
    e.sweep1d(
        "adjoint image (image, beta, ring, layers)", [=] SW_LAMBDA(long t) { image_body<Order, false>(b, p, t); },
        threads);
}

/// Backward step b.step's μ launch: interior runs out of the rim's reach (`in`), then the
/// rim's cells; in 3-D with ShotProblem::march_planes, the cells out of the rim's reach
/// marching down z, then the rim's cells in a launch of their own.
template <int Order, typename T, typename Exec>
void issue_mu(const BackwardStep<T>& b, const ShotProblem<T>& p, const InteriorRuns& in, const stencil::LayerBox& rim,
              Exec& e) {
  if (marches(p)) {
    e.march("adjoint mu (marching)",
            march_inside<Order>(b.a, rim, p.march_planes, b.step, [=] SW_LAMBDA(int m, int z, int y, int x) {
              mu_cell<Order>(b, p, false, true, sample_at(p, m), z, y, x);
            }));
    e.sweep_wide(  // a rim cell a thread, whole; both launches move the clock on (either may be empty)
        "adjoint mu (rim cells)",
        [=] SW_LAMBDA(long t) {
          const int m = b.step.m();
          if (t == 0) b.step.move_on(m);
          int z, y, x;
          rim.layer_cell(t, z, y, x);
          mu_cell<Order>(b, p, true, true, sample_at(p, m), z, y, x);
        },
        rim.layer_cells());
    return;
  }
  e.sweep_wide(
      "adjoint mu", [=] SW_LAMBDA(long t) { mu_body<Order>(b, p, true, in, rim, t); }, in.threads + rim.layer_cells());
}

/// Backward steps top … top − 2·kChunkSteps·replays + 1 as one CUDA graph of 2·kChunkSteps
/// steps replayed `replays` times (issue_step(exec, step, recreate) issues a step's launches),
/// the step numbers read from `clocks` (set to top first).
template <typename Exec>
void set_backward_clock(int* clocks, int top, Exec& ex) {  // no lambda of a function templated on Issue (nvcc)
  ex.sweep1d(
      "adjoint clock", [=] SW_LAMBDA(long) { clocks[0] = top; }, 1);
}
template <typename Exec, typename Issue>
void replay_backward(int* clocks, int top, int replays, bool recreate, Issue& issue_step, Exec& ex) {
  if (replays <= 0) return;
  set_backward_clock(clocks, top, ex);
  ex.replay("adjoint steps (replayed)", replays, [&](Exec& e) {
    for (int chunk = 0; chunk < 2; ++chunk)
      for (int j = 0; j < kChunkSteps; ++j)
        issue_step(e, Step{clocks + chunk, j == kChunkSteps - 1 ? clocks + 1 - chunk : nullptr, -j, -1}, recreate);
  });
}

/// One shot's backward steps hi − 1 … lo as a sequence of launches, the same operations as
/// cpu::adjoint_steps(): `p` as there (store and final state from run_shot, work of
/// adjoint_work_size(), the state kept there between calls; hi = nsteps starts, lo = 0
/// ends); `corr` and `illum` (model region, row-major) are added to.
template <int Order, typename T, typename Exec>
bool run_adjoint_steps(const ShotProblem<T>& p, const T* residual, int hi, int lo, T* corr, T* illum, Exec& ex) {
  const int N = p.nsteps;
  const bool begin = hi == N;
  if (begin && !ex.zero(p.work, p.adjoint_work_size())) return false;
  const std::size_t G = p.grid_size();
  // The steps before this call (N − hi of them) each swapped μ's pair, and re-created u
  // into its pair's other array (the whole store re-creates none).
  const bool odd = (N - hi) % 2 == 1, u_odd = odd && p.storage != ShotProblem<T>::kStoreFull;
  T* mu_next = odd ? p.u1() : p.u0();
  T* mu = odd ? p.u0() : p.u1();
  T* const pair = p.work + p.work_size();
  T* u_next = u_odd ? pair + G : pair;
  T* u = u_odd ? pair : pair + G;
  int* clocks = p.clocks();
  const long o = p.origin();
  const BackwardStep<T> base = backward_base(p, residual, corr, illum, pair + 2 * G + o);
  // The μ launches: interior runs out of the rim's reach, then the rim's cells.
  const stencil::LayerBox rim = stencil::make_step_args(p, mu_next, mu).widened(p.halo);
  const InteriorRuns in = InteriorRuns::of(rim, interior_run(p));
  if (begin) issue_adjoint_start<Order>(base, p, mu_next, mu, u_next, u, in, rim, ex);
  // Backward step `step`'s launches; `recreate`: whether its m ≥ 1 re-creates u[m−1].
  auto issue_step = [&](Exec& e, Step step, bool recreate) {
    const BackwardStep<T> b = at_step(base, p, mu, mu_next, u, u_next, step);
    issue_image<Order>(b, p, e);
    T* uo = u + o;
    e.sweep1d(
        "adjoint alpha (and the source gradient)", [=] SW_LAMBDA(long t) { alpha_body<Order>(b, p, uo, t); },
        alpha_threads(b, p));
    issue_mu<Order>(b, p, in, rim, e);
    if (recreate) std::swap(u, u_next);
    std::swap(mu, mu_next);
  };
  // Steps N−1 … 1 all re-create (boundary storage), so they replay alike; step 0 does not.
  // With checkpoints, one by one, each interval's re-run before its first step.
  const int L = p.checkpoint_every, K = p.intervals();
  T* rerun = p.work + p.work_size() + 4 * G;      // a forward's arrays, with checkpoints
  const int replayable = hi - (lo > 1 ? lo : 1);  // steps hi − 1 … max(lo, 1)
  const int replays = p.reruns() || replayable <= 0 ? 0 : replayable / (2 * kChunkSteps);
  replay_backward(clocks, hi - 1, replays, !base.full, issue_step, ex);
  for (int m = hi - 1 - 2 * kChunkSteps * replays; m >= lo && ex.ok(); --m) {
    if (p.reruns() && (m + 1) % L == 0 && m / L < K - 1) issue_rerun<Order>(p, rerun, m / L, ex);
    issue_step(ex, Step{nullptr, nullptr, m, 0}, base.recreate(m));
  }
  if (lo == 0) issue_edge_fold(base, p, ex);
  if (lo == 0 && p.adjoint_end) save_state(p, mu, mu_next, p.adjoint_end, "adjoint end", ex);  // μ[0], μ[1], α, β
  return ex.ok();
}

/// One shot's adjoint, all its steps (cpu::adjoint()).
template <int Order, typename T, typename Exec>
bool run_adjoint(const ShotProblem<T>& p, const T* residual, T* corr, T* illum, Exec& ex) {
  return run_adjoint_steps<Order>(p, residual, p.nsteps, 0, corr, illum, ex);
}

/// A batch of adjoints of one geometry (docs/design.md §3, "Shot batches"): `shots` on the
/// host, `table` where the launches read them; shot b's work arrays at shots[0].p.work + b ×
/// stride (ShotProblem::adjoint_batch_stride()).
template <typename T>
struct AdjointBatch {
  const AdjointShot<T>* shots = nullptr;
  const AdjointShot<T>* table = nullptr;
  int size = 0;

  static long stride_of(const ShotProblem<T>& p) { return p.adjoint_batch_stride(); }
  /// Whether one launch a pass covers every shot: whole stores without checkpoints or ZFP,
  /// no states or source gradient, 1-D launches (not marching), at one stride.
  bool together() const {
    if (size < 2) return false;
    const ShotProblem<T>& p = shots[0].p;
    if (p.reruns() || p.split_store || p.initial_state || p.adjoint_start || p.adjoint_end || p.source_gradient ||
        marches(p) || pack16::zfp_rate(p.compression) > 0)
      return false;
    for (int b = 1; b < size; ++b)
      if (shots[b].p.work != p.work + b * stride_of(p) || shots[b].p.source_gradient) return false;
    return true;
  }
};

/// Shot k's backward step in a batch: shot 0's, its work arrays `d` values further on, its
/// residual and images its own.
template <typename T>
SW_HD BackwardStep<T> shifted(BackwardStep<T> b, long d, const AdjointShot<T>& s) {
  b.a = shifted(b.a, d);
  b.u += d;
  b.u_next += d;
  b.acc += d;
  b.residual = s.residual;
  b.corr = s.corr;
  b.illum = s.illum;
  if (b.receiver) b.receiver = s.illum + b.model_cells;
  return b;
}

/// Each shot of a batch in turn: the start of its backward sweep (issue_adjoint_start), or
/// (`fold`) its edge fold after the last step.
template <int Order, typename T, typename Exec>
void issue_each_shot(const AdjointBatch<T>& batch, bool fold, const InteriorRuns& in, const stencil::LayerBox& rim,
                     Exec& ex) {
  for (int k = 0; k < batch.size; ++k) {
    const ShotProblem<T>& p = batch.shots[k].p;
    const std::size_t G = p.grid_size();
    T* const pair = p.work + p.work_size();  // u[N] into pair, u[N−1] into pair + G (run_adjoint_steps)
    const BackwardStep<T> base =
        backward_base(p, batch.shots[k].residual, batch.shots[k].corr, batch.shots[k].illum, pair + 2 * G + p.origin());
    if (fold)
      issue_edge_fold(base, p, ex);
    else
      issue_adjoint_start<Order>(base, p, p.u0(), p.u1(), pair, pair + G, in, rim, ex);
  }
}

/// The adjoints of a batch's shots (run_adjoint()'s launches, each pass of a backward step one
/// launch for every shot, shot k = blockIdx.y; the start and the edge fold a shot at a time).
/// Each shot's operations are its own run's, so its bits are too. Returns ok().
template <int Order, typename T, typename Exec>
bool run_adjoint_batch(const AdjointBatch<T>& batch, Exec& ex) {
  if (!batch.together()) {
    for (int k = 0; k < batch.size; ++k) {
      const AdjointShot<T>& s = batch.shots[k];
      if (!run_adjoint<Order>(s.p, s.residual, s.corr, s.illum, ex)) return false;
    }
    return ex.ok();
  }
  const ShotProblem<T>& p = batch.shots[0].p;
  const AdjointShot<T>* table = batch.table;
  const long stride = AdjointBatch<T>::stride_of(p);
  if (!ex.zero(p.work, std::size_t(stride) * std::size_t(batch.size))) return false;
  const std::size_t G = p.grid_size();
  T* mu_next = p.u0();
  T* mu = p.u1();
  T* const pair = p.work + p.work_size();
  T* u_next = pair;
  T* u = pair + G;
  const long o = p.origin();
  const stencil::LayerBox rim = stencil::make_step_args(p, mu_next, mu).widened(p.halo);
  const InteriorRuns in = InteriorRuns::of(rim, interior_run(p));
  issue_each_shot<Order>(batch, false, in, rim, ex);  // its final state, μ[N], its last illumination
  const BackwardStep<T> base =
      backward_base(p, batch.shots[0].residual, batch.shots[0].corr, batch.shots[0].illum, pair + 2 * G + o);
  auto issue_step = [&](Exec& e, Step step, bool recreate) {
    const BackwardStep<T> b = at_step(base, p, mu, mu_next, u, u_next, step);
    e.sweep_shots(
        "adjoint image (image, beta, ring, layers), shots together",
        [=] SW_LAMBDA(int k, long t) { image_body<Order, false>(shifted(b, k * stride, table[k]), table[k].p, t); },
        b.model_cells + b.layer_cells + b.ring + b.layers, batch.size);  // (a batch never marches)
    e.sweep_shots(
        "adjoint alpha, shots together",
        [=] SW_LAMBDA(int k, long t) {
          const BackwardStep<T> c = shifted(b, k * stride, table[k]);
          alpha_body<Order>(c, table[k].p, const_cast<T*>(c.u), t);
        },
        alpha_threads(b, p), batch.size);
    e.sweep_wide_shots(
        "adjoint mu, shots together",
        [=] SW_LAMBDA(int k, long t) {
          BackwardStep<T> c = shifted(b, k * stride, table[k]);
          if (k != 0) c.step.next = nullptr;  // shot 0 moves the clock on
          mu_body<Order>(c, table[k].p, true, in, rim, t);
        },
        in.threads + rim.layer_cells(), batch.size);
    if (recreate) std::swap(u, u_next);
    std::swap(mu, mu_next);
  };
  // run_adjoint_steps()'s order: steps N−1 … 1 replayed, the rest one by one.
  const int N = p.nsteps, replays = (N - 1) / (2 * kChunkSteps);
  replay_backward(p.clocks(), N - 1, replays, !base.full, issue_step, ex);
  for (int m = N - 1 - 2 * kChunkSteps * replays; m >= 0 && ex.ok(); --m)
    issue_step(ex, Step{nullptr, nullptr, m, 0}, base.recreate(m));
  issue_each_shot<Order>(batch, true, in, rim, ex);
  return ex.ok();
}

}  // namespace starwave::cuda_bodies
