// tests/hostile_fixture.hpp — what the hostile-user tests share (tests/test_hostile.cpp,
// tests/test_hostile_runs.cpp): running `starwave` in a folder, a snapshot of the folder to
// prove a refusal touched nothing, the HDF5 damage the tests do to valid files, and the
// Hostile fixture.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <sstream>
#include <string_view>
#include <thread>

#include "tests/helpers.hpp"

namespace starwave::test {

namespace fs = std::filesystem;

struct Result {
  int status;  // exit status, or 128 + the signal that ended it
  std::string err;
};

/// Runs `starwave ARGS` in `dir` (a shell line: ARGS may hold redirections or `ulimit`
/// before it through `prefix`).
inline Result run_in(const fs::path& dir, const std::string& args, const std::string& prefix = "") {
  const fs::path err = dir.parent_path() / (dir.filename().string() + ".stderr");
  const std::string cmd = "cd '" + dir.string() + "' && " + prefix + " " + std::string(STARWAVE_BIN) + " " + args +
                          " >/dev/null 2>'" + err.string() + "'";
  const int raw = std::system(cmd.c_str());
  std::ifstream in(err);
  std::stringstream ss;
  ss << in.rdbuf();
  fs::remove(err);
  int status = 128;
  if (WIFEXITED(raw)) status = WEXITSTATUS(raw);
  return {status, ss.str()};
}

/// What a folder holds: each file's name, size and a hash of its bytes (hidden files
/// included). A hash, not the bytes: the folders hold files of 16 MB, read before and after
/// each of ~170 runs.
inline std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  std::string bytes;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) {
      files[fs::relative(e.path(), dir).string() + "/"] = "";
      continue;
    }
    std::ifstream in(e.path(), std::ios::binary);
    bytes.resize(std::size_t(e.file_size()));
    in.read(bytes.data(), std::streamsize(bytes.size()));
    bytes.resize(std::size_t(in.gcount()));
    in.peek();  // a file that grew since its size was read differs from one that did not
    files[fs::relative(e.path(), dir).string()] =
        std::to_string(bytes.size()) + (in.eof() ? " " : "+ ") + std::to_string(std::hash<std::string_view>{}(bytes));
  }
  return files;
}

/// Rewrites value `index` of `dataset` (any numeric type) as `value`.
inline void poke(const fs::path& file, const std::string& dataset, std::size_t index, double value) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0) << file;
  const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  ASSERT_GE(d, 0) << dataset;
  const hid_t space = H5Dget_space(d);
  std::vector<double> v(std::size_t(H5Sget_simple_extent_npoints(space)));
  ASSERT_GE(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0);
  ASSERT_LT(index, v.size());
  v[index] = value;
  ASSERT_GE(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0);
  H5Sclose(space);
  H5Dclose(d);
  H5Fclose(f);
}

/// Writes `data` as survey `survey` with `/data` all zeros (nshots, nrec, nt): observed data a
/// gradient or RTM reads like any other, made without modeling them.
inline void write_zero_data(const fs::path& survey, const fs::path& data) {
  fs::copy_file(survey, data);
  const hid_t f = H5Fopen(data.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0) << data;
  long long nt = 0;
  const hid_t a = H5Aopen(f, "nt", H5P_DEFAULT);
  ASSERT_GE(a, 0) << survey << ": nt";
  ASSERT_GE(H5Aread(a, H5T_NATIVE_LLONG, &nt), 0);
  H5Aclose(a);
  hsize_t shots[2], receivers[2];
  for (auto [name, dims] : {std::pair{"/source/position", shots}, std::pair{"/receiver/position", receivers}}) {
    const hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    const hid_t space = H5Dget_space(d);
    ASSERT_EQ(H5Sget_simple_extent_dims(space, dims, nullptr), 2) << name;
    H5Sclose(space);
    H5Dclose(d);
  }
  const hsize_t dims[3] = {shots[0], receivers[0], hsize_t(nt)};
  const std::vector<float> zeros(dims[0] * dims[1] * dims[2], 0.0f);
  const hid_t space = H5Screate_simple(3, dims, nullptr);
  const hid_t d = H5Dcreate2(f, "/data", H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros.data()), 0);
  H5Dclose(d);
  H5Sclose(space);
  H5Fclose(f);
}

