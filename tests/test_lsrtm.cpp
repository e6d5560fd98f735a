// tests/test_lsrtm.cpp — least-squares RTM (src/workflows/lsrtm.hpp): on Born data of a known
// perturbation the data misfit falls by 90 % or more in 20 iterations, the tracked misfit is
// the true one, and the image resembles the perturbation more than RTM's; a resumed run
// ends with the uninterrupted run's bits; a state made with other settings is refused.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/io/hdf5.hpp"
#include "src/runtime/runtime.hpp"
#include "src/synthetic/synth.hpp"
#include "src/workflows/gradient.hpp"
#include "src/workflows/lsrtm.hpp"
#include "src/workflows/modeling.hpp"
#include "tests/helpers.hpp"

namespace starwave::test {
namespace {

/// A Marmousi-like section (40 × 90 cells of 10 m), its smoothed copy the background, and
/// data d = F(v₀) + J δv for δv = the true model less the background: Born data.
struct BornCase {
  Model background;
  std::vector<double> perturbation;
  Survey survey;
  NumericalOptions options;
};

BornCase born_case() {
  SynthOptions so;
  so.kind = "marmousi-like";
  so.nz = 40;
  so.nx = 90;
  so.spacing = 10;
  const Model truth = synthesize(so);
  BornCase c{smoothed(truth, 60), {}, {}, {}};
  c.perturbation.resize(truth.vp.size());
  for (std::size_t i = 0; i < truth.vp.size(); ++i) c.perturbation[i] = truth.vp[i] - c.background.vp[i];
  SurveyOptions sv;
  sv.nshots = 6;
  sv.receiver_every = 2;
  sv.frequency = 12;
  sv.dt = 2e-3;
  sv.t_max = 0.5;
  c.survey = regular_survey(truth, sv);
  c.options.precision = Precision::kDouble;
  c.options.pml_width = 10;
  RuntimeOptions ro;
  ro.ncpus = 2;
  ro.ncuda = 0;
  Runtime rt(ro);
  const std::vector<double> f0 = model_shots_exact(c.background, c.survey, c.options);
  const std::vector<double> j = born_shots_exact(c.background, c.perturbation, c.survey, c.options);
  c.survey.data.resize(f0.size());
  for (std::size_t i = 0; i < f0.size(); ++i) c.survey.data[i] = float(f0[i] + j[i]);
  return c;
}

double correlation(const std::vector<double>& a, const std::vector<double>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

LsrtmResult run(const BornCase& c, LsrtmOptions l) {
  RuntimeOptions ro;
  ro.ncpus = 2;
  ro.ncuda = 0;
  Runtime rt(ro);
  return lsrtm(c.background, c.survey, c.options, l);
}

TEST(Lsrtm, BornDataFitTheirPerturbation) {
  const BornCase c = born_case();
  for (const int variant : {0, 1, 2}) {  // the source illumination, the receiver side's too, none
    const bool precondition = variant < 2;
    // Under the sanitizers each variant runs 5 iterations (the same code in each): the fall
    // in 20 and the images' likeness are the Release pass's to show.
    const bool whole = !kSanitized;
    LsrtmOptions l;
    l.iterations = whole ? 20 : 5;
    l.precondition = precondition;
    l.illumination = variant == 1 ? Compensation::kBoth : Compensation::kSource;
    l.mute = false;  // δv reaches the surface: every cell of it is to be fitted
    const LsrtmResult r = run(c, l);
    ASSERT_EQ(r.iterations, l.iterations);
    ASSERT_EQ(r.misfit.size(), std::size_t(l.iterations + 1));
    const double fall = 1 - r.misfit.back() / r.misfit.front();
    // The misfit it tracks is the data's: ½‖J x − b‖² with b = J δv (the data less F(v₀)).
    std::vector<double> gap(c.perturbation.size());
    for (std::size_t i = 0; i < gap.size(); ++i) gap[i] = r.image[i] - c.perturbation[i];
    RuntimeOptions ro;
    ro.ncpus = 2;
    ro.ncuda = 0;
    Runtime rt(ro);
    const std::vector<double> residual = born_shots_exact(c.background, gap, c.survey, c.options);
    double truth = 0;
    for (double v : residual) truth += 0.5 * v * v;
    const double rtm_corr = correlation(r.rtm, c.perturbation), ls_corr = correlation(r.image, c.perturbation);
    std::cout << (variant == 0   ? "source illumination"
                  : variant == 1 ? "both sides' illumination"
                                 : "plain")
              << ": misfit down " << 100 * fall << " % in " << l.iterations << " iterations (tracked "
              << r.misfit.back() << ", true " << truth << "); correlation with δv: RTM " << rtm_corr << ", LSRTM "
              << ls_corr << "\n";
    EXPECT_NEAR(r.misfit.back(), truth, 0.02 * r.misfit.front()) << "the tracked misfit is the data's";
    if (whole) {
      EXPECT_GE(fall, 0.9) << "precondition " << precondition;
      EXPECT_GT(ls_corr, rtm_corr) << "LSRTM's image resembles δv more than RTM's";
    }
    for (std::size_t k = 1; k < r.misfit.size(); ++k) EXPECT_LE(r.misfit[k], r.misfit[k - 1]) << "iteration " << k;
  }
}

TEST(Lsrtm, ResumedRunEndsWithTheUninterruptedRunsBits) {
  const BornCase c = born_case();
  const std::string dir = ::testing::TempDir() + "/lsrtm-resume";
  std::filesystem::create_directories(dir);
  LsrtmOptions whole;
  whole.iterations = 4;
  whole.state = dir + "/whole.h5";
  const LsrtmResult a = run(c, whole);
  // The acquisition zone's mute (the default) holds δv at 0 there, and only there.
  const std::vector<double> w = rtm_mute_weights(c.background, c.survey);
  std::size_t held = 0, moved = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    held += w[i] == 0 && a.image[i] == 0;
    moved += w[i] > 0 && a.image[i] != 0;
  }
  EXPECT_EQ(held, std::size_t(std::count(w.begin(), w.end(), 0.0)));
  EXPECT_GT(held, 0u);
  EXPECT_GT(moved, w.size() / 2);
  LsrtmOptions part = whole;
  part.state = dir + "/part.h5";
  part.iterations = 2;
  ASSERT_EQ(run(c, part).iterations, 2);
  const std::vector<std::string> arrays = {"image", "normal_residual", "direction", "precond", "illumination",
                                           "rtm",   "history"};
  io::Record saved = io::read_record(part.state, arrays, {"gamma", "iteration"});
  saved.texts = io::read_texts(part.state);
  part.iterations = 4;
  part.resume = true;
  const LsrtmResult b = run(c, part);
  EXPECT_EQ(b.iterations, 4);
  EXPECT_TRUE(same_bits(a.image, b.image));
  EXPECT_TRUE(same_bits(a.misfit, b.misfit));
  // A state made with other settings is refused, naming what differs.
  LsrtmOptions other = part;
  other.precondition = false;
  try {
    run(c, other);
    ADD_FAILURE() << "a state made with --precondition both resumed without it";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--precondition"), std::string::npos) << e.what();
  }
  LsrtmOptions none;
  none.iterations = 0;
  EXPECT_THROW(check_lsrtm_inputs(c.background, c.survey, c.options, none), InputError);
  LsrtmOptions many;
  many.iterations = kMaxIterations + 1;
  EXPECT_THROW(check_lsrtm_iterations(many), InputError);
  // A state whose numbers disagree with each other is refused as damaged, not resumed into a
  // silent stop or a negative misfit: γ that is not ⟨s, P s⟩ (γ edited, the preconditioner
  // edited), a negative misfit, a fractional iteration count.
  auto edited = [&](const std::string& what, const std::function<void(io::Record&)>& edit) {
    io::Record r = saved;
    edit(r);
    LsrtmOptions l = part;
    l.state = dir + "/damaged.h5";
    io::write_record(l.state, r);
    try {
      run(c, l);
      ADD_FAILURE() << what << ": resumed";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("is damaged"), std::string::npos) << what << ": " << e.what();
    }
  };
  edited("γ = −1", [](io::Record& r) { r.scalars["gamma"] = -1; });
  edited("γ = 0", [](io::Record& r) { r.scalars["gamma"] = 0; });
  edited("P × 2", [](io::Record& r) {
    for (double& x : r.arrays["precond"]) x *= 2;
  });
  edited("a negative misfit", [](io::Record& r) { r.arrays["history"].back() = -r.arrays["history"].back(); });
  edited("iteration 2.5", [](io::Record& r) { r.scalars["iteration"] = 2.5; });
  edited("iteration 1e20", [](io::Record& r) { r.scalars["iteration"] = 1e20; });
  // The state as saved resumes (the edits above are what was refused).
  io::write_record(dir + "/intact.h5", saved);
  LsrtmOptions intact = part;
  intact.state = dir + "/intact.h5";
  const LsrtmResult again = run(c, intact);
  EXPECT_EQ(again.iterations, 4);
  EXPECT_TRUE(same_bits(a.image, again.image));
  // Fewer iterations than the state has done cannot give the image asked for: refused, naming
  // both counts. As many: nothing left to do, the image as it is.
  LsrtmOptions fewer = intact;
  fewer.iterations = 3;
  try {
    check_lsrtm_resume(c.background, c.survey, c.options, fewer);
    ADD_FAILURE() << "a 4-iteration state resumed to 3 iterations";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--iterations: 3; " + intact.state + " has done 4 iterations already"),
              std::string::npos)
        << e.what();
  }
  intact.iterations = 4;
  EXPECT_NO_THROW(check_lsrtm_resume(c.background, c.survey, c.options, intact));
}

