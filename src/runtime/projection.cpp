// src/runtime/projection.cpp — the simulated runs of a projection (src/runtime/projection.hpp).
#include "src/runtime/projection.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "src/base/error.hpp"
#include "src/runtime/simulated_machine.hpp"
#include "src/safety/signals.hpp"

extern char** environ;

namespace starwave::projection {
namespace fs = std::filesystem;
namespace {

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

std::string find_simulator(const std::string& given) {
  std::string path = given;
  if (path.empty())
    if (const char* e = std::getenv("STARWAVE_SIMULATOR")) path = e;
  const bool named = !path.empty();
  if (!named) {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) path = (self.parent_path() / "starwave-sim").string();
  }
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0)
    throw InputError(
        std::string(named ? "--simulator: " + path + ": not a program" : "--gpus/--nodes: no simulator found") +
        ": projections run the simulation build's starwave (scripts/setup --simgrid; cmake -DSTARWAVE_SIMGRID=ON; "
        "docs/cluster.md): give its bin/starwave with --simulator or STARWAVE_SIMULATOR");
  return path;
}

double simulation_limit() {
  const char* v = std::getenv("STARWAVE_SIMULATION_SECONDS");
  if (!v) return 600;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (!*v || *end || !(s >= 1 && s <= 1e6))
    throw InputError(std::string("STARWAVE_SIMULATION_SECONDS='") + v + "': a number of seconds, 1 … 1000000");
  return s;
}

