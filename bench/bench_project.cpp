// bench/bench_project.cpp — one gradient of docs/design.md §8's reference case (2-D, or 3-D with
// --3d) with `shots` shots spread over the surface, on the workers StarPU's environment gives
// (STARPU_NCPU, STARPU_NCUDA), through the task graph `starwave gradient` runs; prints its
// seconds. Built against StarPU-SimGrid (-DSTARWAVE_SIMGRID=ON) it is the simulated run that
// bench/project.py times on machines of 1 … N GPUs: its tasks have the sizes (so the
// performance-model footprints) of bench_gradient's GPU rows, whose calibration is kept in
// bench/calibration/. With --write DIR it writes the case's model and a data file of its survey
// instead (DIR/model.h5, DIR/data.h5; the traces zeros: a simulation does not look at them), for
// `starwave plan gradient … --gpus` to project with that calibration. Not a test.
//   usage: bench_project [--3d] [--write DIR] [steps] [shots]
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "bench/reference_case.hpp"
#include "src/io/hdf5.hpp"
#include "src/runtime/runtime.hpp"
#include "src/workflows/gradient.hpp"
#include "src/workflows/modeling.hpp"

#ifdef STARWAVE_SIMGRID
#include <starpu_simgrid_wrap.h>
#endif

using namespace starwave;

namespace {

int run(int argc, char** argv) {
  const bool three_d = bench::take_flag(argc, argv, "--3d");
  const std::string write = bench::take_option(argc, argv, "--write");
  const int steps = argc > 1 ? std::atoi(argv[1]) : three_d ? 100 : 2000;
  const int shots = argc > 2 ? std::atoi(argv[2]) : 32;
  if (steps < 1 || shots < 1) {
    std::fprintf(stderr, "usage: bench_project [--3d] [--write DIR] [steps ≥ 1] [shots ≥ 1]\n");
    return 2;
  }
  const Model m = bench::reference_model(three_d);
  NumericalOptions o;
  o.order = 8;
  o.pml_width = 20;
  Survey s = bench::spread_survey(m, shots, steps);
  if (!write.empty()) {
    s.data.assign(std::size_t(shots) * std::size_t(s.nrec()) * std::size_t(s.nt), 0.0f);
    io::write_model(write + "/model.h5", m);
    io::write_survey(write + "/data.h5", s, &m);
    std::printf("wrote %s/model.h5 and %s/data.h5\n", write.c_str(), write.c_str());
    return 0;
  }
  Runtime rt;
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
