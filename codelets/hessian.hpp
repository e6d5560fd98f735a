// codelets/hessian.hpp — the `hessian` task of docs/design.md §3: one shot's second-order adjoint
// (kernels/cpu/hessian.hpp), the derivative of its vector-Jacobian product along a direction.
#pragma once

#include <starpu.h>

#include "kernels/shot.hpp"

namespace starwave {

/// The handles of one hessian task. `medium` (R) and the shot's `nodes` and `signals` (R) as a
/// forward task's (codelets/forward.hpp); `scatter` (R): the direction's 2δv/v on the padded grid
/// (born_scatter); `inputs` (R) and `outputs` (W): cpu::HessianParts' arrays; `work` (SCRATCH,
/// one per worker): cpu::hessian_work_size() values.
struct HessianHandles {
  starpu_data_handle_t medium, scatter, nodes, signals, inputs, outputs, work;
};

/// Submits hessian with the grid/time layout of the run (pointers are ignored). CPU workers
/// run it (a CUDA codelet is not built yet).
template <typename T>
void insert_hessian(const HessianHandles& h, const ShotProblem<T>& layout, int order);

}  // namespace starwave