/// Sets the root attribute `name` (replacing it) to a float64 scalar.
inline void set_root_attribute(const fs::path& file, const std::string& name, double value) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0) << file;
  if (H5Aexists(f, name.c_str()) > 0) H5Adelete(f, name.c_str());
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t a = H5Acreate2(f, name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_DOUBLE, &value);
  H5Aclose(a);
  H5Sclose(space);
  H5Fclose(f);
}

/// Sets attribute `name` of `object` (a dataset or group) to float64 `values`, replacing it.
inline void set_attribute(const fs::path& file, const std::string& object, const std::string& name,
                          const std::vector<double>& values) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0) << file;
  const hid_t o = H5Oopen(f, object.c_str(), H5P_DEFAULT);
  ASSERT_GE(o, 0) << object;
  if (H5Aexists(o, name.c_str()) > 0) H5Adelete(o, name.c_str());
  const hsize_t n = values.size();
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t a = H5Acreate2(o, name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_DOUBLE, values.data());
  H5Aclose(a);
  H5Sclose(space);
  H5Oclose(o);
  H5Fclose(f);
}

inline void remove_root_attribute(const fs::path& file, const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0) << file;
  ASSERT_GE(H5Adelete(f, name.c_str()), 0) << name;
  H5Fclose(f);
}

/// Replaces `dataset` by one of shape `dims` that is declared but never written (chunked:
/// the file stays tiny whatever the shape), keeping `spacing` on it for /vp.
inline void declare_huge(const fs::path& file, const std::string& dataset, const std::vector<hsize_t>& dims) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0) << file;
  H5Ldelete(f, dataset.c_str(), H5P_DEFAULT);
  const hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  std::vector<hsize_t> chunk(dims.size(), 1);
  chunk.back() = 64;
  H5Pset_chunk(dcpl, int(chunk.size()), chunk.data());
  const hid_t d = H5Dcreate2(f, dataset.c_str(), H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  ASSERT_GE(d, 0);
  H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(f);
  if (dataset == "/vp") set_attribute(file, "/vp", "spacing", {10, 10});  // the new dataset's
}

/// A filter only this test process knows (starwave, another process, has no plugin for
/// it): it stores the bytes as they are.
inline std::size_t copy_filter(unsigned, std::size_t, const unsigned[], std::size_t nbytes, std::size_t*, void**) {
  return nbytes;
}

/// Rewrites `dataset` (float32, shape kept, a `spacing` of 10 m for /vp) through a
/// compression filter that starwave cannot decode, as a file made with a plugin is.
inline void compress_with_unknown_filter(const fs::path& file, const std::string& dataset) {
  constexpr H5Z_filter_t kFilter = 40000;  // in HDF5's range for unregistered filters
  static const H5Z_class2_t filter = {H5Z_CLASS_T_VERS,      kFilter, 1,       1,
                                      "a test's own filter", nullptr, nullptr, copy_filter};
  ASSERT_GE(H5Zregister(&filter), 0);
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0) << file;
  hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  hid_t space = H5Dget_space(d);
  std::vector<hsize_t> dims(std::size_t(H5Sget_simple_extent_ndims(space)));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  std::vector<float> v(std::size_t(H5Sget_simple_extent_npoints(space)));
  ASSERT_GE(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0);
  H5Dclose(d);
  H5Ldelete(f, dataset.c_str(), H5P_DEFAULT);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, int(dims.size()), dims.data());
  ASSERT_GE(H5Pset_filter(dcpl, kFilter, H5Z_FLAG_MANDATORY, 0, nullptr), 0);
  d = H5Dcreate2(f, dataset.c_str(), H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  ASSERT_GE(d, 0);
  ASSERT_GE(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0);
  H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(f);
  if (dataset == "/vp") set_attribute(file, "/vp", "spacing", {10, 10});  // the new dataset's
}

