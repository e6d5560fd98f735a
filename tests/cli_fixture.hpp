// tests/cli_fixture.hpp — what the `starwave` executable's tests share (test_cli.cpp,
// test_cli_runs.cpp): the Cli fixture (a folder of the test's own with a layered model and a
// two-shot survey; `starwave ARGS` run and its refusals checked), and small file readers.
#pragma once

#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace starwave::test {

namespace fs = std::filesystem;

struct Result {
  int status;
  std::string err;
  std::string out;
};

class Cli : public ::testing::Test {
 protected:
  // The model and survey are made once (`synth`, `survey`) and copied into each test's folder.
  static void SetUpTestSuite() {
    made_ = fs::temp_directory_path() / ("starwave-cli-" + std::to_string(getpid()) + "-inputs");
    fs::remove_all(made_);
    fs::create_directories(made_);
    const std::string model = (made_ / "vp.h5").string(), survey = (made_ / "survey.h5").string();
    made_ok_ = run("synth --kind layered --nz 40 --nx 60 --spacing 10 --out " + model).status == 0 &&
               run("survey --model " + model + " --nshots 2 --dt 0.002 --t-max 0.3 --out " + survey).status == 0;
  }
  static void TearDownTestSuite() { fs::remove_all(made_); }

  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("starwave-cli-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    model_ = path("vp.h5");
    survey_ = path("survey.h5");
    ASSERT_TRUE(made_ok_) << "`starwave synth` or `survey` failed making the tests' inputs";
    fs::copy_file(made_ / "vp.h5", model_);
    fs::copy_file(made_ / "survey.h5", survey_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  /// Runs `starwave ARGS` with the environment assignments `env` ("NAME=value …") first.
  static Result run(const std::string& args, const std::string& env = "") {
    const std::string stem = (fs::temp_directory_path() / ("starwave-cli-" + std::to_string(getpid()))).string();
    const std::string err = stem + ".err", out = stem + ".out";
    const std::string cmd = env + " " + std::string(STARWAVE_BIN) + " " + args + " >" + out + " 2>" + err;
    const int raw = std::system(cmd.c_str());
    auto take = [](const std::string& file) {
      std::ifstream in(file);
      std::stringstream ss;
      ss << in.rdbuf();
      fs::remove(file);
      return ss.str();
    };
    const std::string text = take(err);
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : 128, text, take(out)};
  }

  /// Runs `model` with the given inputs and asserts the refusal rules.
  void expect_refused(const std::string& args, const std::string& out, const std::string& mention,
                      const std::string& env = "") {
    const Result r = run(args, env);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line on stderr, got:\n" << r.err;
    EXPECT_NE(r.err.find(mention), std::string::npos) << "stderr should mention '" << mention << "':\n" << r.err;
    EXPECT_FALSE(fs::exists(out)) << "no output file may be left: " << out;
    for (const auto& e : fs::directory_iterator(dir_))
      EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << "temporary left: " << e.path();
  }

  /// /vp of (nz, nx) values `vp`, with spacing [10, 10] unless not `with_spacing`, and `origin`
  /// (two values) when given.
  void write_model(const std::string& p, int nz, int nx, const std::vector<double>& vp, bool with_spacing = true,
                   const std::vector<double>& origin = {}) {
    hid_t f = H5Fcreate(p.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t dims[2] = {hsize_t(nz), hsize_t(nx)};
    hid_t s = H5Screate_simple(nx > 0 ? 2 : 1, dims, nullptr);
    hid_t d = H5Dcreate2(f, "/vp", H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, vp.data());
    auto pair = [&](const char* name, const double* values) {
      const hsize_t two = 2;
      hid_t as = H5Screate_simple(1, &two, nullptr);
      hid_t a = H5Acreate2(d, name, H5T_IEEE_F64LE, as, H5P_DEFAULT, H5P_DEFAULT);
      H5Awrite(a, H5T_NATIVE_DOUBLE, values);
      H5Aclose(a);
      H5Sclose(as);
    };
    const double sp[2] = {10, 10};
    if (with_spacing) pair("spacing", sp);
    if (origin.size() == 2) pair("origin", origin.data());
    H5Dclose(d);
    H5Sclose(s);
    H5Fclose(f);
  }

  /// PREFIXvp.h5 (layered, 150 × 300 at 10 m), PREFIXsmooth.h5 (it smoothed over 40 m),
  /// PREFIXs.h5 (`nshots` shots, 1.5 s at 2 ms) and its data PREFIXd.h5: a case whose boundary
  /// store (~113 MiB a shot) StarPU's main memory capped at 40 MiB cannot hold.
  void make_store_case(const std::string& prefix, int nshots) {
    const std::string m = path(prefix + "vp.h5"), s = path(prefix + "s.h5");
    ASSERT_EQ(run("synth --kind layered --nz 150 --nx 300 --spacing 10 --out " + m).status, 0);
    ASSERT_EQ(run("synth --kind layered --nz 150 --nx 300 --spacing 10 --smooth 40 --out " + path(prefix + "smooth.h5"))
                  .status,
              0);
    ASSERT_EQ(run("survey --model " + m + " --nshots " + std::to_string(nshots) + " --dt 0.002 --t-max 1.5 --out " + s)
                  .status,
              0);
    ASSERT_EQ(run(model_cmd(m, s, path(prefix + "d.h5"))).status, 0);
  }

  std::string model_cmd(const std::string& model, const std::string& survey, const std::string& out,
                        const std::string& extra = "") {
    return "model --quiet --model " + model + " --survey " + survey + " --out " + out + " " + extra;
  }

  fs::path dir_;
  std::string model_, survey_;
  inline static fs::path made_;
  inline static bool made_ok_ = false;
};

/// A root attribute of an HDF5 file, as a double.
inline double root_attribute(const std::string& file, const char* name) {
  double v = std::nan("");
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t a = H5Aopen(f, name, H5P_DEFAULT);
  if (a >= 0 && H5Aread(a, H5T_NATIVE_DOUBLE, &v) < 0) v = std::nan("");
  if (a >= 0) H5Aclose(a);
  if (f >= 0) H5Fclose(f);
  return v;
}

}  // namespace starwave::test
