// tests/test_mpi.cpp — starwave under an MPI launcher (label `mpi`), oversubscribed on this
// machine's cores with one CPU worker per rank. docs/design.md §3 "With MPI": blocks of
// consecutive shots per rank, the model side on rank 0, every rank submitting the same graph. What must
// hold: modeled data, gradient, RTM image and an inversion are bit-for-bit the single
// process's whatever the number of ranks (the reduction tree does not change shape), and
// a failure on one rank ends every rank promptly with that rank's message.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "src/io/hdf5.hpp"
#include "tests/background.hpp"

namespace starwave {
namespace {

namespace fs = std::filesystem;

struct Result {
  int status;
  std::string out;
  double seconds;
};

Result shell(const std::string& cmd) {
  const std::string out = (fs::temp_directory_path() / ("starwave-mpi-" + std::to_string(getpid()))).string();
  const auto t0 = std::chrono::steady_clock::now();
  const int raw = std::system((cmd + " >" + out + " 2>&1").c_str());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  fs::remove(out);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : 128, ss.str(), s};
}

const std::string kLauncher =
    std::string(STARWAVE_MPIEXEC) + " --allow-run-as-root --oversubscribe -x STARPU_SILENT=1 -x STARPU_NCPU=1 ";

/// `starwave ARGS` on `ranks` ranks (0: one process without a launcher), one CPU worker each.
Result starwave(int ranks, const std::string& args) {
  if (ranks == 0) return shell("STARPU_NCPU=1 " + std::string(STARWAVE_BIN) + " " + args);
  return shell(kLauncher + "-n " + std::to_string(ranks) + " " + STARWAVE_BIN + " " + args);
}

/// A dataset's values exactly as stored (float32 or float64, read as float64: exact).
std::vector<double> dataset(const std::string& path, const std::string& name) {
  return io::read_record(path, {name}, {}).arrays.at(name);
}

void expect_same_bits(const std::string& a, const std::string& b, const std::string& name) {
  const std::vector<double> x = dataset(a, name), y = dataset(b, name);
  ASSERT_EQ(x.size(), y.size()) << name;
  ASSERT_FALSE(x.empty()) << name;
  EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(double)), 0) << name << ": " << a << " vs " << b;
}

TEST(Mpi, EveryRankStartsStarpuMpiAndKnowsItsPlace) {
  for (int n : {2, 3}) {
    const Result r = starwave(n, "info");
    ASSERT_EQ(r.status, 0) << r.out;
    for (int k = 0; k < n; ++k)
      EXPECT_NE(r.out.find("MPI rank       " + std::to_string(k) + " of " + std::to_string(n)), std::string::npos)
          << r.out;
  }
}

/// A small Marmousi-like case (7 shots: an uneven reduction tree, and 3 ranks own 3, 2, 2)
/// made once by one process.
class MpiRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("starwave-mpi-run-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const std::string grid = " --kind marmousi-like --nz 30 --nx 60 --spacing 10";
    ASSERT_EQ(starwave(0, "synth" + grid + " --out " + path("true.h5")).status, 0);
    ASSERT_EQ(starwave(0, "synth" + grid + " --smooth 60 --out " + path("init.h5")).status, 0);
    ASSERT_EQ(starwave(0, "survey --model " + path("true.h5") + " --nshots 7 --frequency 15 --t-max 0.5 --out " +
                              path("survey.h5"))
                  .status,
              0);
    const Result r = starwave(
        0, "model --model " + path("true.h5") + " --survey " + path("survey.h5") + " --out " + path("data.h5"));
    ASSERT_EQ(r.status, 0) << r.out;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }

  /// Runs `args … --out NAME-R.h5` on 1 process and on 2 and 3 ranks; returns the outputs.
  static std::vector<std::string> on_1_2_3(const std::string& args, const std::string& name) {
    std::vector<std::string> outs;
    for (int n : {0, 2, 3}) {
      const std::string out = path(name + "-" + std::to_string(n) + ".h5");
      const Result r = starwave(n, args + " --out " + out);
      EXPECT_EQ(r.status, 0) << args << " on " << n << " ranks:\n" << r.out;
      EXPECT_TRUE(fs::exists(out)) << out;
      outs.push_back(out);
    }
    return outs;
  }

  /// Runs `args` with shots in batches (each a rank's consecutive shots, docs/design.md §3) on
  /// 1 process and 3 ranks, and on 2 ranks told different batches (they take rank 0's: they
  /// register their handles in one order): `names` the same bits as in `want`.
  static void expect_batches_same_bits(const std::string& args, const std::string& want,
                                       const std::vector<const char*>& names) {
    for (int n : {0, 3, 2}) {
      const std::string out = path("batches-" + std::to_string(n) + ".h5");
      const std::string bin = std::string(STARWAVE_BIN) + " " + args + " --overwrite --out " + out;
      const Result r =
          n == 0 ? shell("STARWAVE_SHOT_BATCH=2 STARPU_NCPU=2 " + bin)
          : n == 3
              ? shell("STARWAVE_SHOT_BATCH=2 " + kLauncher + "-x STARWAVE_SHOT_BATCH -n 3 " + bin)
              : shell(kLauncher + "-n 1 env STARWAVE_SHOT_BATCH=3 " + bin + " : -n 1 env STARWAVE_SHOT_BATCH=1 " + bin);
      ASSERT_EQ(r.status, 0) << args << ", " << n << " ranks:\n" << r.out;
      for (const char* name : names) expect_same_bits(want, out, name);
    }
  }

  static fs::path dir_;
};

