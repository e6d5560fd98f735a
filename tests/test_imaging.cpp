// tests/test_imaging.cpp — the gradient and RTM task graph on StarPU: results bit-for-bit
// identical whatever the number of CPU workers and the scheduler (the fixed reduction
// tree), and equal to the kernels run shot by shot.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>

#include "kernels/cpu/adjoint.hpp"
#include "kernels/cpu/born.hpp"
#include "src/base/error.hpp"
#include "src/runtime/runtime.hpp"
#include "src/synthetic/synth.hpp"
#include "src/workflows/gradient.hpp"
#include "src/workflows/modeling.hpp"
#include "tests/helpers.hpp"

namespace starwave::test {
namespace {

struct Case {
  Model model;  // the model the gradient is taken at
  Survey survey;
  NumericalOptions options;
};

/// 7 shots (an odd count: the tree's last partial sums merge unevenly) over a smoothed
/// Marmousi-like model, observed data from the unsmoothed one; `ny` > 0: a small 3-D one.
Case small_case(bool double_precision, int ny = 0) {
  SynthOptions so;
  so.kind = "marmousi-like";
  so.ny = ny;
  so.nz = ny ? 12 : 40;
  so.nx = ny ? 16 : 90;
  so.spacing = ny ? 20 : 10;
  const Model truth = synthesize(so);
  Case c{smoothed(truth, 60), {}, {}};
  SurveyOptions sv;
  sv.nshots = 7;
  sv.receiver_every = 3;
  sv.frequency = ny ? 8 : 12;
  sv.dt = 2e-3;
  sv.t_max = ny ? 0.2 : 0.4;
  c.survey = regular_survey(truth, sv);
  c.options.precision = double_precision ? Precision::kDouble : Precision::kSingle;
  c.options.pml_width = ny ? 6 : 10;  // thin layers: the bits are the point, not the absorption
  RuntimeOptions ro;
  ro.ncpus = 2;
  ro.ncuda = 0;
  Runtime rt(ro);
  c.survey.data = model_shots(truth, c.survey, c.options, nullptr);
  return c;
}

ImagingResult run_with(const Case& c, int ncpus, const std::string& sched, bool rtm, const GradientHooks& hooks = {}) {
  RuntimeOptions ro;
  ro.ncpus = ncpus;
  ro.ncuda = 0;
  ro.scheduler = sched;
  Runtime rt(ro);
  return rtm ? rtm_stack(c.model, c.survey, c.options, hooks) : misfit_gradient(c.model, c.survey, c.options, hooks);
}

TEST(Imaging, RaggedSurveyGradientIsTheSumOfItsShotsAlone) {
  // Shot 0 records with 6 receivers, one of them dead (weight 0); shot 1 with its first 4
  // (/receiver/count), its last 2 padding placed far outside the model to show they are
  // never used. The gradient and misfit equal the sums over each shot alone with only its
  // live receivers.
  SynthOptions so;
  so.kind = "layered";
  so.nz = 30;
  so.nx = 60;
  so.spacing = 10;
  const Model truth = synthesize(so);
  const Model start = smoothed(truth, 40);
  NumericalOptions o;
  o.precision = Precision::kDouble;
  o.pml_width = 10;
  auto receivers = [](std::initializer_list<double> xs) {
    std::vector<Position> r;
    for (double x : xs) r.push_back(Position(10, x));
    return r;
  };
  Survey s = point_survey({20, 150}, {}, 15, 1e-3, 0.35);
  s.sources = {Position(20, 150), Position(20, 420)};
  s.receivers = {receivers({50, 130, 210, 290, 370, 450}), receivers({80, 200, 320, 440, -1e6, -1e6})};
  s.counts = {6, 4};
  s.weights = {1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  RuntimeOptions ro;
  ro.ncpus = 2;
  ro.ncuda = 0;
  Runtime rt(ro);
  s.data = model_shots(truth, s, o, nullptr);
  for (std::size_t i = 0; i < 2 * std::size_t(s.nt); ++i)
    EXPECT_EQ(s.data[(6 + 4) * std::size_t(s.nt) + i], 0.0f) << "padding traces are written as zeros";
  const ImagingResult all = misfit_gradient(start, s, o);

  // Each shot alone, only its live receivers.
  const std::vector<std::vector<int>> live = {{0, 1, 3, 4, 5}, {0, 1, 2, 3}};
  std::vector<double> sum(all.values.size(), 0.0);
  double misfit = 0;
  for (int k = 0; k < 2; ++k) {
    Survey one = s;
    one.sources = {s.sources[std::size_t(k)]};
    one.receivers = {{}};
    one.counts.clear();
    one.weights.clear();
    one.data.clear();
    for (int r : live[std::size_t(k)]) {
      one.receivers[0].push_back(s.receivers[std::size_t(k)][std::size_t(r)]);
      const float* t = s.data.data() + (std::size_t(k) * 6 + std::size_t(r)) * std::size_t(s.nt);
      one.data.insert(one.data.end(), t, t + s.nt);
    }
    const ImagingResult r = misfit_gradient(start, one, o);
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += r.values[i];
    misfit += r.misfit;
  }
  double peak = 0, diff = 0;
  for (std::size_t i = 0; i < sum.size(); ++i) {
    peak = std::max(peak, std::abs(sum[i]));
    diff = std::max(diff, std::abs(sum[i] - all.values[i]));
  }
  EXPECT_GT(peak, 0);
  EXPECT_LE(diff, 1e-12 * peak) << "gradient of the ragged survey vs the sum of its shots alone";
  EXPECT_NEAR(all.misfit, misfit, 1e-12 * misfit);
  EXPECT_GT(misfit, 0);
}

bool m_depth_ok(const Model& m, int z, double depth) { return z < m.nz && m.z0 + z * m.dz <= depth; }

TEST(Imaging, GradientAndImageBitForBitAcrossWorkersAndSchedulers) {
  for (int ny : {0, 8}) {  // 2-D, 3-D
    const Case c = small_case(false, ny);
    for (bool rtm : {false, true}) {
      const ImagingResult ref = run_with(c, 1, "eager", rtm);
      ASSERT_EQ(ref.values.size(), c.model.vp.size());
      ASSERT_GT(norm(ref.values), 0);
      ASSERT_GT(norm(ref.illumination), 0);
      if (!rtm) {
        ASSERT_GT(ref.misfit, 0);
      }
      // Every scheduler with 1 and 2 workers in 2-D; in 3-D (the same graph on other
      // kernels), the two that order the tasks differently from the reference. Under the
      // sanitizers (which check memory, not orders), one of each in 2-D and one in 3-D.
      using Configs = std::vector<std::pair<int, std::string>>;
      const Configs configs = kSanitized ? (ny ? Configs{{2, "dmda"}} : Configs{{2, "lws"}, {1, "dmda"}})
                              : ny       ? Configs{{2, "lws"}, {2, "dmda"}}
                                         : Configs{{2, "eager"}, {1, "lws"}, {2, "lws"}, {1, "dmda"}, {2, "dmda"}};
      for (const auto& [ncpus, sched] : configs) {
        const ImagingResult r = run_with(c, ncpus, sched, rtm);
        const std::string what = std::string(ny ? "3-D " : "2-D ") + (rtm ? "image" : "gradient") + ", " +
                                 std::to_string(ncpus) + " CPU workers, scheduler " + sched;
        EXPECT_TRUE(same_bits(r.values, ref.values)) << what;
        EXPECT_TRUE(same_bits(r.illumination, ref.illumination)) << what;
        EXPECT_EQ(std::memcmp(&r.misfit, &ref.misfit, sizeof(double)), 0) << what;
      }
    }
  }
}

/// STARWAVE_SHOT_BATCH for one scope.
struct ShotBatchSet {
  explicit ShotBatchSet(const char* batch) { setenv("STARWAVE_SHOT_BATCH", batch, 1); }
  ~ShotBatchSet() { unsetenv("STARWAVE_SHOT_BATCH"); }
};

TEST(Imaging, ShotBatchesGiveTheGradientAndImageTheirBits) {
  // One forward and one adjoint task for a batch of shots (docs/design.md §3, "Shot
  // batches"): the same gradient, image, illumination and misfit as a task a shot, with 1
  // and 2 workers; batches of 3 (7 shots: 3, 3, 1), of all, 16-bit stores, a mini-batch
  // of shots; checkpoints (no batches) the same too.
  for (int ny : {0, 8}) {
    Case c = small_case(false, ny);
    for (bool rtm : {false, true}) {
      const ImagingResult ref = run_with(c, 1, "eager", rtm);
      ASSERT_GT(norm(ref.values), 0);
      for (const char* batch : {"3", "16"})
        for (const auto& [ncpus, sched] : std::vector<std::pair<int, std::string>>{{1, "eager"}, {2, "dmda"}}) {
          // Under the sanitizers, batches of 3 with 2 workers (dmda) and of 16 with 1 (eager).
          if (kSanitized && (batch[0] == '3') != (ncpus == 2)) continue;
          const ShotBatchSet set(batch);
          int planned = 0;  // the plan's batch
          GradientHooks hooks;
          hooks.on_plan = [&](const MemoryNeed& need, std::uint64_t, const ShotPlacement&, int) {
            planned = need.batch;
          };
          const ImagingResult r = run_with(c, ncpus, sched, rtm, hooks);
          EXPECT_EQ(planned, std::min(std::atoi(batch), 7)) << "batches of " << batch;
          const std::string what = std::string(ny ? "3-D " : "2-D ") + (rtm ? "image" : "gradient") + ", batches of " +
                                   batch + ", " + std::to_string(ncpus) + " CPU workers, " + sched;
          EXPECT_TRUE(same_bits(r.values, ref.values)) << what;
          EXPECT_TRUE(same_bits(r.illumination, ref.illumination)) << what;
          EXPECT_EQ(std::memcmp(&r.misfit, &ref.misfit, sizeof(double)), 0) << what;
        }
    }
    for (int compression : {int(pack16::kHalf), int(pack16::kNone)}) {
      Case k = c;
      k.options.store_compression = compression;
      k.options.checkpoint_every = compression == pack16::kNone ? 9 : 0;  // checkpoints: one shot a task
      GradientHooks hooks;
      hooks.shots = {1, 2, 3, 6};  // batches {1, 2}, {3, 6}
      RuntimeOptions ro;
      ro.ncpus = 2;
      ro.ncuda = 0;
      const Runtime rt(ro);
      const ImagingResult want = misfit_gradient(k.model, k.survey, k.options, hooks);
      const ShotBatchSet set("2");
      const ImagingResult got = misfit_gradient(k.model, k.survey, k.options, hooks);
      EXPECT_TRUE(same_bits(got.values, want.values)) << "compression " << compression << ", ny " << ny;
      EXPECT_EQ(std::memcmp(&got.misfit, &want.misfit, sizeof(double)), 0) << "compression " << compression;
    }
  }
}

TEST(Imaging, CheckpointedGradientAndImageHaveTheWholeStoresBits) {
  // --checkpoint-every N, and the automatic choice when StarPU may hold less than a shot's
  // whole store (STARPU_LIMIT_CPU_MEM read by the plan; the 2-D gradient, whose store is most
  // of what a shot holds): the same gradient, image, illumination and misfit as with every
  // step's store, 2-D and 3-D, the layers' store and the rim alone (RTM's default).
  for (int ny : {0, 8}) {
    Case c = small_case(false, ny);
    for (bool rtm : {false, true}) {
      MemoryNeed planned, whole;
      GradientHooks hooks;
      hooks.on_plan = [&](const MemoryNeed& need, std::uint64_t, const ShotPlacement&, int) { planned = need; };
      auto run = [&](int every, const char* limit_mib) {
        c.options.checkpoint_every = every;
        RuntimeOptions ro;
        ro.ncpus = 2;
        ro.ncuda = 0;
        Runtime rt(ro);
        if (limit_mib) setenv("STARPU_LIMIT_CPU_MEM", limit_mib, 1);  // the plan's room; StarPU has started
        ImagingResult r;
        try {
          r = rtm ? rtm_stack(c.model, c.survey, c.options, hooks)
                  : misfit_gradient(c.model, c.survey, c.options, hooks);
        } catch (const std::exception& e) {
          ADD_FAILURE() << e.what();
        }
        unsetenv("STARPU_LIMIT_CPU_MEM");
        return r;
      };
      const ImagingResult ref = run(0, nullptr);
      whole = planned;
      ASSERT_GT(norm(ref.values), 0);
      ASSERT_EQ(whole.checkpoint_every, 0);
      std::vector<int> intervals = {9};
      if (ny == 0) intervals.push_back(1);
      if (ny == 0 && !rtm) intervals.push_back(NumericalOptions::kCheckpointAuto);
      for (int every : intervals) {
        std::string limit;
        if (every == NumericalOptions::kCheckpointAuto) {  // less room than one shot with its whole store takes
          limit = std::to_string(whole.total(2, 1) >> 20);
          ASSERT_GT(std::stoull(limit), 0u) << "the case's whole store is too small to test";
        }
        const ImagingResult r = run(every, limit.empty() ? nullptr : limit.c_str());
        const std::string what = std::string(ny ? "3-D " : "2-D ") + (rtm ? "image" : "gradient") +
                                 ", checkpoint every " + std::to_string(every);
        if (every > 0) {
          EXPECT_EQ(planned.checkpoint_every, every) << what;
        } else {
          EXPECT_GT(planned.checkpoint_every, 1) << what << ": chosen when the store does not fit";
        }
        EXPECT_GT(planned.checkpoints, 0u) << what;
        EXPECT_TRUE(same_bits(r.values, ref.values)) << what;
        EXPECT_TRUE(same_bits(r.illumination, ref.illumination)) << what;
        EXPECT_EQ(std::memcmp(&r.misfit, &ref.misfit, sizeof(double)), 0) << what;
      }
    }
  }
}

TEST(Imaging, SixteenBitStoreShrinksTheStoreAndKeepsTheGradientClose) {
  // --store-compression fp16/bf16 through the task graph: the store's slots in half the
  // bytes (single precision), the misfit's bits (the forward is untouched), a gradient
  // within a small relative error, and checkpoints that keep the 16-bit store's bits.
  Case c = small_case(false);
  MemoryNeed planned;
  GradientHooks hooks;
  hooks.on_plan = [&](const MemoryNeed& need, std::uint64_t, const ShotPlacement&, int) { planned = need; };
  auto run = [&](int compression, int every) {
    c.options.store_compression = compression;
    c.options.checkpoint_every = every;
    RuntimeOptions ro;
    ro.ncpus = 2;
    ro.ncuda = 0;
    Runtime rt(ro);
    return misfit_gradient(c.model, c.survey, c.options, hooks);
  };
  const ImagingResult exact = run(pack16::kNone, 0);
  const MemoryNeed whole = planned;
  ASSERT_GT(norm(exact.values), 0);
  EXPECT_TRUE(whole.store_words.empty());
  for (int compression : {pack16::kHalf, pack16::kBfloat}) {
    const std::string what = compression_name(compression);
    const ImagingResult r = run(compression, 0);
    EXPECT_EQ(planned.store_words, what);
    EXPECT_LT(planned.store, whole.store) << what;
    EXPECT_EQ(std::memcmp(&r.misfit, &exact.misfit, sizeof(double)), 0) << what;
    const double error = diff_norm(r.values, exact.values) / norm(exact.values);
    EXPECT_GT(error, 0) << what;
    EXPECT_LT(error, compression == pack16::kHalf ? 1e-3 : 1e-2) << what;
    const ImagingResult ring = run(compression, 9);
    EXPECT_TRUE(same_bits(ring.values, r.values)) << what << " with checkpoints every 9 steps";
  }
}

TEST(Imaging, GradientEqualsTheKernelsShotByShotInDouble) {
  const Case c = small_case(true);
  const ImagingResult r = run_with(c, 2, "dmda", false);
  std::vector<double> grad(c.model.vp.size(), 0.0), illum(grad.size(), 0.0);
  double J = 0;
  const std::size_t per_shot = std::size_t(c.survey.nrec()) * c.survey.nt;
  for (int shot = 0; shot < c.survey.nshots(); ++shot) {
    auto ps = prepare_shot<double>(c.model, c.survey, c.options, shot);
    ShotProblem<double>& p = ps->p;
    ps->work.assign(p.adjoint_work_size(), 0.0);
    p.work = ps->work.data();
    aligned_vector<double> store(p.store_size()), final_state(2 * p.grid_size());
    p.store = store.data();
    p.final_state = final_state.data();
    cpu::forward<8, double>(p);
    std::vector<double> res(per_shot), corr(grad.size(), 0.0), il(grad.size(), 0.0);
    for (std::size_t i = 0; i < per_shot; ++i) {
      res[i] = ps->traces[i] - double(c.survey.data[std::size_t(shot) * per_shot + i]);
      J += 0.5 * res[i] * res[i];
    }
    cpu::adjoint<8, double>(p, res.data(), corr.data(), il.data(), nullptr);
    for (std::size_t k = 0; k < grad.size(); ++k) {
      grad[k] += 2 * corr[k] / c.model.vp[k];
      illum[k] += il[k];
    }
  }
  EXPECT_NEAR(r.misfit, J, 1e-12 * J);
  EXPECT_LE(diff_norm(r.values, grad) / norm(grad), 1e-12);
  EXPECT_LE(diff_norm(r.illumination, illum) / norm(illum), 1e-12);
}

TEST(Imaging, BornDataAndTheVjpAreOneOperatorPair) {
  // J (the born tasks) and Jᵀ (data_vjp: the forward, adjoint and image tasks) through the
  // task graph: ⟨J δv, r⟩ = ⟨δv, Jᵀ r⟩ in double with δv rough up to the edges; J's data the
  // same bits with 1 and 2 workers and any scheduler, and the kernel's shot by shot.
  Case c = small_case(true);
  std::vector<double> dv(c.model.vp.size());
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> rough(-10, 10);
  for (double& v : dv) v = rough(gen) + 5;
  auto born_with = [&](int ncpus, const std::string& sched) {
    RuntimeOptions ro;
    ro.ncpus = ncpus;
    ro.ncuda = 0;
    ro.scheduler = sched;
    Runtime rt(ro);
    return born_shots_exact(c.model, dv, c.survey, c.options);
  };
  const std::vector<double> born = born_with(1, "eager");
  for (const char* sched : {"eager", "lws", "dmda"}) EXPECT_TRUE(same_bits(born, born_with(2, sched))) << sched;
  const std::size_t per_shot = std::size_t(c.survey.nrec()) * c.survey.nt;
  for (int shot = 0; shot < c.survey.nshots(); ++shot) {
    auto bg = prepare_shot<double>(c.model, c.survey, c.options, shot);
    auto sc = prepare_shot<double>(c.model, c.survey, c.options, shot);
    const std::vector<double> scatter = born_scatter(bg->p, c.model, dv);
    std::vector<double> scratch(std::size_t(bg->p.stride));
    cpu::born<8, double>(bg->p, sc->p, scatter.data(), scratch.data());
    EXPECT_TRUE(same_bits(sc->traces.data(), born.data() + std::size_t(shot) * per_shot, per_shot)) << "shot " << shot;
  }
  std::uniform_real_distribution<float> any(-1, 1);
  for (float& r : c.survey.data) r = any(gen);
  RuntimeOptions ro;
  ro.ncpus = 2;
  ro.ncuda = 0;
  Runtime rt(ro);
  const std::vector<double> g = data_vjp(c.model, c.survey, c.options).values;
  double lhs = 0, rhs = 0;
  for (std::size_t i = 0; i < born.size(); ++i) lhs += born[i] * double(c.survey.data[i]);
  for (std::size_t k = 0; k < dv.size(); ++k) rhs += dv[k] * g[k];
  EXPECT_NEAR(lhs, rhs, 1e-12 * std::abs(lhs)) << "⟨J δv, r⟩ against ⟨δv, Jᵀ r⟩";
}

TEST(Imaging, TheNormalOperatorIsJtJInOneGraph) {
  // normal_product (born_keep → misfit against zeros → adjoint → image, one graph) is Jᵀ J:
  // ⟨δv, Jᵀ J δv⟩ = ‖J δv‖² = 2 × its misfit, with J δv the born tasks' data; symmetric,
  // ⟨a, N b⟩ = ⟨N a, b⟩; the same bits with 1 and 2 workers and with checkpoints as with
  // the whole store (u re-created from them, as a gradient's is).
  Case c = small_case(true);
  std::mt19937 gen(9);
  std::uniform_real_distribution<double> rough(-10, 10);
  std::vector<double> a(c.model.vp.size()), b(a.size());
  for (double& v : a) v = rough(gen) + 5;
  for (double& v : b) v = rough(gen) - 3;
  auto normal_with = [&](const std::vector<double>& dv, int ncpus, int checkpoint_every = 0,
                         const std::string& sched = "") {
    RuntimeOptions ro;
    ro.ncpus = ncpus;
    ro.ncuda = 0;
    ro.scheduler = sched;
    Runtime rt(ro);
    NumericalOptions o = c.options;
    o.checkpoint_every = checkpoint_every;
    return normal_product(c.model, c.survey, o, dv);
  };
  const ImagingResult na = normal_with(a, 2), nb = normal_with(b, 2);
  std::vector<double> ja;
  {
    RuntimeOptions ro;
    ro.ncpus = 2;
    ro.ncuda = 0;
    Runtime rt(ro);
    ja = born_shots_exact(c.model, a, c.survey, c.options);
  }
  double jj = 0, quad = 0, ab = 0, ba = 0;
  for (double v : ja) jj += v * v;
  for (std::size_t k = 0; k < a.size(); ++k) {
    quad += a[k] * na.values[k];
    ab += a[k] * nb.values[k];
    ba += b[k] * na.values[k];
  }
  ASSERT_GT(jj, 0.0);
  EXPECT_NEAR(2 * na.misfit, jj, 1e-12 * jj) << "the misfit is ½‖J δv‖²";
  EXPECT_NEAR(quad, jj, 1e-12 * jj) << "⟨δv, Jᵀ J δv⟩ = ‖J δv‖²";
  EXPECT_NEAR(ab, ba, 1e-12 * std::abs(ab)) << "symmetric";
  const ImagingResult one = normal_with(a, 1);
  EXPECT_TRUE(same_bits(na.values, one.values)) << "1 and 2 workers";
  EXPECT_EQ(na.misfit, one.misfit);
  EXPECT_TRUE(same_bits(na.values, normal_with(a, 2, 25).values)) << "checkpoints every 25 steps";
  for (const char* sched : {"eager", "lws", "dmda"}) {
    const ImagingResult r = normal_with(a, 2, 0, sched);
    EXPECT_TRUE(same_bits(na.values, r.values)) << sched;
    EXPECT_EQ(na.misfit, r.misfit) << sched;
  }
}

/// Four flat interfaces, velocity rising 1500 → 3500 m/s (rows 12, 24, 36, 48 of 60, 10 m
/// cells), and six shots of data modeled in them.
struct FlatCase {
  Model truth;
  Survey survey;
  NumericalOptions options;
};

FlatCase flat_case() {
  SynthOptions so;
  so.kind = "layered";
  so.nz = 60;
  so.nx = 120;
  so.spacing = 10;
  FlatCase c{synthesize(so), {}, {}};
  SurveyOptions sv;
  sv.nshots = 6;
  sv.frequency = 20;
  c.survey = regular_survey(c.truth, sv);
  RuntimeOptions ro;
  ro.ncpus = 2;
  ro.ncuda = 0;
  Runtime rt(ro);
  c.survey.data = model_shots(c.truth, c.survey, c.options, nullptr);
  return c;
}

/// RTM with the cross condition and the source illumination: a reflectivity image, a zero-phase
/// peak at each velocity increase (ISIC's and the Laplacian's have the perturbation's phase).
RtmOptions reflectivity_image() {
  RtmOptions rtm;
  rtm.condition = ImagingCondition::kCross;
  rtm.compensation = Compensation::kSource;
  return rtm;
}

/// The RTM image of `c`'s data in migration model `mig`: the four interfaces are its four
/// largest positive peaks (averaged over the central columns), each within 2 rows of its
/// depth, every other peak under half the weakest of them; nothing above the acquisition.
/// `below_mute`: peaks counted only below the mute's taper (rtm_mute()). `r`: the stack, made
/// with `rtm`'s condition and direct wave and the illuminations its compensation needs.
void expect_flat_interfaces(const FlatCase& c, const Model& mig, const ImagingResult& r, const RtmOptions& rtm,
                            const std::string& what, bool below_mute = false) {
  const auto [acquisition, mute] = rtm_mute(mig, c.survey);
  const std::vector<double> image =
      finish_rtm_image(mig, r.values, compensating_illumination(r, rtm.compensation), acquisition, mute, rtm.condition);
  EXPECT_NO_THROW(check_rtm_image(image, rtm)) << what;
  std::vector<double> trace(std::size_t(mig.nz), 0.0);
  for (int z = 0; z < mig.nz; ++z)
    for (int x = 20; x < mig.nx - 20; ++x) trace[std::size_t(z)] += image[std::size_t(z) * mig.nx + x] / (mig.nx - 40);
  std::vector<std::pair<double, int>> peaks;
  for (int z = 1; z + 1 < mig.nz; ++z) {
    const double v = trace[std::size_t(z)];
    if (below_mute && mig.z0 + z * mig.dz < mute) continue;
    if (v > 0 && v >= trace[std::size_t(z - 1)] && v > trace[std::size_t(z + 1)]) peaks.push_back({v, z});
  }
  std::sort(peaks.rbegin(), peaks.rend());
  ASSERT_GE(peaks.size(), 4u) << what;
  std::vector<int> found;
  for (int k = 0; k < 4; ++k) found.push_back(peaks[std::size_t(k)].second);
  std::sort(found.begin(), found.end());
  const int interfaces[] = {12, 24, 36, 48};
  for (int k = 0; k < 4; ++k)
    EXPECT_LE(std::abs(found[std::size_t(k)] - interfaces[k]), 2) << what << ": interface " << k;
  for (std::size_t k = 4; k < peaks.size(); ++k)
    EXPECT_LT(peaks[k].first, 0.5 * peaks[3].first) << what << ": a spurious peak at row " << peaks[k].second;
  for (int z = 0; m_depth_ok(mig, z, acquisition); ++z) EXPECT_EQ(trace[std::size_t(z)], 0.0) << what;
}

/// The same, stacking `c`'s data with `rtm`.
void expect_flat_interfaces(const FlatCase& c, const Model& mig, const RtmOptions& rtm, const std::string& what,
                            bool below_mute = false) {
  RuntimeOptions ro;
  ro.ncpus = 2;
  ro.ncuda = 0;
  Runtime rt(ro);
  expect_flat_interfaces(c, mig, rtm_stack(mig, c.survey, c.options, {}, rtm), rtm, what, below_mute);
}

TEST(Imaging, RtmPlacesFlatInterfacesAtTheirDepths) {
  const FlatCase c = flat_case();
  // A smooth migration model (the truth smoothed over 30 m, exact in the top layer).
  Model smooth = smoothed(c.truth, 30);
  for (int z = 0; z < 9; ++z)
    for (int x = 0; x < smooth.nx; ++x) smooth.at(z, x) = c.truth.at(z, x);
  RtmOptions model = reflectivity_image(), smoothed = reflectivity_image();
  model.direct = DirectWave::kModel;
  expect_flat_interfaces(c, smooth, model, "smooth model, direct wave modeled in it");
  expect_flat_interfaces(c, smooth, smoothed, "smooth model, direct wave modeled in its smoothed copy (the default)");
}

/// Pearson correlation of two images.
double correlation(const std::vector<double>& a, const std::vector<double>& b) {
  double ma = 0, mb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) ma += a[i], mb += b[i];
  ma /= double(a.size());
  mb /= double(a.size());
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ab += (a[i] - ma) * (b[i] - mb);
    aa += (a[i] - ma) * (a[i] - ma);
    bb += (b[i] - mb) * (b[i] - mb);
  }
  return ab / std::sqrt(aa * bb);
}

TEST(Imaging, EveryCompensationAndImagingConditionImagesTheInterfaces) {
  const FlatCase c = flat_case();
  Model smooth = smoothed(c.truth, 30);
  for (int z = 0; z < 9; ++z)
    for (int x = 0; x < smooth.nx; ++x) smooth.at(z, x) = c.truth.at(z, x);
  // One stack a condition, with both illuminations: a compensation is how the stack is
  // finished (finish_rtm_image), not how it is made.
  RuntimeOptions ro;
  ro.ncpus = 2;
  ro.ncuda = 0;
  Runtime rt(ro);
  auto stack = [&](ImagingCondition condition) {
    RtmOptions rtm;
    rtm.condition = condition;
    rtm.compensation = Compensation::kBoth;
    return rtm_stack(smooth, c.survey, c.options, {}, rtm);
  };
  const ImagingResult cross_stack = stack(ImagingCondition::kCross);
  for (const Compensation compensation : {Compensation::kReceiver, Compensation::kBoth}) {
    RtmOptions rtm = reflectivity_image();
    rtm.compensation = compensation;
    expect_flat_interfaces(c, smooth, cross_stack, rtm, std::string("cross, ") + compensation_name(compensation));
  }
  // ISIC's and the Laplacian's images have the phase of the velocity perturbation (truth −
  // smooth: a doublet at each interface), not of the reflectivity: both follow it below
  // the mute, better than the cross condition's does, and each other closely (the Laplacian
  // filter is ISIC where the velocity is constant).
  std::vector<double> perturbation(smooth.vp.size());
  for (std::size_t i = 0; i < perturbation.size(); ++i) perturbation[i] = c.truth.vp[i] - smooth.vp[i];
  const auto [acquisition, mute] = rtm_mute(smooth, c.survey);
  auto below_mute = [&](const std::vector<double>& a) {
    std::vector<double> out;
    for (int z = 0; z < smooth.nz; ++z)
      if (smooth.z0 + z * smooth.dz >= mute)
        for (int x = 20; x < smooth.nx - 20; ++x) out.push_back(a[std::size_t(z) * smooth.nx + x]);
    return out;
  };
  auto image = [&](const ImagingResult& r, ImagingCondition condition, Compensation compensation) {
    return below_mute(
        finish_rtm_image(smooth, r.values, compensating_illumination(r, compensation), acquisition, mute, condition));
  };
  const std::vector<double> dv = below_mute(perturbation);
  const double cross = correlation(image(cross_stack, ImagingCondition::kCross, Compensation::kSource), dv);
  const std::vector<double> laplacian =
      image(stack(ImagingCondition::kLaplacian), ImagingCondition::kLaplacian, Compensation::kSource);
  const ImagingResult isic_stack = stack(ImagingCondition::kIsic);
  for (const Compensation compensation : {Compensation::kSource, Compensation::kReceiver, Compensation::kBoth}) {
    const std::vector<double> isic = image(isic_stack, ImagingCondition::kIsic, compensation);
    const std::string what = std::string("isic, ") + compensation_name(compensation) + ": correlation with δv " +
                             std::to_string(correlation(isic, dv)) + ", with the Laplacian's image " +
                             std::to_string(correlation(isic, laplacian)) + " (cross with δv " + std::to_string(cross) +
                             ", laplacian " + std::to_string(correlation(laplacian, dv)) + ")";
    EXPECT_GT(correlation(isic, dv), 0.5) << what;
    EXPECT_GT(correlation(isic, dv), cross + 0.3) << what;
    EXPECT_GT(correlation(isic, laplacian), 0.5) << what;
    if (compensation == Compensation::kSource) {
      EXPECT_GT(correlation(isic, laplacian), 0.75) << what;
    }
  }
  EXPECT_GT(correlation(laplacian, dv), cross + 0.3);
}

/// ‖a‖ / ‖2c − a‖ over rows [z0, z1), columns 20 … nx − 20, with c the cross stack
/// v²Σμ(Lu + f) and a ISIC's, v²Σ[μ(Lu + f) + ∇u·∇μ]: ISIC against the same two terms with
/// the other sign, how far the gradient term cancels the time term.
double isic_against_its_opposite(const Model& m, const std::vector<double>& cross, const std::vector<double>& isic,
                                 int z0, int z1) {
  double sum = 0, difference = 0;
  for (int z = z0; z < z1; ++z)
    for (int x = 20; x < m.nx - 20; ++x) {
      const std::size_t i = std::size_t(z) * m.nx + x;
      sum += isic[i] * isic[i];
      difference += (2 * cross[i] - isic[i]) * (2 * cross[i] - isic[i]);
    }
  return std::sqrt(sum / difference);
}

TEST(Imaging, IsicCancelsWhereBothFieldsTravelTheSameWay) {
  // The inverse-scattering imaging condition Σ_t [∂_t u ∂_t λ − v² ∇u·∇λ]: where the source
  // and receiver fields travel the same way the two terms cancel (with the other sign they
  // add). Sources at the top, receivers at the bottom of a constant model, the direct wave
  // migrated as it is: between them u and λ travel down together, and ISIC keeps under
  // 15 % of the opposite combination's amplitude.
  Model constant = constant_model(60, 120, 10, 2000);
  SurveyOptions sv;
  sv.nshots = 6;
  sv.frequency = 20;
  sv.receiver_depth = 550;
  Survey through = regular_survey(constant, sv);
  const NumericalOptions o;
  RuntimeOptions ro;
  ro.ncpus = 2;
  ro.ncuda = 0;
  Runtime rt(ro);
  through.data = model_shots(constant, through, o, nullptr);
  RtmOptions cross, isic;
  cross.condition = ImagingCondition::kCross;
  isic.condition = ImagingCondition::kIsic;
  cross.direct = isic.direct = DirectWave::kNone;
  const double ratio = isic_against_its_opposite(constant, rtm_stack(constant, through, o, {}, cross).values,
                                                 rtm_stack(constant, through, o, {}, isic).values, 15, 45);
  EXPECT_LT(ratio, 0.15);
  EXPECT_GT(ratio, 0);
}

TEST(Imaging, RtmInTheSharpTrueModel) {
  // Migrating in the true model: the default subtracts the data of a copy smoothed below
  // the acquisition, so the reflections stay and image at their depths, counted below the
  // mute's taper (the shallow zone within it holds a correlation as strong as a
  // reflector's, likely the sharp top interface's head waves, which the smoothed copy
  // turns into diving waves) ...
  const FlatCase c = flat_case();
  expect_flat_interfaces(c, c.truth, reflectivity_image(), "true model, the default", true);
  // ... whereas subtracting what the true model itself predicts leaves nothing: an image
  // that is zero everywhere, refused with a hint rather than written.
  RtmOptions model;
  model.direct = DirectWave::kModel;
  RuntimeOptions ro;
  ro.ncpus = 2;
  ro.ncuda = 0;
  Runtime rt(ro);
  const ImagingResult r = rtm_stack(c.truth, c.survey, c.options, {}, model);
  const auto [acquisition, mute] = rtm_mute(c.truth, c.survey);
  try {
    check_rtm_image(finish_rtm_image(c.truth, r.values, r.illumination, acquisition, mute), model);
    ADD_FAILURE() << "an all-zero image was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--direct-wave smooth"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace starwave::test
