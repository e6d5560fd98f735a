// kernels/cpu/propagate.hpp — CPU propagator: the leapfrog/CPML scheme of
// kernels/stencil.hpp stepped over a whole shot.
#pragma once

#include <cstring>

#include "kernels/live_rows.hpp"
#include "kernels/shot.hpp"
#include "kernels/shot_state.hpp"

namespace starwave::cpu {

/// Runs one shot: zeroes the work arrays, steps `nsteps` times, records traces; with
/// p.store / p.final_state set, also keeps the wavefield for the adjoint (kernels/cpu/adjoint.hpp).
template <int Order, typename T>
void forward(const ShotProblem<T>& p);

/// forward() in pieces: steps lo … hi − 1 (0 ≤ lo ≤ hi ≤ nsteps), the state kept in p.work
/// between calls. lo = 0 starts it (zeroes the work arrays, records sample 0, slot 0);
/// hi = nsteps ends it (the final state). Pieces [0, a), [a, b), …, [c, N), in that order,
/// give forward()'s bits. A piece with lo > 0 finds the rows to sweep from the kept state
/// (kernels/live_rows.hpp): p.work must hold zeros everywhere else (guard cells, the layer
/// arrays' rim and guard planes), as the pieces before leave it.
template <int Order, typename T>
void forward_steps(const ShotProblem<T>& p, int lo, int hi);

/// One time step: `u` holds u[n] and `u_prev_next` u[n−1], which becomes u[n+1] (full
/// allocations); the layer arrays are p.work's. The ψ and u passes, source injection of
/// `source_value` (already times δ_h) and the free surface.
template <int Order, typename T>
void step(const ShotProblem<T>& p, const T* u, T* u_prev_next, T source_value);

/// One step of u (problem p, as step()) and of the scattered field δu (problem `d`: the same
/// grid, medium and points, its own layer arrays), in one sweep: δu[m+1] is δu's own step
/// without a source plus scatter · (u[m+1] − 2u[m] + u[m−1]) at every cell (scatter: grid
/// layout), then the free surface's mirror of both. `row`: nx values of scratch. The sweep
/// covers `rows` (live::all_rows(p), or live::swept() of the rows where either field's
/// state is not all +0: kernels/live_rows.hpp).
template <int Order, typename T>
void born_step(const ShotProblem<T>& p, const T* u, T* u_prev_next, const ShotProblem<T>& d, const T* du,
               T* du_prev_next, const T* scatter, T source_value, T* row, const live::Rows& rows);

/// A state in a checkpoint's layout (ShotProblem::checkpoint_size(); kernels/shot_state.hpp:
/// for_each_run()) from u and up (grid allocations) and the layer arrays of p.work, saved into
/// `to`; or loaded from `from`, everything it does not hold zeroed first.
/// Internal linkage: each instruction-set level's copy stays its own (tests/check_levels.sh).
template <typename T>
static void save_state(const ShotProblem<T>& p, const T* u, const T* up, T* to) {
  state::for_each_run(p, [&](std::size_t k, int array, long offset, int n, int, int, int, int) {
    std::memcpy(to + k, state::array_base(p, const_cast<T*>(u), const_cast<T*>(up), array) + offset,
                std::size_t(n) * sizeof(T));
  });
}
template <typename T>
static void load_state(const ShotProblem<T>& p, T* u, T* up, const T* from) {
  std::memset(u, 0, p.grid_size() * sizeof(T));
  std::memset(up, 0, p.grid_size() * sizeof(T));
  std::memset(p.cpml_z1(), 0, p.layer_arrays_size() * sizeof(T));
  state::for_each_run(p, [&](std::size_t k, int array, long offset, int n, int, int, int, int) {
    std::memcpy(state::array_base(p, u, up, array) + offset, from + k, std::size_t(n) * sizeof(T));
  });
}
/// Keeps the state after step m (p.checkpoint_after(m)): u = u[m], up = u[m−1].
template <typename T>
static void save_checkpoint(const ShotProblem<T>& p, const T* u, const T* up, int m) {
  save_state(p, u, up, p.checkpoints + std::size_t((m + 1) / p.checkpoint_every - 1) * p.checkpoint_size());
}

/// What a forward keeps of u for the adjoint, the same for forward_steps and born_steps:
/// at the start of steps lo … (u = u[lo], up = u[lo−1]), after step m − 1 (u = u[m],
/// up = u[m−1]) and after the last step. `slot(field, m)` saves store slot m (the caller's
/// level's save_slot). Internal linkage, as save_checkpoint.
template <typename T, typename Slot>
static void keep_start(const ShotProblem<T>& p, const T* u, const T* up, int lo, Slot&& slot) {
  if (lo == 0) {
    if (p.store) slot(u, 0);
    if (p.checkpoints && p.checkpoint_after(0)) save_checkpoint(p, u, up, 0);
  } else if (p.store && p.split_store) {  // an interval's buffer starts with the state it starts from
    slot(up, lo - 1);
    slot(u, lo);
  }
}
template <typename T, typename Slot>
static void keep_step(const ShotProblem<T>& p, const T* u, const T* up, int m, Slot&& slot) {
  if (p.store) slot(u, m);
  if (p.checkpoints && p.checkpoint_after(m)) save_checkpoint(p, u, up, m);
}
template <typename T>
static void keep_final(const ShotProblem<T>& p, const T* u, const T* up, int hi) {
  if (hi != p.nsteps) return;
  if (p.final_state) {
    std::memcpy(p.final_state, u, p.grid_size() * sizeof(T));
    std::memcpy(p.final_state + p.grid_size(), up, p.grid_size() * sizeof(T));
  }
  if (p.end_state) save_state(p, u, up, p.end_state);  // the whole state
}
/// A start from p.initial_state (if set) instead of rest, after the work arrays are zeroed:
/// u[0] into `u`, u[−1] into `up`, the layer arrays into p.work's.
template <typename T>
static void load_initial_state(const ShotProblem<T>& p, T* u, T* up) {
  if (p.initial_state) load_state(p, u, up, p.initial_state);
}

}  // namespace starwave::cpu
