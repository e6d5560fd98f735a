// codelets/step.hpp — the optimiser's `step` task: the last task of an evaluation's graph
// (forward → misfit → adjoint → image per shot, the reduce tree, then step). It reads the
// reduced contribution and every shot's misfit, and runs the optimiser's update on a CPU
// worker, writing the next model; the host waits on the model handle only.
#pragma once

#include <starpu.h>

#include "codelets/distribution.hpp"

#include <functional>
#include <vector>

namespace starwave {

/// What the step task runs: (∂J/∂v, illumination, J, model to update in place). It runs on
/// a worker thread; whatever it changes besides `model` must not be touched by the
/// submitting thread before the model handle has been acquired.
using StepFunction = std::function<void(const std::vector<double>& gradient, const std::vector<double>& illumination,
                                        double misfit, std::vector<double>& model)>;

/// `contribution`: the reduction's root, [∂J/∂v | illumination] in the run's precision
/// (R); `misfits`: one double per shot (R), summed in shot order; `model`: float64 model
/// region (RW). `fn` must outlive the task.
void insert_step(starpu_data_handle_t contribution, const std::vector<graph::Data>& misfits, starpu_data_handle_t model,
                 const StepFunction* fn);

}  // namespace starwave
