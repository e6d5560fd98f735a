// codelets/image.hpp — the `image` and `reduce` tasks of docs/design.md §3: a shot's raw
// correlation made into its contribution (∂Φ/∂v or RTM image, with its illumination), and
// the sum of two contributions.
#pragma once

#include <starpu.h>

#include "kernels/misfit_image.hpp"

namespace starwave {

/// `correlation`, `illumination`: the adjoint's outputs (R); `velocity`: the model region
/// in the run's precision (R); `contribution`: [gradient or image | illumination] (W).
struct ImageHandles {
  starpu_data_handle_t correlation, illumination, velocity, contribution;
};

/// `mode`: what the task makes of the data (imaging::Mode, kernels/misfit_image.hpp). `done(arg)`, when
/// given, runs once the task has (a StarPU callback: keep it short, no StarPU calls).
void insert_image(const ImageHandles& h, imaging::Mode mode, void (*done)(void*) = nullptr, void* arg = nullptr);

/// `sum` += `part` (two contributions).
void insert_reduce(starpu_data_handle_t sum, starpu_data_handle_t part);

}  // namespace starwave
