// bench/bench_project.cpp — one gradient of docs/design.md §8's reference case (2-D, or 3-D with
// --3d) with `shots` shots spread over the surface, on the workers StarPU's environment gives
// (STARPU_NCPU, STARPU_NCUDA), through the task graph `starwave gradient` runs; prints its
// seconds. Built against StarPU-SimGrid (-DSTARWAVE_SIMGRID=ON) it is the simulated run that
// bench/project.py times on machines of 1 … N GPUs: its tasks have the sizes (so the
// performance-model footprints) of bench_gradient's GPU rows, whose calibration is kept in
// bench/calibration/. Not a test.
//   usage: bench_project [--3d] [steps] [shots]
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "bench/reference_case.hpp"
#include "src/runtime/runtime.hpp"
#include "src/workflows/imaging.hpp"
#include "src/workflows/modeling.hpp"

#ifdef STARWAVE_SIMGRID
#include <starpu_simgrid_wrap.h>
#endif

using namespace starwave;

namespace {

int run(int argc, char** argv) {
  const bool three_d = bench::take_flag(argc, argv, "--3d");
  const int steps = argc > 1 ? std::atoi(argv[1]) : three_d ? 100 : 2000;
  const int shots = argc > 2 ? std::atoi(argv[2]) : 32;
  if (steps < 1 || shots < 1) {
    std::fprintf(stderr, "usage: bench_project [--3d] [steps ≥ 1] [shots ≥ 1]\n");
    return 2;
  }
  const Model m = bench::reference_model(three_d);
  NumericalOptions o;
  o.order = 8;
  o.pml_width = 20;
  Runtime rt;
  Survey s = bench::spread_survey(m, shots, steps);
  s.data = model_shots(m, s, o, nullptr);  // the observed data (in a simulation: zeros)
  const ImagingResult g = misfit_gradient(m, s, o);
  std::printf("gradient of %d shots, %d steps, %s, on %d CPU + %d CUDA workers (%d GPUs): %.6f s\n", shots, steps,
              m.shape_text().c_str(), rt.cpu_workers(), rt.cuda_workers(), rt.gpus(), g.seconds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_project: %s\n", e.what());
    return 1;
  }
}
