// tests/test_hostile.cpp — starwave used as a hostile user would (docs/design.md §5, issue 12).
//
// Every refusal must be: one line on stderr, ours ("starwave CMD: error: …", naming the
// file or option), a non-zero exit, no output, and nothing in the folder touched — no file
// changed, none added (no temporary, no lock), none removed. The table covers each class
// of failure over the subcommands it applies to; signals, a full disk, two runs on one
// output and a failed inversion's pictures have tests of their own.
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

namespace {

namespace fs = std::filesystem;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;  // fewer rounds of the repeated runs: each is ~8× slower
#else
constexpr bool kSanitized = false;
#endif

struct Result {
  int status;  // exit status, or 128 + the signal that ended it
  std::string err;
};

/// Runs `starwave ARGS` in `dir` (a shell line: ARGS may hold redirections or `ulimit`
/// before it through `prefix`).
Result run_in(const fs::path& dir, const std::string& args, const std::string& prefix = "") {
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
std::map<std::string, std::string> snapshot(const fs::path& dir) {
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
void poke(const fs::path& file, const std::string& dataset, std::size_t index, double value) {
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
void write_zero_data(const fs::path& survey, const fs::path& data) {
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
void set_root_attribute(const fs::path& file, const std::string& name, double value) {
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
void set_attribute(const fs::path& file, const std::string& object, const std::string& name,
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

void remove_root_attribute(const fs::path& file, const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0) << file;
  ASSERT_GE(H5Adelete(f, name.c_str()), 0) << name;
  H5Fclose(f);
}

/// Replaces `dataset` by one of shape `dims` that is declared but never written (chunked:
/// the file stays tiny whatever the shape), keeping `spacing` on it for /vp.
void declare_huge(const fs::path& file, const std::string& dataset, const std::vector<hsize_t>& dims) {
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
std::size_t copy_filter(unsigned, std::size_t, const unsigned[], std::size_t nbytes, std::size_t*, void**) {
  return nbytes;
}

/// Rewrites `dataset` (float32, shape kept, a `spacing` of 10 m for /vp) through a
/// compression filter that starwave cannot decode, as a file made with a plugin is.
void compress_with_unknown_filter(const fs::path& file, const std::string& dataset) {
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
fs::path Hostile::base_;

/// The rules of a refusal, for `args` run in `dir`.
void expect_refusal(const fs::path& dir, const std::string& args, const std::string& mention, int status = 2,
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

TEST_F(Hostile, StarpuEnvironmentStarPUWouldAbortOnIsRefused) {
  // StarPU asserts (abort, core, the run's lock left behind) or hangs on these; starwave refuses them
  // first, naming the variable, and a value StarPU takes still runs.
  const std::string run = "model --model vp.h5 --survey s.h5 --out out.h5";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"STARPU_NCPU=-1", "STARPU_NCPU='-1' must be a whole number"},
      {"STARPU_NCPU=two", "STARPU_NCPU='two'"},
      {"STARPU_NCUDA=-1", "STARPU_NCUDA='-1'"},
      {"STARPU_LIMIT_CPU_MEM=1G", "STARPU_LIMIT_CPU_MEM='1G'"},
      {"STARPU_WORKERS_CPUID=abc", "STARPU_WORKERS_CPUID='abc' must list processing units"},
      {"STARPU_SCHED=fastest", "STARPU_SCHED='fastest' is not a StarPU scheduler (eager"},
      {"env -u XDG_CACHE_HOME STARPU_HOME=/proc", "STARPU_HOME='/proc': StarPU cannot keep its performance models"},
      {"env -u XDG_CACHE_HOME STARPU_HOME=vp.h5", "STARPU_HOME='vp.h5'"},
      // StarPU's cap on its allocations below one shot: it waited for memory for ever.
      {"STARPU_LIMIT_CPU_MEM=0", "STARPU_LIMIT_CPU_MEM=0 (MiB) lets StarPU allocate"},
  };
  for (const auto& [env, mention] : bad) expect_refusal(base_, run, mention, 2, env);
  expect_refusal(base_, "info", "STARPU_NCPU='-1'", 2, "STARPU_NCPU=-1");
  const fs::path dir = scratch("environment");
  fs::copy_file(base_ / "vp.h5", dir / "vp.h5");
  fs::copy_file(base_ / "s.h5", dir / "s.h5");
  for (const char* fine :
       {"STARPU_NCPU=1", "STARPU_SCHED=lws", "STARPU_WORKERS_CPUID='0 1'", "STARPU_WORKERS_CPUID=0-1"}) {
    EXPECT_EQ(run_in(dir, run + " --quiet --overwrite", fine).status, 0) << fine;
    EXPECT_TRUE(fs::exists(dir / "out.h5")) << fine;
  }
}

TEST_F(Hostile, EveryClassOfBadInputIsRefusedInOneLineAndTouchesNothing) {
  std::vector<Case> cases = {
      // 1. Crashes: inputs that used to end in a signal.
      {"NaN in a gradient drawn", "plot --in nan-gradient.h5 --dataset /gradient --out out.png", "nan-gradient.h5"},
      {"NaN in a gather drawn", "plot --in nan-data.h5 --dataset /data --shot 0 --out out.png", "NaN"},
      {"NaN in fwi's data", "fwi --model init.h5 --data nan-data.h5 --out out.h5 --iterations 1", "nan-data.h5: /data"},
      {"a smoothing longer than the model", "synth --kind layered --smooth 1e10 --out out.h5", "--smooth"},
      {"fwi smoothing longer than the model", "fwi --model init.h5 --data d.h5 --out out.h5 --smooth 1e10", "--smooth"},
      // 2. Silent garbage: values that cannot give a finite result.
      {"NaN in observed data", "gradient --model vp.h5 --data nan-data.h5 --out out.h5", "NaN"},
      {"NaN in rtm's data", "rtm --model vp.h5 --data nan-data.h5 --out out.h5", "nan-data.h5"},
      {"Inf in a wavelet", "gradient --model vp.h5 --data inf-wavelet.h5 --out out.h5", "/source/wavelet holds Inf"},
      {"Inf in a wavelet modeled", "model --model vp.h5 --survey inf-wavelet.h5 --out out.h5", "inf-wavelet.h5"},
      {"NaN in a position", "model --model vp.h5 --survey nan-position.h5 --out out.h5", "/receiver/position"},
      {"an absurd dt", "model --model vp.h5 --survey absurd-dt-survey.h5 --out out.h5", "dt"},
      {"an absurd dt in data", "gradient --model vp.h5 --data absurd-dt.h5 --out out.h5", "dt"},
      {"a restart state holding NaN", "fwi --model init.h5 --data d.h5 --out nan-state.h5 --resume --iterations 2",
       "nan-state.h5.state: /vp holds NaN"},
      {"NaN as an option", "survey --model vp.h5 --frequency nan --out out.h5", "--frequency"},
      {"Inf as an option", "fwi --model init.h5 --data d.h5 --out out.h5 --vmax inf", "--vmax"},
      {"a velocity a float cannot hold", "synth --kind constant --velocity 1e39 --nz 4 --nx 4 --out out.h5",
       "--velocity: velocity at (z=0, x=0) is 1e+39"},
      {"a velocity a float rounds to 0", "synth --kind constant --velocity 1e-46 --nz 4 --nx 4 --out out.h5",
       "within a 32-bit float's range"},
      {"a unit scale beyond a float", "import --velocity --in vp.sgy --out out.h5 --scale 1e35", "vp.sgy: velocity"},
      {"a zero velocity drawn", "plot --in zero-vp.h5 --out out.png", "zero-vp.h5: velocity at"},
      {"a zero velocity exported", "export --in zero-vp.h5 --out out.sgy", "zero-vp.h5: velocity at"},
      {"a zero spacing drawn", "plot --in flat-vp.h5 --out out.png", "flat-vp.h5: /vp's spacing attribute holds 0"},
      {"a spacing of no size modeled", "model --model tiny-vp.h5 --survey s.h5 --out out.h5",
       "tiny-vp.h5: grid spacing must be positive, in metres, between"},
      {"a spacing of no size synthesized", "synth --kind layered --spacing 1e-300 --out out.h5",
       "--spacing: must be 0 (the kind's default) or a grid spacing"},
      {"a spacing beyond the earth synthesized", "synth --kind layered --spacing 1e300 --out out.h5", "(got 1e+300)"},
      {"a spacing of no size imported", "import --velocity --in vp.sgy --out out.h5 --spacing 1e-300",
       "--spacing: '1e-300' is not one spacing"},
      {"a gradient's zero spacing drawn", "plot --in flat-g.h5 --dataset /gradient --out out.png",
       "flat-g.h5: /gradient's spacing attribute holds 0"},
      {"a gradient's zero spacing exported", "export --in flat-g.h5 --dataset /gradient --out out.sgy",
       "flat-g.h5: /gradient's spacing attribute holds 0"},
      {"a name longer than the file system allows", "synth --kind layered --out " + std::string(256, 'n'),
       "a file name of 256 bytes; this file system allows 255"},
      {"fwi's state name past the limit", "fwi --model init.h5 --data d.h5 --out " + std::string(252, 'n'),
       ".state: a file name of 258 bytes"},
      {"a default Ricker delay past a short record", "import --in d.sgy --out out.h5 --ricker 2",
       "--ricker: the pulse's peak at its default delay 1.5 / F0 = 0.75 s (give --delay)"},
      {"fwi's state where a folder is", "fwi --model init.h5 --data d.h5 --out clash.h5 --iterations 1",
       "clash.h5.state: is a folder"},
      {"fwi's state where a folder is, overwriting",
       "fwi --model init.h5 --data d.h5 --out clash.h5 --iterations 1 --overwrite", "clash.h5.state: is a folder"},
      {"a model compressed by a missing plugin", "model --model plugin-vp.h5 --survey s.h5 --out out.h5",
       "plugin-vp.h5: cannot read dataset /vp (it is compressed with HDF5 filter 40000"},
      {"data compressed by a missing plugin", "gradient --model vp.h5 --data plugin-data.h5 --out out.h5",
       "HDF5 filter 40000"},
      {"a gather compressed by a missing plugin", "plot --in plugin-data.h5 --dataset /data --out out.png",
       "h5repack -f NONE"},
      {"an imported Ricker above Nyquist", "import --in d.sgy --out out.h5 --ricker 300", "--ricker: a 300 Hz"},
      {"an imported Ricker after the record", "import --in d.sgy --out out.h5 --ricker 10 --delay 1e9",
       "--delay: the pulse's peak at 1e+09 s"},
      {"an upper bound no time step follows", "fwi --model init.h5 --data d.h5 --out out.h5 --vmax 1e30",
       "--vmax: the inversion's upper bound 1e+30 m/s cannot be modeled"},
      {"a dt of no size", "survey --model vp.h5 --dt 1e-300 --out out.h5",
       "samples per trace, more than any machine can hold"},
      {"a Ricker of no frequency", "survey --model vp.h5 --frequency 1e-9 --out out.h5",
       "--frequency: a 1e-09 Hz Ricker peaks at 1.5e+09 s (1.5 / its frequency), after the record's end"},
      {"a Ricker of a THz", "survey --model vp.h5 --frequency 1e12 --out out.h5",
       "at dt = 8e-14 s (automatic: 12 samples per period of the 1e+12 Hz Ricker)"},
      {"a Marmousi2 file of zeros", "synth --kind marmousi2 --file zeros.f32 --out out.h5",
       "zeros.f32: velocity at (z=0, x=0) is 0"},
      {"a source below the model", "survey --model vp.h5 --source-depth 1e9 --out out.h5",
       "--source-depth: 1e+09 m is not a grid row inside the model"},
      {"a record shorter than a cell's crossing", "gradient --model vp.h5 --data us-data.h5 --out out.h5",
       "ends before a wave at the model's v_max = 3500 m/s crosses one cell (10 m)"},
      {"a record of one sample", "survey --model vp.h5 --t-max 1e-300 --out out.h5", "a record needs at least 2"},
      // 3. Sizes: declared shapes far beyond memory, in tiny files.
      {"an enormous model", "model --model huge-vp.h5 --survey s.h5 --out out.h5", "huge-vp.h5: /vp"},
      {"an enormous model drawn", "plot --in huge-vp.h5 --out out.png", "huge-vp.h5"},
      {"an enormous wavelet", "model --model vp.h5 --survey huge-wavelet.h5 --out out.h5", "huge-wavelet.h5"},
      {"an enormous record asked for", "survey --model vp.h5 --t-max 1e9 --out out.h5", "--t-max"},
      {"a whole stored wavefield beyond memory",
       "gradient --model big.h5 --data big-data.h5 --out out.h5 --storage full", "the stored forward wavefield"},
      {"an RTM's whole store beyond memory", "rtm --model big.h5 --data big-data.h5 --out out.h5 --storage full",
       "--scratch DIR (the store out of core), --storage boundary"},
      // 4. Inputs as outputs, whatever the flags.
      {"gradient over its data", "gradient --model vp.h5 --data d.h5 --out d.h5 --overwrite", "is also an input"},
      {"rtm over its model", "rtm --model vp.h5 --data d.h5 --out vp.h5 --overwrite", "is also an input"},
      {"model over its survey", "model --model vp.h5 --survey s.h5 --out s.h5 --overwrite", "is also an input"},
      {"model over a hard link to its input", "model --model vp.h5 --survey d.h5 --out d-link.h5 --overwrite",
       "is also an input"},
      {"plot over its input", "plot --in vp.h5 --out vp.h5 --overwrite", "is also an input"},
      {"a PNG under a JPEG's name", "plot --in vp.h5 --out out.JPG",
       "--out: out.JPG: this command writes PNG, and a name ending in .jpg says JPEG: give a name ending in .png"},
      {"HDF5 under a SEG-Y name", "model --model vp.h5 --survey s.h5 --out out.sgy", "writes HDF5, and a name ending"},
      {"a model's shot records exported", "export --in vp.h5 --dataset /data --out out.sgy",
       "vp.h5: missing dataset /data"},
      {"SEG-Y under an HDF5 name", "export --in d.h5 --out out.h5",
       "ending in .h5 says HDF5: give a name ending in .sgy"},
      {"HDF5 under a NumPy name", "synth --kind layered --out out.npy", "ending in .npy says NumPy"},
      {"a SEG-Y model given as HDF5", "model --model vp.sgy --survey s.h5 --out out.h5",
       "vp.sgy: a SEG-Y file, not HDF5: bring it in with `starwave import`"},
      {"a SEG-Y file renamed, drawn", "plot --in d-sgy.h5 --out out.png", "d-sgy.h5: a SEG-Y file, not HDF5"},
      {"an import under a SEG-Y name", "import --in d.sgy --out out.segy --ricker 10", "ending in .segy says SEG-Y"},
      {"survey over its model", "survey --model vp.h5 --out vp.h5 --overwrite", "is also an input"},
      {"fwi over its data", "fwi --model init.h5 --data d.h5 --out d.h5 --overwrite", "is also an input"},
      {"fwi over its true model", "fwi --model init.h5 --data d.h5 --out vp.h5 --true-model vp.h5 --overwrite",
       "is also an input"},
      {"fwi's pictures over a user's file", "fwi --model init.h5 --data d.h5 --out out.h5 --figures mine",
       "mine/current.png: exists already"},
      {"fwi's pictures in a missing folder", "fwi --model init.h5 --data d.h5 --out out.h5 --figures no/such/dir",
       "--figures"},
      {"an existing output", "synth --kind layered --out vp.h5", "exists already"},
      {"an output folder that does not exist", "synth --kind layered --out nowhere/out.h5", "does not exist"},
      {"an output that is a folder", "synth --kind layered --out mine --overwrite", "is a folder"},
      {"an output that is a device", "synth --kind layered --out /dev/null --overwrite", "not a regular file"},
      // 6. Words dropped.
      {"a list in several words", "fwi --model init.h5 --data d.h5 --out out.h5 --bands 3 5 8", "'5'"},
      {"info with a word", "info bogus", "'bogus'"},
      {"model with a word", "model --model vp.h5 --survey s.h5 --out out.h5 extra", "'extra'"},
      {"synth with a word", "synth layered --out out.h5", "'layered'"},
      {"plot with a word", "plot --in vp.h5 --out out.png twice", "'twice'"},
      // 7. Nonsense.
      {"a negative dt", "survey --model vp.h5 --dt -0.001 --out out.h5", "--dt"},
      {"layers that would not absorb", "gradient --model vp.h5 --data d.h5 --out out.h5 --pml-velocity 1e300",
       "--pml-velocity: 1e+300 m/s is outside 150 … 35000 m/s"},
      {"layers that would not damp", "model --model vp.h5 --survey s.h5 --out out.h5 --pml-velocity 1e-300",
       "--pml-velocity: 1e-300 m/s is outside"},
      {"a layers' frequency past Nyquist", "gradient --model vp.h5 --data d.h5 --out out.h5 --pml-frequency 1e300",
       "--pml-frequency: 1e+300 Hz is above the data's Nyquist frequency 250 Hz"},
      {"checkpoints past any record", "gradient --model vp.h5 --data d.h5 --out out.h5 --checkpoint-every 99999999999",
       "--checkpoint-every: 99999999999 steps is more than a record can have"},
      {"a negative record length", "survey --model vp.h5 --t-max -1 --out out.h5", "--t-max"},
      {"a negative source depth", "survey --model vp.h5 --source-depth -10 --out out.h5", "--source-depth"},
      {"a Ricker above Nyquist", "survey --model vp.h5 --dt 0.01 --frequency 40 --out out.h5", "--frequency"},
      {"a negative fix-top", "fwi --model init.h5 --data d.h5 --out out.h5 --fix-top -10", "--fix-top"},
      {"a negative vmin", "fwi --model init.h5 --data d.h5 --out out.h5 --vmin -1500", "--vmin"},
      {"pictures where the result goes", "fwi --model init.h5 --data d.h5 --out out.h5 --figures ./out.h5",
       "--figures: ./out.h5 is the name of the result (--out)"},
      {"pictures where the state goes", "fwi --model init.h5 --data d.h5 --out out.h5 --figures out.h5.state",
       "--figures: out.h5.state is the name of the restart state (out.h5.state)"},
      {"bounds in km/s", "fwi --model init.h5 --data d.h5 --out out.h5 --vmin 1.5 --vmax 4.5",
       "--vmin/--vmax: the bounds 1.5–4.5 m/s exclude every velocity of the initial model"},
      {"a band at 0 Hz", "fwi --model init.h5 --data d.h5 --out out.h5 --bands 0,5",
       "--bands: 0 Hz is not between 0 and the data's Nyquist"},
      {"a negative smoothing", "fwi --model init.h5 --data d.h5 --out out.h5 --smooth -5", "--smooth"},
      {"a NaN smoothing", "synth --kind layered --smooth nan --out out.h5", "--smooth"},
      {"batches with L-BFGS", "fwi --model init.h5 --data d.h5 --out out.h5 --batch-shots 1", "--batch-shots"},
      {"a learning rate with L-BFGS", "fwi --model init.h5 --data d.h5 --out out.h5 --learning-rate 5",
       "--learning-rate"},
      {"a seed without batches", "fwi --model init.h5 --data d.h5 --out out.h5 --optimizer adam --seed 3", "--seed"},
      {"L-BFGS memory with Adam", "fwi --model init.h5 --data d.h5 --out out.h5 --optimizer adam --memory 3",
       "--memory"},
      {"resume and overwrite", "fwi --model init.h5 --data d.h5 --out r.h5 --resume --overwrite", "choose one"},
      // 5. A resume must continue the run its state was made by (docs/design.md §5): the state, the
      // result and the pictures stay as they are.
      {"a resume with another order", "fwi --model init.h5 --data d.h5 --out r.h5 --resume --iterations 2 --order 4",
       "r.h5.state was made with --order 8, this run has 4"},
      {"a resume with another optimiser setting",
       "fwi --model init.h5 --data d.h5 --out r.h5 --resume --iterations 2 --memory 3", "--memory 5, this run has 3"},
      {"a resume with bands", "fwi --model init.h5 --data d.h5 --out r.h5 --resume --iterations 2 --bands 5",
       "--bands none, this run has 5"},
      {"a resume with a 16-bit store",
       "fwi --model init.h5 --data d.h5 --out r.h5 --resume --iterations 2 --store-compression bf16",
       "--store-compression none, this run has bf16"},
      {"a resume from another model", "fwi --model vp.h5 --data d.h5 --out r.h5 --resume --iterations 2",
       "the initial model's values (--model)"},
      {"a resume with other data", "fwi --model init.h5 --data other-data.h5 --out r.h5 --resume --iterations 2",
       "the observed traces (--data)"},
      {"a resume of a state that does not say what made it",
       "fwi --model init.h5 --data d.h5 --out old.h5 --resume --iterations 2", "does not record what made it"},
      {"keep-water without smoothing", "synth --kind layered --keep-water --out out.h5", "--keep-water"},
      {"a velocity for a layered model", "synth --kind layered --velocity 1800 --out out.h5", "--velocity"},
      {"storage for modeling", "model --model vp.h5 --survey s.h5 --out out.h5 --storage full", "--storage"},
      {"a negative PML velocity", "gradient --model vp.h5 --data d.h5 --out out.h5 --pml-velocity -1500",
       "--pml-velocity"},
      {"a PML velocity that is not a number", "model --model vp.h5 --survey s.h5 --out out.h5 --pml-velocity nan",
       "--pml-velocity"},
      {"an unknown storage", "rtm --model vp.h5 --data d.h5 --out out.h5 --storage layers",
       "'boundary', 'full' or 'shell'"},
      {"a negative checkpoint interval", "gradient --model vp.h5 --data d.h5 --out out.h5 --checkpoint-every -3",
       "--checkpoint-every: must be a whole number of steps, 0 or more (got '-3')"},
      {"a checkpoint interval in steps and a half", "rtm --model vp.h5 --data d.h5 --out out.h5 --checkpoint-every 2.5",
       "--checkpoint-every"},
      {"a checkpoint interval past any run",
       "fwi --model init.h5 --data d.h5 --out out.h5 --checkpoint-every 99999999999", "--checkpoint-every"},
      {"checkpoints for modeling", "model --model vp.h5 --survey s.h5 --out out.h5 --checkpoint-every 5",
       "--checkpoint-every: has no effect in model"},
      {"an unknown store compression", "gradient --model vp.h5 --data d.h5 --out out.h5 --store-compression zfp",
       "--store-compression: must be 'none', 'fp16', 'bf16', 'zfp16', 'zfp12' or 'zfp8' (got 'zfp')"},
      {"a store compression in capitals", "rtm --model vp.h5 --data d.h5 --out out.h5 --store-compression FP16",
       "--store-compression"},
      {"a memory limit in no unit", "gradient --model vp.h5 --data d.h5 --out out.h5 --memory-limit 4X",
       "--memory-limit: must be a size such as 8G"},
      {"a memory limit of nothing", "rtm --model vp.h5 --data d.h5 --out out.h5 --memory-limit 0G", "(got '0G')"},
      {"store compression for modeling", "model --model vp.h5 --survey s.h5 --out out.h5 --store-compression fp16",
       "--store-compression: has no effect in model"},
      {"quiet and verbose", "gradient --model vp.h5 --data d.h5 --out out.h5 --quiet --verbose", "--quiet"},
      {"a colour scale upside down", "plot --in vp.h5 --out out.png --vmin 3000 --vmax 1000", "--vmin"},
      {"a colour scale for a gather", "plot --in d.h5 --dataset /data --out out.png --vmin 0 --vmax 1", "--vmin"},
      {"a shot for a model", "plot --in vp.h5 --out out.png --shot 3", "--shot"},
      {"a negative shot", "plot --in d.h5 --dataset /data --shot -1 --out out.png", "--shot"},
      {"a shot past the last", "plot --in d.h5 --dataset /data --shot 9 --out out.png", "index 9"},
      // 8. Messages: the option named once, not the library's words.
      {"an unknown option", "gradient --model vp.h5 --data d.h5 --out out.h5 --bogus 3", "--bogus"},
      {"a bad number", "survey --model vp.h5 --nshots many --out out.h5", "--nshots"},
      {"a negative seed", "fwi --model init.h5 --data d.h5 --out out.h5 --optimizer adam --batch-shots 1 --seed -1",
       "--seed: must be a whole number from 0 to 4294967295"},
      {"more shots than columns", "survey --model vp.h5 --nshots 61 --out out.h5",
       "--nshots: 61 shots along x do not fit the model's 60 columns"},
  };
  // The classes whose defence is shared, over every subcommand they apply to: each
  // subcommand's normal arguments, spoiled one way at a time.
  const std::map<std::string, std::string> normal = {
      {"synth", "synth --kind layered --out out.h5"},
      {"survey", "survey --model vp.h5 --out out.h5"},
      {"model", "model --model vp.h5 --survey s.h5 --out out.h5"},
      {"gradient", "gradient --model vp.h5 --data d.h5 --out out.h5"},
      {"rtm", "rtm --model vp.h5 --data d.h5 --out out.h5"},
      {"fwi", "fwi --model init.h5 --data d.h5 --out out.h5 --iterations 1"},
      {"plot", "plot --in vp.h5 --out out.png"},
  };
  for (const auto& [command, args] : normal) {
    cases.push_back({"a stray word", args + " stray", "'stray'"});
    cases.push_back({"quiet and verbose", args + " --quiet --verbose", "choose one"});
    std::string existing = args;  // its --out an existing file (not an input), no --overwrite
    const std::size_t out = existing.find("--out out."), end = existing.find(' ', out + 6);
    existing.replace(out, end == std::string::npos ? std::string::npos : end - out, "--out g.h5");
    cases.push_back({"an existing output", existing, "g.h5: exists already"});
  }
  cases.push_back({"a stray word", "info stray", "'stray'"});
  // Inputs as outputs, NaN and enormous shapes, for every subcommand that reads a file.
  for (const std::string command : {"survey", "model", "gradient", "rtm", "fwi", "plot"}) {
    std::string args = normal.at(command);
    auto with = [&](const std::string& from, const std::string& to) {
      std::string a = args;
      const std::size_t at = a.find(from);
      return a.replace(at, from.size(), to);
    };
    const std::string model = command == "fwi" ? "init.h5" : "vp.h5";
    const std::string model_option = command == "plot" ? "--in " : "--model ";
    cases.push_back({"an enormous model", with(model_option + model, model_option + "huge-vp.h5"), "huge-vp.h5"});
    if (command == "plot" || command == "survey") continue;
    const std::string data = command == "model" ? "--survey s.h5" : "--data d.h5";
    const std::string data_file = data.substr(data.find(' ') + 1);
    cases.push_back(
        {"the output is the data", with("--out out.h5", "--out " + data_file + " --overwrite"), "is also an input"});
    cases.push_back({"Inf in the wavelet", with(data, data.substr(0, data.find(' ')) + " inf-wavelet.h5"),
                     "/source/wavelet holds Inf"});
    cases.push_back(
        {"an enormous wavelet", with(data, data.substr(0, data.find(' ')) + " huge-wavelet.h5"), "huge-wavelet.h5"});
    if (command != "model")
      cases.push_back({"NaN in the data", with(data, "--data nan-data.h5"), "nan-data.h5: /data"});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    expect_refusal(base_, c.args, c.mention);
  }
}

TEST_F(Hostile, AFullDiskIsOneLineNamingTheFileAndLeavesNothing) {
  // A file-size limit (ulimit -f: 512-byte blocks under dash, 1 KiB under bash) fails every
  // write as a full disk does: the same path through HDF5 and libpng, without needing the
  // privilege to mount a small disk.
  const fs::path dir = scratch("full");
  for (const char* f : {"vp.h5", "s.h5", "d.h5", "d.sgy"}) fs::copy_file(base_ / f, dir / f);
  const std::string limit = "ulimit -f 8;";
  expect_refusal(dir, "gradient --model vp.h5 --data d.h5 --out g.h5", "g.h5: writing the file: file too large", 1,
                 limit);
  expect_refusal(dir, "synth --kind layered --out m.h5", "m.h5: writing", 1, limit);
  expect_refusal(dir, "plot --in d.h5 --dataset /data --out p.png", "p.png: cannot write the picture", 1,
                 "ulimit -f 1;");
  // With --overwrite too, the existing output stays as it was.
  fs::copy_file(dir / "vp.h5", dir / "old.h5");
  expect_refusal(dir, "synth --kind layered --out old.h5 --overwrite", "old.h5: writing", 1, limit);
  // Shot records (the large outputs) are measured against the disk and the limit before
  // any work: refused, not written until the disk fills.
  expect_refusal(dir, "model --model vp.h5 --survey s.h5 --out data.h5",
                 "data.h5: /data needs 70.8 KiB on disk, more than this process's file-size limit (ulimit -f)", 2,
                 limit);
  expect_refusal(dir, "model --model vp.h5 --survey s.h5 --out d.h5 --overwrite", "d.h5: /data needs", 2, limit);
  expect_refusal(dir, "import --in d.sgy --out i.h5 --ricker 10", "i.h5: /data needs", 2, limit);
  expect_refusal(dir, "export --in d.h5 --out e.sgy", "e.sgy: the SEG-Y file needs", 2, limit);
  expect_refusal(dir, "export --in vp.h5 --out e.sgy", "e.sgy: the SEG-Y file needs", 2, "ulimit -f 1;");
}

/// Starts `starwave ARGS` in `dir` without waiting; returns its pid.
pid_t start_in(const fs::path& dir, const std::string& args) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(127);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    std::vector<std::string> words = {STARWAVE_BIN};
    std::istringstream in(args);
    for (std::string w; in >> w;) words.push_back(w);
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

/// Waits for `path` to appear (up to a minute).
bool appears(const fs::path& path) {
  for (int i = 0; i < 600; ++i) {
    if (fs::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

/// Waits for `pid`; its exit status, or 128 + the signal that ended it.
int finish(pid_t pid) {
  int raw = 0;
  waitpid(pid, &raw, 0);
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
}

TEST_F(Hostile, AnInputThatIsNotAFileIsRefusedWithoutOpeningIt) {
  // A named pipe nobody writes blocked a run for ever (its output's lock taken): every input is
  // looked at (stat) before it is opened or any lock is taken. `timeout`: a regression fails
  // here instead of hanging the suite.
  const fs::path dir = scratch("pipes");
  for (const char* f : {"vp.h5", "s.h5", "d.h5", "init.h5", "d.sgy"}) fs::copy_file(base_ / f, dir / f);
  ASSERT_EQ(mkfifo((dir / "pipe.h5").c_str(), 0600), 0);
  fs::create_directories(dir / "folder.h5");
  const std::string fifo = "pipe.h5: a named pipe (FIFO), not a regular file";
  const std::vector<Case> cases = {
      {"a pipe as the model", "model --model pipe.h5 --survey s.h5 --out out.h5", fifo},
      {"a pipe as the survey", "model --model vp.h5 --survey pipe.h5 --out out.h5", fifo},
      {"a pipe as the data", "gradient --model vp.h5 --data pipe.h5 --out out.h5", fifo},
      {"a pipe as rtm's model", "rtm --model pipe.h5 --data d.h5 --out out.h5", fifo},
      {"a pipe as fwi's data", "fwi --model init.h5 --data pipe.h5 --out out.h5 --iterations 1", fifo},
      {"a pipe as the true model", "fwi --model init.h5 --data d.h5 --out out.h5 --true-model pipe.h5", fifo},
      {"a pipe planned", "plan gradient --model vp.h5 --data pipe.h5", fifo},
      {"a pipe drawn", "plot --in pipe.h5 --out out.png", fifo},
      {"a pipe imported", "import --in pipe.h5 --out out.h5 --ricker 10", fifo},
      {"a pipe exported", "export --in pipe.h5 --out out.sgy", fifo},
      {"a pipe as Marmousi2's file", "synth --kind marmousi2 --file pipe.h5 --out out.h5", fifo},
      {"a pipe as a survey's model", "survey --model pipe.h5 --out out.h5", fifo},
      {"a device as the survey", "model --model vp.h5 --survey /dev/zero --out out.h5",
       "/dev/zero: a character device, not a regular file"},
      {"a folder as the model", "gradient --model folder.h5 --data d.h5 --out out.h5",
       "folder.h5: a folder, not a regular file"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    expect_refusal(dir, c.args, c.mention, 2, "timeout 60");
  }
}

TEST_F(Hostile, OutOfCoreUnderFaultsEndsInOneLineAndLeavesNothing) {
  // A store out of core (--scratch) whose disk fills mid-run: StarPU's failed write ends the
  // run in one line naming the folder and the cause, exit 1, with its scratch folder, lock and
  // temporaries removed (StarPU asserted here, exit 134). An open-files limit under which
  // StarPU cannot keep its files open is refused before any work (it spun for ever).
  const fs::path dir = scratch("out-of-core");
  auto make = [&](const std::string& args) { ASSERT_EQ(run_in(dir, args + " --quiet").status, 0) << args; };
  make("synth --kind layered --nz 150 --nx 300 --spacing 10 --smooth 40 --out vp.h5");
  make("survey --model vp.h5 --nshots 2 --dt 0.002 --t-max 1.5 --out s.h5");
  make("model --model vp.h5 --survey s.h5 --out d.h5");
  fs::create_directories(dir / "scr");
  const std::string gradient = "gradient --model vp.h5 --data d.h5 --out g.h5 --scratch scr";
  expect_refusal(dir, gradient, "more than this process's open-files limit (ulimit -n) of 100", 2, "ulimit -n 100;");
  EXPECT_EQ(run_in(dir, "gradient --quiet --model vp.h5 --data d.h5 --out g.h5", "ulimit -n 100;").status, 0)
      << "in memory, the same limit runs";
  fs::remove(dir / "g.h5");
  // A file-size limit under StarPU's files (it wrote a 16 MiB file to measure the disk, and
  // failed there): refused before any work (dash's ulimit -f counts 512-byte blocks).
  expect_refusal(dir, gradient, "StarPU's disk node writes files of 16 MiB, more than this process's file-size limit",
                 2, "ulimit -f 4000;");
  // StarPU's own swap folder is named as such, never as --scratch.
  const Result swap =
      run_in(dir, "gradient --model vp.h5 --data d.h5 --out g.h5", "STARPU_DISK_SWAP=scr STARPU_DISK_SWAP_SIZE=1");
  EXPECT_EQ(swap.status, 2) << swap.err;
  EXPECT_NE(swap.err.find("STARPU_DISK_SWAP=scr: "), std::string::npos) << swap.err;
  EXPECT_EQ(swap.err.find("--scratch"), std::string::npos) << swap.err;
  // Two out-of-core runs side by side, again and again: StarPU 1.3.10 shut down (or paused)
  // with data requests still on its disk node and crashed, 3 runs in 120 here (graph::rest
  // and graph::stopping now wait for them).
  for (const char* f : {"s.h5", "d.h5"}) fs::copy_file(base_ / f, dir / ("small-" + std::string(f)));
  fs::copy_file(base_ / "vp.h5", dir / "small-vp.h5");
  const int rounds = kSanitized ? 6 : 30;
  const auto loop = [&](int k) {
    const std::string n = std::to_string(k);
    fs::create_directories(dir / ("scr" + n));
    return "(for i in $(seq " + std::to_string(rounds) + "); do " + std::string(STARWAVE_BIN) +
           " rtm --quiet --model small-vp.h5 --data small-d.h5 --out r" + n + ".h5 --overwrite --scratch scr" + n +
           " --checkpoint-every 7 2>/dev/null || echo \"run $i ended with $?\"; done) > loop" + n + ".txt";
  };
  ASSERT_EQ(
      std::system(("cd '" + dir.string() + "' && " + loop(1) + " & cd '" + dir.string() + "' && " + loop(2) + "; wait")
                      .c_str()),
      0);
  for (const char* f : {"loop1.txt", "loop2.txt"}) {
    std::ifstream in(dir / f);
    const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(said, "") << f;
  }
  if (std::system("unshare -rm true 2>/dev/null") != 0) {
    ADD_FAILURE() << "unshare -rm (a private mount) is not allowed here: the full-disk case is not tried";
    return;
  }
  // scr a 200 MiB disk of its own, filled as soon as the run's folder appears; afterwards
  // anything but the filler's file left there is said on stderr (a second line).
  expect_refusal(
      dir, gradient, "scr: the store out of core: ", 1,
      "STARPU_LIMIT_CPU_MEM=40 unshare -rm sh -c 'mount -t tmpfs -o size=200m tmpfs scr || exit 9; "
      "(i=0; while [ $i -lt 3000 ] && [ -z \"$(ls scr)\" ]; do sleep 0.01; i=$((i+1)); done; "
      "head -c 300M /dev/zero > scr/fill 2>/dev/null) & \"$0\" \"$@\"; rc=$?; wait; "
      "left=$(ls -A scr | grep -v \"^fill$\"); [ -z \"$left\" ] || echo \"left in scr: $left\" >&2; exit $rc'");
  const Result full = run_in(dir, gradient,
                             "STARPU_LIMIT_CPU_MEM=40 unshare -rm sh -c 'mount -t tmpfs -o size=200m tmpfs scr && "
                             "head -c 300M /dev/zero > scr/fill 2>/dev/null; exec \"$0\" \"$@\"'");
  EXPECT_EQ(full.status, 2) << "a full disk before the run: refused before any work: " << full.err;
  EXPECT_NE(full.err.find("StarPU's disk node needs 16 MiB at least"), std::string::npos) << full.err;
}

TEST_F(Hostile, ASignalLeavesNoTemporaryAndNoLockAndTheOldOutputIntact) {
  const fs::path dir = scratch("signals");
  fs::copy_file(base_ / "init.h5", dir / "init.h5");
  fs::copy_file(base_ / "d.h5", dir / "small.h5");  // init.h5's data, for the inversions
  // Enough work to be caught in the middle 0.7 s in, even on a fast machine (8 shots of ~2000
  // steps were done in less here): 24 shots of ~3000 steps on 200 × 400 cells. Each run is
  // killed, so the work is never all done.
  ASSERT_EQ(run_in(dir, "synth --quiet --kind layered --nz 200 --nx 400 --spacing 10 --out vp.h5").status, 0);
  ASSERT_EQ(run_in(dir, "survey --quiet --model vp.h5 --nshots 24 --t-max 3 --out s.h5").status, 0);
  write_zero_data(dir / "s.h5", dir / "d.h5");  // modeling them costs a minute under the sanitizers
  for (const char* f : {"out.h5", "out.h5.state"}) std::ofstream(dir / f) << "an earlier result";
  struct Run {
    std::string args;
    int sig;
  };
  const std::vector<Run> runs = {
      {"model --model vp.h5 --survey s.h5 --out out.h5 --overwrite", SIGTERM},
      {"model --model vp.h5 --survey s.h5 --out out.h5 --overwrite", SIGINT},
      {"gradient --model vp.h5 --data d.h5 --out out.h5 --overwrite", SIGTERM},
      {"rtm --model vp.h5 --data d.h5 --out out.h5 --overwrite", SIGHUP},
  };
  for (const Run& r : runs) {
    SCOPED_TRACE(r.args);
    const auto before = snapshot(dir);
    const pid_t pid = start_in(dir, r.args);
    ASSERT_TRUE(appears(dir / ".out.h5.lock")) << "the run claims its output";
    std::this_thread::sleep_for(std::chrono::milliseconds(700));  // into its shots
    kill(pid, r.sig);
    EXPECT_EQ(finish(pid), 128 + r.sig) << "the signal ends the run, as its sender meant";
    EXPECT_TRUE(before == snapshot(dir)) << "no temporary, no lock, the earlier result intact";
  }
  // Out of core (--scratch): the run's scratch folder, with StarPU's files in it, goes too.
  {
    fs::create_directories(dir / "scr");
    const auto before = snapshot(dir);
    const pid_t pid = start_in(dir, "gradient --model vp.h5 --data d.h5 --out out.h5 --overwrite --scratch scr");
    bool started = false;  // the run's folder made (StarPU's disk node starting)
    for (int i = 0; i < 600 && !started; ++i) {
      started = !fs::is_empty(dir / "scr");
      if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(started) << "the run makes its scratch folder";
    std::this_thread::sleep_for(std::chrono::milliseconds(700));  // into its shots
    kill(pid, SIGTERM);
    EXPECT_EQ(finish(pid), 128 + SIGTERM);
    EXPECT_TRUE(before == snapshot(dir)) << "no scratch folder, no temporary, no lock, the earlier result intact";
    fs::remove(dir / "scr");
  }
  // SIGKILL cannot be caught: the next run on the output removes what the killed one left.
  {
    const pid_t pid = start_in(dir, runs[0].args);
    ASSERT_TRUE(appears(dir / (".out.h5.tmp." + std::to_string(pid) + ".0"))) << "the shots being written";
    kill(pid, SIGKILL);
    finish(pid);
    // A run that claims the output (and is then refused for its damaged model) tidies up.
    std::ofstream(dir / "damaged.h5") << "not HDF5";
    EXPECT_EQ(run_in(dir, "model --quiet --model damaged.h5 --survey s.h5 --out out.h5 --overwrite").status, 2);
    fs::remove(dir / "damaged.h5");
    for (const auto& e : fs::directory_iterator(dir))
      EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << "left: " << e.path();
  }
  // fwi: a first signal stops it at the next iteration with its result and state saved
  // (exit 130); a second one ends it at once. Neither leaves a temporary or a lock.
  const std::string fwi = "fwi --model init.h5 --data small.h5 --out inv.h5 --iterations 50 --figures-every 0";
  pid_t pid = start_in(dir, fwi);
  ASSERT_TRUE(appears(dir / "inv.h5.state")) << "a first iteration";
  kill(pid, SIGTERM);
  EXPECT_EQ(finish(pid), 130);
  EXPECT_TRUE(fs::exists(dir / "inv.h5"));
  pid = start_in(dir, fwi + " --resume");
  ASSERT_TRUE(appears(dir / ".inv.h5.lock"));
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  kill(pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  kill(pid, SIGINT);
  const int status = finish(pid);
  EXPECT_TRUE(status == 130 || status == 128 + SIGINT) << status;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(name.find(".tmp."), std::string::npos) << "temporary left: " << name;
    EXPECT_EQ(name.find(".lock"), std::string::npos) << "lock left: " << name;
  }
}

TEST_F(Hostile, ASecondRunOnTheSameOutputIsRefusedWhileTheFirstOwnsIt) {
  const fs::path dir = scratch("two-runs");
  for (const char* f : {"init.h5", "d.h5", "vp.h5", "s.h5"}) fs::copy_file(base_ / f, dir / f);
  const pid_t first = start_in(dir, "fwi --model init.h5 --data d.h5 --out inv.h5 --iterations 3 --figures-every 0");
  ASSERT_TRUE(appears(dir / ".inv.h5.lock"));
  const Result second =
      run_in(dir, "fwi --model init.h5 --data d.h5 --out inv.h5 --iterations 3 --overwrite --figures-every 0");
  const Result other = run_in(dir, "model --model vp.h5 --survey s.h5 --out inv.h5 --overwrite");
  EXPECT_EQ(finish(first), 0) << "the first run goes on undisturbed";
  for (const Result& r : {second, other}) {
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("inv.h5: another starwave run (pid " + std::to_string(first) + ") is writing it"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_TRUE(fs::exists(dir / "inv.h5"));
  EXPECT_FALSE(fs::exists(dir / ".inv.h5.lock")) << "the lock goes with its run";
  // Once the first has ended, the output is free again (and exists: --overwrite is asked).
  EXPECT_EQ(run_in(dir, "fwi --quiet --model init.h5 --data d.h5 --out inv.h5 --iterations 1 --overwrite").status, 0);
}

TEST_F(Hostile, NothingARunCreatesOrReplacesFollowsALink) {
  // A lock, an output or a picture that is a symbolic link, a second name of another file
  // (a hard link) or a pipe is refused before anything is written: the file it leads to
  // (here a user's own, or the run's own model) keeps its bytes.
  const fs::path dir = scratch("links");
  for (const char* f : {"vp.h5", "s.h5", "init.h5", "d.h5"}) fs::copy_file(base_ / f, dir / f);
  std::ofstream(dir / "precious.txt") << "a user's own words";
  const std::string model = "model --model vp.h5 --survey s.h5 --out out.h5";
  auto lock_case = [&](const std::function<void()>& plant, const std::string& mention) {
    plant();
    expect_refusal(dir, model, mention);
    expect_refusal(dir, model + " --overwrite", mention);
    fs::remove(dir / ".out.h5.lock");
  };
  lock_case([&] { fs::create_symlink("precious.txt", dir / ".out.h5.lock"); },
            "out.h5: its lock file .out.h5.lock is a symbolic link (to precious.txt)");
  lock_case([&] { fs::create_symlink("vp.h5", dir / ".out.h5.lock"); }, "is a symbolic link (to vp.h5)");
  lock_case([&] { fs::create_symlink("nowhere", dir / ".out.h5.lock"); }, "is a symbolic link (to nowhere)");
  lock_case([&] { fs::create_hard_link(dir / "precious.txt", dir / ".out.h5.lock"); }, "(a hard link)");
  lock_case([&] { ASSERT_EQ(mkfifo((dir / ".out.h5.lock").c_str(), 0644), 0); }, "is not a regular file");
  // An output that exists is refused before its lock is touched: the planted link is
  // refused either way, and the file it leads to is never truncated.
  std::ofstream(dir / "out.h5") << "an earlier result";
  fs::create_symlink("vp.h5", dir / ".out.h5.lock");
  expect_refusal(dir, model, "out.h5: exists already");
  fs::remove(dir / ".out.h5.lock");
  fs::remove(dir / "out.h5");
  // --out naming a link, dangling or not: neither written through nor replaced.
  fs::create_symlink("nowhere.h5", dir / "dangling.h5");
  fs::create_symlink("precious.txt", dir / "mine.h5");
  for (const char* out : {"dangling.h5", "mine.h5"})
    for (const char* flag : {"", " --overwrite"}) {
      expect_refusal(dir, std::string("model --model vp.h5 --survey s.h5 --out ") + out + flag,
                     std::string(out) + ": is a symbolic link");
      expect_refusal(dir, std::string("synth --kind layered --nz 20 --nx 20 --out ") + out + flag,
                     std::string(out) + ": is a symbolic link");
    }
  EXPECT_FALSE(fs::exists(dir / "nowhere.h5"));
  // A picture fwi would draw, planted as a link in its folder.
  fs::create_directories(dir / "figs");
  fs::create_symlink("../precious.txt", dir / "figs" / "current.png");
  for (const char* flag : {"", " --overwrite"})
    expect_refusal(dir,
                   std::string("fwi --model init.h5 --data d.h5 --out inv.h5 --iterations 1 --figures figs") + flag,
                   "figs/current.png: is a symbolic link (to ../precious.txt)");
}

#if !defined(__SANITIZE_ADDRESS__)  // ASan reserves terabytes of address space: no ulimit -v
TEST_F(Hostile, AnAddressSpaceLimitIsMeasuredAndRefusedInOneLine) {
  // Under `ulimit -v` the memory plan counts the address space left, and a limit that
  // cannot hold StarPU's threads is refused before StarPU starts (it would abort there,
  // leaving the lock), never a run that waits for ever on an allocation.
  const fs::path dir = scratch("address-space");
  for (const char* f : {"vp.h5", "d.h5", "s.h5"}) fs::copy_file(base_ / f, dir / f);
  const std::string limit = "ulimit -v 150000;";
  expect_refusal(dir, "gradient --model vp.h5 --data d.h5 --out g.h5", "this process's address-space limit (ulimit -v)",
                 2, limit);
  expect_refusal(dir, "model --model vp.h5 --survey s.h5 --out m.h5", "this process's address-space limit (ulimit -v)",
                 2, limit);
  // Room for StarPU, none for the whole wavefield of a shot (926 MiB kept whole).
  ASSERT_EQ(run_in(dir, "synth --quiet --kind layered --nz 200 --nx 400 --spacing 10 --out big.h5").status, 0);
  ASSERT_EQ(run_in(dir, "survey --quiet --model big.h5 --nshots 1 --t-max 2 --out bs.h5").status, 0);
  ASSERT_EQ(run_in(dir, "model --quiet --model big.h5 --survey bs.h5 --out bd.h5").status, 0);
  expect_refusal(dir, "gradient --model big.h5 --data bd.h5 --out g.h5 --storage full", "more than the", 2,
                 "ulimit -v 800000;");
  // Room enough: the run goes through.
  EXPECT_EQ(run_in(dir, "gradient --quiet --model vp.h5 --data d.h5 --out g.h5", "ulimit -v 1500000;").status, 0);
}
#endif

TEST_F(Hostile, ANameHoldingControlCharactersIsSaidEscapedOnOneLine) {
  // A refusal stays one line whatever the names it quotes hold: a newline, a carriage
  // return, a terminal escape.
  const fs::path dir = scratch("names");
  for (const char* f : {"vp.h5", "s.h5"}) fs::copy_file(base_ / f, dir / f);
  expect_refusal(dir, "model --model 'no\nsuch.h5' --survey s.h5 --out o.h5", "no\\nsuch.h5: no such file");
  expect_refusal(dir, "model --model vp.h5 --survey s.h5 --out 'nodir\r\033[2K/o.h5'",
                 "nodir\\r\\x1b[2K/o.h5: the output folder");
  const Result r = run_in(dir, "'mo\ndel' --model vp.h5");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "starwave mo\\ndel: error: unknown subcommand (see starwave --help)\n");
}

/// The values of `dataset` in `file`, as doubles (empty if it cannot be read).
std::vector<double> values_of(const fs::path& file, const std::string& dataset) {
  std::vector<double> v;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return v;
  const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  if (d >= 0) {
    const hid_t space = H5Dget_space(d);
    v.resize(std::size_t(H5Sget_simple_extent_npoints(space)));
    if (H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0) v.clear();
    H5Sclose(space);
    H5Dclose(d);
  }
  H5Fclose(f);
  return v;
}

TEST_F(Hostile, ADamagedStarpuHomeIsRepairedOrRefusedNeverAnAbort) {
  // StarPU aborts on model files cut short (a kill or a full disk during its save) on
  // every later run, takes an empty HOME for "/", and saves its files whatever room is
  // left. Damaged files are set aside with one line each and measured anew; a home whose
  // file system is full is refused before any work.
  const fs::path dir = scratch("starpu-home");
  for (const char* f : {"vp.h5", "s.h5"}) fs::copy_file(base_ / f, dir / f);
  const std::string home = "STARPU_HOME='" + (dir / "home").string() + "'";
  const std::string model = "model --quiet --model vp.h5 --survey s.h5 --out ";
  ASSERT_EQ(run_in(dir, model + "first.h5", home).status, 0);
  const fs::path models = dir / "home" / ".starpu" / "sampling" / "codelets" / "45";
  std::vector<fs::path> saved;
  for (const auto& e : fs::directory_iterator(models))
    if (e.path().filename().string().rfind("starwave_", 0) == 0) saved.push_back(e.path());
  ASSERT_FALSE(saved.empty()) << "StarPU saved no model";
  // Each model file cut short at 10%, 50% or 90% of its bytes (and the bus's
  // configuration at 10%): the run goes on, says so once per file, and computes the same.
  int k = 0;
  for (const fs::path& f : saved) fs::resize_file(f, fs::file_size(f) * std::uintmax_t(10 + 40 * (k++ % 3)) / 100);
  fs::path config;
  for (const auto& e : fs::directory_iterator(dir / "home" / ".starpu" / "sampling" / "bus"))
    if (e.path().extension() == ".config") config = e.path();
  ASSERT_FALSE(config.empty());
  fs::resize_file(config, fs::file_size(config) / 10);
  const Result r = run_in(dir, model + "second.h5", home);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), long(saved.size()) + 1) << r.err;
  EXPECT_NE(r.err.find("starwave model: note: StarPU's performance model "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("could not be read (cut short?); set aside as"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("StarPU's bus measurements " + config.string()), std::string::npos) << r.err;
  const std::vector<double> first = values_of(dir / "first.h5", "/data");
  EXPECT_FALSE(first.empty());
  EXPECT_TRUE(first == values_of(dir / "second.h5", "/data")) << "the same data, bit for bit";
  const Result again = run_in(dir, model + "third.h5", home);
  EXPECT_EQ(again.status, 0);
  EXPECT_EQ(again.err, "") << "measured anew and saved: nothing left to set aside";
  // A model that is a folder (StarPU aborts reading it; a pipe, it would wait on for ever).
  const fs::path& made = saved.front();
  fs::remove(made);
  fs::create_directories(made / "x");
  const Result folder = run_in(dir, model + "folder.h5", home);
  EXPECT_EQ(folder.status, 0) << folder.err;
  EXPECT_NE(folder.err.find(made.string() + " is not a regular file; set aside"), std::string::npos) << folder.err;
  // An empty HOME is not "/", and no home at all is the user's own.
  const bool root_home_before = fs::exists("/.starpu");
  EXPECT_EQ(run_in(dir, model + "fourth.h5", "HOME= STARPU_HOME= XDG_CACHE_HOME=").status, 0);
  if (!root_home_before) {
    EXPECT_FALSE(fs::exists("/.starpu")) << "StarPU made its home at /";
  }
  EXPECT_EQ(run_in(dir, model + "fifth.h5", "env -u HOME -u STARPU_HOME -u XDG_CACHE_HOME").status, 0);
  // A home on a full file system (a 256 KiB tmpfs, filled): refused before any work.
  if (std::system("unshare -rm true 2>/dev/null") != 0) {
    ADD_FAILURE() << "unshare -rm (a private mount) is not allowed here: the full-disk case is not tried";
    return;
  }
  fs::create_directories(dir / "full");
  expect_refusal(dir, "model --model vp.h5 --survey s.h5 --out full.h5",
                 "the file system of " + (dir / "full").string() + "/.starpu/sampling has", 2,
                 "unshare -rm sh -c 'mount -t tmpfs -o size=256k tmpfs full && head -c 250000 /dev/zero > full/fill; "
                 "STARPU_HOME=\"$PWD/full\" exec \"$0\" \"$@\"'");
}

TEST_F(Hostile, AnInversionKilledOutrightLeavesNothingThatBlocksItsRerun) {
  // SIGKILL cannot be caught. Pictures are drawn only once a state is saved, so a run
  // killed at any moment leaves either nothing of its own (the same command runs again)
  // or a state with its pictures (continued with --resume, which replaces them).
  const fs::path dir = scratch("killed-fwi");
  for (const char* f : {"init.h5", "d.h5"}) fs::copy_file(base_ / f, dir / f);
  const std::string fwi = "fwi --quiet --model init.h5 --data d.h5 --out inv.h5 --iterations 3";
  // Killed the moment its first picture appears: its state is there already.
  const pid_t pid = start_in(dir, fwi);
  bool drawn = false;
  for (int i = 0; i < 12000 && !drawn; ++i) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir / "inv_figures", ec))
      if (e.path().extension() == ".png") drawn = true;
    if (!drawn) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid, SIGKILL);
  finish(pid);
  ASSERT_TRUE(drawn) << "no picture within a minute";
  EXPECT_TRUE(fs::exists(dir / "inv.h5.state")) << "a picture drawn before any state";
  EXPECT_EQ(run_in(dir, fwi + " --resume").status, 0) << "the killed run is continued";
  // Killed as soon as it has claimed its output, before any state: the same command again.
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != "init.h5" && e.path().filename() != "d.h5") fs::remove_all(e.path());
  const pid_t early = start_in(dir, fwi);
  ASSERT_TRUE(appears(dir / ".inv.h5.lock"));
  kill(early, SIGKILL);
  finish(early);
  const bool saved = fs::exists(dir / "inv.h5.state");
  const Result again = run_in(dir, fwi + (saved ? " --resume" : ""));
  EXPECT_EQ(again.status, 0) << (saved ? "resumed: " : "the same command: ") << again.err;
}

TEST_F(Hostile, AFailedInversionLeavesNoPicturesAndNoResult) {
  const fs::path dir = scratch("failed-fwi");
  for (const char* f : {"init.h5", "d.h5"}) fs::copy_file(base_ / f, dir / f);
  const auto before = snapshot(dir);
  const Result r =
      run_in(dir, "fwi --model init.h5 --data d.h5 --out inv.h5 --iterations 2", "STARWAVE_TEST_FAIL_TASK=adjoint");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("adjoint"), std::string::npos) << r.err;
  EXPECT_TRUE(before == snapshot(dir)) << "no figures folder, no result, no state, no temporary, no lock";
}

TEST_F(Hostile, ANumberIsDecimalAndAValueIsNeverEmpty) {
  // "0x10" is not 16 m, and an empty value (a shell variable that expanded to nothing) is a
  // mistake, not the option left out.
  const fs::path dir = scratch("words");
  for (const char* f : {"vp.h5", "init.h5", "d.h5"}) fs::copy_file(base_ / f, dir / f);
  ASSERT_EQ(run_in(dir, "export --in vp.h5 --out vp.sgy").status, 0);
  expect_refusal(dir, "import --velocity --in vp.sgy --out v.h5 --spacing 0x10", "--spacing");
  expect_refusal(dir, "import --velocity --in vp.sgy --out v.h5 --spacing 1e1,0x4", "--spacing");
  const std::string fwi = "fwi --model init.h5 --data d.h5 --out r.h5 --iterations 1 ";
  expect_refusal(dir, fwi + "--bands ''", "--bands: empty value");
  expect_refusal(dir, fwi + "--figures ''", "--figures: empty value");
  expect_refusal(dir, "plot --in vp.h5 --out p.png --title ''", "--title: empty value");
  std::ofstream(dir / "empty.ini") << "# an empty value\nfigures =\n";
  expect_refusal(dir, fwi + "--config empty.ini",
                 "--figures: empty value; give one, or leave the option out (in empty.ini, line 2)");
  // Decimal forms are all taken.
  EXPECT_EQ(run_in(dir, "import --velocity --in vp.sgy --out v.h5 --spacing 1e1").status, 0);
}

TEST_F(Hostile, AConfigValueRefusedByItsMeaningNamesTheFileAndLine) {
  // A value that parses but means nothing here (order 5) is refused after the file is read:
  // the message still says where it came from; a value the command line gives does not.
  const fs::path dir = scratch("config-line");
  for (const char* f : {"vp.h5", "s.h5"}) fs::copy_file(base_ / f, dir / f);
  std::ofstream(dir / "run.ini") << "# the run\n\n  order = 5\n";
  expect_refusal(dir, "model --model vp.h5 --survey s.h5 --out d.h5 --config run.ini",
                 "--order: must be 2, 4, 6 or 8 (got 5) (in run.ini, line 3)");
  std::ofstream(dir / "typo.ini") << "pml-width = 10\norder = eight\n";
  expect_refusal(dir, "model --model vp.h5 --survey s.h5 --out d.h5 --config typo.ini", "typo.ini: line 2:");
  const Result cli = run_in(dir, "model --model vp.h5 --survey s.h5 --out d.h5 --order 5");
  EXPECT_EQ(cli.status, 2);
  EXPECT_EQ(cli.err.find("(in "), std::string::npos) << cli.err;
}

TEST_F(Hostile, AResumedStateOutsideTheInversionsBoundsIsRefused) {
  // A state holds a model the inversion made, always within its bounds: a negative or NaN
  // velocity there is damage, and is never continued from.
  for (const double bad : {-1500.0, std::nan("")}) {
    const fs::path dir = scratch("damaged-state");
    for (const char* f : {"init.h5", "d.h5", "r.h5", "r.h5.state"}) fs::copy_file(base_ / f, dir / f);
    poke(dir / "r.h5.state", "/vp", 5, bad);
    expect_refusal(dir, "fwi --model init.h5 --data d.h5 --out r.h5 --iterations 2 --figures-every 0 --resume",
                   std::isnan(bad) ? "r.h5.state: /vp holds NaN"
                                   : "r.h5.state: /vp holds -1500 m/s at cell 5, outside the inversion's bounds");
  }
}

TEST_F(Hostile, AFiguresFolderThatCannotBeWrittenIsRefusedBeforeAnyWork) {
  const fs::path dir = scratch("read-only-figures");
  for (const char* f : {"init.h5", "d.h5"}) fs::copy_file(base_ / f, dir / f);
  fs::create_directories(dir / "ro");
  if (std::system("unshare -rm true 2>/dev/null") != 0) {
    ADD_FAILURE() << "unshare -rm (a private mount) is not allowed here: the read-only folder is not tried";
    return;
  }
  // A read-only file system mounted on ro/ (root writes anywhere else).
  const std::string ro = "unshare -rm sh -c 'mount -t tmpfs -o ro tmpfs ro && exec \"$0\" \"$@\"'";
  const std::string fwi = "fwi --model init.h5 --data d.h5 --out r.h5 --iterations 1 ";
  expect_refusal(dir, fwi + "--figures ro/pictures", "--figures: ro/pictures: cannot write in ro", 2, ro);
  expect_refusal(dir, fwi + "--figures ro", "--figures: ro: cannot write in ro", 2, ro);
}

}  // namespace
