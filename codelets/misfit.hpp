// codelets/misfit.hpp — the `misfit` task of docs/design.md §3: one shot's adjoint source and
// data misfit (½ Σ w (d_syn − d_obs)², or a trace misfit; or, for RTM, the data to migrate as adjoint source).
#pragma once

#include <starpu.h>

#include "kernels/misfit_image.hpp"
#include "kernels/misfit_trace.hpp"

namespace starwave {

/// `synthetic`: nrec × nt traces of the run's precision (R); `observed`: float32 (R);
/// `residual`: adjoint source, run's precision (W); `misfit`: one double (W).
/// `mode`: what the task makes of the data (imaging::Mode, kernels/misfit_image.hpp).
struct MisfitHandles {
  starpu_data_handle_t synthetic, observed, residual, misfit;
  starpu_data_handle_t scratch;  // imaging::misfit_scratch_size doubles (SCRATCH): the CUDA block sums,
                                 // the trace misfits' sums and workspaces
  starpu_data_handle_t weights;  // nrec floats (R): each trace's weight (kernels/misfit_image.hpp TraceWeights),
                                 // then, `windowed`, nrec × 3: each trace's time window
};

/// `misfit`: what a gradient's data misfit compares (kernels/misfit_trace.hpp); kL2 for every
/// other mode. `windowed`: h.weights holds the traces' time windows too.
void insert_misfit(const MisfitHandles& h, imaging::Mode mode, imaging::Misfit misfit = imaging::Misfit::kL2,
                   bool windowed = false);

}  // namespace starwave
