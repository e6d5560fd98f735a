// kernels/cpu/hessian.hpp — the derivative of one shot's vector-Jacobian product (the second-order
// adjoint, docs/design.md §2 "Second derivatives"): what differentiating a gradient again needs
// (torch's double backward, Hessian-vector products). Pure: no StarPU, no I/O.
#pragma once

#include <cstddef>

#include "kernels/shot.hpp"

namespace starwave::cpu {

/// The buffers of one shot's second-order adjoint, as offsets into two arrays (laid out for a
/// ShotProblem `p`; C = p.checkpoint_size(), a state in a checkpoint's layout).
/// Inputs: the direction's source samples δf (nsteps, already times δ_h, as p.source), the
/// initial state s₀ (C, zeros: rest), the direction's δs₀ (C), the end state's cotangent as an adjoint start (C,
/// kernels/shot_state.hpp), the traces' cotangent c (nrec × nt). Outputs: J's traces δd (nrec × nt) and end state δs_N
/// (C), two model-region sums (row-major, the model's cells each; below), the sweep's end (C, as
/// ShotProblem::adjoint_end) and the source samples' cotangent (nsteps).
struct HessianParts {
  std::size_t d_source, initial, d_initial, adjoint_start, cotangent, inputs;
  std::size_t d_traces, d_end, image, adjoint_end, source_gradient, outputs;
  template <typename T>
  explicit HessianParts(const ShotProblem<T>& p) {
    const std::size_t C = p.checkpoint_size(), n = std::size_t(p.nsteps), traces = std::size_t(p.nrec) * p.nt;
    d_source = 0;
    initial = d_source + n;
    d_initial = initial + C;
    adjoint_start = d_initial + C;
    cotangent = adjoint_start + C;
    inputs = cotangent + traces;
    d_traces = 0;
    d_end = d_traces + traces;
    image = d_end + C;
    adjoint_end = image + 2 * std::size_t(p.model_cells());
    source_gradient = adjoint_end + C;
    outputs = source_gradient + n;
  }
};

/// Values of hessian()'s scratch: two fields' work arrays, a row, three grids and the dense
/// wavefields u and δu of every step (2 (nsteps + 2) grids).
template <typename T>
std::size_t hessian_work_size(const ShotProblem<T>& p) {
  return 2 * p.work_size() + std::size_t(p.stride) + (3 + 2 * (std::size_t(p.nsteps) + 2)) * p.grid_size();
}

/// Φ₂ = ⟨c, δd⟩ + ⟨g_N, δs_N⟩ for the tangent (δd, δs_N) of the forward (v, f, s₀) ↦ (d, s_N) along
/// (δv, δf, δs₀) — by the pair's identity, ⟨(δv, δf, δs₀), vjp(v, f, s₀; c, g_N)⟩ — and its gradient
/// with respect to v, f and s₀: the born step (kernels/cpu/born.hpp) carries u and δu forward
/// (δu from δs₀, with δf injected), every step kept; the backward sweep carries μ_δ = V λ_δ (the
/// adjoint of δu: vjp's own, from c and g_N) and μ_u = V λ_u (the adjoint of u), driven by δu's
/// secondary source s · D²u (s = `scatter` = 2δv/v, D²u[m] = u[m+1] − 2u[m] + u[m−1]): μ_u[k] +=
/// s (μ_δ[k] − 2μ_δ[k+1] + μ_δ[k+2]), the terms of the steps that exist. Writes δd, δs_N, the
/// sums A = Σ_m (μ_u[m+1] D²u[m] + μ_δ[m+1] (D²δu[m] − s D²u[m])) / V and B = s Σ_m μ_δ[m+1] D²u[m] / V
/// (each layer cell's added to the model cell whose velocity it copies), so that
/// ∂Φ₂/∂v = (2A − B)/v (a layer cell's s is 0 where J leaves the layers unperturbed); μ_u's end in `adjoint_end`
/// (u[−1]'s share of the first secondary source folded in: kernels/shot_state.hpp's initial_cotangent_from gives
/// ∂Φ₂/∂s₀) and Σ_j w_j μ_u[m+1] at the source in `source_gradient` (∂Φ₂/∂f[m]). No free surface. `work`:
/// hessian_work_size() values.
template <int Order, typename T>
void hessian(const ShotProblem<T>& p, const T* scatter, const T* inputs, T* outputs, T* work);

}  // namespace starwave::cpu
