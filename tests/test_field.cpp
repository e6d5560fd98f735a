// tests/test_field.cpp — a field-like study in small: data made with a wavelet that is not the
// one given (another peak frequency, rotated 60°, 20 ms late), each shot's strength ±30 % and
// noise; FWI from a Ricker guess with and without source estimation, against the run given
// the true wavelets (docs/examples.md has the full-size study).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/misfit_trace.hpp"
#include "src/numerics/filters.hpp"
#include "src/runtime/runtime.hpp"
#include "src/synthetic/synth.hpp"
#include "src/workflows/fwi.hpp"
#include "src/workflows/modeling.hpp"
#include "tests/helpers.hpp"
#include "tests/wavelet_fixture.hpp"

namespace starwave::test {
namespace {

TEST(FieldStudy, EstimatedSourceInvertsAsTheTrueOneAndFarBetterThanTheGuess) {
  SynthOptions so;
  so.kind = "marmousi-like";
  so.nz = 30;
  so.nx = 60;
  so.spacing = 10;
  const Model truth = synthesize(so), initial = smoothed(truth, 80, true);  // the water known
  SurveyOptions sv;
  sv.nshots = 6;
  sv.frequency = 15;  // the guess: a zero-phase Ricker of 15 Hz, unit strength
  sv.t_max = 0.6;     // whole records under the sanitizers too: 0.4 s cuts the late wavelets (strengths 5–11 % low)
  const Survey guess = regular_survey(truth, sv);
  const long nt = long(guess.nt);
  Survey field = guess;
  field.wavelets.clear();
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> spread(-0.3, 0.3);
  for (int s = 0; s < guess.nshots(); ++s)
    field.wavelets.push_back(field_wavelet(11, M_PI / 3, 0.02, 1 + spread(rng), guess.dt, nt));
  NumericalOptions o;
  o.pml_width = 10;
  RuntimeOptions ro;
  ro.ncpus = 2;
  ro.ncuda = 0;
  const Runtime rt(ro);
  std::vector<float> data = model_shots(truth, field, o, nullptr);
  double rms = 0;
  for (float d : data) rms += double(d) * d;
  rms = std::sqrt(rms / double(data.size()));
  std::normal_distribution<double> noise(0, 0.01 * rms);
  for (float& d : data) d += float(noise(rng));

  auto invert_with = [&](const Survey& given, SourceEstimation how, std::vector<std::vector<float>>* first) {
    Survey s = given;
    s.data = data;
    FwiOptions f;
    f.iterations = 4;
    f.bands = {8, 15};
    f.fix_top = 20;
    f.estimate = how;
    f.on_wavelets = [first](int band, const std::vector<std::vector<float>>& w) {
      if (band == 1 && first) *first = w;
    };
    return model_error(invert(initial, s, o, f).model.vp, truth);
  };
  std::vector<std::vector<float>> first;  // the second band's estimates
  const double with_truth = invert_with(field, SourceEstimation::kNone, nullptr);
  const double estimated = invert_with(guess, SourceEstimation::kShot, &first);
  const double guessed = invert_with(guess, SourceEstimation::kNone, nullptr);
  const double start = model_error(initial.vp, truth);
  // After the first band (8 Hz), the second's estimate is each shot's true wavelet: compared
  // low-passed at that band's corner (15 Hz), as the band models with it.
  ASSERT_EQ(first.size(), std::size_t(guess.nshots()));
  for (int s = 0; s < guess.nshots(); ++s) {
    Survey a, b;
    a.dt = b.dt = guess.dt;
    a.nt = b.nt = guess.nt;
    a.wavelets = {first[std::size_t(s)]};
    b.wavelets = {field.wavelets[std::size_t(s)]};
    double ratio = 0;
    const double c = correlation(filters::lowpassed(a, 15).wavelets[0], filters::lowpassed(b, 15).wavelets[0], &ratio);
    std::printf("shot %d: estimate's correlation %.4f, strength ratio %.4f\n", s, c, ratio);
    EXPECT_GE(c, 0.95) << "shot " << s;
    EXPECT_NEAR(ratio, 1.0, 0.05) << "shot " << s;
  }
  std::printf("model error: start %.4f, true wavelets %.4f, estimated %.4f, the guess %.4f\n", start, with_truth,
              estimated, guessed);
  EXPECT_LT(with_truth, start);
  EXPECT_LE(estimated, 1.1 * with_truth) << "start " << start << ", true wavelet " << with_truth << ", guessed "
                                         << guessed;
  EXPECT_GT(guessed, 1.2 * estimated) << "start " << start << ", true wavelet " << with_truth;
}

}  // namespace
}  // namespace starwave::test
