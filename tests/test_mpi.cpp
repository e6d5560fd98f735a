// tests/test_mpi.cpp — starwave under an MPI launcher (label `mpi`): every rank starts
// starpu-mpi and knows its place; commands whose shots are not yet distributed refuse on
// every rank, promptly, before any work or output.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

struct Result {
  int status;
  std::string out;
  double seconds;
};

Result mpirun(int ranks, const std::string& args) {
  const std::string out = (fs::temp_directory_path() / ("starwave-mpi-" + std::to_string(getpid()))).string();
  const std::string cmd = std::string(STARWAVE_MPIEXEC) + " --allow-run-as-root --oversubscribe -n " +
                          std::to_string(ranks) + " -x STARPU_SILENT=1 -x STARPU_NCPU=1 " + STARWAVE_BIN + " " + args +
                          " >" + out + " 2>&1";
  const auto t0 = std::chrono::steady_clock::now();
  const int raw = std::system(cmd.c_str());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  fs::remove(out);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : 128, ss.str(), s};
}

TEST(Mpi, EveryRankStartsStarpuMpiAndKnowsItsPlace) {
  for (int n : {2, 3}) {
    const Result r = mpirun(n, "info");
    ASSERT_EQ(r.status, 0) << r.out;
    for (int k = 0; k < n; ++k)
      EXPECT_NE(r.out.find("MPI rank       " + std::to_string(k) + " of " + std::to_string(n)), std::string::npos)
          << r.out;
  }
}

TEST(Mpi, CommandsNotYetDistributedRefuseOnEveryRankBeforeAnyWork) {
  const fs::path dir = fs::temp_directory_path() / ("starwave-mpi-dir-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string out = (dir / "vp.h5").string();
  const Result r = mpirun(2, "synth --kind layered --out " + out);
  EXPECT_NE(r.status, 0);
  EXPECT_LT(r.seconds, 30);
  EXPECT_NE(r.out.find("several MPI ranks"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(dir);
}

}  // namespace
