// tests/test_cli.cpp — the `starwave` executable end to end, and one test per bad-input
// rule of docs/design.md §5: one clear line on stderr naming the file or option, a non-zero exit,
// and no output file; plans and projections. Runs in 3-D, out of core, SEG-Y, RTM and fwi:
// tests/test_cli_runs.cpp (the same executable).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "kernels/cpu/levels.hpp"
#include "src/io/hdf5.hpp"
#include "src/plot/figures.hpp"
#include "src/synthetic/synth.hpp"
#include "src/workflows/gradient.hpp"
#include "tests/background.hpp"
#include "tests/cli_fixture.hpp"
#include "tests/png.hpp"

namespace starwave::test {
namespace {

TEST_F(Cli, ModelWritesDataAndPicturesEndToEnd) {
  const std::string out = path("data.h5");
  ASSERT_EQ(run(model_cmd(model_, survey_, out)).status, 0);
  const Survey d = io::read_survey(out, true);
  EXPECT_EQ(d.nshots(), 2);
  float peak = 0;
  for (float v : d.data) peak = std::max(peak, std::abs(v));
  EXPECT_GT(peak, 0.f);
  ASSERT_EQ(run("plot --in " + out + " --shot 1 --out " + path("gather.png")).status, 0);
  ASSERT_EQ(run("plot --in " + model_ + " --out " + path("model.png")).status, 0);
  // The model (40 × 60 layered): one panel at least 800 pixels wide, whose slowest and
  // fastest layers show the ends of the colour scale (its minimum and maximum), a title
  // above, text below (tick values, the axis label).
  const test::Picture model = test::read_png(path("model.png"));
  EXPECT_GE(model.width, 800);
  EXPECT_EQ(test::panels(model), 1);
  EXPECT_GT(test::count_colour(model, figures::colour_of(figures::Colormap::Velocity, 0)), 1000) << "the slowest layer";
  EXPECT_GT(test::count_colour(model, figures::colour_of(figures::Colormap::Velocity, 1)), 1000) << "the fastest layer";
  EXPECT_GT(test::dark_rows(model, 0, 40), 100) << "a title";
  EXPECT_GT(test::dark_rows(model, model.height - 50, model.height), 100) << "x ticks and label";
  // The gather (a receiver per column, time down): at least 800 pixels wide, and the
  // wavefield shows as many shades, not one background colour.
  const test::Picture gather = test::read_png(path("gather.png"));
  EXPECT_GE(gather.width, 800);
  EXPECT_EQ(test::panels(gather), 1);
  EXPECT_GT(gather.colours(70, gather.height - 60), 20u);
  EXPECT_GT(test::dark_rows(gather, 0, 40), 100) << "a title";
  // The output is not overwritten without --overwrite.
  const auto size = fs::file_size(out);
  const Result again = run(model_cmd(model_, survey_, out));
  EXPECT_NE(again.status, 0);
  EXPECT_NE(again.err.find("--overwrite"), std::string::npos);
  EXPECT_EQ(fs::file_size(out), size);
}

TEST_F(Cli, OptionsComeFromAnIniFileAndTheCommandLineWins) {
  const std::string ini = path("run.ini");
  std::ofstream(ini) << "order = 4\npml-width = 10\nprecision = double\n";
  const std::string out = path("data.h5");
  EXPECT_EQ(run(model_cmd(model_, survey_, out, "--config " + ini)).status, 0);
  std::ofstream(path("bad.ini")) << "order = 5\n";
  expect_refused(model_cmd(model_, survey_, path("d2.h5"), "--config " + path("bad.ini")), path("d2.h5"), "--order");
  // A value the file gives that is not one is refused naming the file; the command line's
  // own value wins over the file's.
  std::ofstream(path("typo.ini")) << "order = eight\n";
  expect_refused(model_cmd(model_, survey_, path("d2.h5"), "--config " + path("typo.ini")), path("d2.h5"),
                 "typo.ini: line 1: the argument ('eight') for option 'order' is invalid");
  std::ofstream(path("nan.ini")) << "internal-dt = nan\n";
  expect_refused(model_cmd(model_, survey_, path("d2.h5"), "--config " + path("nan.ini")), path("d2.h5"),
                 "must be a finite number (in " + path("nan.ini") + ", line 1)");
  const Result inf =
      run(model_cmd(model_, survey_, path("d2.h5"), "--config " + path("nan.ini") + " --internal-dt inf"));
  EXPECT_EQ(inf.status, 2);
  EXPECT_EQ(inf.err.find("(in "), std::string::npos) << "the value came from the command line: " << inf.err;
  // Keys that a config file would carry for nothing are refused, not dropped.
  std::ofstream(path("nested.ini")) << "order = 4\nconfig = run.ini\n";
  expect_refused(model_cmd(model_, survey_, path("d2.h5"), "--config " + path("nested.ini")), path("d2.h5"),
                 "nested.ini: 'config' can only be given on the command line");
  std::ofstream(path("help.ini")) << "help = 1\n";
  expect_refused(model_cmd(model_, survey_, path("d2.h5"), "--config " + path("help.ini")), path("d2.h5"),
                 "help.ini: 'help' can only be given on the command line");
  // A binary file, as a key or as a known key's value: its bytes are not echoed to the terminal.
  std::ofstream(path("binary.ini"), std::ios::binary) << std::string("\x1b[2J\x01\xff\xfe = 3\n", 11);
  std::ofstream(path("value.ini"), std::ios::binary) << std::string("order = \x1b[2J\xff\n", 14);
  for (const std::string file : {"binary.ini", "value.ini"}) {
    const Result r = run(model_cmd(model_, survey_, path("d2.h5"), "--config " + path(file)));
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find(file == "binary.ini" ? "binary.ini" : "order"), std::string::npos) << r.err;
    for (const char c : r.err) EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << "a raw byte on stderr: " << r.err;
    EXPECT_FALSE(fs::exists(path("d2.h5")));
  }
  // A NUL byte (Boost's quote of the line would end at it) and a file too large to be options.
  std::ofstream(path("nul.ini"), std::ios::binary) << std::string("order = 4\n\x01\x00\xff = 3\n", 18);
  expect_refused(model_cmd(model_, survey_, path("d2.h5"), "--config " + path("nul.ini")), path("d2.h5"),
                 "nul.ini: line 2 holds a NUL byte");
  std::ofstream(path("big.ini")) << "order = 4\n" << std::string(2 << 20, '#') << "\n";
  expect_refused(model_cmd(model_, survey_, path("d2.h5"), "--config " + path("big.ini")), path("d2.h5"),
                 "big.ini: larger than 1 MiB");
}

TEST_F(Cli, VersionIsTheReleaseAndCommitInfoShows) {
  const Result v = run("--version");
  EXPECT_EQ(v.status, 0) << v.err;
  // "starwave 0.9.0 (f14b916…)": the project's version, then the commit (or "unknown").
  const std::string head = std::string("starwave ") + STARWAVE_PROJECT_VERSION + " (";
  ASSERT_EQ(v.out.rfind(head, 0), 0u) << v.out;
  EXPECT_GT(v.out.size(), head.size() + 2) << "names a commit (or 'unknown')";
  EXPECT_EQ(std::count(v.out.begin(), v.out.end(), '\n'), 1) << v.out;
  const Result i = run("info");
  EXPECT_EQ(i.status, 0) << i.err;
  EXPECT_EQ(i.out.substr(0, i.out.find('\n') + 1), v.out) << "info's first line is the version";
  const Result extra = run("--version extra");
  EXPECT_EQ(extra.status, 2);
  EXPECT_NE(extra.err.find("unexpected word 'extra'"), std::string::npos) << extra.err;
}

TEST_F(Cli, StarPUStartsWithoutTheHwlocPluginsItNeverAsks) {
  // The loader's own record of the files it opens (glibc's LD_DEBUG=files, on stderr):
  // StarPU's start loads hwloc, but not its libxml2, OpenCL and GL plugins (the last tries
  // to open X displays); a user's HWLOC_PLUGINS_BLACKLIST stands, and then hwloc loads the GL
  // plugin where it is installed.
  const Result plain = run("info", "LD_DEBUG=files");
  ASSERT_EQ(plain.status, 0) << plain.err;
  ASSERT_NE(plain.err.find("libhwloc.so"), std::string::npos) << "LD_DEBUG=files records nothing here";
  for (const char* plugin : {"hwloc_xml_libxml.so", "hwloc_opencl.so", "hwloc_gl.so"})
    EXPECT_EQ(plain.err.find(plugin), std::string::npos) << plugin << " loaded";
  const Result user = run("info", "LD_DEBUG=files HWLOC_PLUGINS_BLACKLIST=hwloc_opencl");
  ASSERT_EQ(user.status, 0) << user.err;
  EXPECT_EQ(user.err.find("hwloc_opencl.so"), std::string::npos);
  const bool gl_installed = std::filesystem::exists(HWLOC_PLUGIN_DIR "/hwloc_gl.so");
  EXPECT_EQ(user.err.find("hwloc_gl.so") != std::string::npos, gl_installed) << "the user's list stands";
}

TEST_F(Cli, AMissingInputFileIsRefusedNamingIt) {
  expect_refused(model_cmd(path("nope.h5"), survey_, path("d.h5")), path("d.h5"), "nope.h5");
}

TEST_F(Cli, AModelOfTheWrongShapeIsRefused) {
  const std::string bad = path("bad.h5");
  write_model(bad, 100, 0, std::vector<double>(100, 2000));  // a 1-D /vp
  expect_refused(model_cmd(bad, survey_, path("d.h5")), path("d.h5"), "2-D");
}

TEST_F(Cli, AFileWithoutARequiredAttributeIsRefused) {
  const std::string bad = path("bad.h5");
  write_model(bad, 40, 60, std::vector<double>(2400, 2000), false);
  expect_refused(model_cmd(bad, survey_, path("d.h5")), path("d.h5"), "spacing");
}

TEST_F(Cli, ANaNVelocityIsRefused) {
  std::vector<double> v(2400, 2000);
  v[1234] = std::nan("");
  const std::string bad = path("bad.h5");
  write_model(bad, 40, 60, v);
  expect_refused(model_cmd(bad, survey_, path("d.h5")), path("d.h5"), "/vp holds NaN");
}

TEST_F(Cli, AZeroOrNegativeVelocityIsRefused) {
  std::vector<double> v(2400, 2000);
  v[7] = -1;
  const std::string bad = path("bad.h5");
  write_model(bad, 40, 60, v);
  expect_refused(model_cmd(bad, survey_, path("d.h5")), path("d.h5"), "positive");
}

TEST_F(Cli, ASourceOutsideTheModelIsRefused) {
  // A survey made for a wider model puts sources beyond this one's right edge.
  const std::string wide = path("wide.h5"), s = path("wide-survey.h5");
  ASSERT_EQ(run("synth --kind constant --nz 40 --nx 120 --spacing 10 --out " + wide).status, 0);
  ASSERT_EQ(run("survey --model " + wide + " --nshots 3 --dt 0.002 --t-max 0.2 --out " + s).status, 0);
  expect_refused(model_cmd(model_, s, path("d.h5")), path("d.h5"), "outside the model");
}

TEST_F(Cli, SourcesAndReceiversOffTheGrid) {
  // A survey laid out on a 5 m grid, modeled and migrated on a 10 m one: every other
  // receiver (15 m apart) and some sources fall between the nodes (Hicks' weights).
  const std::string fine = path("fine.h5"), s = path("fine-survey.h5"), d = path("d.h5");
  ASSERT_EQ(run("synth --kind constant --nz 40 --nx 60 --spacing 5 --out " + fine).status, 0);
  ASSERT_EQ(run("survey --model " + fine + " --nshots 2 --receiver-every 3 --dt 0.002 --t-max 0.2 --out " + s).status,
            0);
  const Result r = run(model_cmd(model_, s, d));
  ASSERT_EQ(r.status, 0) << r.err;
  const Survey given = io::read_survey(s, false), data = io::read_survey(d, true);
  EXPECT_EQ(data.receivers, given.receivers) << "positions are written as given";
  bool off = false;
  for (const auto& p : given.receivers_of(0)) off = off || std::fmod(p.x, 10.0) != 0;
  EXPECT_TRUE(off) << "some receivers lie between the 10 m nodes";
  for (int shot = 0; shot < data.nshots(); ++shot)
    for (int rec = 0; rec < data.nrec(); ++rec) {
      double e = 0;
      for (int64_t n = 0; n < data.nt; ++n) {
        const float v = data.observed(shot)[rec * data.nt + n];
        ASSERT_TRUE(std::isfinite(v));
        e += double(v) * v;
      }
      EXPECT_GT(e, 0) << "shot " << shot << ", receiver " << rec;
    }
  const Result g = run("gradient --model " + model_ + " --data " + d + " --out " + path("g.h5"));
  ASSERT_EQ(g.status, 0) << g.err;
  for (float v : io::read_slice(path("g.h5"), "/gradient", 0).values) ASSERT_TRUE(std::isfinite(v));
}

TEST_F(Cli, AnUnstableTimeStepIsRefused) {
  expect_refused(model_cmd(model_, survey_, path("d.h5"), "--internal-dt 0.002"), path("d.h5"), "unstable");
}

TEST_F(Cli, AnUnknownOptionIsRefusedByName) {
  expect_refused(model_cmd(model_, survey_, path("d.h5"), "--frobnicate 3"), path("d.h5"), "frobnicate");
}

TEST_F(Cli, AnOrderOrPrecisionThatDoesNotExistIsRefused) {
  expect_refused(model_cmd(model_, survey_, path("d.h5"), "--order 5"), path("d.h5"), "--order");
  expect_refused(model_cmd(model_, survey_, path("d.h5"), "--precision half"), path("d.h5"), "--precision");
}

TEST_F(Cli, PlottingADatasetTheFileLacksIsRefusedNamingIt) {
  // `plot` of /data from a survey without data names the dataset.
  expect_refused("plot --in " + survey_ + " --dataset /data --out " + path("g.png"), path("g.png"), "/data");
}

TEST_F(Cli, PlottingAFieldPlacedBeyondAnyAxisIsRefused) {
  // An origin of 1e300 m (finite, so read) cannot be placed on a picture's axes: one line naming
  // the file and its origin, exit 2, no picture — not the drawing library's failure.
  const std::string far = path("far.h5");
  write_model(far, 4, 5, std::vector<double>(20, 1500), true, {1e300, 1e300});
  expect_refused("plot --in " + far + " --out " + path("far.png"), path("far.png"),
                 "/vp's origin (1e+300, 1e+300) m, its cells reaching beyond ±1e15 m");
}

TEST_F(Cli, PlotDrawsAModelsReflectivity) {
  // `plot --reflectivity` draws (v[z+1] − v[z]) / (v[z+1] + v[z]) of a layered model: a grey
  // section whose interfaces stand out from a uniform background; not a gather's.
  ASSERT_EQ(run("plot --in " + model_ + " --reflectivity --out " + path("r.png")).status, 0);
  const test::Picture r = test::read_png(path("r.png"));
  EXPECT_GE(r.width, 800);
  EXPECT_GT(r.colours(0, r.height / 2), 2u);
  EXPECT_NE(r.rgb, test::read_png([&] {
                     EXPECT_EQ(run("plot --in " + model_ + " --out " + path("v.png")).status, 0);
                     return path("v.png");
                   }())
                       .rgb);
  const std::string data = path("rd.h5");
  ASSERT_EQ(run(model_cmd(model_, survey_, data)).status, 0);
  expect_refused("plot --in " + data + " --reflectivity --out " + path("rg.png"), path("rg.png"), "--reflectivity");
}

TEST_F(Cli, GradientWritesTheWaveletsGradient) {
  // --source-gradient: /source_gradient (shots × nt) is ∂Φ/∂w. The data are linear in the wavelet,
  // so Φ is quadratic in it and the central difference of the misfits written at w ± δ (δ a
  // bump on every shot's wavelet) is ⟨∂Φ/∂w, δ⟩ up to rounding (double precision, the
  // absorbing layers' frequency fixed: by default it follows the wavelet).
  const std::string data = path("sg_data.h5"), smooth = path("sg_smooth.h5");
  ASSERT_EQ(run(model_cmd(model_, survey_, data)).status, 0);
  ASSERT_EQ(run("synth --kind layered --nz 40 --nx 60 --spacing 10 --smooth 40 --out " + smooth).status, 0);
  Survey s = io::read_survey(data, true);
  const std::size_t nt = std::size_t(s.nt);
  std::vector<double> bump(nt);
  for (std::size_t n = 0; n < nt; ++n) bump[n] = 0.05 * std::exp(-std::pow((double(n) - 40.0) / 8.0, 2));
  for (const double sign : {1.0, -1.0}) {
    Survey changed = s;
    for (auto& w : changed.wavelets)
      for (std::size_t n = 0; n < nt; ++n) w[n] = float(double(w[n]) + sign * bump[n]);
    io::write_survey(path(sign > 0 ? "sg_plus.h5" : "sg_minus.h5"), changed, nullptr);
  }
  const std::string args = " --precision double --pml-frequency 15 --out ";
  const std::string at = "gradient --model " + smooth + " --data ";
  ASSERT_EQ(run(at + data + args + path("sg.h5") + " --source-gradient").status, 0);
  ASSERT_EQ(run(at + data + args + path("sg_plain.h5")).status, 0);
  ASSERT_EQ(run(at + path("sg_plus.h5") + args + path("sgp.h5")).status, 0);
  ASSERT_EQ(run(at + path("sg_minus.h5") + args + path("sgm.h5")).status, 0);
  const std::vector<double> g = io::read_record(path("sg.h5"), {"source_gradient"}, {}).arrays.at("source_gradient");
  ASSERT_EQ(g.size(), std::size_t(s.nshots()) * nt);
  double directional = 0;
  for (std::size_t i = 0; i < g.size(); ++i) directional += g[i] * bump[i % nt];
  const double difference = (root_attribute(path("sgp.h5"), "misfit") - root_attribute(path("sgm.h5"), "misfit")) / 2;
  EXPECT_NE(directional, 0);
  EXPECT_NEAR(difference / directional, 1.0, 1e-4) << "∂Φ/∂w·δ " << directional << ", difference " << difference;
  EXPECT_EQ(io::read_slice(path("sg.h5"), "/gradient", 0).values,
            io::read_slice(path("sg_plain.h5"), "/gradient", 0).values);
  EXPECT_FALSE(io::has_dataset(path("sg_plain.h5"), "/source_gradient"));
  // Out of core (a store split into intervals, StarPU's memory capped): each interval's adjoint
  // writes its steps' samples; the same bits.
  fs::create_directories(path("sg_scratch"));
  ASSERT_EQ(run(at + data + args + path("sgx.h5") + " --source-gradient --scratch " + path("sg_scratch"),
                "STARPU_LIMIT_CPU_MEM=4")
                .status,
            0);
  EXPECT_EQ(io::read_record(path("sgx.h5"), {"source_gradient"}, {}).arrays.at("source_gradient"), g);
  expect_refused("rtm --model " + smooth + " --data " + data + " --source-gradient --out " + path("sgr.h5"),
                 path("sgr.h5"), "source-gradient");
}

TEST_F(Cli, GradientAndRtmEndToEnd) {
  const std::string data = path("data.h5");
  ASSERT_EQ(run(model_cmd(model_, survey_, data)).status, 0);
  const std::string smooth = path("smooth.h5");
  ASSERT_EQ(run("synth --kind layered --nz 40 --nx 60 --spacing 10 --smooth 40 --out " + smooth).status, 0);
  ASSERT_EQ(run("gradient --model " + smooth + " --data " + data + " --out " + path("g.h5")).status, 0);
  const io::Array2D g = io::read_slice(path("g.h5"), "/gradient", 0);
  EXPECT_EQ(g.rows, 40);
  EXPECT_EQ(g.cols, 60);
  double peak = 0;
  for (float v : g.values) peak = std::max(peak, double(std::abs(v)));
  EXPECT_GT(peak, 0);
  ASSERT_EQ(run("rtm --model " + smooth + " --data " + data +
                " --storage full --imaging-condition cross --illumination source --out " + path("i.h5"))
                .status,
            0);
  for (const char* d : {"/image", "/image_raw", "/illumination"})
    EXPECT_EQ(io::read_slice(path("i.h5"), d, 0).values.size(), 40u * 60u) << d;
  ASSERT_EQ(run("plot --in " + path("i.h5") + " --dataset /image --out " + path("i.png")).status, 0);

  // Values, not only shapes. The gradient file's derivative along a smooth bump δ is the
  // central difference of the misfits two more `gradient` runs write at v ± h δ (double
  // precision: the gradient is exact, the difference's error O(h²)). δ is zero on the
  // model's edges: the PML takes its velocity from them, and the gradient holds it fixed.
  const Model v = io::read_model(smooth);
  std::vector<double> bump(v.vp.size()), plus(v.vp), minus(v.vp);
  const double h = 5;  // m/s
  for (int z = 0; z < v.nz; ++z)
    for (int x = 0; x < v.nx; ++x) {
      const std::size_t i = std::size_t(z) * std::size_t(v.nx) + std::size_t(x);
      if (z > 8 && z < 32 && x > 10 && x < 50)  // zero on the edges: the PML copies them
        bump[i] = std::pow(std::sin(M_PI * (z - 8) / 24.0) * std::sin(M_PI * (x - 10) / 40.0), 2);
      plus[i] += h * bump[i];
      minus[i] -= h * bump[i];
    }
  write_model(path("plus.h5"), v.nz, v.nx, plus);
  write_model(path("minus.h5"), v.nz, v.nx, minus);
  const std::string dbl = " --precision double --data " + data + " --out ";
  ASSERT_EQ(run("gradient --model " + smooth + dbl + path("gd.h5")).status, 0);
  ASSERT_EQ(run("gradient --model " + path("plus.h5") + dbl + path("gp.h5")).status, 0);
  ASSERT_EQ(run("gradient --model " + path("minus.h5") + dbl + path("gm.h5")).status, 0);
  const io::Array2D gd = io::read_slice(path("gd.h5"), "/gradient", 0);
  double directional = 0;
  for (std::size_t i = 0; i < bump.size(); ++i) directional += double(gd.values[i]) * bump[i];
  const double difference =
      (root_attribute(path("gp.h5"), "misfit") - root_attribute(path("gm.h5"), "misfit")) / (2 * h);
  EXPECT_NE(directional, 0);
  EXPECT_NEAR(difference / directional, 1.0, 1e-3)
      << "gradient·δ " << directional << ", finite difference " << difference;
  // The same with a trace misfit (--misfit envelope): its own misfit and gradient, recorded.
  const std::string env = " --misfit envelope" + dbl;
  ASSERT_EQ(run("gradient --model " + smooth + env + path("ed.h5")).status, 0);
  ASSERT_EQ(run("gradient --model " + path("plus.h5") + env + path("ep.h5")).status, 0);
  ASSERT_EQ(run("gradient --model " + path("minus.h5") + env + path("em.h5")).status, 0);
  EXPECT_EQ(root_attribute(path("ed.h5"), "misfit_function"), 3.0);
  EXPECT_EQ(root_attribute(path("gd.h5"), "misfit_function"), 0.0);
  const io::Array2D ed = io::read_slice(path("ed.h5"), "/gradient", 0);
  double env_directional = 0;
  for (std::size_t i = 0; i < bump.size(); ++i) env_directional += double(ed.values[i]) * bump[i];
  const double env_difference =
      (root_attribute(path("ep.h5"), "misfit") - root_attribute(path("em.h5"), "misfit")) / (2 * h);
  EXPECT_NE(root_attribute(path("ed.h5"), "misfit"), root_attribute(path("gd.h5"), "misfit"));
  EXPECT_NEAR(env_difference / env_directional, 1.0, 1e-3)
      << "envelope: gradient·δ " << env_directional << ", finite difference " << env_difference;
  expect_refused("gradient --model " + smooth + " --misfit l1 --data " + data + " --out " + path("gx.h5"),
                 path("gx.h5"), "--misfit");
  expect_refused("rtm --model " + smooth + " --misfit correlation --data " + data + " --out " + path("ix.h5"),
                 path("ix.h5"), "misfit");

  // The RTM image is the depth derivative of the illumination-compensated raw stack, muted
  // above the acquisition's mute depth (finish_rtm_image), from the file's own raw stack.
  const io::Array2D raw = io::read_slice(path("i.h5"), "/image_raw", 0);
  const io::Array2D illum = io::read_slice(path("i.h5"), "/illumination", 0);
  const io::Array2D image = io::read_slice(path("i.h5"), "/image", 0);
  double peak_raw = 0;
  for (float x : raw.values) peak_raw = std::max(peak_raw, double(std::abs(x)));
  EXPECT_GT(peak_raw, 0);
  const std::vector<double> r(raw.values.begin(), raw.values.end()), il(illum.values.begin(), illum.values.end());
  const double mute = root_attribute(path("i.h5"), "mute_depth");
  const Survey sv = io::read_survey(data, false);
  const std::vector<double> expected = finish_rtm_image(v, r, il, rtm_mute(v, sv).first, mute);
  double image_peak = 0, worst = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    image_peak = std::max(image_peak, std::abs(expected[i]));
    worst = std::max(worst, std::abs(expected[i] - double(image.values[i])));
  }
  EXPECT_GT(image_peak, 0);
  EXPECT_LE(worst, 1e-5 * image_peak);  // the file's float32 raw stack against the double one it was made from

