// bench/bench_mpi.cpp — shot-parallel scaling over MPI ranks. Not a test: prints numbers.
//
//   bench_mpi gradient [steps] [shots] [reps]
//       One gradient task graph (forward_keep, misfit, adjoint, image per shot, the
//       reduction tree) on docs/design.md §8's reference model, `shots` shots spread across the
//       surface, run `reps` times after one warm-up; every rank takes part, rank 0 prints
//       the median. Run it alone or under mpirun; STARPU_NCPU sets the workers per rank.
//       The observed data are zero (the cost of a gradient does not depend on them), so
//       nothing has to be modeled first.
//   bench_mpi project T_SHOT T_FIXED [ALPHA BETA]
//       The projection of docs/benchmarks.md "MPI": evaluation time against devices
//       from a per-shot gradient time T_SHOT (s, one device), a per-evaluation cost that
//       does not divide among devices T_FIXED (s), and the messages of one evaluation on
//       the reference model (latency ALPHA s, bandwidth BETA bytes/s; defaults 2 µs and
//       12.5 GB/s, a 100 Gb/s InfiniBand link). bench/mpi_scaling.sh runs both.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/reference_case.hpp"
#include "src/runtime/runtime.hpp"
#include "src/workflows/gradient.hpp"

using namespace starwave;

namespace {

double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int gradient(int steps, int shots, int reps) {
  mpi::start_if_launched();
  const Model m = bench::reference_model();
  NumericalOptions o;
  o.order = 8;
  o.pml_width = 20;
  Survey s = bench::reference_survey(m, 1, steps);
  s.sources.clear();
  for (int i = 0; i < shots; ++i)  // evenly across the surface, on grid nodes
    s.sources.push_back({8.0, 4.0 * (10 + (shots > 1 ? (229 * i) / (shots - 1) : 115))});
  s.data.assign(std::size_t(shots) * std::size_t(s.nrec()) * std::size_t(s.nt), 0.0f);
  Runtime rt;
  misfit_gradient(m, s, o);  // warm-up: bus calibration, perf models
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    std::vector<double> together;  // a broadcast as a barrier: every rank starts at once
    mpi::broadcast(together);
    t.push_back(misfit_gradient(m, s, o).seconds);
  }
  if (rt.rank() == 0)
    std::printf("ranks %d  cpu_workers_per_rank %d  cuda_workers_per_rank %d  shots %d  steps %d  median_s %.4f\n",
                rt.size(), rt.cpu_workers(), rt.cuda_workers(), shots, steps, median(t));
  return 0;
}

/// Evaluation time on `devices` devices for `shots` shots: the shots in rounds, the fixed
/// part, and the messages on the critical path after the last shot — the reduction tree's
/// cross-device levels (log2 devices transfers of [∂Φ/∂v | illumination], float32) and,
/// for an inversion, the next model sent from rank 0 (float64, a binomial broadcast).
double evaluation(int devices, int shots, double t_shot, double t_fixed, double alpha, double beta, double cells) {
  const double rounds = std::ceil(double(shots) / devices);
  const double hops = devices > 1 ? std::ceil(std::log2(double(devices))) : 0;
  const double reduce = hops * (alpha + 2 * cells * 4 / beta), model = hops * (alpha + cells * 8 / beta);
  return t_fixed + rounds * t_shot + reduce + model;
}

int project(double t_shot, double t_fixed, double alpha, double beta) {
  const Model m = bench::reference_model();
  const double cells = double(m.nz) * m.nx;
  std::printf(
      "projection: per-shot gradient %.4f s on one device, %.4f s per evaluation that does not divide,\n"
      "messages: [dJ/dv | illumination] %.2f MB and the model %.2f MB per hop, %.1f us + %.1f GB/s\n",
      t_shot, t_fixed, 2 * cells * 4 / 1e6, cells * 8 / 1e6, alpha * 1e6, beta / 1e9);
  std::printf("%8s %8s %12s %10s %12s\n", "devices", "shots", "eval s", "speedup", "efficiency");
  for (int shots : {8, 64, 512}) {
    const double one = evaluation(1, shots, t_shot, t_fixed, alpha, beta, cells);
    for (int d : {1, 2, 4, 8, 64, 512}) {
      if (d > shots) continue;
      const double t = evaluation(d, shots, t_shot, t_fixed, alpha, beta, cells);
      std::printf("%8d %8d %12.4f %10.2f %12.3f\n", d, shots, t, one / t, one / t / d);
    }
  }
  // Where the parts that do not divide start to matter: 8 shots (SWEEP's Marmousi batch)
  // on 2, 4 and 8 devices for shorter per-shot times (a GPU's; none measured yet).
  std::printf("8 shots per evaluation, speedup on 2 / 4 / 8 devices, for other per-shot times:\n");
  for (double t : {t_shot, 0.3, 0.1, 0.03, 0.01}) {
    const double one = evaluation(1, 8, t, t_fixed, alpha, beta, cells);
    std::printf("  %.3f s per shot: %5.2f %5.2f %5.2f\n", t, one / evaluation(2, 8, t, t_fixed, alpha, beta, cells),
                one / evaluation(4, 8, t, t_fixed, alpha, beta, cells),
                one / evaluation(8, 8, t, t_fixed, alpha, beta, cells));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && !std::strcmp(argv[1], "gradient"))
    return gradient(argc > 2 ? std::atoi(argv[2]) : 2000, argc > 3 ? std::atoi(argv[3]) : 8,
                    argc > 4 ? std::atoi(argv[4]) : 3);
  if (argc >= 4 && !std::strcmp(argv[1], "project"))
    return project(std::atof(argv[2]), std::atof(argv[3]), argc > 4 ? std::atof(argv[4]) : 2e-6,
                   argc > 5 ? std::atof(argv[5]) : 12.5e9);
  std::fprintf(stderr,
               "usage: bench_mpi gradient [steps] [shots] [reps] | bench_mpi project T_SHOT T_FIXED [ALPHA BETA]\n");
  return 2;
}
