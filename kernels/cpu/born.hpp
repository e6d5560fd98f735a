// kernels/cpu/born.hpp — the Born (linearised) modelling J of one shot on a CPU: the
// background field u and the scattered field δu stepped together, δu driven by the model
// perturbation times what v²Δt² multiplies in u's own update (docs/design.md §2: the exact
// linearisation of the discrete forward, whose transpose is the adjoint's imaging).
#pragma once

#include "kernels/shot.hpp"

namespace starwave::cpu {

/// J δv for one shot. `p` steps the background u (its work arrays and source; its traces,
/// when p.traces is set, get u's samples); `d` the scattered field δu on the same grid,
/// medium and points, with work arrays of its own (d.traces gets the Born traces). `scatter`
/// (grid layout, as v²Δt²): 2δv/v at every cell of the padded grid, a layer cell holding
/// the value of the model cell whose velocity it copies (born_scatter, src/numerics).
/// `scratch`: one row (stride values). Each step m: u[m+1] by the forward step; δu[m+1] by the
/// same step without a source, plus the secondary source scatter · (u[m+1] − 2u[m] + u[m−1])
/// at every cell — all that v²Δt² multiplies in u's update: v²Δt² (L u[m] + f[m]) in the
/// model, the CPML terms too in the layers — then the free surface's mirror, and δu[m+1]
/// sampled as the forward samples u. One sweep a step does both fields (born_step).
/// With p.store, p.checkpoints or p.final_state set, u's wavefield is kept for the adjoint
/// as cpu::forward keeps it (the same slots, checkpoints and final state, bit for bit:
/// u's update is the forward's), so one task gives J δv and what Jᵀ of it needs.
template <int Order, typename T>
void born(const ShotProblem<T>& p, const ShotProblem<T>& d, const T* scatter, T* scratch);

/// born() in pieces, as forward_steps() is forward(): steps lo … hi − 1, both fields' state
/// kept in p.work and d.work between calls.
template <int Order, typename T>
void born_steps(const ShotProblem<T>& p, const ShotProblem<T>& d, const T* scatter, T* scratch, int lo, int hi);

}  // namespace starwave::cpu
