// kernels/cpu/propagate.hpp — CPU propagator: the leapfrog/CPML scheme of
// kernels/stencil.hpp stepped over a whole shot.
#pragma once

#include "kernels/shot.hpp"

namespace starwave::cpu {

/// Runs one shot: zeroes the work arrays, steps `nsteps` times, records traces; with
/// p.store / p.final_state set, also keeps the wavefield for the adjoint (kernels/cpu/adjoint.hpp).
template <int Order, typename T>
void forward(const ShotProblem<T>& p);

/// One time step: `u` holds u[n] and `u_prev_next` u[n−1], which becomes u[n+1] (full
/// allocations); the layer arrays are p.work's. The ψ and u passes, source injection of
/// `source_value` (already times δ_h) and the free surface.
template <int Order, typename T>
void step(const ShotProblem<T>& p, const T* u, T* u_prev_next, T source_value);

}  // namespace starwave::cpu
