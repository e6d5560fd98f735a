// bench/bench_gradient.cpp — the cost of a gradient against a forward run on docs/design.md §8's
// reference case: first one shot on one core through the CPU kernels (no StarPU): forward
// alone; forward writing the store; adjoint (re-creation + back-propagation + imaging);
// then `starwave gradient`'s task graph against `starwave model`'s through StarPU, 1 and 4
// shots, 1 and 2 workers. Also the memory a shot keeps between its forward and adjoint,
// per storage strategy. Where a GPU is present: the same graphs on it, 1 and 32 shots, 1
// and the default number of CUDA workers (concurrent shots), and on every CPU core and
// the GPU together. With --3d, docs/design.md §8's 3-D case (160³ at 10 m, 1000 steps by default;
// 1 and 2 shots). With --checkpoints, also the kernels with checkpoints at the memory plan's
// interval (the least memory), and every graph with them. With --compression, only the kernels
// with the store in T, IEEE half, bfloat16 and ZFP (--store-compression): times, store bytes and the
// gradient's relative error against T's, for the residual of a model with a slow anomaly.
// Not a test: prints tables.
//   usage: bench_gradient [--3d] [--shell] [--kernels] [--checkpoints|--compression] [steps] [reps] [gpu-shots]
//   [--gpu-only]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "bench/gpu.hpp"
#include "bench/reference_case.hpp"
#include "kernels/cpu/adjoint.hpp"
#include "kernels/cpu/levels.hpp"
#include "src/memory/plan.hpp"
#include "src/runtime/runtime.hpp"
#include "src/workflows/gradient.hpp"
#include "src/workflows/modeling.hpp"
#include "tests/helpers.hpp"

using namespace starwave;

namespace {

double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void cpu_rows(const Model& m, const NumericalOptions& o, int steps, int reps);
int compression_rows(const Model& m, const NumericalOptions& o, int steps, int reps);
void gpu_rows(const Model& m, const NumericalOptions& o, int steps, int reps, int many, const std::string& gpu);

}  // namespace