class Hostile : public ::testing::Test {
 protected:
  /// The files every case starts from, made once: a model, a survey, its data, a
  /// gradient, an inversion's result and state, and damaged copies of them.
  static void SetUpTestSuite() {
    base_ = fs::temp_directory_path() / ("starwave-hostile-" + std::to_string(getpid()));
    fs::remove_all(base_);
    fs::create_directories(base_);
    auto make = [](const std::string& args) {
      const Result r = run_in(base_, args + " --quiet");
      ASSERT_EQ(r.status, 0) << args << "\n" << r.err;
    };
    make("synth --kind layered --nz 40 --nx 60 --spacing 10 --out vp.h5");
    make("survey --model vp.h5 --nshots 2 --dt 0.002 --t-max 0.3 --out s.h5");
    make("model --model vp.h5 --survey s.h5 --out d.h5");
    make("gradient --model vp.h5 --data d.h5 --out g.h5");
    make("synth --kind layered --nz 40 --nx 60 --spacing 10 --smooth 40 --out init.h5");
    make("fwi --model init.h5 --data d.h5 --out r.h5 --iterations 1 --figures-every 0");
    auto copy = [](const char* from, const char* to) { fs::copy_file(base_ / from, base_ / to); };
    copy("d.h5", "nan-data.h5");
    poke(base_ / "nan-data.h5", "/data", 1000, std::nan(""));
    copy("d.h5", "inf-wavelet.h5");
    poke(base_ / "inf-wavelet.h5", "/source/wavelet", 30, INFINITY);
    copy("s.h5", "nan-position.h5");
    poke(base_ / "nan-position.h5", "/receiver/position", 3, std::nan(""));
    copy("d.h5", "absurd-dt.h5");
    set_root_attribute(base_ / "absurd-dt.h5", "dt", 1e300);
    copy("s.h5", "absurd-dt-survey.h5");
    set_root_attribute(base_ / "absurd-dt-survey.h5", "dt", 1e300);
    copy("g.h5", "nan-gradient.h5");
    poke(base_ / "nan-gradient.h5", "/gradient", 77, std::nan(""));
    copy("vp.h5", "huge-vp.h5");
    declare_huge(base_ / "huge-vp.h5", "/vp", {hsize_t(1) << 31, hsize_t(1) << 31});
    copy("s.h5", "huge-wavelet.h5");
    set_root_attribute(base_ / "huge-wavelet.h5", "nt", 1e13);
    declare_huge(base_ / "huge-wavelet.h5", "/source/wavelet", {hsize_t(1e13)});
    copy("r.h5.state", "nan-state.h5.state");
    poke(base_ / "nan-state.h5.state", "/vp", 5, std::nan(""));
    copy("r.h5", "nan-state.h5");
    copy("d.h5", "other-data.h5");  // one value changed: the data a state was not made from
    poke(base_ / "other-data.h5", "/data", 1000, 0.5);
    copy("r.h5.state", "old.h5.state");  // a state from before states recorded what made them
    copy("r.h5", "old.h5");
    remove_root_attribute(base_ / "old.h5.state", "format");
    // A model and data whose store, kept whole (--storage full), is hundreds of GiB.
    make("synth --kind layered --nz 2000 --nx 2000 --spacing 10 --out big.h5");
    make("survey --model big.h5 --nshots 1 --receiver-every 50 --dt 0.002 --t-max 30 --out big-data.h5");
    declare_huge(base_ / "big-data.h5", "/data", {1, 40, 15001});  // zeros: never written
    copy("vp.h5", "zero-vp.h5");                                   // one cell of 0 m/s
    poke(base_ / "zero-vp.h5", "/vp", 100, 0);
    copy("vp.h5", "flat-vp.h5");  // a spacing of 0
    set_attribute(base_ / "flat-vp.h5", "/vp", "spacing", {0, 10});
    copy("g.h5", "flat-g.h5");
    set_attribute(base_ / "flat-g.h5", "/gradient", "spacing", {10, 0});
    copy("vp.h5", "tiny-vp.h5");  // a spacing of 1e-300 m: positive, finite, and no grid
    set_attribute(base_ / "tiny-vp.h5", "/vp", "spacing", {1e-300, 10});
    copy("vp.h5", "plugin-vp.h5");
    compress_with_unknown_filter(base_ / "plugin-vp.h5", "/vp");
    copy("d.h5", "plugin-data.h5");
    compress_with_unknown_filter(base_ / "plugin-data.h5", "/data");
    make("export --in vp.h5 --out vp.sgy");
    make("export --in d.h5 --out d.sgy");
    copy("d.h5", "us-data.h5");  // 0.7 ms written as 0.7 µs: a record of 0.6 ms
    set_attribute(base_ / "us-data.h5", "/", "dt", {7e-7});
    std::ofstream(base_ / "zeros.f32", std::ios::binary) << std::string(1601 * 401 * 4, '\0');
    copy("d.sgy", "d-sgy.h5");                         // SEG-Y under an HDF5 name: known by its binary header
    fs::create_directories(base_ / "clash.h5.state");  // where fwi's restart state would go
    fs::create_hard_link(base_ / "d.h5", base_ / "d-link.h5");
    fs::create_directories(base_ / "mine");
    std::ofstream(base_ / "mine" / "current.png") << "my own picture";
  }
  static void TearDownTestSuite() {
    for (const char* name :
         {"full", "signals", "two-runs", "failed-fwi", "environment", "links", "killed-fwi", "address-space", "names",
          "starpu-home", "pipes", "out-of-core", "config-line", "damaged-state", "read-only-figures", "words"})
      fs::remove_all(base_.string() + "-" + name);
    fs::remove_all(base_);
  }

