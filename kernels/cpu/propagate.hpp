// kernels/cpu/propagate.hpp — CPU propagator: the leapfrog/CPML scheme of
// kernels/stencil.hpp stepped over a whole shot.
#pragma once

#include "kernels/shot.hpp"

namespace starwave::cpu {

/// Runs one shot: zeroes the work arrays, steps `nsteps` times, records traces.
template <int Order, typename T>
void forward(const ShotProblem<T>& p);

/// One time step on prepared arrays (exposed for tests): the ψ pass then the u pass over
/// every region, source injection of `source_value` (already times δ_h), free surface.
template <int Order, typename T>
void step(const ShotProblem<T>& p, const T* u, T* u_prev_next, T* psi_z, T* psi_x, T* zeta_z, T* zeta_x,
          T source_value);

}  // namespace starwave::cpu