  // --imaging-condition laplacian: /image is −∇² of the compensated stack instead, the same
  // stack; an unknown condition is refused, nothing written.
  ASSERT_EQ(run("rtm --model " + smooth + " --data " + data +
                " --storage full --imaging-condition laplacian --illumination source --out " + path("il.h5"))
                .status,
            0);
  const io::Array2D lap = io::read_slice(path("il.h5"), "/image", 0);
  EXPECT_EQ(io::read_slice(path("il.h5"), "/image_raw", 0).values, raw.values);
  EXPECT_EQ(root_attribute(path("il.h5"), "imaging_condition"), 1.0);
  const std::vector<double> lap_expected =
      finish_rtm_image(v, r, il, rtm_mute(v, sv).first, mute, ImagingCondition::kLaplacian);
  double lap_peak = 0, lap_worst = 0;
  for (std::size_t i = 0; i < lap_expected.size(); ++i) {
    lap_peak = std::max(lap_peak, std::abs(lap_expected[i]));
    lap_worst = std::max(lap_worst, std::abs(lap_expected[i] - double(lap.values[i])));
  }
  EXPECT_GT(lap_peak, 0);
  EXPECT_LE(lap_worst, 1e-5 * lap_peak);
  expect_refused("rtm --model " + smooth + " --data " + data + " --imaging-condition isotropic --out " + path("ix.h5"),
                 path("ix.h5"), "--imaging-condition");

