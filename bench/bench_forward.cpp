// bench/bench_forward.cpp — forward throughput on docs/design.md §8's reference case, beside the
// STREAM-triad bandwidth measured in the same run. Not a test: prints a table.
//
// Reference case: 600 × 250 cells at 4 m, v 1500 → 4000 m/s linear in depth, order 8,
// PML 20, float32, 2000 steps, 25 Hz Ricker; 1 and 4 shots; 1 and 2 CPU workers. With
// --3d, the 3-D one (160³ at 10 m, 1000 steps by default; 1 and 2 shots). Where a
// GPU is present, also: 1 and 32 shots on it with 1 … 8 CUDA workers (concurrent shots)
// beside its copy bandwidth, and 32 shots on every CPU core and the GPU against the GPU
// alone.   usage: bench_forward [--3d] [steps] [reps] [gpu-shots] [--gpu-only [WORKERS,…]]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/gpu.hpp"
#include "bench/reference_case.hpp"
#include "kernels/cpu/levels.hpp"
#include "src/model/survey.hpp"
#include "src/runtime/runtime.hpp"
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

void cpu_rows(const Model& m, const NumericalOptions& o, int steps, int reps) {
  const double dt = bench::reference_survey_any(m, 1, steps).dt;
  const double triad = stream_triad();
  std::printf("STREAM triad (1 core): %.1f GB/s; CPU kernels: %s\n", triad, Runtime::cpu_kernels().c_str());
  std::printf("reference case: %s cells + PML 20, order 8, float32, %d steps, dt = %.3g s\n", m.shape_text().c_str(),
              steps, dt);
  std::printf("%8s %8s %12s %14s %16s\n", "workers", "shots", "median s", "G cells/s", "bytes/cell at triad");
  for (int workers : {1, 2}) {
    RuntimeOptions ro;
    ro.ncpus = workers;
    ro.ncuda = 0;
    Runtime rt(ro);
    for (int shots : {1, m.three_d() ? 2 : 4}) {
      const Survey s = bench::reference_survey_any(m, shots, steps);
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
}

void gpu_rows(const Model& m, const NumericalOptions& o, int steps, int reps, int many,
              const std::vector<int>& per_gpu_list) {
  const std::string gpu = bench::gpu_name();
  if (gpu.empty()) {
    std::printf("no GPU: no CUDA rows\n");
    return;
  }
  const double copy = bench::gpu_copy_bandwidth();
  std::printf("GPU: %s, copy bandwidth %.0f GB/s (device to device, bytes read + written)\n", gpu.c_str(), copy);
  std::printf("%12s %8s %12s %14s %22s\n", "CUDA workers", "shots", "median s", "G cells/s", "copy roofline (16 B)");
  // Median of `runs` timed runs after `warmups` untimed ones, in a fresh runtime.
  auto time_shots = [&](const RuntimeOptions& ro, int shots, int warmups, int runs, double* rate) {
    Runtime rt(ro);
    const Survey s = bench::spread_survey(m, shots, steps);
    for (int w = 0; w < warmups; ++w) model_shots(m, s, o, nullptr);  // perf models, device memory
    std::vector<double> times;
    for (int r = 0; r < runs; ++r) {
      ModelingReport rep;
      model_shots(m, s, o, &rep);
      times.push_back(rep.seconds);
      if (rate) *rate = rep.cell_updates;
    }
    std::sort(times.begin(), times.end());
    if (rate) *rate /= times[times.size() / 2];
    return times[times.size() / 2];
  };
  std::vector<std::pair<int, int>> rows{{1, 1}};
  for (int w : per_gpu_list) rows.push_back({w, many});
  for (const auto& [per_gpu, shots] : rows) {
    RuntimeOptions ro;
    ro.ncpus = 0;
    ro.ncuda = 1;
    ro.workers_per_gpu = per_gpu;
    double rate = 0;
    const double t = time_shots(ro, shots, 1, reps, &rate);
    std::printf("%12d %8d %12.4f %14.2f %21.0f%%\n", per_gpu, shots, t, rate / 1e9, 100 * rate * 16 / (copy * 1e9));
  }
  // Every core and the GPU, the dmda scheduler's perf models calibrated first.
  RuntimeOptions mixed;
  mixed.ncuda = 1;
  mixed.scheduler = "dmda";
  {
    setenv("STARPU_CALIBRATE", "1", 1);
    Runtime rt(mixed);
    const Survey s = bench::spread_survey(m, many, steps);
    for (int w = 0; w < 3; ++w) model_shots(m, s, o, nullptr);
    unsetenv("STARPU_CALIBRATE");
  }
  // The GPU alone and every core + the GPU, alternately, each in a fresh runtime with the
  // same perf models: one warm-up and one timed run per runtime, medians of `reps`.
  RuntimeOptions alone;
  alone.ncpus = 0;
  alone.ncuda = 1;
  alone.scheduler = "dmda";
  std::vector<double> ta, tb;
  for (int r = 0; r < reps; ++r) {
    ta.push_back(time_shots(alone, many, 1, 1, nullptr));
    tb.push_back(time_shots(mixed, many, 1, 1, nullptr));
  }
  std::sort(ta.begin(), ta.end());
  std::sort(tb.begin(), tb.end());
  const double a = ta[ta.size() / 2], b = tb[tb.size() / 2];
  std::printf(
      "%d shots, alternately (%d CUDA workers, dmda, calibrated), median of %d: the GPU alone %.4f s, every CPU "
      "core + the GPU %.4f s: %.2f× the GPU alone's speed (its time over theirs)\n",
      many, kDefaultWorkersPerGpu, reps, a, b, a / b);
}

int main(int argc, char** argv) {
  if (const std::string why = cpu::choose_level_from_environment(); !why.empty()) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 2;
  }
  const bool three_d = bench::take_flag(argc, argv, "--3d");
  const int steps = argc > 1 ? std::atoi(argv[1]) : three_d ? 1000 : 2000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
  const Model m = bench::reference_model(three_d);
  NumericalOptions o;
  o.order = 8;
  o.pml_width = 20;
  const bool gpu_only = argc > 4 && std::string(argv[4]) == "--gpu-only";
  std::vector<int> per_gpu_list{1, 2, 4, 8};
  if (gpu_only && argc > 5) {
    per_gpu_list.clear();
    for (const char* c = argv[5]; *c;) {
      per_gpu_list.push_back(std::atoi(c));
      while (*c && *c != ',') ++c;
      if (*c) ++c;
    }
  }
  if (!gpu_only) cpu_rows(m, o, steps, reps);
  gpu_rows(m, o, steps, reps, argc > 3 ? std::atoi(argv[3]) : 32, per_gpu_list);
  return 0;
}
