// kernels/cuda/forward.hpp — the forward's CUDA thread bodies and launch sequence
// (kernels/cuda/bodies.hpp: the whole scheme; kernels/cpu/propagate.cpp: the same operations).
#pragma once

#include "kernels/cuda/launch.hpp"
#include "kernels/cuda/march.hpp"
#include "kernels/shot_state.hpp"

namespace starwave::cuda_bodies {

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

/// Forward step m at cell (z, y, x) after the interior update or with it (`update`):
/// u[m+1] with the layers' corrections, then the source s[m] if the cell is one of its
/// nodes, then the free surface (whose mirror writes only the guard planes above plane 0,
/// which no thread computes).
template <int Order, typename T>
SW_HD void update_cell(const stencil::StepArgs<T>& a, const ShotProblem<T>& p, int m, bool update, int z, int y,
                       int x) {
  if (update) stencil::update_point<Order>(a, z, y, x);
  const long i = a.cell(z, y, x);
  T* out = a.u_prev_next + i;
  const int j = p.source_at(i, z * p.ny + y);
  if (j >= 0) out[0] += a.vdt2[i] * (p.source_weight[j] * p.source[m]);
  if (p.free_surface) mirror_cell(out, a.plane, z, p.pml_top, p.halo);
}

/// Launch 2 of forward step m, thread t: an interior run (InteriorRuns) for t < in.threads,
/// kColumnWindow planes at a time from registers, then the source and the free surface of
/// each of those cells (update_cell); then layer cell t − in.threads, whole.
template <int Order, typename T>
SW_HD void update_body(const stencil::StepArgs<T>& a, const ShotProblem<T>& p, const InteriorRuns& in, Step step,
                       long t) {
  const int m = step.m();
  if (t == 0) step.move_on(m);
  int z, z1, y, x;
  if (t >= in.threads) {
    a.layer_cell(t - in.threads, z, y, x);
    return update_cell<Order>(a, p, m, true, z, y, x);
  }
  in.at(t, z, z1, y, x);
  for (; z + kColumnWindow <= z1; z += kColumnWindow) {
    const long i = a.cell(z, y, x);
    stencil::interior_column<Order, kColumnWindow>(a.u + i, a.u_prev_next + i, a.vdt2 + i, a.plane, a.ystep, a.inv_dz2,
                                                   a.inv_dy2, a.inv_dx2);
    // In 2-D the rows of the run are its planes: most runs have no source node.
    const bool sources = p.ny > 1 || p.source_row[z] != p.source_row[z + kColumnWindow];
    if (sources || (p.free_surface && z <= p.pml_top + p.halo))
      for (int k = 0; k < kColumnWindow; ++k) update_cell<Order>(a, p, m, false, z + k, y, x);
  }
  for (; z < z1; ++z) update_cell<Order>(a, p, m, true, z, y, x);
}

template <typename T, typename Exec>
void copy_grid(const char* name, const T* from, T* to, std::size_t n, Exec& ex) {
  ex.sweep1d(
      name, [=] SW_LAMBDA(long i) { to[i] = from[i]; }, long(n));
}

/// Step `step`'s launches that read u[m] alone (a.u; p.work's layer arrays): the store's
/// maximum (a compressed store), then the side launch (ψ, the trace sample, the store slot);
/// `last` (m = nsteps): no ψ.
template <int Order, typename T, typename Exec>
void issue_side(const stencil::StepArgs<T>& a, const ShotProblem<T>& p, const StoreCells& sc, Exec& e, Step step,
                bool last) {
  const long npsi = last ? 0 : a.layer_cells();
  const long saved = p.store ? long(sc.first[sc.n]) : 0;
  if (saved > 0 && sc.compression != pack16::kNone)
    e.sweep1d(
        "forward store max", [=] SW_LAMBDA(long t) { store_max_body(a.u, p, sc, step, t); }, saved);
  e.sweep1d(
      "forward side (psi, traces, store)", [=] SW_LAMBDA(long t) { side_body<Order>(a, p, sc, npsi, step, t); },
      npsi + p.nrec + saved);
}

/// Forward step `step`'s launches on `p` (u = u[m], up = u[m−1], p.work's layer arrays);
/// `last` (m = nsteps): the side launch alone, which records and saves u[nsteps].
template <int Order, typename T, typename Exec>
void issue_forward_step(const ShotProblem<T>& p, const StoreCells& sc, const T* u, T* up, Exec& e, Step step,
                        bool last) {
  const stencil::StepArgs<T> a = stencil::make_step_args(p, u, up);
  issue_side<Order>(a, p, sc, e, step, last);
  if (last) return;
  if (marches(p)) {  // 3-D: the cells outside the layers in tiles marching down z, then the layer cells
    e.march("forward update (marching)",
            march_inside<Order>(a, a, p.march_planes, step, [=] SW_LAMBDA(int m, int z, int y, int x) {
              update_cell<Order>(a, p, m, false, z, y, x);
            }));
    // A layer cell a thread, whole. Both launches move a replayed chunk's clock on (the same
    // value, read by the next chunk alone): either may be empty.
    e.sweep_wide(
        "forward update (layer cells)",
        [=] SW_LAMBDA(long t) {
          const int m = step.m();
          if (t == 0) step.move_on(m);
          int z, y, x;
          a.layer_cell(t, z, y, x);
          update_cell<Order>(a, p, m, true, z, y, x);
        },
        a.layer_cells());
    return;
  }
  const InteriorRuns in = InteriorRuns::of(a, interior_run(p));
  e.sweep_wide(
      "forward update", [=] SW_LAMBDA(long t) { update_body<Order>(a, p, in, step, t); }, in.threads + a.layer_cells());
}

/// A forward state (ShotProblem::checkpoint_size(); kernels/shot_state.hpp: for_each_run()):
/// u, up and p.work's layer arrays, saved into `to` (save_state), or loaded from `from`
/// (load_state: u, up and the layer arrays zeroed first), a value a thread; `name` names the
/// launches.
template <typename T, typename Exec>
void save_state(const ShotProblem<T>& p, const T* u, const T* up, T* to, const char* name, Exec& ex) {
  T* const uu = const_cast<T*>(u);
  T* const pp = const_cast<T*>(up);
  ex.sweep1d(
      name, [=] SW_LAMBDA(long k) { to[k] = state::state_value(p, uu, pp, std::size_t(k)); },
      long(p.checkpoint_size()));
}
template <typename T, typename Exec>
void load_state(const ShotProblem<T>& p, T* u, T* up, const T* from, const char* name, Exec& ex) {
  ex.zero(u, p.grid_size());
  ex.zero(up, p.grid_size());
  ex.zero(p.cpml_z1(), p.layer_arrays_size());
  ex.sweep1d(
      name, [=] SW_LAMBDA(long k) { state::state_value(p, u, up, std::size_t(k)) = from[k]; },
      long(p.checkpoint_size()));
}

/// Steps lo … lo + 2·kChunkSteps·replays − 1 as one CUDA graph of 2·kChunkSteps steps replayed
/// `replays` times (issue_step(exec, step, false) issues a step's launches), the step numbers
/// read from `clocks` (set to lo first).
template <typename Exec>
void set_clock(int* clocks, int lo, Exec& ex) {
  ex.sweep1d(
      "forward clock", [=] SW_LAMBDA(long) { clocks[0] = lo; }, 1);
}
template <typename Exec, typename Issue>
void replay_steps(int* clocks, int lo, int replays, Issue& issue_step, Exec& ex) {
  if (replays <= 0) return;
  set_clock(clocks, lo, ex);
  ex.replay("forward steps (replayed)", replays, [&](Exec& e) {
    for (int chunk = 0; chunk < 2; ++chunk)
      for (int j = 0; j < kChunkSteps; ++j)
        issue_step(e, Step{clocks + chunk, j == kChunkSteps - 1 ? clocks + 1 - chunk : nullptr, j, 1}, false);
  });
}

/// Steps lo … hi − 1 of one shot as a sequence of launches (kernels/cpu/propagate.cpp's
/// forward_steps(): lo = 0 starts, hi = nsteps ends, the state kept in p.work between
/// calls). `Exec` provides zero(ptr, count), sweep1d(name, body, n) and sweep_wide (the
/// same, more registers a thread), march(name, body) (a March's blocks, kernels/cuda/march.hpp),
/// replay(name, times, issue) (issue(exec) once, its launches run `times` times) and ok();
/// the other bodies are callables of the thread number t.
/// Returns ok(). With checkpoints, steps are issued one by one (a checkpoint's copies break
/// the replayed runs).
template <int Order, typename T, typename Exec>
bool run_shot_steps(const ShotProblem<T>& p, int lo, int hi, Exec& ex) {
  if (lo == 0 && !ex.zero(p.work, p.work_size())) return false;
  // Each step before this call swapped the pair: after lo steps u[lo] is in u1 if lo is odd.
  T* u = lo % 2 == 1 ? p.u1() : p.u0();
  T* up = lo % 2 == 1 ? p.u0() : p.u1();
  if (lo == 0 && p.initial_state) load_state(p, u, up, p.initial_state, "forward initial state", ex);
  int* clocks = p.clocks();
  const StoreCells sc = StoreCells::of(p);
  const bool checkpoints = p.checkpoints && p.reruns();
  // Step `step`'s launches (the last, m = nsteps, only records and saves u[nsteps]).
  auto issue_step = [&](Exec& e, Step step, bool last) {
    issue_forward_step<Order>(p, sc, u, up, e, step, last);
    if (last) return;
    T* tmp = u;  // u now holds u[m+1]
    u = up;
    up = tmp;
  };
  ShotProblem<T> saving = p;  // a split store's edge slots: saved alone, no trace sample
  saving.nrec = 0;
  if (lo > 0 && p.store && p.split_store) {  // the interval's buffer starts with slot lo − 1 (u[lo − 1] in up)
    // The store maxima as a whole run leaves them at step lo − 1: clear, then slot lo − 1's.
    if (!ex.zero(reinterpret_cast<T*>(clocks), std::size_t(ShotProblem<T>::kAlign))) return false;
    issue_forward_step<Order>(saving, sc, up, u, ex, Step{nullptr, nullptr, lo - 1, 0}, true);
  }
  const int replays = checkpoints ? 0 : (hi - lo) / (2 * kChunkSteps);
  replay_steps(clocks, lo, replays, issue_step, ex);
  if (lo == 0 && checkpoints && p.checkpoint_after(0)) save_state(p, u, up, p.checkpoints, "forward checkpoint", ex);
  for (int m = lo + 2 * kChunkSteps * replays; m < hi && ex.ok(); ++m) {
    issue_step(ex, Step{nullptr, nullptr, m, 0}, false);
    if (checkpoints && p.checkpoint_after(m + 1))
      save_state(p, u, up, p.checkpoints + std::size_t((m + 2) / p.checkpoint_every - 1) * p.checkpoint_size(),
                 "forward checkpoint", ex);
  }
  if (hi < p.nsteps) {
    if (p.store && p.split_store)  // and ends with slot hi
      issue_forward_step<Order>(saving, sc, u, up, ex, Step{nullptr, nullptr, hi, 0}, true);
    return ex.ok();
  }
  issue_step(ex, Step{nullptr, nullptr, p.nsteps, 0}, true);
  if (p.final_state) {
    copy_grid("forward final state", u, p.final_state, p.grid_size(), ex);
    copy_grid("forward final state", up, p.final_state + p.grid_size(), p.grid_size(), ex);
  }
  if (p.end_state) save_state(p, u, up, p.end_state, "forward end state", ex);
  return ex.ok();
}

/// One shot, all its steps (cpu::forward()).
template <int Order, typename T, typename Exec>
bool run_shot(const ShotProblem<T>& p, Exec& ex) {
  return run_shot_steps<Order>(p, 0, p.nsteps, ex);
}

/// A batch of shots of one geometry (docs/design.md §3, "Shot batches"): B problems that
/// differ only in their points, signals, traces and work arrays, `shots` on the host and
/// `table` where the launches read them (device memory on a GPU, the same array when
/// emulated); shot b's work arrays at shots[0].work + b × stride (batch_stride()).
template <typename T>
struct ShotBatch {
  const ShotProblem<T>* shots = nullptr;
  const ShotProblem<T>* table = nullptr;
  int size = 0;