int main(int argc, char** argv) {
  if (const std::string why = cpu::choose_level_from_environment(); !why.empty()) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 2;
  }
  const bool three_d = bench::take_flag(argc, argv, "--3d");
  const bool shell = bench::take_flag(argc, argv, "--shell");  // the rim alone (--storage shell)
  const bool checkpoints = bench::take_flag(argc, argv, "--checkpoints");
  const bool compression = bench::take_flag(argc, argv, "--compression");
  const bool kernels_only = bench::take_flag(argc, argv, "--kernels");  // no StarPU graphs
  const int steps = argc > 1 ? std::atoi(argv[1]) : three_d ? 1000 : 2000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const Model m = bench::reference_model(three_d);
  NumericalOptions o;
  o.order = 8;
  o.pml_width = 20;
  if (shell) o.storage = ShotProblem<float>::kStoreShell;
  if (compression) return compression_rows(m, o, steps, reps);
  const Survey s = bench::reference_survey_any(m, 1, steps);
  auto shot = test::prepare_shot<float>(m, s, o);
  if (shell) shot->p.storage = ShotProblem<float>::kStoreShell;
  ShotProblem<float>& p = shot->p;
  shot->work.assign(p.adjoint_work_size(), 0.0f);
  p.work = shot->work.data();
  aligned_vector<float> store(p.store_size()), final_state(2 * p.grid_size());
  const std::size_t region = p.model_cells();
  std::vector<float> residual(shot->traces.size()), corr(region), illum(region);

  // --gpu-only: no one-core CPU timing (on a GPU machine's slow cores it outlasts the GPU rows)
  const bool gpu_only = argc > 4 && std::string(argv[4]) == "--gpu-only";
  std::vector<double> t_fwd{0}, t_store{0}, t_adj{0};
  if (!gpu_only) t_fwd.clear(), t_store.clear(), t_adj.clear();
  for (int r = 0; r < (gpu_only ? 0 : reps); ++r) {
    p.store = nullptr;
    p.final_state = nullptr;
    double t0 = bench::now();
    cpu::forward<8, float>(p);
    t_fwd.push_back(bench::now() - t0);
    p.store = store.data();
    p.final_state = final_state.data();
    t0 = bench::now();
    cpu::forward<8, float>(p);
    t_store.push_back(bench::now() - t0);
    residual.assign(shot->traces.begin(), shot->traces.end());
    t0 = bench::now();
    cpu::adjoint<8, float>(p, residual.data(), corr.data(), illum.data(), nullptr);
    t_adj.push_back(bench::now() - t0);
  }
  // The same shot with checkpoints at the plan's interval.
  const int every = checkpoint_interval(p.nsteps, sizeof(float) * std::uint64_t(p.store_step_size()),
                                        sizeof(float) * std::uint64_t(p.checkpoint_size()));
  std::vector<double> t_ck_fwd, t_ck_adj;
  ShotProblem<float> c = p;
  c.checkpoint_every = every;
  aligned_vector<float> ck_work(c.adjoint_work_size()), ring(c.store_size()), states(c.checkpoints_size());
  c.work = ck_work.data();
  c.store = ring.data();
  c.checkpoints = states.data();
  c.final_state = final_state.data();
  for (int r = 0; r < (checkpoints && !gpu_only ? reps : 0); ++r) {
    double t0 = bench::now();
    cpu::forward<8, float>(c);
    t_ck_fwd.push_back(bench::now() - t0);
    residual.assign(shot->traces.begin(), shot->traces.end());
    t0 = bench::now();
    cpu::adjoint<8, float>(c, residual.data(), corr.data(), illum.data(), nullptr);
    t_ck_adj.push_back(bench::now() - t0);
  }
  if (checkpoints) o.checkpoint_every = every;
  const double f = median(t_fwd), fs = median(t_store), a = median(t_adj);
  std::printf("reference case %s, order 8, float32, %d steps, one shot, one core, median of %d, CPU kernels: %s\n",
              m.shape_text().c_str(), steps, reps, Runtime::cpu_kernels().c_str());
  if (!gpu_only) {
    std::printf("  forward:               %.3f s\n", f);
    std::printf("  forward + store:       %.3f s\n", fs);
    std::printf("  adjoint:               %.3f s\n", a);
    std::printf("  gradient / forward:    %.2f\n", (fs + a) / f);
    if (checkpoints) {
      const double cf = median(t_ck_fwd), ca = median(t_ck_adj);
      std::printf(
          "  with checkpoints every %d steps: forward + checkpoints %.3f s, adjoint with re-runs %.3f s, "
          "gradient / forward %.2f (%.2f× the whole store's)\n",
          every, cf, ca, (cf + ca) / f, (cf + ca) / (fs + a));
    }
  }
  const double mb = 1.0 / (1 << 20);
  ShotProblem<float> q = p;
  q.storage = ShotProblem<float>::kStoreFull;
  std::printf("  kept per shot, %s: %.1f MB store + %.1f MB final state\n", storage_name(p.storage),
              p.store_size() * 4 * mb, 2 * p.grid_size() * 4 * mb);
  std::printf("  kept per shot, full:     %.1f MB store + %.1f MB final state\n", q.store_size() * 4 * mb,
              2 * p.grid_size() * 4 * mb);
  std::printf("  adjoint scratch per worker: %.1f MB\n", p.adjoint_work_size() * 4 * mb);
  std::printf(
      "  kept per shot, checkpoints every %d steps: %.1f MB ring + %.1f MB states + %.1f MB final state "
      "(%d intervals; adjoint scratch %.1f MB)%s\n",
      every, c.store_size() * 4 * mb, c.checkpoints_size() * 4 * mb, 2 * p.grid_size() * 4 * mb, c.intervals(),
      c.adjoint_work_size() * 4 * mb, checkpoints ? "; the graphs below use them" : "");

  if (kernels_only) return 0;
  if (!gpu_only) cpu_rows(m, o, steps, reps);
  const std::string gpu = bench::gpu_name();
  if (gpu.empty()) {
    std::printf("no GPU: no CUDA rows\n");
    return 0;
  }
  gpu_rows(m, o, steps, reps, argc > 3 ? std::atoi(argv[3]) : 32, gpu);
  return 0;
}

