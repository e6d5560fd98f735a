// kernels/cpu/adjoint.hpp — CPU adjoint of the propagator (docs/design.md §2, §3): the transpose of
// the forward step run backwards in time, with the forward wavefield re-created from the
// store the forward wrote, and the imaging correlations.
#pragma once

#include "kernels/shot.hpp"

namespace starwave::cpu {

/// One adjoint step (kernels/stencil.hpp, "the adjoint step"): `mu` holds μ[n+1] and
/// `mu_prev_next` μ[n+2], which becomes μ[n]; the layer arrays of p.work hold α and β.
/// No adjoint source and no free-surface mirror (adjoint() adds both).
template <int Order, typename T>
void adjoint_step(const ShotProblem<T>& p, const T* mu, T* mu_prev_next);

/// Runs one shot's adjoint after cpu::forward() has filled p.store and p.final_state.
/// Back-propagates `residual` (nrec × nt; sample n is the adjoint source at internal step
/// n·record_every) and accumulates over the model region (row-major, mz1−mz0 rows of
/// mx1−mx0 values):
///   correlation  += Σ_m μ[m+1] (L u[m] + f[m])   (∂Φ/∂v = 2/v × this: see codelets/adjoint.cpp)
///   illumination += Σ_m u[m]²                      (m = 0 … nsteps)
/// With L u + f = (u[m+1] − 2u[m] + u[m−1]) / (v²Δt²), the correlation is the zero-lag
/// correlation of λ with the forward field's second time difference. `source_adjoint`
/// (nsteps values, optional; else p.source_gradient) receives μ[m+1] at the source: the
/// transpose of the map from source samples to traces. p.adjoint_start, p.adjoint_end and
/// p.initial_state: kernels/shot.hpp. p.work must hold adjoint_work_size() values.
template <int Order, typename T>
void adjoint(const ShotProblem<T>& p, const T* residual, T* correlation, T* illumination, T* source_adjoint);

/// adjoint() in pieces: backward steps hi − 1 … lo (nsteps ≥ hi ≥ lo ≥ 0), the state kept
/// in p.work between calls. hi = nsteps starts it (μ[N], the illumination of u[N]; the sums
/// start from correlation's and illumination's values, which the pieces between leave alone);
/// lo = 0 ends it (the sums written back). Pieces [N, a), [a, b), …, [c, 0), in that order,
/// give adjoint()'s bits, and each sum the CUDA launches' (cuda::adjoint_steps adds at every step).
template <int Order, typename T>
void adjoint_steps(const ShotProblem<T>& p, const T* residual, int hi, int lo, T* correlation, T* illumination,
                   T* source_adjoint);

/// Writes store slot m (u: grid allocation holding u[m]); forward() calls it every step.
template <typename T>
void save_slot(const ShotProblem<T>& p, const T* u, int m);

}  // namespace starwave::cpu
