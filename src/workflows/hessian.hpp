// src/workflows/hessian.hpp — second derivatives: the vector-Jacobian product of the vector-
// Jacobian product (docs/design.md §2 "Second derivatives"), one hessian task a shot.
#pragma once

#include <cstddef>
#include <vector>

#include "src/model/model.hpp"
#include "src/model/survey.hpp"
#include "src/numerics/propagator.hpp"

namespace starwave {

/// vjp_derivative()'s arrays, in double, every shot's one after the other; a state is dense
/// (kernels/shot_state.hpp), `per_shot` values a shot (shot_states()).
struct VjpDirection {
  // Where vjp was taken: the traces' cotangent c, and (empty: rest, none) the initial states
  // and the final states' cotangent g.
  std::vector<double> cotangent;      // nshots × nrec × nt
  std::vector<double> initial;        // nshots × per_shot
  std::vector<double> end_cotangent;  // nshots × per_shot
  // The direction, a cotangent of vjp's outputs (∂/∂v, ∂/∂s₀, ∂/∂w); empty: zero.
  std::vector<double> dv;         // the model's cells
  std::vector<double> d_initial;  // nshots × per_shot
  std::vector<double> d_wavelet;  // nshots × nt
  std::size_t per_shot = 0;
  bool layers = true;  // J's perturbation reaches the layers (NumericalOptions::perturb_layers; vjp's layers)
  // The result: the cotangents of vjp's inputs.
  std::vector<double> data;               // ∂/∂c, nshots × nrec × nt: the tangent of the traces
  std::vector<double> end;                // ∂/∂g, nshots × per_shot: the tangent of the final states
  std::vector<double> v;                  // ∂/∂v, the model's cells
  std::vector<double> initial_cotangent;  // ∂/∂s₀, nshots × per_shot
  std::vector<double> wavelet;            // ∂/∂w, nshots × nt
};

/// With Φ₂ = ⟨direction, vjp(v, s₀, w; c, g)⟩ (vjp through states: data_vjp with
/// GradientHooks::states), its gradient with respect to each of vjp's inputs: J and the end
/// state's tangent along the direction for c and g (vjp is linear in them), a second-order
/// adjoint for v, s₀ and w (kernels/cpu/hessian.hpp). The survey's wavelets are w; its data are
/// not read. By this process alone, no free surface. Needs a running Runtime.
void vjp_derivative(const Model& m, const Survey& s, const NumericalOptions& o, VjpDirection& io);

}  // namespace starwave