  // The default, --imaging-condition isic --illumination both: ISIC's own stack (not the
  // cross one), the receiver side's illumination written beside the source side's, the image
  // the stack compensated by their geometric mean.
  ASSERT_EQ(run("rtm --model " + smooth + " --data " + data + " --storage full --out " + path("is.h5")).status, 0);
  EXPECT_EQ(root_attribute(path("is.h5"), "imaging_condition"), 2.0);
  EXPECT_EQ(root_attribute(path("is.h5"), "illumination"), 2.0);
  const io::Array2D isic_raw = io::read_slice(path("is.h5"), "/image_raw", 0);
  EXPECT_NE(isic_raw.values, raw.values);
  EXPECT_EQ(io::read_slice(path("is.h5"), "/illumination", 0).values, illum.values);
  const io::Array2D receiver = io::read_slice(path("is.h5"), "/receiver_illumination", 0);
  std::vector<double> both(il.size());
  for (std::size_t i = 0; i < both.size(); ++i) both[i] = std::sqrt(il[i] * double(receiver.values[i]));
  const std::vector<double> isic_expected =
      finish_rtm_image(v, std::vector<double>(isic_raw.values.begin(), isic_raw.values.end()), both,
                       rtm_mute(v, sv).first, mute, ImagingCondition::kIsic);
  const io::Array2D isic = io::read_slice(path("is.h5"), "/image", 0);
  double isic_peak = 0, isic_worst = 0;
  for (std::size_t i = 0; i < isic_expected.size(); ++i) {
    isic_peak = std::max(isic_peak, std::abs(isic_expected[i]));
    isic_worst = std::max(isic_worst, std::abs(isic_expected[i] - double(isic.values[i])));
  }
  EXPECT_GT(isic_peak, 0);
  EXPECT_LE(isic_worst, 1e-4 * isic_peak);  // float32 inputs of a square root
  expect_refused("rtm --model " + smooth + " --data " + data + " --illumination sideways --out " + path("iy.h5"),
                 path("iy.h5"), "--illumination");
}