  /// A fresh folder for one test, beside the suite's files.
  fs::path scratch(const std::string& name) {
    const fs::path d = base_.string() + "-" + name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
  }

  static fs::path base_;
};
inline fs::path Hostile::base_;

/// The rules of a refusal, for `args` run in `dir`.
inline void expect_refusal(const fs::path& dir, const std::string& args, const std::string& mention, int status = 2,
                           const std::string& prefix = "") {
  const auto before = snapshot(dir);
  const Result r = run_in(dir, args, prefix);
  const std::string cmd = args.substr(0, args.find(' '));
  SCOPED_TRACE("starwave " + args);
  EXPECT_EQ(r.status, status) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line on stderr, got:\n" << r.err;
  const std::string ours = "starwave " + cmd + ": error: ";
  EXPECT_EQ(r.err.rfind(ours, 0), 0u) << "our words first: " << r.err;
  EXPECT_EQ(r.err.find(ours, 1), std::string::npos) << "said once: " << r.err;
  for (const char* foreign : {"filesystem error", "libpng", "HDF5-DIAG", "std::", "terminate", "Assertion"})
    EXPECT_EQ(r.err.find(foreign), std::string::npos) << "a library's words, not ours: " << r.err;
  EXPECT_NE(r.err.find(mention), std::string::npos) << "should mention '" << mention << "': " << r.err;
  const auto after = snapshot(dir);
  EXPECT_TRUE(before == after) << "the folder changed: a file was written, removed or left behind";
  if (before != after) {
    for (const auto& [name, bytes] : after) {
      if (!before.count(name) || before.at(name) != bytes) ADD_FAILURE() << "added or changed: " << name;
      std::error_code ec;  // so that one failure does not spoil the cases after it
      if (!before.count(name)) fs::remove_all(dir / name, ec);
    }
    for (const auto& [name, bytes] : before)
      if (!after.count(name)) ADD_FAILURE() << "removed: " << name;
  }
}

struct Case {
  const char* what;
  std::string args, mention;
};

}  // namespace starwave::test