fs::path MpiRun::dir_;

TEST_F(MpiRun, ModeledDataAreTheSameBitsOnAnyNumberOfRanks) {
  const auto outs = on_1_2_3("model --model " + path("true.h5") + " --survey " + path("survey.h5"), "data");
  for (std::size_t k = 1; k < outs.size(); ++k) expect_same_bits(outs[0], outs[k], "data");
  expect_batches_same_bits("model --model " + path("true.h5") + " --survey " + path("survey.h5"), outs[0], {"data"});
}

TEST_F(MpiRun, GradientIsTheSameBitsOnAnyNumberOfRanks) {
  const auto outs =
      on_1_2_3("gradient --source-gradient --model " + path("init.h5") + " --data " + path("data.h5"), "grad");
  const double j = io::read_record(outs[0], {}, {"misfit"}).scalars.at("misfit");
  EXPECT_GT(j, 0);
  for (std::size_t k = 1; k < outs.size(); ++k) {
    expect_same_bits(outs[0], outs[k], "gradient");
    expect_same_bits(outs[0], outs[k], "source_gradient");  // each shot's, from its rank to rank 0
    expect_same_bits(outs[0], outs[k], "illumination");
    const double jk = io::read_record(outs[k], {}, {"misfit"}).scalars.at("misfit");
    EXPECT_EQ(std::memcmp(&j, &jk, sizeof j), 0) << j << " vs " << jk;
  }
}

TEST_F(MpiRun, RtmImageIsTheSameBitsOnAnyNumberOfRanks) {
  const auto outs = on_1_2_3("rtm --model " + path("init.h5") + " --data " + path("data.h5"), "image");
  for (std::size_t k = 1; k < outs.size(); ++k)
    for (const char* name : {"image", "image_raw", "illumination"}) expect_same_bits(outs[0], outs[k], name);
  expect_batches_same_bits("rtm --model " + path("init.h5") + " --data " + path("data.h5"), outs[0],
                           {"image", "image_raw", "illumination"});
}

TEST_F(MpiRun, LsrtmIsTheSameBitsOnAnyNumberOfRanks) {
  // Each rank runs the conjugate gradients on rank 0's sums of its J and Jᵀ: the same image,
  // RTM image, misfit history and restart state on 1, 2 and 3 ranks; rank 0 draws.
  const auto outs =
      on_1_2_3("lsrtm --quiet --iterations 3 --model " + path("init.h5") + " --data " + path("data.h5"), "lsrtm");
  const std::vector<double> history = dataset(outs[0], "history/misfit");
  ASSERT_EQ(history.size(), 4u);
  EXPECT_LT(history.back(), history.front());
  for (std::size_t k = 1; k < outs.size(); ++k) {
    for (const char* name : {"image", "rtm", "illumination", "history/misfit"})
      expect_same_bits(outs[0], outs[k], name);
    expect_same_bits(outs[0] + ".state", outs[k] + ".state", "direction");
  }
  EXPECT_TRUE(fs::exists(path("lsrtm-3_figures/image_003.png")));
}

TEST_F(MpiRun, LbfgsInversionIsTheSameBitsOnAnyNumberOfRanks) {
  const auto outs = on_1_2_3("fwi --quiet --iterations 3 --model " + path("init.h5") + " --data " + path("data.h5") +
                                 " --true-model " + path("true.h5"),
                             "fwi");
  const std::vector<double> history = dataset(outs[0], "history/misfit");
  ASSERT_EQ(history.size(), 4u);  // the start, then 3 iterations
  EXPECT_LT(history.back(), history.front());
  for (std::size_t k = 1; k < outs.size(); ++k) {
    expect_same_bits(outs[0], outs[k], "vp");
    expect_same_bits(outs[0], outs[k], "history/misfit");
    expect_same_bits(outs[0] + ".state", outs[k] + ".state", "gradient");  // the restart state too
  }
  // Rank 0 draws the pictures, the middle shot's residual included (another rank's shot).
  EXPECT_TRUE(fs::exists(path("fwi-3_figures/residual.png")));
  EXPECT_TRUE(fs::exists(path("fwi-3_figures/observed.png")));
}

TEST_F(MpiRun, AdamOnMiniBatchesWithBandsIsTheSameBitsOnAnyNumberOfRanks) {
  // Batches of 3 of the 7 shots: each shot stays with its owner, whose rank holds its data.
  const auto outs = on_1_2_3(
      "fwi --quiet --iterations 2 --optimizer adam --batch-shots 3 --seed 4 --bands 8,12 "
      "--model " +
          path("init.h5") + " --data " + path("data.h5"),
      "adam");
  for (std::size_t k = 1; k < outs.size(); ++k) {
    expect_same_bits(outs[0], outs[k], "vp");
    expect_same_bits(outs[0], outs[k], "history/misfit");
  }
}

