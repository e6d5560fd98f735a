// codelets/misfit.hpp — the `misfit` task of docs/design.md §3: one shot's adjoint source and
// ½ Σ w (d_syn − d_obs)² (or, for RTM, the data to migrate as adjoint source).
#pragma once

#include <starpu.h>

#include "kernels/misfit_image.hpp"

namespace starwave {

/// `synthetic`: nrec × nt traces of the run's precision (R); `observed`: float32 (R);
/// `residual`: adjoint source, run's precision (W); `misfit`: one double (W).
/// `mode`: what the task makes of the data (imaging::Mode, kernels/misfit_image.hpp).
struct MisfitHandles {
  starpu_data_handle_t synthetic, observed, residual, misfit;
  starpu_data_handle_t scratch;  // imaging::kMisfitBlocks doubles (SCRATCH): the CUDA block sums
  starpu_data_handle_t weights;  // nrec floats (R): each trace's weight (kernels/misfit_image.hpp TraceWeights)
};

void insert_misfit(const MisfitHandles& h, imaging::Mode mode);

}  // namespace starwave