  /// The values between two shots' work arrays (ShotProblem::batch_stride()).
  static long stride_of(const ShotProblem<T>& p) { return p.batch_stride(); }
  /// Whether one launch a pass covers every shot: shots that keep their traces, and all or
  /// none a whole store (no checkpoints, not split, no ZFP) and a final state, but no other
  /// state, with 1-D launches (not marching), at one stride. Other batches run their shots
  /// one after another.
  bool together() const {
    if (size < 2) return false;
    const ShotProblem<T>& p = shots[0];
    if (p.checkpoints || p.initial_state || p.end_state || p.split_store || marches(p)) return false;
    if (p.store && pack16::zfp_rate(p.compression) > 0) return false;
    for (int b = 1; b < size; ++b)
      if (shots[b].work != p.work + b * stride_of(p) || !shots[b].store != !p.store ||
          !shots[b].final_state != !p.final_state)
        return false;
    return true;
  }
};

/// Shot b's step arguments in a batch: shot 0's, its work arrays `d` values further on.
template <typename T>
SW_HD stencil::StepArgs<T> shifted(stencil::StepArgs<T> a, long d) {
  a.u += d;
  a.u_prev_next += d;
  a.cpml_z1 += d;
  a.cpml_z2 += d;
  a.cpml_x1 += d;
  a.cpml_x2 += d;
  a.cpml_y1 += d;
  a.cpml_y2 += d;
  return a;
}

/// Step `step`'s launches for every shot of a batch (issue_forward_step()'s, each one launch
/// for all the shots, shot b = blockIdx.y), shot 0's u = u[m] and up = u[m−1]; `most`: the
/// most receivers a shot has (a shot with fewer skips the threads between its last receiver
/// and its store slot's first element).
template <int Order, typename T, typename Exec>
void issue_batch_step(const ShotBatch<T>& batch, const StoreCells& sc, long most, const T* u, T* up, Exec& e, Step step,
                      bool last) {
  const ShotProblem<T>& p = batch.shots[0];
  const ShotProblem<T>* table = batch.table;
  const long stride = ShotBatch<T>::stride_of(p);
  const stencil::StepArgs<T> a = stencil::make_step_args(p, u, up);
  const long npsi = last ? 0 : a.layer_cells();
  const long saved = p.store ? long(sc.first[sc.n]) : 0;
  if (saved > 0 && sc.compression != pack16::kNone)
    e.sweep_shots(
        "forward store max, shots together",
        [=] SW_LAMBDA(int b, long t) { store_max_body(shifted(a, b * stride).u, table[b], sc, step, t); }, saved,
        batch.size);
  e.sweep_shots(
      "forward side (psi, traces, store), shots together",
      [=] SW_LAMBDA(int b, long t) {
        const ShotProblem<T>& q = table[b];
        const long lead = npsi + q.nrec;
        if (t >= lead && t < npsi + most) return;
        side_body<Order>(shifted(a, b * stride), q, sc, npsi, step, t < lead ? t : t - (most - q.nrec));
      },
      npsi + most + saved, batch.size);
  if (last) return;
  const InteriorRuns in = InteriorRuns::of(a, interior_run(p));
  const Step others{step.clock, nullptr, step.offset, step.advance};  // shot 0 moves the clock on
  e.sweep_wide_shots(
      "forward update, shots together",
      [=] SW_LAMBDA(int b, long t) {
        update_body<Order>(shifted(a, b * stride), table[b], in, b == 0 ? step : others, t);
      },
      in.threads + a.layer_cells(), batch.size);
}

/// The forward of every shot of a batch (run_shot()'s launches, each pass one launch for all
/// the shots: `Exec` also provides sweep_shots(name, body, n, shots) and sweep_wide_shots,
/// bodies of (shot, thread)); with stores, each shot's slots in its own store and its final
/// state in its own. Each shot's operations are its own run's, so its bits are too.
/// Returns ok().
template <int Order, typename T, typename Exec>
bool run_batch(const ShotBatch<T>& batch, Exec& ex) {
  if (!batch.together()) {
    for (int b = 0; b < batch.size; ++b)
      if (!run_shot<Order>(batch.shots[b], ex)) return false;
    return ex.ok();
  }
  const ShotProblem<T>& p = batch.shots[0];
  const long stride = ShotBatch<T>::stride_of(p);
  if (!ex.zero(p.work, std::size_t(stride) * std::size_t(batch.size))) return false;
  long most = 0;
  for (int b = 0; b < batch.size; ++b) most = batch.shots[b].nrec > most ? batch.shots[b].nrec : most;
  const StoreCells sc = StoreCells::of(p);
  T* u = p.u0();
  T* up = p.u1();
  auto issue_step = [&](Exec& e, Step step, bool last) {
    issue_batch_step<Order>(batch, sc, most, u, up, e, step, last);
    if (last) return;
    T* tmp = u;
    u = up;
    up = tmp;
  };
  const int replays = p.nsteps / (2 * kChunkSteps);
  replay_steps(p.clocks(), 0, replays, issue_step, ex);
  for (int m = 2 * kChunkSteps * replays; m < p.nsteps && ex.ok(); ++m)
    issue_step(ex, Step{nullptr, nullptr, m, 0}, false);
  issue_step(ex, Step{nullptr, nullptr, p.nsteps, 0}, true);
  for (int b = 0; b < batch.size && p.final_state; ++b) {
    copy_grid("forward final state", u + b * stride, batch.shots[b].final_state, p.grid_size(), ex);
    copy_grid("forward final state", up + b * stride, batch.shots[b].final_state + p.grid_size(), p.grid_size(), ex);
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
    if (p.initial_state) load_state(q, u, up, p.initial_state, "adjoint re-run from the initial state", ex);
  } else {
    load_state(q, u, up, p.checkpoints + std::size_t(j - 1) * p.checkpoint_size(), "adjoint re-run from a checkpoint",
               ex);
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

}  // namespace starwave::cuda_bodies
