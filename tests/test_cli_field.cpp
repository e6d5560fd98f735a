// tests/test_cli_field.cpp — `starwave fwi` on data whose source wavelet is not the one the
// file gives (--estimate-source): the estimates written, drawn and part of the restart state;
// the time windows around the arrivals (--window), refused when they cannot hold
// (tests/test_cli.cpp's fixture, the same executable).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "src/io/hdf5.hpp"
#include "tests/background.hpp"
#include "tests/cli_fixture.hpp"
#include "tests/png.hpp"

namespace starwave::test {
namespace {

/// Starts `starwave ARGS OUT` in the background and SIGKILLs it once OUT.state holds
/// iteration `n`.
void kill_after_iteration(const std::string& args, const std::string& out, int n) {
  const int pid = test::start_in_background(std::string(STARWAVE_BIN) + " " + args + out);
  ASSERT_GT(pid, 0);
  const int reached = test::wait_for_saved_iteration(out + ".state", n);
  kill(pid, SIGKILL);
  test::wait_until_gone(pid);
  ASSERT_GE(reached, n) << "the inversion never saved iteration " << n;
}

/// Two results' /vp, bit for bit.
void expect_same_vp(const std::string& a_path, const std::string& b_path) {
  const io::Array2D a = io::read_slice(a_path, "/vp", 0), b = io::read_slice(b_path, "/vp", 0);
  ASSERT_EQ(a.values.size(), b.values.size());
  EXPECT_EQ(std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)), 0);
}