int run_child(const std::vector<std::string>& args, const std::vector<std::string>& env, const std::string& out,
              const std::string& err, double limit) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  // The stop signals held back from here until the child is tracked: one that came between the
  // spawn and the tracking would end the plan and leave the simulation running. The child
  // starts with the mask and the dispositions of a fresh process (SIGPIPE, SIGXFSZ not ignored).
  sigset_t stops, mask;
  sigemptyset(&stops);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stops, sig);
  pthread_sigmask(SIG_BLOCK, &stops, &mask);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGXFSZ}) sigaddset(&defaults, sig);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setsigmask(&attributes, &mask);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  std::vector<char*> argv, envp;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0].c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc == 0) safety::track_child(pid);
  pthread_sigmask(SIG_SETMASK, &mask, nullptr);  // a stop signal held back is handled now
  if (rc != 0) throw InputError("--simulator: " + args[0] + ": " + os_cause(rc));
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      safety::untrack_child(pid);
      throw RuntimeError("--simulator: " + args[0] + ": " + os_cause(errno));
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit) {
      ::kill(-pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      safety::untrack_child(pid);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  safety::untrack_child(pid);
  ::kill(-pid, SIGKILL);  // whatever it started and left behind
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

Folder::Folder() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/starwave-plan.XXXXXX";
  if (!::mkdtemp(pattern.data())) throw RuntimeError(pattern + ": cannot make a temporary folder");
  path_ = pattern;
  safety::track(path_, true);
}

Folder::~Folder() {
  safety::remove_folder(path_);
  safety::untrack(path_);
}

Simulator::Simulator(std::string simulator, std::string sampling, std::string host, std::string command, int argc,
                     char** argv)
    : simulator_(std::move(simulator)), sampling_(std::move(sampling)), host_(std::move(host)) {
  args_ = {simulator_, "plan", std::move(command)};
  for (int i = 1; i < argc; ++i) args_.emplace_back(argv[i]);
}

double Simulator::median(int gpus, int shots) {
  double t[3] = {once(gpus, shots, k * 0.99), once(gpus, shots, k), once(gpus, shots, k * 1.01)};
  std::sort(t, t + 3);
  return t[1];
}

double Simulator::once(int gpus, int shots, double k_now) {
  const auto key = std::make_tuple(gpus, shots, k_now);
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  simulation::write_machine(sampling_, host_, home_.path(), gpus, k_now);
  const std::string out = home_.path() + "/out", err = home_.path() + "/err";
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string v = *e;
    const std::string name = v.substr(0, v.find('='));
    static const char* replaced[] = {"STARPU_HOME",
                                     "STARPU_HOSTNAME",
                                     "STARPU_PERF_MODEL_DIR",
                                     "STARPU_CALIBRATE",
                                     "STARPU_NCPU",
                                     "STARPU_NCPUS",
                                     "STARPU_NCUDA",
                                     "STARPU_NWORKER_PER_CUDA",
                                     "STARPU_PERF_MODEL_HOMOGENEOUS_CUDA",
                                     "STARPU_SILENT",
                                     kShotsVariable,
                                     kParentVariable};
    if (std::none_of(std::begin(replaced), std::end(replaced), [&](const char* r) { return name == r; }))
      env.push_back(v);
  }
  for (const std::string& v :
       {"STARPU_HOME=" + home_.path(), std::string("STARPU_HOSTNAME=simulated"), std::string("STARPU_NCPU=0"),
        "STARPU_NCUDA=" + std::to_string(gpus), std::string("STARPU_NWORKER_PER_CUDA=1"),
        std::string("STARPU_PERF_MODEL_HOMOGENEOUS_CUDA=1"), std::string("STARPU_SILENT=1"),
        std::string(kShotsVariable) + "=" + std::to_string(shots),
        std::string(kParentVariable) + "=" + std::to_string(::getpid())})
    env.push_back(v);
  const std::string run = "the simulated run of " + std::to_string(shots) + " shots on " + std::to_string(gpus) +
                          (gpus == 1 ? " GPU" : " GPUs");
  const int status = run_child(args_, env, out, err, limit_);
  if (status < 0)
    throw RuntimeError("--simulator: " + simulator_ + ": " + run + " gave no answer in " + number_text(limit_) +
                       " s (STARWAVE_SIMULATION_SECONDS); stopped");
  const std::string said = read_all(out);
  const std::size_t at = said.rfind("simulated: ");
  const double seconds = at == std::string::npos ? -1 : std::strtod(said.c_str() + at + 11, nullptr);
  if (status != 0 || !(std::isfinite(seconds) && seconds > 0)) {
    const std::string why = read_all(err);
    if (why.find("perfmodel") != std::string::npos || why.find("calibrated") != std::string::npos)
      throw InputError("--calibration: " + sampling_ + " (host " + host_ +
                       ") has no GPU measurement of this run's tasks (their sizes): calibrate with this run on one "
                       "GPU of that machine (docs/cluster.md, \"Projected scaling\")");
    std::string tail;  // the simulator's own last words, without SimGrid's notices
    std::istringstream lines(why);
    for (std::string l; std::getline(lines, l);)
      if (!l.empty() && l.find("xbt_cfg") == std::string::npos && l.find("surf_parse") == std::string::npos &&
          l.find("simgrid_update_xml") == std::string::npos)
        tail = l;
    const std::string ours = "starwave plan: error: ";  // a refusal of the simulator's own: the plan's
    if (status == 2 && tail.rfind(ours, 0) == 0) throw InputError(tail.substr(ours.size()));
    if (status == 0)
      throw InputError("--simulator: " + simulator_ +
                       ": ran and printed no simulated time: not the simulation "
                       "build's starwave (bin/starwave-sim)?");
    throw RuntimeError(
        run + " failed (" +
        (status > 128 ? "signal " + std::to_string(status - 128) : "exit status " + std::to_string(status)) + ")" +
        (tail.empty() ? std::string() : ": " + tail));
  }
  return cache_[key] = seconds;
}

std::pair<int, int> reduction_receives(int shots, int nodes) {
  std::vector<int> received(std::size_t(nodes), 0);
  const auto owner = [&](int s) { return int((static_cast<long long>(s) * nodes) / shots); };
  const auto tree = [&](const auto& self, int lo, int hi) -> int {
    if (hi - lo <= 1) return 0;
    int half = 1;
    while (half * 2 < hi - lo) half *= 2;
    const int left = self(self, lo, lo + half), right = self(self, lo + half, hi);
    const bool cross = owner(lo) != owner(lo + half);
    if (cross) ++received[std::size_t(owner(lo))];
    return std::max(left, right) + (cross ? 1 : 0);
  };
  const int depth = tree(tree, 0, shots);
  return {*std::max_element(received.begin(), received.end()), depth};
}

}  // namespace starwave::projection
