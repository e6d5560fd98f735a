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
#include <functional>

#include <atomic>
#include <thread>

#include "src/base/error.hpp"
#include "src/io/hdf5.hpp"
#include "src/numerics/filters.hpp"
#include "src/runtime/runtime.hpp"
#include "src/synthetic/synth.hpp"
#include "src/workflows/fwi.hpp"
#include "src/workflows/gradient.hpp"
#include "src/workflows/modeling.hpp"
#include "tests/helpers.hpp"

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
  // Under the sanitizers (test::kRecordShare < 1) a shorter record that still sees the whole
  // section: the two-way time to its bottom (300 m) at the water's 1500 m/s.
  sv.t_max = test::kRecordShare < 1 ? 0.4 : 0.6;
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

/// Roughness of a field: energy of its second differences over its energy.
double roughness(const std::vector<double>& f, int nz, int nx) {
  double num = 0, den = 0;
  for (int z = 1; z + 1 < nz; ++z)
    for (int x = 1; x + 1 < nx; ++x) {
      const auto at = [&](int zz, int xx) { return f[std::size_t(zz) * std::size_t(nx) + std::size_t(xx)]; };
      const double l = at(z + 1, x) + at(z - 1, x) + at(z, x + 1) + at(z, x - 1) - 4 * at(z, x);
      num += l * l;
      den += at(z, x) * at(z, x);
    }
  return num / den;
}

TEST(Filters, ButterworthPassesBelowTheCornerAndStopsAbove) {
  const double dt = 1e-3, fc = 10;
  auto gain = [&](double f) {  // steady-state amplitude of a sinusoid after the filter
    std::vector<float> x(4000);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(std::sin(2 * M_PI * f * double(i) * dt));
    filters::lowpass(x.data(), x.size(), dt, fc);
    double peak = 0;
    for (std::size_t i = 2000; i < x.size(); ++i) peak = std::max(peak, std::abs(double(x[i])));
    return peak;
  };
  EXPECT_NEAR(gain(2), 1.0, 0.01);
  EXPECT_NEAR(gain(fc), std::sqrt(0.5), 0.01);                  // −3 dB at the corner
  EXPECT_NEAR(gain(3 * fc), 1 / std::sqrt(1 + 6561.0), 0.002);  // 4th order: |H|² = 1 / (1 + (f/fc)⁸)
  EXPECT_LT(gain(40), 0.005);
  std::vector<float> x(10, 1.0f);
  EXPECT_THROW(filters::lowpass(x.data(), x.size(), dt, 600), InputError);  // above Nyquist
}

TEST(Filters, GaussianWithZeroEdgesIsSymmetricAndGaussian) {
  // uᵀ B w = wᵀ B u for the smoothing used in the preconditioner (L-BFGS's H₀ must be symmetric).
  const int nz = 13, nx = 17;
  std::vector<double> u(std::size_t(nz * nx)), w(u.size());
  for (std::size_t i = 0; i < u.size(); ++i) {
    u[i] = std::sin(0.7 * double(i) + 0.3);
    w[i] = std::cos(1.3 * double(i) * double(i % 7));
  }
  const auto bu = filters::gaussian(u, nz, nx, 10, 10, 25, filters::Edge::kZero);
  const auto bw = filters::gaussian(w, nz, nx, 10, 10, 25, filters::Edge::kZero);
  double a = 0, b = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    a += w[i] * bu[i];
    b += u[i] * bw[i];
  }
  EXPECT_NEAR(a, b, 1e-12 * std::abs(a));
  // A spike becomes the Gaussian of σ = 25 m: exp(−½ (r/σ)²) relative to its centre.
  std::vector<double> spike(u.size(), 0.0);
  spike[6 * nx + 8] = 1;
  const auto g = filters::gaussian(spike, nz, nx, 10, 10, 25, filters::Edge::kZero);
  EXPECT_NEAR(g[6 * nx + 10] / g[6 * nx + 8], std::exp(-0.5 * 0.64), 1e-12);
  EXPECT_NEAR(g[3 * nx + 8] / g[6 * nx + 8], std::exp(-0.5 * 1.44), 1e-12);
  EXPECT_NEAR(g[4 * nx + 9] / g[6 * nx + 8], std::exp(-0.5 * (0.64 + 0.16)), 1e-12);
  // Replicated edges keep a constant field constant.
  const auto c = filters::gaussian(std::vector<double>(u.size(), 3.0), nz, nx, 10, 10, 25, filters::Edge::kReplicate);
  for (double x : c) EXPECT_NEAR(x, 3.0, 1e-12);
}