TEST_F(Cli, FwiEstimatesTheSourceWritesDrawsAndResumesIt) {
  // Field-like data: traces made with the fixture's survey whose wavelet is 20 ms late and
  // each shot's own strength (1.3, 0.7), in a file that gives the fixture's wavelet.
  Survey field = io::read_survey(survey_, false);
  const std::vector<float> guess = field.wavelets[0];
  const long shift = std::lround(0.02 / field.dt), nt = long(field.nt);
  field.wavelets.clear();
  for (double scale : {1.3, 0.7}) {
    std::vector<float> w(guess.size(), 0.0f);
    for (std::size_t t = std::size_t(shift); t < w.size(); ++t) w[t] = float(scale) * guess[t - std::size_t(shift)];
    field.wavelets.push_back(w);
  }
  const std::string data = path("given.h5"), smooth = path("smooth.h5");
  io::write_survey(path("field_survey.h5"), field, nullptr);
  ASSERT_EQ(
      run("model --model " + model_ + " --survey " + path("field_survey.h5") + " --out " + path("field.h5")).status, 0);
  Survey recorded = io::read_survey(path("field.h5"), true);
  recorded.wavelets = {guess};
  io::write_survey(data, recorded, nullptr);
  ASSERT_EQ(run("synth --kind layered --nz 40 --nx 60 --spacing 10 --smooth 40 --out " + smooth).status, 0);
  const std::string common = "fwi --model " + smooth + " --data " + data +
                             " --estimate-source shot --bands 8,12 --iterations 3 --quiet --figures-every 0 --out ";
  ASSERT_EQ(run(common + path("whole.h5") + " --figures " + path("figs")).status, 0);
  // One wavelet a shot, each the given one's shape 20 ms late and the shot's strength.
  hid_t f = H5Fopen(path("whole.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  hid_t d = H5Dopen2(f, "/wavelet", H5P_DEFAULT);
  ASSERT_GE(d, 0);
  std::vector<float> w(std::size_t(2 * nt));
  ASSERT_GE(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, w.data()), 0);
  H5Dclose(d);
  H5Fclose(f);
  const double scales[] = {1.3, 0.7};
  for (int s = 0; s < 2; ++s) {
    double ab = 0, aa = 0, bb = 0;
    for (long t = shift; t < nt; ++t) {
      const double a = w[std::size_t(s * nt + t)], b = scales[s] * guess[std::size_t(t - shift)];
      ab += a * b;
      aa += a * a;
      bb += b * b;
    }
    EXPECT_GT(ab / std::sqrt(aa * bb), 0.9) << "shot " << s;
    EXPECT_NEAR(std::sqrt(aa / bb), 1.0, 0.15) << "shot " << s;
  }
  EXPECT_EQ(root_attribute(path("whole.h5"), "estimate_source"), 2.0);
  for (const char* p : {"wavelet_1.png", "wavelet_spectrum_1.png", "wavelet_2.png", "wavelet_spectrum_2.png"}) {
    const test::Picture pic = test::read_png(path("figs") + "/" + p);
    EXPECT_EQ(pic.width, 800) << p;
    EXPECT_GT(pic.colours(0, pic.height / 2), 2u) << p;
  }

  // Killed once its state holds iteration 4 (band 2, whose estimate it carries), resumed:
  // the uninterrupted run's bits; a resume that asks for another estimation is refused.
  const std::string killed = path("killed.h5");
  ASSERT_NO_FATAL_FAILURE(kill_after_iteration(common, killed, 4));
  const std::string other = "fwi --model " + smooth + " --data " + data +
                            " --estimate-source band --bands 8,12 --iterations 3 --quiet --figures-every 0 --out ";
  expect_refused(other + killed + " --resume", killed, "--estimate-source");
  ASSERT_EQ(run(common + killed + " --resume").status, 0);
  expect_same_vp(path("whole.h5"), killed);
  expect_refused("fwi --model " + smooth + " --data " + data + " --estimate-source trace --out " + path("x.h5"),
                 path("x.h5"), "--estimate-source");

  // gradient and rtm estimate first too: the wavelets written, the misfit of the data's own
  // wavelets far below the guess's (in the true model: all but the noise-free data's rounding).
  const std::string at_truth = "gradient --model " + model_ + " --data " + data + " --out ";
  ASSERT_EQ(run(at_truth + path("g_guess.h5")).status, 0);
  ASSERT_EQ(run(at_truth + path("g_est.h5") + " --estimate-source shot").status, 0);
  EXPECT_LT(root_attribute(path("g_est.h5"), "misfit"), 0.05 * root_attribute(path("g_guess.h5"), "misfit"));
  EXPECT_EQ(root_attribute(path("g_est.h5"), "estimate_source"), 2.0);
  const io::Array2D per_shot = io::read_slice(path("g_est.h5"), "/wavelet", 0);
  EXPECT_EQ(per_shot.rows, 2);
  EXPECT_EQ(per_shot.cols, int(nt));
  ASSERT_EQ(
      run("rtm --model " + smooth + " --data " + data + " --estimate-source band --out " + path("i_est.h5")).status, 0);
  EXPECT_EQ(root_attribute(path("i_est.h5"), "estimate_source"), 1.0);
  const io::Array2D one = io::read_slice(path("i_est.h5"), "/wavelet", 0);
  EXPECT_EQ(one.rows, 1);
  EXPECT_EQ(one.cols, int(nt));
}

TEST_F(Cli, GradientAndFwiCompareWindowsAroundTheArrivalsResumeWithThemAndRefuseBadOnes) {
  const std::string data = path("data.h5"), smooth = path("smooth.h5"), x = path("x.h5");
  ASSERT_EQ(run("model --model " + model_ + " --survey " + survey_ + " --out " + data).status, 0);
  ASSERT_EQ(run("synth --kind layered --nz 40 --nx 60 --spacing 10 --smooth 40 --out " + smooth).status, 0);
  const std::string g = "gradient --quiet --model " + smooth + " --data " + data + " --out ";
  ASSERT_EQ(run(g + path("all.h5")).status, 0);
  ASSERT_EQ(run(g + path("picked.h5") + " --window 0.01,0.08").status, 0);
  ASSERT_EQ(run(g + path("placed.h5") + " --window 0.01,0.08 --window-velocity 2500").status, 0);
  const double all = root_attribute(path("all.h5"), "misfit");
  const double picked = root_attribute(path("picked.h5"), "misfit"),
               placed = root_attribute(path("placed.h5"), "misfit");
  EXPECT_LT(picked, 0.95 * all) << "the window leaves the later arrivals out";
  EXPECT_LT(placed, 0.95 * all);
  EXPECT_GT(picked, 0);
  EXPECT_NE(picked, placed);
  // Each result says its window (the taper by default a quarter of BEFORE + AFTER).
  EXPECT_EQ(root_attribute(path("picked.h5"), "window_before"), 0.01);
  EXPECT_EQ(root_attribute(path("picked.h5"), "window_after"), 0.08);
  EXPECT_EQ(root_attribute(path("picked.h5"), "window_taper"), 0.25 * (0.01 + 0.08));
  EXPECT_EQ(root_attribute(path("picked.h5"), "window_velocity"), 0.0);
  EXPECT_EQ(root_attribute(path("placed.h5"), "window_velocity"), 2500.0);
  EXPECT_TRUE(std::isnan(root_attribute(path("all.h5"), "window_after"))) << "no window, no window attributes";

  // The record is 0.3 s: a longer window, a velocity without a window, a malformed window, a
  // negative velocity: one line each, nothing written.
  expect_refused(g + x + " --window 0.1,0.25", x, "--window: BEFORE + AFTER = 0.35 s is not shorter than the record");
  expect_refused(g + x + " --window-velocity 2000", x, "--window-velocity");
  expect_refused(g + x + " --window 0.01", x, "--window");
  expect_refused(g + x + " --window 0.01,0.05 --window-velocity -3", x, "--window-velocity");

  // fwi: the windows picked at each band's start are part of the state: a run killed after its
  // fourth iteration and resumed ends with the uninterrupted run's bits; another window is refused.
  const std::string common = "fwi --model " + smooth + " --data " + data +
                             " --window 0.01,0.1 --misfit correlation --bands 8,12 --iterations 3 --quiet "
                             "--figures-every 0 --out ";
  ASSERT_EQ(run(common + path("whole.h5")).status, 0);
  const std::string killed = path("killed.h5");
  ASSERT_NO_FATAL_FAILURE(kill_after_iteration(common, killed, 4));
  expect_refused("fwi --model " + smooth + " --data " + data +
                     " --window 0.02,0.1 --misfit correlation --bands 8,12 --iterations 3 --quiet --out " + killed +
                     " --resume",
                 killed, "--window");
  ASSERT_EQ(run(common + killed + " --resume").status, 0);
  expect_same_vp(path("whole.h5"), killed);
  EXPECT_EQ(root_attribute(killed, "window_after"), 0.1);
  expect_refused("fwi --model " + smooth + " --data " + data + " --window 0.2,0.2 --out " + x, x, "--window");
}

}  // namespace
}  // namespace starwave::test