TEST_F(Cli, PlanPrintsTheRunsPlanAndRunsNothing) {
  // `plan gradient` with the run's own options prints the line the run prints first, and
  // the run's time step, and writes nothing (not even the --out it is given); a plan that
  // cannot fit is the run's refusal; a plan needs a run to plan (gradient, rtm or fwi).
  const std::string data = path("data.h5");
  ASSERT_EQ(run(model_cmd(model_, survey_, data)).status, 0);
  for (const std::string extra :
       {"", " --store-compression fp16", " --store-compression zfp12", " --checkpoint-every 20", " --storage full"}) {
    const std::string args = "--model " + model_ + " --data " + data + extra;
    const Result plan = run("plan gradient " + args + " --out " + path("never.h5"), "STARPU_NCPU=2");
    ASSERT_EQ(plan.status, 0) << plan.err;
    EXPECT_FALSE(fs::exists(path("never.h5"))) << extra;
    const Result real = run("gradient " + args + " --out " + path("g.h5") + " --overwrite", "STARPU_NCPU=2");
    ASSERT_EQ(real.status, 0) << real.err;
    const std::string first = real.out.substr(0, real.out.find('\n') + 1);
    EXPECT_NE(first.find("one shot in flight holds"), std::string::npos) << real.out;
    EXPECT_EQ(plan.out.substr(0, first.size()), first) << extra;
    EXPECT_NE(plan.out.find(" internal steps of "), std::string::npos) << plan.out;
    EXPECT_NE(plan.out.find("nothing run"), std::string::npos) << plan.out;
    if (extra == " --store-compression fp16" || extra == " --store-compression zfp12") {
      EXPECT_NE(first.find(extra == " --store-compression fp16" ? "in fp16" : "in zfp12"), std::string::npos) << first;
    }
    if (extra == " --checkpoint-every 20") {
      EXPECT_NE(first.find("checkpoints every 20 steps"), std::string::npos) << first;
    }
  }
  const Result rtm = run("plan rtm --model " + model_ + " --data " + data);
  EXPECT_EQ(rtm.status, 0) << rtm.err;
  EXPECT_NE(rtm.out.find("rtm: 2 shots; one shot in flight holds"), std::string::npos) << rtm.out;
  // Too little room for one shot's whole store with checkpoints forbidden: refused as the run is.
  expect_refused("plan gradient --model " + model_ + " --data " + data + " --storage full --checkpoint-every 0",
                 path("none.h5"), "more than the", "STARPU_LIMIT_CPU_MEM=1");
  expect_refused("plan --model " + model_ + " --data " + data, path("none.h5"), "name the run to plan");
  expect_refused("plan model --model " + model_ + " --data " + data, path("none.h5"), "(got 'model')");
  // --memory-limit: the least limit (MiB) the plan accepts, found by bisection, is met with
  // checkpoints (the least memory a shot can take), a generous one with the whole store;
  // below it the run is refused naming the limit; a limit that is not a size is refused.
  auto plan_within = [&](long mib) {
    return run("plan gradient --model " + model_ + " --data " + data + " --memory-limit " + std::to_string(mib) + "M");
  };
  long lo = 1, hi = 8192;
  const Result tight = plan_within(lo);
  EXPECT_NE(tight.err.find("--memory-limit 1 MiB leaves"), std::string::npos) << tight.err;
  const Result generous = plan_within(hi);
  ASSERT_EQ(generous.status, 0) << generous.err;
  EXPECT_EQ(generous.out.find("checkpoints"), std::string::npos) << generous.out;
  // The plan accepted at the least limit, kept from the bisection: the limit counts this
  // process's resident memory, which differs by a little from run to run, so the same limit
  // run again may be refused.
  std::string least = generous.out;
  while (hi - lo > 1) {
    const long mid = (lo + hi) / 2;
    const Result r = plan_within(mid);
    (r.status == 0 ? hi : lo) = mid;
    if (r.status == 0) least = r.out;
  }
  EXPECT_NE(least.find("with checkpoints every"), std::string::npos) << hi << " MiB: " << least;
  expect_refused("plan gradient --model " + model_ + " --data " + data + " --memory-limit 8X", path("none.h5"),
                 "--memory-limit: must be a size");
  // fwi's: its gradients' plan, with a mini-batch's shots in flight; no result, state or pictures.
  const Result inversion = run("plan fwi --model " + model_ + " --data " + data + " --out " + path("f.h5"));
  EXPECT_EQ(inversion.status, 0) << inversion.err;
  EXPECT_NE(inversion.out.find("fwi: each gradient: one shot in flight holds"), std::string::npos) << inversion.out;
  EXPECT_NE(inversion.out.find("; 2 shots in flight"), std::string::npos) << inversion.out;
  const Result batch =
      run("plan fwi --model " + model_ + " --data " + data + " --optimizer adam --batch-shots 1 --learning-rate 10");
  EXPECT_NE(batch.out.find("; 1 shot in flight"), std::string::npos) << batch.out << batch.err;
  for (const char* name : {"f.h5", "f.h5.state", "f_figures"}) EXPECT_FALSE(fs::exists(path(name))) << name;
}