TEST(Lsrtm, AStateEditedByOtherToolsIsReadAsWritten) {
  // h5py and most HDF5 tools write texts as variable-length strings: read as what they say, so
  // a state re-saved by such a tool is checked against the run, not called an older starwave's.
  // An attribute holding several strings is no text of ours and is passed over.
  const std::string path = ::testing::TempDir() + "/texts.h5";
  io::Record r;
  r.texts["format"] = "fixed";
  r.scalars["iteration"] = 1;
  io::write_record(path, r);
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  H5Adelete(f, "format");
  hid_t vl = H5Tcopy(H5T_C_S1);
  H5Tset_size(vl, H5T_VARIABLE);
  H5Tset_cset(vl, H5T_CSET_UTF8);
  hid_t scalar = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(f, "format", vl, scalar, H5P_DEFAULT, H5P_DEFAULT);
  const char* text = "starwave lsrtm state 1";
  ASSERT_GE(H5Awrite(a, vl, &text), 0);
  H5Aclose(a);
  hid_t two = H5Tcopy(H5T_C_S1);
  H5Tset_size(two, 40);
  const hsize_t n = 2;
  hid_t pair = H5Screate_simple(1, &n, nullptr);
  const char strings[2][40] = {"a first string of the pair", "a second string of the pair"};
  hid_t b = H5Acreate2(f, "notes", two, pair, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(H5Awrite(b, two, strings), 0);
  H5Aclose(b);
  H5Sclose(pair);
  H5Tclose(two);
  H5Sclose(scalar);
  H5Tclose(vl);
  H5Fclose(f);
  const std::map<std::string, std::string> texts = io::read_texts(path);
  ASSERT_EQ(texts.count("format"), 1u);
  EXPECT_EQ(texts.at("format"), "starwave lsrtm state 1");
  EXPECT_EQ(texts.count("notes"), 0u);
}

}  // namespace
}  // namespace starwave::test
