// tests/test_source.cpp — the source wavelet estimated from the data (src/workflows/source_estimate.hpp):
// in the true model the Wiener filter turns a wrong guess (another peak frequency, no phase
// rotation, no delay, unit strength) into each shot's true wavelet; one filter for all shots
// gives their mean; what carries no energy is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "kernels/misfit_trace.hpp"
#include "src/base/error.hpp"
#include "src/runtime/runtime.hpp"
#include "src/synthetic/synth.hpp"
#include "src/workflows/modeling.hpp"
#include "src/workflows/source_estimate.hpp"
#include "tests/wavelet_fixture.hpp"

namespace starwave::test {
namespace {

TEST(SourceEstimation, TheTrueModelsFilterGivesEachShotsTrueWavelet) {
  SynthOptions so;
  so.kind = "marmousi-like";
  so.nz = 60;
  so.nx = 120;
  so.spacing = 10;
  const Model truth = synthesize(so);
  SurveyOptions sv;
  sv.nshots = 4;
  sv.receiver_every = 2;
  sv.frequency = 12;
  sv.dt = 1e-3;
  sv.t_max = 0.8;
  Survey guess = regular_survey(truth, sv);  // a Ricker of 12 Hz, zero phase, unit strength
  const long nt = long(guess.nt);
  Survey field = guess;
  const double scales[] = {0.7, 1.3, 1.1, 0.85};  // each shot's strength
  field.wavelets.clear();
  for (int s = 0; s < guess.nshots(); ++s)
    field.wavelets.push_back(field_wavelet(9, M_PI / 3, 0.02, scales[s], guess.dt, nt));
  NumericalOptions o;
  o.order = 8;
  RuntimeOptions ro;
  ro.ncpus = 2;
  ro.ncuda = 0;
  std::optional<Runtime> rt;
  rt.emplace(ro);
  const std::vector<float> observed = model_shots(truth, field, o, nullptr);
  const std::vector<float> modelled = model_shots(truth, guess, o, nullptr);
  const long per_shot = long(guess.nrec()) * nt;
  FilterSums all;
  for (int s = 0; s < guess.nshots(); ++s) {
    const FilterSums one =
        shot_filter_sums(modelled.data() + s * per_shot, observed.data() + s * per_shot, {}, {}, guess.nrec(), nt);
    const std::vector<float> w = filtered_wavelet(guess.wavelet(s), one, "shot " + std::to_string(s));
    const std::vector<float>& want = field.wavelets[std::size_t(s)];
    EXPECT_GT(correlation(w, want), 0.99) << "shot " << s;
    EXPECT_NEAR(norm_ratio(w, want), 1.0, 0.03) << "shot " << s;  // 0.976–0.99: the records cut late arrivals
    EXPECT_LT(correlation(guess.wavelet(s), want), 0.8) << "the guess is not the answer";
    all.add(one);
  }
  // The estimation as fwi runs it (estimate_wavelets: modelled, summed, filtered) gives the
  // same bits on 1 and 2 workers, and per shot the wavelets above.
  for (SourceEstimation how : {SourceEstimation::kShot, SourceEstimation::kBand}) {
    Survey held = guess;
    held.data = observed;
    const auto two = estimate_wavelets(truth, guess, held, o, how, {}, "test");
    rt.reset();
    RuntimeOptions r1 = ro;
    r1.ncpus = 1;
    rt.emplace(r1);
    const auto one = estimate_wavelets(truth, guess, held, o, how, {}, "test");
    rt.reset();
    rt.emplace(ro);
    ASSERT_EQ(two.size(), how == SourceEstimation::kShot ? std::size_t(guess.nshots()) : 1u);
    for (std::size_t k = 0; k < two.size(); ++k) {
      EXPECT_EQ(one[k], two[k]) << source_estimation_name(how) << ", wavelet " << k;
      if (how == SourceEstimation::kShot) {
        EXPECT_GT(correlation(two[k], field.wavelets[k]), 0.99);
      }
    }
  }
  // One filter for all shots: the wavelet of about their mean strength (each shot weighted
  // by its modelled energy), the shape still the true one.
  const std::vector<float> w = filtered_wavelet(guess.wavelet(0), all, "every shot");
  const std::vector<float> mean = field_wavelet(9, M_PI / 3, 0.02, 0.9875, guess.dt, nt);
  EXPECT_GT(correlation(w, mean), 0.99);
  EXPECT_NEAR(norm_ratio(w, mean), 1.0, 0.05);
}

TEST(SourceEstimation, WhereTheDataCarryNoEnergyTheWaveletIsKeptAndNothingIsRefused) {
  const long nrec = 3, nt = 64;
  std::vector<float> modelled(std::size_t(nrec * nt), 0.0f), observed(modelled.size(), 0.0f);
  const std::vector<float> wavelet = ricker(20, 0.05, 2e-3, nt);
  EXPECT_THROW(
      filtered_wavelet(wavelet, shot_filter_sums(modelled.data(), observed.data(), {}, {}, nrec, nt), "band 1"),
      InputError);
  try {
    filtered_wavelet(wavelet, shot_filter_sums(modelled.data(), observed.data(), {}, {}, nrec, nt), "band 1");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--estimate-source: band 1"), std::string::npos) << e.what();
  }
  // Modelled data without observed ones: refused too.
  for (long i = 0; i < nrec * nt; ++i) modelled[std::size_t(i)] = wavelet[std::size_t(i % nt)];
  try {
    filtered_wavelet(wavelet, shot_filter_sums(modelled.data(), observed.data(), {}, {}, nrec, nt), "band 2, shot 3");
    ADD_FAILURE() << "observed data without energy taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("band 2, shot 3: the observed data hold no energy"), std::string::npos)
        << e.what();
  }
  // Observed = modelled: the filter is 1 and the wavelet comes back as it was.
  for (long i = 0; i < nrec * nt; ++i)
    modelled[std::size_t(i)] = observed[std::size_t(i)] = wavelet[std::size_t(i % nt)];
  const std::vector<float> same =
      filtered_wavelet(wavelet, shot_filter_sums(modelled.data(), observed.data(), {}, {}, nrec, nt), "band 1");
  for (long t = 0; t < nt; ++t) EXPECT_NEAR(same[std::size_t(t)], wavelet[std::size_t(t)], 1e-6);
  EXPECT_EQ(parse_source_estimation("shot"), SourceEstimation::kShot);
  EXPECT_THROW(parse_source_estimation("trace"), InputError);
}

}  // namespace
}  // namespace starwave::test
