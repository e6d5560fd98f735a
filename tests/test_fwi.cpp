// tests/test_fwi.cpp — the inversion: L-BFGS lowers the misfit and the model error, keeps
// the bounds, and a stopped-then-resumed run ends bit-for-bit where an uninterrupted one
// does.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "src/runtime.hpp"
#include "src/synth.hpp"
#include "src/workflows/fwi.hpp"
#include "src/workflows/modeling.hpp"

namespace starwave {
namespace {

namespace fs = std::filesystem;

struct Case {
  Model truth, initial;
  Survey survey;
  NumericalOptions options;
};

/// A small Marmousi-like section; the initial model is the truth smoothed over 80 m.
Case small_case() {
  SynthOptions so;
  so.kind = "marmousi-like";
  so.nz = 30;
  so.nx = 60;
  so.spacing = 10;
  Case c{synthesize(so), {}, {}, {}};
  c.initial = smoothed(c.truth, 80);
  SurveyOptions sv;
  sv.nshots = 6;
  sv.frequency = 15;
  sv.t_max = 0.6;
  c.survey = regular_survey(c.truth, sv);
  c.options.pml_width = 10;
  c.survey.data = model_shots(c.truth, c.survey, c.options, nullptr);
  return c;
}

double error(const Model& m, const Model& truth) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < m.vp.size(); ++i) {
    num += (m.vp[i] - truth.vp[i]) * (m.vp[i] - truth.vp[i]);
    den += truth.vp[i] * truth.vp[i];
  }
  return std::sqrt(num / den);
}

RuntimeOptions two_cpus() {
  RuntimeOptions ro;
  ro.ncpus = 2;
  ro.ncuda = 0;
  return ro;
}

TEST(Fwi, LbfgsLowersMisfitAndModelErrorWithinBounds) {
  Runtime rt(two_cpus());
  const Case c = small_case();
  FwiOptions f;
  f.iterations = 20;
  f.vmin = 1500;
  f.vmax = c.truth.vmax() - 200;  // below the truth's fast body
  int reports = 0;
  f.on_iteration = [&](const FwiProgress& p) {
    ++reports;
    EXPECT_EQ(p.iteration, reports);
    EXPECT_LT(p.relative, 1.0);
  };
  const FwiResult r = invert(c.initial, c.survey, c.options, f);
  ASSERT_EQ(r.iterations, 20) << "the line search gave up early";
  EXPECT_EQ(reports, 20);
  ASSERT_EQ(r.misfit.size(), 21u);
  EXPECT_LE(r.misfit.back(), 0.1 * r.misfit.front()) << "misfit " << r.misfit.front() << " → " << r.misfit.back();
  for (std::size_t k = 1; k < r.misfit.size(); ++k) EXPECT_LE(r.misfit[k], r.misfit[k - 1]) << "iteration " << k;
  const double e0 = error(c.initial, c.truth), e1 = error(r.model, c.truth);
  EXPECT_LT(e1, 0.92 * e0) << "model error " << e0 << " → " << e1;
  double lo = 1e300, hi = 0;
  for (double v : r.model.vp) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, f.vmin);
  EXPECT_LE(hi, f.vmax);
  std::printf("misfit %.4g → %.4g (%.1f%%), model error %.4f → %.4f\n", r.misfit.front(), r.misfit.back(),
              100 * r.misfit.back() / r.misfit.front(), e0, e1);
}

TEST(Fwi, BoundsBindByProjection) {
  // Tight bounds: the initial model is clamped into them, and every trial stays inside.
  Runtime rt(two_cpus());
  const Case c = small_case();
  FwiOptions f;
  f.iterations = 3;
  f.vmin = 1600;
  f.vmax = 2600;
  const FwiResult r = invert(c.initial, c.survey, c.options, f);
  ASSERT_GE(r.iterations, 1);
  double lo = 1e300, hi = 0;
  for (double v : r.model.vp) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_EQ(lo, 1600);
  EXPECT_EQ(hi, 2600);
}

TEST(Fwi, FixTopKeepsTheShallowRows) {
  Runtime rt(two_cpus());
  const Case c = small_case();
  FwiOptions f;
  f.iterations = 3;
  f.fix_top = 45;  // rows 0–4 (depths 0–40 m)
  const FwiResult r = invert(c.initial, c.survey, c.options, f);
  ASSERT_EQ(r.iterations, 3);
  int moved_below = 0;
  for (int z = 0; z < c.initial.nz; ++z)
    for (int x = 0; x < c.initial.nx; ++x) {
      const std::size_t i = std::size_t(z) * std::size_t(c.initial.nx) + std::size_t(x);
      if (z < 5)
        ASSERT_EQ(r.model.vp[i], c.initial.vp[i]) << "row " << z << " column " << x;
      else
        moved_below += r.model.vp[i] != c.initial.vp[i];
    }
  EXPECT_GT(moved_below, 0);
}