/// Whether process `pid` runs (a zombie nobody reaps — this process's orphans in a container
/// without an init — does not).
bool process_runs(int pid) {
  if (pid <= 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const std::size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z' && text[close + 2] != 'X';
}

TEST_F(Cli, PlanProjectsTheRunToMoreGpusAndNodes) {
  // `plan gradient … --gpus/--nodes` (drivers/project.cpp) with a stand-in for the simulation
  // build: a script that answers as a simulated run does, its time the calibrated forward task's
  // mean (as the plan scaled it into the machine it wrote) × shots / GPUs^0.8. The one-GPU row
  // is then the measured time by construction (K fitted to it), efficiency falls below 80 %
  // after 2 GPUs, and the bad inputs are refused in one line with no folder left behind.
  const std::string data = path("data.h5");
  ASSERT_EQ(run(model_cmd(model_, survey_, data)).status, 0);
  const fs::path cal = dir_ / "cal";
  fs::create_directories(cal / "bus");
  fs::create_directories(cal / "codelets" / "45");
  std::ofstream(cal / "bus" / "box.bandwidth") << "# to 0\tto 1\n0\t20000\n25000\t0\n";
  std::ofstream(cal / "bus" / "box.latency") << "# to 0\tto 1\n0\t10\n12\t0\n";
  std::ofstream(cal / "bus" / "box.platform.v4.xml") << "<host id=\"CPU0\" speed=\"1f\"/>\n";
  std::ofstream(cal / "codelets" / "45" / "starwave_forward.box")
      << "##################\n# Performance Model Version\n45\n\n"
      << "# device type (CPU - 0, CUDA - 1)\n1\n# hash\tsize\tflops\tmean (us)\tdev (us)\tsum\tsum2\tn\n"
      << "0badf00d\t1000\t0.000000e+00\t2.000000e+05\t1.000000e+03\t2.000000e+06\t4.000000e+11\t10\n";
  const std::string sim = path("sim.sh");
  std::ofstream(sim)
      << "#!/bin/sh\n"
      << "[ -n \"$FAIL\" ] && { echo 'Codelet starwave_forward is not calibrated enough' >&2; exit 1; }\n"
      << "f=$STARPU_HOME/.starpu/sampling/codelets/45/starwave_forward.simulated\n"
      << "awk -v s=\"$STARWAVE_PROJECTION_SHOTS\" -v g=\"$STARPU_NCUDA\" "
      << "'/^[0-9a-f]+\t/ { printf \"simulated: %.9g s\\n\", $4 * 1e-6 * s / g ^ 0.8 }' \"$f\"\n";
  fs::permissions(sim, fs::perms::owner_all);
  const std::string base = "plan gradient --model " + model_ + " --data " + data + " --calibration " + cal.string();
  const std::string env = "TMPDIR=" + dir_.string();
  const Result r =
      run(base + " --simulator " + sim + " --gpus 1,2,4 --nodes 1,2 --gpus-per-node 1 --measured 0.3", env);
  ASSERT_EQ(r.status, 0) << r.err;
  // K = 0.2 s × 2 shots / 0.3 s: the one-GPU row is the measured 0.3 s; 2 GPUs 2^0.8 × faster.
  EXPECT_NE(r.out.find("K = 1.33"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("     1         0.3      1.00      100.0 %"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("     2      0.1723      1.74       87.1 %"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("more GPUs stop paying at 2 GPUs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("      2     2        0.15"), std::string::npos) << r.out;  // a shot a node, + the network
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find("starwave-plan."), std::string::npos) << e.path();
  // K given: every GPU task's time / 2.
  const Result given = run(base + " --simulator " + sim + " --gpus 1 --concurrency 2", env);
  ASSERT_EQ(given.status, 0) << given.err;
  EXPECT_NE(given.out.find("     1         0.2      1.00      100.0 %"), std::string::npos) << given.out;
  const std::string out = path("none.h5");
  expect_refused(base + " --gpus 1 --concurrency 2 --measured 0.3", out,
                 "--concurrency: has no effect with --measured");
  expect_refused(base + " --gpus 1 --concurrency -1", out, "--concurrency: must be > 0");
  expect_refused(base + " --gpus 1 --concurrency 1e6 --simulator " + sim, out, "outside 0.001 … 1000");
  // The normal build given as the simulator refuses to project again (it would, for ever).
  expect_refused(base + " --gpus 1 --simulator " + std::string(STARWAVE_BIN), out, "not the simulation build", env);
  expect_refused("plan gradient --model " + model_ + " --data " + data + " --concurrency 2", out,
                 "--concurrency: has no effect without --gpus or --nodes");
  expect_refused("plan gradient --model " + model_ + " --data " + data + " --gpus 1,2", out, "--calibration: required");
  expect_refused(base + " --gpus 0,2", out, "--gpus: every entry must be a whole number 1 … 16");
  expect_refused(base + " --gpus 1,17", out, "--gpus: every entry");
  expect_refused(base + " --gpus 1 --nodes 2 --network 3", out, "--network: BANDWIDTH,LATENCY");
  expect_refused(base + " --gpus 1 --nodes 2 --gpus-per-node 0", out, "--gpus-per-node: 1 … 16");
  expect_refused(base + " --gpus 1,2 --network 10GB/s,1us", out, "--network: has no effect without --nodes");
  expect_refused(base + " --gpus 1,2 --gpus-per-node 8", out, "--gpus-per-node: has no effect without --nodes");
  expect_refused(base + " --gpus 1 --measured 1@99 --simulator " + sim, out, "--measured: SHOTS must be 1 …");
  expect_refused(base + " --gpus 1 --measured fast --simulator " + sim, out, "--measured: SECONDS or SECONDS@SHOTS");
  expect_refused(base + " --gpus 1 --simulator " + path("nothing"), out, "--simulator: ");
  expect_refused(base + " --gpus 1 --host other --simulator " + sim, out, "bus/other.bandwidth: no such file", env);
  expect_refused(base + " --gpus 1 --simulator " + sim, out, "has no GPU measurement of this run's tasks",
                 env + " FAIL=1");
  expect_refused("plan gradient --model " + model_ + " --data " + data + " --gpus 1 --calibration " + dir_.string(),
                 out, "not a StarPU calibration");
  // Networks no machine has, calibrations no machine measured: one line each, exit 2.
  expect_refused(base + " --gpus 1 --nodes 2 --network 1e-300MB/s,2us", out, "--network: a bandwidth of 1e-300 MB/s");
  expect_refused(base + " --gpus 1 --nodes 2 --network 25GB/s,1e9ms", out, "--network: a latency of 1e+12 us");
  const auto damaged = [&](const std::string& name, const fs::path& file, const std::string& text) {
    const fs::path copy = dir_ / name;
    fs::copy(cal, copy, fs::copy_options::recursive);
    fs::remove(copy / file);
    if (!text.empty()) std::ofstream(copy / file) << text;
    return copy.string();
  };
  const std::string on =
      "plan gradient --model " + model_ + " --data " + data + " --gpus 1 --simulator " + sim + " --calibration ";
  const std::vector<std::pair<std::string, std::string>> calibrations = {
      {damaged("inf-bw", "bus/box.bandwidth", "# to 0\tto 1\n0\tinf\n25000\t0\n"),
       "bandwidth from main memory to GPU 0 is inf MB/s, not a measured bandwidth"},
      {damaged("neg-lat", "bus/box.latency", "# to 0\tto 1\n0\t10\n-12\t0\n"),
       "latency from GPU 0 to main memory is -12 µs, not a measured latency"},
      {damaged("random", "codelets/45/starwave_forward.box", "\x7f\x01 not a model at all\n"),
       "starwave_forward.box: not a StarPU 1.3 performance model"},
      {damaged("nan-mean", "codelets/45/starwave_forward.box",
               "##################\n# Performance Model Version\n45\n\n# device type (CPU - 0, CUDA - 1)\n1\n"
               "0badf00d\t1000\t0.000000e+00\tnan\t1.000000e+03\t2.000000e+06\t4.000000e+11\t10\n"),
       "is not a measurement"},
      {damaged("pipe", "codelets/45/starwave_forward.box", ""),
       "starwave_forward.box: a named pipe (FIFO), not a regular file"},
  };
  ASSERT_EQ(mkfifo((dir_ / "pipe" / "codelets" / "45" / "starwave_forward.box").c_str(), 0600), 0);
  // StarPU's own entry for a size it has not measured (n = 0, every number 0) is no damage.
  const fs::path unmeasured = dir_ / "unmeasured";
  fs::copy(cal, unmeasured, fs::copy_options::recursive);
  std::ofstream(unmeasured / "codelets" / "45" / "starwave_misfit.box")
      << "##################\n# Performance Model Version\n45\n\n# device type (CPU - 0, CUDA - 1)\n1\n"
      << "33dde76d\t3004520\t0.000000e+00\t0.000000e+00\t0.000000e+00\t0.000000e+00\t0.000000e+00\t0\n";
  const Result kept = run(on + unmeasured.string(), env + " timeout 60");
  EXPECT_EQ(kept.status, 0) << kept.err;
  for (const auto& [folder, mention] : calibrations) {
    const Result said = run(on + folder, env + " timeout 60");  // a pipe read would block: bounded here
    EXPECT_EQ(said.status, 2) << folder << ": " << said.err;
    EXPECT_NE(said.err.find(mention), std::string::npos) << said.err;
  }
  // Simulators that are not one: exit 2; one that never answers: stopped after
  // STARWAVE_SIMULATION_SECONDS, exit 1; a plan ended by a signal ends its simulator.
  const Result folder = run(base + " --gpus 1 --simulator " + dir_.string());
  EXPECT_EQ(folder.status, 2) << folder.err;
  EXPECT_NE(folder.err.find("--simulator: " + dir_.string() + ": not a program"), std::string::npos) << folder.err;
  const Result not_ours = run(base + " --gpus 1 --simulator /bin/true");
  EXPECT_EQ(not_ours.status, 2) << not_ours.err;
  EXPECT_NE(not_ours.err.find("/bin/true: ran and printed no simulated time"), std::string::npos) << not_ours.err;
  const std::string hang = path("hang.sh"), pid_file = path("hang.pid");
  std::ofstream(hang) << "#!/bin/sh\necho $$ > " << pid_file << "\nexec sleep 1000\n";
  fs::permissions(hang, fs::perms::owner_all);
  const auto started = std::chrono::steady_clock::now();
  const Result hung = run(base + " --gpus 1 --simulator " + hang, env + " STARWAVE_SIMULATION_SECONDS=2");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 30);
  EXPECT_EQ(hung.status, 1) << hung.err;
  EXPECT_NE(hung.err.find("gave no answer in 2 s (STARWAVE_SIMULATION_SECONDS); stopped"), std::string::npos)
      << hung.err;
  const auto simulator_pid = [&] {
    int pid = -1;
    std::ifstream(pid_file) >> pid;
    return pid;
  };
  EXPECT_FALSE(process_runs(simulator_pid())) << "the simulator stopped with the plan";
  fs::remove(pid_file);
  const int plan = test::start_in_background("cd " + dir_.string() + " && " + env + " " + STARWAVE_BIN + " " + base +
                                             " --gpus 1 --simulator " + hang);
  for (int i = 0; i < 3000 && simulator_pid() <= 0; ++i) usleep(10000);
  ASSERT_GT(simulator_pid(), 0) << "the plan started its simulator";
  kill(plan, SIGTERM);
  test::wait_until_gone(plan);
  for (int i = 0; i < 500 && process_runs(simulator_pid()); ++i) usleep(10000);
  EXPECT_FALSE(process_runs(simulator_pid())) << "a plan ended by a signal ends its simulator";
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find("starwave-plan."), std::string::npos) << e.path();
}

}  // namespace
}  // namespace starwave::test