TEST(Fwi, LowPassedWaveletModelsTheLowPassedData) {
  // Frequency continuation filters the observed data and the wavelet by the same causal
  // filter: the data are linear and time-invariant in the wavelet, so modeling with the
  // filtered wavelet must give the filtered data. Not to round-off: the CPML is tuned to
  // the wavelet's dominant frequency, so the boundary's weak reflections differ between
  // the two; a 30-cell PML keeps them below 1e−3 (a 10-cell one: 0.9%).
  Runtime rt(two_cpus());
  Case c = small_case();
  c.options.pml_width = 30;
  c.survey.data = model_shots(c.truth, c.survey, c.options, nullptr);
  const Survey low = filters::lowpassed(c.survey, 6);
  Survey s = low;
  s.data.clear();
  const std::vector<float> modeled = model_shots(c.truth, s, c.options, nullptr);
  ASSERT_EQ(modeled.size(), low.data.size());
  double num = 0, den = 0, full = 0;
  for (std::size_t i = 0; i < modeled.size(); ++i) {
    num += (double(modeled[i]) - low.data[i]) * (double(modeled[i]) - low.data[i]);
    den += double(low.data[i]) * low.data[i];
    full += double(c.survey.data[i]) * c.survey.data[i];
  }
  EXPECT_LT(std::sqrt(num / den), 1e-3);
  EXPECT_LT(den, 0.5 * full) << "the filter removed little: the test would not see a mismatch";
}

TEST(Fwi, OptimiserWorksOnTheCallingThreadOnEachEvaluationsWholeResult) {
  Runtime rt(two_cpus());
  const Case c = small_case();
  const int nshots = c.survey.nshots();
  // The shot callbacks come from worker threads, one at a time, counting up to every shot.
  std::atomic<int> shots{0}, last{0};
  GradientHooks hooks;
  hooks.on_shot_done = [&](int done, int total) {
    EXPECT_EQ(total, nshots);
    EXPECT_EQ(done, last.load() + 1);
    last = done;
    ++shots;
  };
  const ImagingResult first = misfit_gradient(c.initial, c.survey, c.options, hooks);
  EXPECT_EQ(shots.load(), nshots);

  // The inversion: each report on the calling thread, after every shot of every evaluation
  // since the last report has finished; its first misfit is that gradient's, bit for bit.
  FwiOptions f;
  f.iterations = 3;
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> done{0};
  int counted = 0, reports = 0;
  f.on_shot_done = [&](int, int) { ++done; };
  f.on_iteration = [&](const FwiProgress& p) {
    ++reports;
    EXPECT_EQ(std::this_thread::get_id(), caller);
    const int since = done.load() - counted;
    counted = done.load();
    EXPECT_EQ(since, p.evaluations * nshots);  // the first counts the band's first evaluation
  };
  const FwiResult r = invert(c.initial, c.survey, c.options, f);
  EXPECT_EQ(reports, r.iterations);
  EXPECT_GE(reports, 1);
  ASSERT_FALSE(r.misfit.empty());
  EXPECT_EQ(r.misfit.front(), first.misfit);
}