TEST_F(MpiRun, SourceEstimationWindowsAndATraceMisfitAreTheSameBitsOnAnyNumberOfRanks) {
  // Each band's arrivals are picked in every shot modelled on its rank (rank 0 picks, makes the
  // windows and sends them), then its estimation models every shot again; rank 0 reads every
  // shot's observed traces, estimates a wavelet a shot and sends them; the correlation misfit
  // runs per shot, windowed.
  const auto outs = on_1_2_3(
      "fwi --quiet --iterations 2 --bands 8,12 --estimate-source shot --misfit correlation --window 0.02,0.25 "
      "--model " +
          path("init.h5") + " --data " + path("data.h5"),
      "estimate");
  for (std::size_t k = 1; k < outs.size(); ++k) {
    for (const char* name : {"vp", "history/misfit", "wavelet"}) expect_same_bits(outs[0], outs[k], name);
    for (const char* name : {"wavelets", "windows"}) expect_same_bits(outs[0] + ".state", outs[k] + ".state", name);
  }
}

TEST_F(MpiRun, OneRankThatCannotReadItsInputEndsEveryRankWithItsMessage) {
  // Rank 1 starts in a folder without the data file (a node that does not see it); rank 0
  // reads its shots, starts StarPU-MPI and waits for rank 1's part of the graph.
  const fs::path elsewhere = dir_ / "elsewhere";
  fs::create_directories(elsewhere);
  const std::string out = path("fail.h5");
  const std::string args = " gradient --model " + path("init.h5") + " --data data.h5 --out " + out;
  const Result r = shell(kLauncher + "-n 1 -wdir " + dir_.string() + " " + STARWAVE_BIN + args + " : -n 1 -wdir " +
                         elsewhere.string() + " " + STARWAVE_BIN + args);
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_LT(r.seconds, 30) << r.out;
  EXPECT_NE(r.out.find("[rank 1/2] starwave gradient: error: data.h5: no such file"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("[rank 0/2]"), std::string::npos) << r.out;  // rank 0 had nothing wrong
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(MpiRun, ABadOptionIsReportedAndEndsEveryRank) {
  const std::string out = path("bad.h5");
  const Result r = starwave(3, "fwi --iterations 2 --optimizer newton --model " + path("init.h5") + " --data " +
                                   path("data.h5") + " --out " + out);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_LT(r.seconds, 30) << r.out;
  EXPECT_NE(r.out.find("starwave fwi: error: --optimizer"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
}

/// The pid of rank `rank` of a running `starwave` whose command line mentions `tag`.
int rank_pid(const std::string& tag, int rank) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto slurp = [&](const char* file) {
      std::ifstream in(entry.path() / file, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      std::string text = ss.str();
      for (char& c : text)
        if (c == '\0') c = '\n';
      return "\n" + text;
    };
    const std::string cmd = slurp("cmdline");
    if (cmd.find("\n" + std::string(STARWAVE_BIN) + "\n") == std::string::npos || cmd.find(tag) == std::string::npos)
      continue;
    if (slurp("environ").find("\nOMPI_COMM_WORLD_RANK=" + std::to_string(rank) + "\n") != std::string::npos)
      return std::stoi(name);
  }
  return -1;
}

/// Whether process `pid` runs (a zombie no longer does).
bool alive(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  const std::size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

TEST_F(MpiRun, AnInversionWhoseRankIsKilledEndsAndResumesOnOtherRanksToTheSameBits) {
  const std::string common = "fwi --quiet --iterations 8 --model " + path("init.h5") + " --data " + path("data.h5");
  const std::string whole = path("whole.h5"), killed = path("killed.h5"), state = killed + ".state";
  ASSERT_EQ(starwave(0, common + " --out " + whole).status, 0);

  // 2 ranks; once the state holds iteration 2, rank 1 is killed (a node lost): the job ends.
  const int launcher =
      test::start_in_background(kLauncher + "-n 2 " + STARWAVE_BIN + " " + common + " --out " + killed);
  ASSERT_GT(launcher, 0);
  const int reached = test::wait_for_saved_iteration(state, 2);
  ASSERT_GE(reached, 2) << "the inversion never saved iteration 2";
  const int victim = rank_pid(killed, 1);
  ASSERT_GT(victim, 0) << "rank 1 not found";
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  const auto t0 = std::chrono::steady_clock::now();
  while (alive(launcher) && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60)) usleep(20000);
  const double ended = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(ended, 30) << "the other rank and the launcher did not end";
  EXPECT_LT(rank_pid(killed, 0), 0) << "rank 0 still runs";
  EXPECT_FALSE(fs::exists(killed)) << "no result before the run ends";

  // Resumed on 3 ranks: the same bits as the uninterrupted single process.
  const Result r = starwave(3, common + " --out " + killed + " --resume");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_same_bits(whole, killed, "vp");
  expect_same_bits(whole, killed, "history/misfit");
}

}  // namespace
}  // namespace starwave
