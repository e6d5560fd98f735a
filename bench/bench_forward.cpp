// bench/bench_forward.cpp — forward throughput on DESIGN §8's reference case, beside the
// STREAM-triad bandwidth measured in the same run. Not a test: prints a table.
//
// Reference case: 600 × 250 cells at 4 m, v 1500 → 4000 m/s linear in depth, order 8,
// PML 20, float32, 2000 steps, 25 Hz Ricker; 1 and 4 shots; 1 and 2 CPU workers.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench/reference_case.hpp"
#include "src/runtime.hpp"
#include "src/survey.hpp"
#include "src/workflows/modeling.hpp"

using namespace starwave;

namespace {

using bench::now;

/// STREAM triad a = b + s·c on arrays far larger than the caches; best of 5, in GB/s.
double stream_triad() {
  const std::size_t n = std::size_t(1) << 25;  // 3 × 128 MiB of float32… in double: 3 × 256 MiB
  std::vector<double> a(n, 0.0), b(n, 1.0), c(n, 2.0);
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const double t0 = now();
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
    const double t = now() - t0;
    best = std::max(best, 3.0 * n * sizeof(double) / t / 1e9);
  }
  if (a[n / 2] != 7.0) std::abort();
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
  const Model m = bench::reference_model();
  NumericalOptions o;
  o.order = 8;
  o.pml_width = 20;
  const double dt = bench::reference_survey(m, 1, steps).dt;

  const double triad = stream_triad();
  std::printf("STREAM triad (1 core): %.1f GB/s\n", triad);
  std::printf("reference case: %d × %d cells + PML 20, order 8, float32, %d steps, dt = %.3g s\n", m.nz, m.nx, steps,
              dt);
  std::printf("%8s %8s %12s %14s %16s\n", "workers", "shots", "median s", "G cells/s", "bytes/cell at triad");
  for (int workers : {1, 2}) {
    RuntimeOptions ro;
    ro.ncpus = workers;
    ro.ncuda = 0;
    Runtime rt(ro);
    for (int shots : {1, 4}) {
      const Survey s = bench::reference_survey(m, shots, steps);
      std::vector<double> times;
      double updates = 0;
      model_shots(m, s, o, nullptr);  // warm-up (and perf-model calibration)
      for (int r = 0; r < reps; ++r) {
        ModelingReport rep;
        model_shots(m, s, o, &rep);
        times.push_back(rep.seconds);
        updates = rep.cell_updates;
      }
      std::sort(times.begin(), times.end());
      const double t = times[times.size() / 2];
      const double rate = updates / t;
      std::printf("%8d %8d %12.3f %14.3f %16.1f\n", workers, shots, t, rate / 1e9, triad * 1e9 * workers / rate);
    }
  }
  return 0;
}