TEST(Fwi, StreamedDataAreReadOnceBeforeAnyWorkThenOncePerEvaluationWithTheHeldDatasBits) {
  // Streamed observed data: each shot read once before any work (checked; its checksum kept
  // for the restart state's record; the pictures' shot kept whole), then once per evaluation
  // as the shot is submitted, never to make the state's record. The inversion ends with the
  // bits of one on the same data held in memory, and both states record the same data.
  Runtime rt(two_cpus());
  const Case c = small_case();
  const int nshots = c.survey.nshots();
  const std::size_t per_shot = std::size_t(c.survey.nrec()) * std::size_t(c.survey.nt);
  const fs::path dir = fs::temp_directory_path() / ("starwave-streamed-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "d.h5").string();
  {
    io::DataWriter w(path, c.survey, nullptr);
    for (int k = 0; k < nshots; ++k) w.write_shot(k, c.survey.observed(k));
    w.commit();
  }
  const Survey bare = io::read_survey(path, true, [](int) { return false; });
  ASSERT_EQ(bare.observed(0), nullptr);
  const StreamedData data = stream_observed_data(path, bare, 2);
  ASSERT_EQ(data.kept.size(), per_shot);
  EXPECT_EQ(std::memcmp(data.kept.data(), c.survey.observed(2), per_shot * sizeof(float)), 0);

  std::atomic<int> reads{0};
  int evaluations = 0;
  FwiOptions f;
  f.iterations = 2;
  f.state = (dir / "streamed.state").string();
  f.observed = [&](int k) {
    ++reads;
    return data.read(k);
  };
  f.observed_checksums = data.checksums;
  f.on_plan = [&](const MemoryNeed&, std::uint64_t, const ShotPlacement&, int) { ++evaluations; };
  const FwiResult streamed = invert(c.initial, bare, c.options, f);
  ASSERT_GE(evaluations, 3);
  EXPECT_EQ(reads.load(), evaluations * nshots) << "a shot read other than once per evaluation";

  FwiOptions g;
  g.iterations = 2;
  g.state = (dir / "held.state").string();
  const FwiResult held = invert(c.initial, c.survey, c.options, g);
  ASSERT_EQ(held.model.vp.size(), streamed.model.vp.size());
  EXPECT_EQ(std::memcmp(held.model.vp.data(), streamed.model.vp.data(), held.model.vp.size() * sizeof(double)), 0);
  EXPECT_EQ(held.misfit, streamed.misfit);
  const auto a = io::read_texts(f.state), b = io::read_texts(g.state);
  ASSERT_TRUE(a.count("made_with_data_traces"));
  EXPECT_EQ(a.at("made_with_data_traces"), b.at("made_with_data_traces"));
  fs::remove_all(dir);
}

TEST(Fwi, GradientDescentWithSmoothingLowersTheMisfitWithSmoothUpdates) {
  Runtime rt(two_cpus());
  const Case c = small_case();
  FwiOptions f;
  f.optimizer = optim::Optimizer::kGd;
  f.iterations = 3;
  f.learning_rate = 30;
  const FwiResult rough = invert(c.initial, c.survey, c.options, f);
  f.smooth = 30;
  const FwiResult smooth = invert(c.initial, c.survey, c.options, f);
  ASSERT_EQ(smooth.iterations, 3);
  FwiOptions none;
  none.iterations = 0;
  EXPECT_LT(invert(smooth.model, c.survey, c.options, none).misfit.front(), smooth.misfit.front());
  std::vector<double> du(c.initial.vp.size()), ds(du.size());
  double largest = 0;
  for (std::size_t i = 0; i < du.size(); ++i) {
    du[i] = rough.model.vp[i] - c.initial.vp[i];
    ds[i] = smooth.model.vp[i] - c.initial.vp[i];
    largest = std::max(largest, std::abs(ds[i]));
  }
  EXPECT_LE(largest, 3 * 30 + 1e-9) << "gd moves no cell more than the learning rate per iteration";
  EXPECT_LT(roughness(ds, c.initial.nz, c.initial.nx), 0.5 * roughness(du, c.initial.nz, c.initial.nx));
}

TEST(Fwi, BandsRunInOrderLowerEachBandsMisfitAndResumeBitForBit) {
  Runtime rt(two_cpus());
  const Case c = small_case();
  const fs::path dir = fs::temp_directory_path() / ("starwave-bands-" + std::to_string(getpid()));
  fs::create_directories(dir);
  FwiOptions f;
  f.bands = {6, 10};
  f.iterations = 3;
  f.state = (dir / "a").string();
  std::vector<int> bands_seen;
  f.on_iteration = [&](const FwiProgress& p) {
    bands_seen.push_back(p.band);
    EXPECT_EQ(p.frequency, f.bands[std::size_t(p.band)]);
    EXPECT_LT(p.relative, 1.0);
  };
  const FwiResult whole = invert(c.initial, c.survey, c.options, f);
  ASSERT_EQ(whole.iterations, 6);
  EXPECT_EQ(bands_seen, (std::vector<int>{0, 0, 0, 1, 1, 1}));
  ASSERT_EQ(whole.misfit.size(), 8u);  // each band's start, then its 3 iterations
  EXPECT_EQ(whole.band, (std::vector<double>{0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_LT(whole.misfit[3], 0.7 * whole.misfit[0]);
  EXPECT_LT(whole.misfit[7], 0.7 * whole.misfit[4]);
  EXPECT_LT(whole.misfit[0], whole.misfit[4]) << "the 6 Hz data carry less energy than the 10 Hz ones";

  // Stopped in the second band, resumed: the same model bit for bit.
  f.state = (dir / "b").string();
  int done = 0;
  f.on_iteration = [&](const FwiProgress& p) { done = p.iteration; };
  f.stop_requested = [&] { return done >= 4; };
  ASSERT_TRUE(invert(c.initial, c.survey, c.options, f).stopped);
  f.stop_requested = nullptr;
  f.resume = true;
  const FwiResult resumed = invert(c.initial, c.survey, c.options, f);
  EXPECT_EQ(resumed.iterations, 6);
  EXPECT_EQ(std::memcmp(resumed.model.vp.data(), whole.model.vp.data(), whole.model.vp.size() * sizeof(double)), 0);
  EXPECT_EQ(resumed.misfit, whole.misfit);
  fs::remove_all(dir);
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
  f.optimizer = optim::Optimizer::kAdam;
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

/// The bytes of a file.
std::string contents(const fs::path& p) {
  std::FILE* f = std::fopen(p.c_str(), "rb");
  std::string bytes;
  if (!f) return bytes;
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) bytes.append(buf, n);
  std::fclose(f);
  return bytes;
}

TEST(Fwi, ResumeWithAnythingElseThanWhatMadeTheStateIsRefusedAndTheStateUntouched) {
  Runtime rt(two_cpus());
  const Case c = small_case();
  const fs::path dir = fs::temp_directory_path() / ("starwave-fwi-made-" + std::to_string(getpid()));
  fs::create_directories(dir);
  struct Change {
    const char* what;
    std::function<void(Model&, Survey&, NumericalOptions&, FwiOptions&)> apply;
    std::string mention;  // in the one-line refusal
  };
  const std::vector<Change> lbfgs_changes = {
      {"order", [](Model&, Survey&, NumericalOptions& o, FwiOptions&) { o.order = 4; }, "--order 8, this run has 4"},
      {"PML", [](Model&, Survey&, NumericalOptions& o, FwiOptions&) { o.pml_width = 12; }, "--pml-width 10"},
      {"free surface", [](Model&, Survey&, NumericalOptions& o, FwiOptions&) { o.free_surface = true; },
       "--free-surface off, this run has on"},
      {"precision", [](Model&, Survey&, NumericalOptions& o, FwiOptions&) { o.precision = Precision::kDouble; },
       "--precision single, this run has double"},
      {"storage",
       [](Model&, Survey&, NumericalOptions& o, FwiOptions&) { o.storage = ShotProblem<double>::kStoreFull; },
       "--storage boundary, this run has full"},
      {"internal step", [](Model&, Survey& s, NumericalOptions& o, FwiOptions&) { o.internal_dt = s.dt / 2; },
       "--internal-dt 0"},
      {"optimizer", [](Model&, Survey&, NumericalOptions&, FwiOptions& f) { f.optimizer = optim::Optimizer::kGd; },
       "--optimizer lbfgs, this run has gd"},
      {"memory", [](Model&, Survey&, NumericalOptions&, FwiOptions& f) { f.memory = 3; }, "--memory 5, this run has 3"},
      {"smoothing", [](Model&, Survey&, NumericalOptions&, FwiOptions& f) { f.smooth = 20; }, "--smooth 0"},
      {"fix-top", [](Model&, Survey&, NumericalOptions&, FwiOptions& f) { f.fix_top = 30; }, "--fix-top 0"},
      {"bounds", [](Model&, Survey&, NumericalOptions&, FwiOptions& f) { f.vmax = 5000; }, "--vmax 0"},
      {"bands",
       [](Model&, Survey&, NumericalOptions&, FwiOptions& f) {
         f.bands = {6, 9};
       },
       "--bands none, this run has 6,9"},
      {"model values", [](Model& m, Survey&, NumericalOptions&, FwiOptions&) { m.vp[333] += 1; },
       "the initial model's values"},
      {"model spacing", [](Model& m, Survey&, NumericalOptions&, FwiOptions&) { m.dx = 11; },
       "the initial model's spacing"},
      {"traces", [](Model&, Survey& s, NumericalOptions&, FwiOptions&) { s.data[4321] *= 1.5f; },
       "the observed traces"},
      {"positions", [](Model&, Survey& s, NumericalOptions&, FwiOptions&) { s.receivers[0][2].x += 10; }, "positions"},
      {"wavelet", [](Model&, Survey& s, NumericalOptions&, FwiOptions&) { s.wavelets[0][20] *= 2; }, "wavelets"},
      {"dt", [](Model&, Survey& s, NumericalOptions&, FwiOptions&) { s.dt *= 0.5; }, "the data's dt"},
  };
  const std::vector<Change> adam_changes = {
      {"learning rate", [](Model&, Survey&, NumericalOptions&, FwiOptions& f) { f.learning_rate = 7; },
       "--learning-rate 20, this run has 7"},
      {"seed", [](Model&, Survey&, NumericalOptions&, FwiOptions& f) { f.seed = 9; }, "--seed 1, this run has 9"},
      {"batch", [](Model&, Survey&, NumericalOptions&, FwiOptions& f) { f.batch_shots = 4; },
       "--batch-shots 3, this run has 4"},
  };
  for (const std::string optimizer : {"lbfgs", "adam"}) {
    FwiOptions made;
    made.iterations = 1;
    ASSERT_TRUE(optim::parse_optimizer(optimizer, made.optimizer));
    if (optimizer == "adam") made.batch_shots = 3;
    made.state = (dir / (optimizer + ".state")).string();
    ASSERT_EQ(invert(c.initial, c.survey, c.options, made).iterations, 1);
    const std::string saved = contents(made.state);
    ASSERT_FALSE(saved.empty());
    for (const Change& change : optimizer == "adam" ? adam_changes : lbfgs_changes) {
      SCOPED_TRACE(optimizer + ": another " + change.what);
      Model m = c.initial;
      Survey s = c.survey;
      NumericalOptions o = c.options;
      FwiOptions f = made;
      f.iterations = 2;
      f.resume = true;
      change.apply(m, s, o, f);
      try {
        check_resume(m, s, o, f);
        ADD_FAILURE() << "check_resume accepted it";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(change.mention), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
      }
      EXPECT_THROW(invert(m, s, o, f), InputError);
      EXPECT_TRUE(contents(made.state) == saved) << "the state changed";
    }
    // The same settings and inputs, and a longer run: resumed.
    FwiOptions same = made;
    same.iterations = 2;
    same.resume = true;
    EXPECT_NO_THROW(check_resume(c.initial, c.survey, c.options, same));
    EXPECT_EQ(invert(c.initial, c.survey, c.options, same).iterations, 2);
  }
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