TEST(Fwi, AdamOnMiniBatchesIsReproducibleFromItsSeed) {
  Runtime rt(two_cpus());
  const Case c = small_case();
  // The batches: k distinct shots, a function of (seed, iteration) only.
  for (int t = 1; t <= 5; ++t) {
    const std::vector<int> b = batch_of(7, t, 6, 2);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_LT(b[0], b[1]);
    EXPECT_EQ(b, batch_of(7, t, 6, 2));
  }
  bool differs = false;
  for (int t = 1; t <= 5; ++t) differs |= batch_of(7, t, 6, 2) != batch_of(8, t, 6, 2);
  EXPECT_TRUE(differs) << "another seed draws other batches";
  FwiOptions f;
  f.optimizer = "adam";
  f.batch_shots = 2;
  f.seed = 7;
  f.iterations = 5;
  const FwiResult a = invert(c.initial, c.survey, c.options, f);
  const FwiResult b = invert(c.initial, c.survey, c.options, f);
  ASSERT_EQ(a.iterations, 5);
  EXPECT_EQ(std::memcmp(a.model.vp.data(), b.model.vp.data(), a.model.vp.size() * sizeof(double)), 0);
  EXPECT_EQ(a.misfit, b.misfit);
  f.seed = 8;
  const FwiResult other = invert(c.initial, c.survey, c.options, f);
  EXPECT_NE(std::memcmp(a.model.vp.data(), other.model.vp.data(), a.model.vp.size() * sizeof(double)), 0);
  // It does invert: the full misfit at the end is below the initial one.
  NumericalOptions o = c.options;
  FwiOptions none;
  none.iterations = 0;
  const FwiResult end = invert(a.model, c.survey, o, none);
  EXPECT_LT(end.misfit.front(), a.misfit.front());
  // And a stopped Adam run resumes bit for bit (moments and batches included).
  const fs::path dir = fs::temp_directory_path() / ("starwave-adam-" + std::to_string(getpid()));
  fs::create_directories(dir);
  f.seed = 7;
  f.state = (dir / "s").string();
  int done = 0;
  f.on_iteration = [&](const FwiProgress& p) { done = p.iteration; };
  f.stop_requested = [&] { return done >= 2; };
  ASSERT_TRUE(invert(c.initial, c.survey, c.options, f).stopped);
  f.stop_requested = nullptr;
  f.resume = true;
  const FwiResult resumed = invert(c.initial, c.survey, c.options, f);
  EXPECT_EQ(std::memcmp(resumed.model.vp.data(), a.model.vp.data(), a.model.vp.size() * sizeof(double)), 0);
  fs::remove_all(dir);
}

TEST(Fwi, StoppedAndResumedRunEndsBitForBitLikeAnUninterruptedOne) {
  Runtime rt(two_cpus());
  const Case c = small_case();
  const fs::path dir = fs::temp_directory_path() / ("starwave-fwi-" + std::to_string(getpid()));
  fs::create_directories(dir);
  FwiOptions f;
  f.iterations = 6;
  f.state = (dir / "a.state").string();
  const FwiResult whole = invert(c.initial, c.survey, c.options, f);
  ASSERT_EQ(whole.iterations, 6);

  f.state = (dir / "b.state").string();
  int done = 0;
  f.on_iteration = [&](const FwiProgress& p) { done = p.iteration; };
  f.stop_requested = [&] { return done >= 3; };  // as a SIGTERM after the third iteration
  const FwiResult first = invert(c.initial, c.survey, c.options, f);
  EXPECT_TRUE(first.stopped);
  EXPECT_EQ(first.iterations, 3);
  f.stop_requested = nullptr;
  f.resume = true;
  const FwiResult resumed = invert(c.initial, c.survey, c.options, f);
  ASSERT_EQ(resumed.iterations, 6);
  ASSERT_EQ(resumed.model.vp.size(), whole.model.vp.size());
  EXPECT_EQ(std::memcmp(resumed.model.vp.data(), whole.model.vp.data(), whole.model.vp.size() * sizeof(double)), 0);
  EXPECT_EQ(resumed.misfit, whole.misfit);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace starwave