namespace {

/// Model and gradient of the survey's shots on the running Runtime's workers; `warmups`
/// untimed gradients first (perf models). Medians of `reps`.
std::pair<double, double> model_and_gradient(const Model& m, const NumericalOptions& o, Survey sv, int reps,
                                             int warmups) {
  Model truth = m;
  for (auto& v : truth.vp) v *= 0.98;  // observed data from a slightly slower medium
  sv.data = model_shots(truth, sv, o, nullptr);
  for (int w = 0; w < warmups; ++w) misfit_gradient(m, sv, o);
  std::vector<double> tm, tg;
  for (int r = 0; r < reps; ++r) {
    ModelingReport rep;
    model_shots(m, sv, o, &rep);
    tm.push_back(rep.seconds);
    tg.push_back(misfit_gradient(m, sv, o).seconds);
  }
  return {median(tm), median(tg)};
}

void gpu_rows(const Model& m, const NumericalOptions& o, int steps, int reps, int many, const std::string& gpu) {
  std::printf("GPU: %s, copy bandwidth %.0f GB/s; whole task graphs, median of %d:\n", gpu.c_str(),
              bench::gpu_copy_bandwidth(), reps);
  std::printf("%12s %8s %12s %12s %10s %16s\n", "CUDA workers", "shots", "model s", "gradient s", "ratio",
              "gradient/shot s");
  for (const auto& [per_gpu, shots] :
       std::vector<std::pair<int, int>>{{1, 1}, {1, many}, {kDefaultWorkersPerGpu, many}}) {
    RuntimeOptions ro;
    ro.ncpus = 0;
    ro.ncuda = 1;
    ro.workers_per_gpu = per_gpu;
    Runtime rt(ro);
    const auto [tm, tg] = model_and_gradient(m, o, bench::spread_survey(m, shots, steps), reps, 1);
    std::printf("%12d %8d %12.4f %12.4f %10.2f %16.4f\n", per_gpu, shots, tm, tg, tg / tm, tg / shots);
  }
  RuntimeOptions mixed;
  mixed.ncuda = 1;
  mixed.scheduler = "dmda";
  const Survey sv = bench::spread_survey(m, many, steps);
  {
    setenv("STARPU_CALIBRATE", "1", 1);
    Runtime rt(mixed);
    model_and_gradient(m, o, sv, 1, 2);
    unsetenv("STARPU_CALIBRATE");
  }
  // The GPU alone and every core + the GPU, alternately, each in a fresh runtime with the
  // same perf models: one warm-up gradient and one timed per runtime, medians of `reps`.
  RuntimeOptions gpu_alone;
  gpu_alone.ncpus = 0;
  gpu_alone.ncuda = 1;
  gpu_alone.scheduler = "dmda";
  std::vector<double> am, ag, bm, bg;
  for (int r = 0; r < reps; ++r) {
    for (int k = 0; k < 2; ++k) {
      Runtime rt(k == 0 ? gpu_alone : mixed);
      const auto [tm, tg] = model_and_gradient(m, o, sv, 1, 1);
      (k == 0 ? am : bm).push_back(tm);
      (k == 0 ? ag : bg).push_back(tg);
    }
  }
  std::printf(
      "%d shots, alternately (dmda, calibrated), median of %d: the GPU alone: model %.4f s, gradient %.4f s; "
      "every CPU core + the GPU: model %.4f s (%.2f×), gradient %.4f s (%.2f× the GPU alone's speed: its time "
      "over theirs)\n",
      many, reps, median(am), median(ag), median(bm), median(am) / median(bm), median(bg), median(ag) / median(bg));
}

int compression_rows(const Model& m, const NumericalOptions& o, int steps, int reps) {
  // The data of the model with a slow Gaussian anomaly in its middle (10 % at the centre,
  // a sixth of the width across); the residual of the reference model against them.
  Model slow = m;
  const double cz = m.nz / 2.0, cy = m.ny / 2.0, cx = m.nx / 2.0, w = m.nx / 6.0;
  for (int z = 0; z < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x) {
        const double r2 = (z - cz) * (z - cz) + (m.three_d() ? (y - cy) * (y - cy) : 0) + (x - cx) * (x - cx);
        slow.at(z, y, x) *= 1 - 0.1 * std::exp(-r2 / (w * w));
      }
  const Survey s = bench::reference_survey_any(m, 1, steps);
  std::vector<float> observed;
  {
    auto shot = test::prepare_shot<float>(slow, s, o);
    cpu::forward<8, float>(shot->p);
    observed.assign(shot->traces.begin(), shot->traces.end());
  }
  std::printf(
      "reference case %s, order 8, float32, %d steps, one shot, one core, median of %d, CPU kernels: %s; "
      "residual against a 10 %% slow anomaly\n",
      m.shape_text().c_str(), steps, reps, Runtime::cpu_kernels().c_str());
  std::vector<double> exact;
  for (int c : {pack16::kNone, pack16::kHalf, pack16::kBfloat, pack16::kZfp16, pack16::kZfp12, pack16::kZfp8}) {
    auto shot = test::prepare_shot<float>(m, s, o);
    ShotProblem<float>& p = shot->p;
    p.storage = o.storage == NumericalOptions::kStorageDefault ? ShotProblem<float>::kStoreBoundary : o.storage;
    p.compression = c;
    shot->work.assign(p.adjoint_work_size(), 0.0f);
    p.work = shot->work.data();
    aligned_vector<float> store(p.store_size()), final_state(2 * p.grid_size());
    p.store = store.data();
    p.final_state = final_state.data();
    const std::size_t region = p.model_cells();
    std::vector<float> residual(shot->traces.size()), corr(region), illum(region);
    std::vector<double> t_fwd, t_adj;
    for (int r = 0; r < reps; ++r) {
      double t0 = bench::now();
      cpu::forward<8, float>(p);
      t_fwd.push_back(bench::now() - t0);
      for (std::size_t i = 0; i < residual.size(); ++i) residual[i] = shot->traces[i] - observed[i];
      std::fill(corr.begin(), corr.end(), 0.0f);
      std::fill(illum.begin(), illum.end(), 0.0f);
      t0 = bench::now();
      cpu::adjoint<8, float>(p, residual.data(), corr.data(), illum.data(), nullptr);
      t_adj.push_back(bench::now() - t0);
    }
    std::vector<double> g(region);  // ∂Φ/∂v = (2/v) × the correlation
    for (std::size_t k = 0; k < region; ++k) g[k] = 2.0 * double(corr[k]) / m.vp[k];
    double error = 0, worst = 0;
    const bool approximate = c != pack16::kNone;
    if (!approximate)
      exact = g;
    else
      error = test::diff_norm(g, exact) / test::norm(exact);
    for (std::size_t k = 0; k < region && approximate; ++k) worst = std::max(worst, std::abs(g[k] - exact[k]));
    const double mb = double(store.size() * 4) / (1 << 20);
    std::printf(
        "  store %-6s: %8.1f MB, forward + store %.3f s, adjoint %.3f s, gradient relative L2 error %.2e, "
        "largest cell error / largest gradient %.2e\n",
        compression_name(c), mb, median(t_fwd), median(t_adj), error, worst / test::max_abs(exact));
  }
  return 0;
}

void cpu_rows(const Model& m, const NumericalOptions& o, int steps, int reps) {
  std::printf("through StarPU (whole task graphs), median of %d:\n", reps);
  std::printf("%8s %8s %12s %12s %10s\n", "workers", "shots", "model s", "gradient s", "ratio");
  for (int workers : {1, 2}) {
    RuntimeOptions ro;
    ro.ncpus = workers;
    ro.ncuda = 0;
    Runtime rt(ro);
    for (int shots : {1, m.three_d() ? 2 : 4}) {
      const auto [tm, tg] = model_and_gradient(m, o, bench::reference_survey_any(m, shots, steps), reps, 1);
      std::printf("%8d %8d %12.3f %12.3f %10.2f\n", workers, shots, tm, tg, tg / tm);
    }
  }
}

}  // namespace
