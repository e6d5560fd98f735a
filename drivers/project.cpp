// drivers/project.cpp — `starwave plan gradient|rtm … --gpus 1,2,4,8 --nodes 1,2,4,16`: the run
// simulated with StarPU-SimGrid on machines of G copies of a calibrated GPU, and on several
// nodes by adding the reduction's messages over the network (docs/cluster.md, "Projected
// scaling").
//
// One node is simulated: the simulation build's starwave (--simulator) runs this same plan
// with STARWAVE_PROJECTION_SHOTS set, which makes it run the run's task graph (of its first
// shots) on the machine written into a STARPU_HOME of this process's own
// (src/runtime/simulated_machine.hpp) and print the simulated seconds. StarPU 1.3.10 simulates
// one CUDA worker a GPU where a real GPU runs 8 shots at once: every GPU task's time is divided
// by one factor K, fitted so that the simulated one-GPU run takes the time measured on the
// calibrated GPU (--measured). Each figure is the median of the simulations with K and K ± 1 %
// (a schedule can flip on a tiny change of one task's time).
//
// Nodes are not simulated (the simulation build has no MPI): N nodes take the simulated time of
// the busiest node's block of ⌈S/N⌉ shots (graph::owner) on its GPUs, plus the reduction's
// messages after them — the busiest rank's receives one after another at the network's
// bandwidth and the tree's depth in cross-node messages times its latency.
#include "drivers/project.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>
#include <tuple>
#include <vector>

#include "src/base/error.hpp"
#include "src/model/model.hpp"
#include "src/model/survey.hpp"
#include "src/runtime/simulated_machine.hpp"
#include "src/safety/signals.hpp"

extern char** environ;

namespace starwave::commands {
namespace fs = std::filesystem;
namespace {

constexpr const char* kShotsVariable = "STARWAVE_PROJECTION_SHOTS";
constexpr const char* kParentVariable = "STARWAVE_PROJECTION_PARENT";  // the plan's pid: its simulator dies with it

std::vector<int> counts(const std::string& text, const std::string& option, int most) {
  std::vector<int> v;
  for (double x : cli::parse_numbers(text, option + ": a list of whole numbers like 1,2,4,8 (got '" + text + "')")) {
    if (x < 1 || x > most || x != std::floor(x))
      throw InputError(option + ": every entry must be a whole number 1 … " + std::to_string(most) + " (got '" + text +
                       "')");
    v.push_back(int(x));
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

struct Network {
  double bandwidth = 0, latency = 0;  // bytes/s, s
};

/// `text` without the spaces around it.
std::string trimmed(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t"), last = text.find_last_not_of(" \t");
  return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

/// A positive number followed by one of `units` ("25GB/s"), times that unit's factor; 0 if
/// `text` is not one.
double with_unit(const std::string& text, const std::vector<std::pair<std::string, double>>& units) {
  const std::string t = trimmed(text);
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  const std::string unit = trimmed(end ? std::string(end) : std::string());
  for (const auto& [name, factor] : units)
    if (unit == name && std::isfinite(v) && v > 0 && end != t.c_str()) return v * factor;
  return 0;
}

/// "25GB/s,2us": a bandwidth in GB/s, Gb/s or MB/s and a latency in us, ms or ns.
Network parse_network(const std::string& text) {
  const std::size_t comma = text.find(',');
  const Network n{
      comma == std::string::npos ? 0
                                 : with_unit(text.substr(0, comma), {{"GB/s", 1e9}, {"Gb/s", 1.25e8}, {"MB/s", 1e6}}),
      comma == std::string::npos ? 0 : with_unit(text.substr(comma + 1), {{"us", 1e-6}, {"ms", 1e-3}, {"ns", 1e-9}})};
  if (!(n.bandwidth > 0 && n.latency > 0))
    throw InputError("--network: BANDWIDTH,LATENCY like 25GB/s,2us (GB/s, Gb/s or MB/s; us, ms or ns), not '" + text +
                     "'");
  // What networks are: from a slow Ethernet's to beyond any interconnect's, and latencies of a
  // switch's nanoseconds to a wide-area second.
  if (n.bandwidth < 1e6 || n.bandwidth > 1e13)
    throw InputError("--network: a bandwidth of " + number_text(n.bandwidth / 1e6) +
                     " MB/s is outside 1 MB/s … 10 TB/s (got '" + text + "')");
  if (n.latency < 1e-9 || n.latency > 1)
    throw InputError("--network: a latency of " + number_text(n.latency * 1e6) + " us is outside 1 ns … 1 s (got '" +
                     text + "')");
  return n;
}

/// The simulation build's starwave: --simulator, else $STARWAVE_SIMULATOR, else starwave-sim
/// beside this program.
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

/// Seconds a simulated run may take before the plan gives up on it:
/// $STARWAVE_SIMULATION_SECONDS, else 600.
double simulation_limit() {
  const char* v = std::getenv("STARWAVE_SIMULATION_SECONDS");
  if (!v) return 600;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (!*v || *end || !(s >= 1 && s <= 1e6))
    throw InputError(std::string("STARWAVE_SIMULATION_SECONDS='") + v + "': a number of seconds, 1 … 1000000");
  return s;
}

/// Runs `argv` with `env`, its stdout and stderr into files `out` and `err`, in a process
/// group of its own that this run kills on every exit path (safety::track_child) and when it
/// takes more than `limit` seconds. Its exit status, 128 + its signal, or -1 when it ran out
/// of time.
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

/// --measured SECONDS[@SHOTS]: the time of the run's first SHOTS shots (all by default) on one
/// GPU of the calibrated machine.
std::pair<double, int> parse_measured(const std::string& text, int nshots) {
  const std::size_t at = text.find('@');
  const double seconds = with_unit(text.substr(0, at) + "s", {{"s", 1}});
  const std::string count = at == std::string::npos ? std::string() : trimmed(text.substr(at + 1));
  const bool digits = !count.empty() && count.size() < 9 && count.find_first_not_of("0123456789") == std::string::npos;
  if (!(seconds > 0) || (at != std::string::npos && !digits))
    throw InputError(
        "--measured: SECONDS or SECONDS@SHOTS like 0.642@32 (the run's time on one GPU of the "
        "calibrated machine), not '" +
        text + "'");
  const int shots = digits ? std::atoi(count.c_str()) : nshots;
  if (shots < 1 || shots > nshots)
    throw InputError("--measured: SHOTS must be 1 … the run's " + std::to_string(nshots) + " shots (got '" + text +
                     "')");
  return {seconds, shots};
}

/// A folder of this process's own, removed on every exit path.
class Folder {
 public:
  Folder() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/starwave-plan.XXXXXX";
    if (!::mkdtemp(pattern.data())) throw RuntimeError(pattern + ": cannot make a temporary folder");
    path_ = pattern;
    safety::track(path_, true);
  }
  ~Folder() {
    safety::remove_folder(path_);
    safety::untrack(path_);
  }
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class Simulator {
 public:
  Simulator(std::string simulator, std::string sampling, std::string host, std::string command, int argc, char** argv)
      : simulator_(std::move(simulator)), sampling_(std::move(sampling)), host_(std::move(host)) {
    args_ = {simulator_, "plan", std::move(command)};
    for (int i = 1; i < argc; ++i) args_.emplace_back(argv[i]);
  }

  double k = 1;  // the GPU's throughput factor

  /// The median of the simulations with K × {0.99, 1, 1.01}.
  double median(int gpus, int shots) {
    double t[3] = {once(gpus, shots, k * 0.99), once(gpus, shots, k), once(gpus, shots, k * 1.01)};
    std::sort(t, t + 3);
    return t[1];
  }

  /// One simulated run of the first `shots` shots on `gpus` GPUs, each task's GPU time / k.
  double once(int gpus, int shots, double k_now) {
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

 private:
  std::string simulator_, sampling_, host_;
  std::vector<std::string> args_;
  double limit_ = simulation_limit();
  Folder home_;
  std::map<std::tuple<int, int, double>, double> cache_;
};

/// The reduction tree over shot index (halves split at the largest power of two, each sum on
/// its left part's rank, as graph::Tree builds it) with shot s on rank owner(s): the most
/// messages one rank receives, and the tree's depth in cross-rank messages.
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

std::string fmt(const char* format, double v) {
  char b[64];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

/// The nodes' rows: the busiest node's block of shots simulated on `g` GPUs, plus the reduction's
/// messages at the network's bandwidth × 0.5, 1 and 1.5.
void print_nodes(Simulator& sim, const std::string& command, const std::vector<int>& nodes, int g, int nshots,
                 double bytes, const Network& net, const std::string& network) {
  const double base = sim.median(g, nshots);
  std::cout << "\n  nodes of " << g << (g == 1 ? " GPU" : " GPUs") << ", network " << network
            << " (and at 50 % / 150 % of its bandwidth); efficiency against one node\n"
            << "  nodes  GPUs  " << command << " s  speed-up  efficiency (50 / 100 / 150 %)  network ms\n";
  int good = 1;
  for (int n : nodes) {
    if (n > nshots) {
      std::cout << "  " << n << " nodes: more than the run's " << nshots << " shots (a node would have none)\n";
      continue;
    }
    const double node = sim.median(g, (nshots + n - 1) / n);
    const auto [received, depth] = reduction_receives(nshots, n);
    double t[3], e[3];
    const double f[3] = {0.5, 1.0, 1.5};
    for (int i = 0; i < 3; ++i) {
      const double wire = n > 1 ? received * bytes / (net.bandwidth * f[i]) + depth * net.latency : 0.0;
      t[i] = node + wire;
      e[i] = base / t[i] / n;
    }
    if (e[1] >= 0.8) good = std::max(good, n);
    std::printf("  %5d  %4d  %10.4g  %8.2f  %5.1f / %5.1f / %5.1f %%  %10.3g\n", n, n * g, t[1], base / t[1],
                100 * e[0], 100 * e[1], 100 * e[2], 1e3 * (t[1] - node));
    std::fflush(stdout);
  }
  std::cout << "  >= 80 % efficient up to " << good << " nodes (" << good * g << " GPUs) of those projected\n";
}

}  // namespace

void add_projection_options(cli::po::options_description& desc, Projection& p) {
  cli::po::options_description d("projection to more GPUs and nodes (StarPU-SimGrid; docs/cluster.md)");
  d.add_options()("gpus", cli::po::value<std::string>(&p.gpus),
                  "project the run to one node of each of these GPU counts, e.g. 1,2,4,8 (at most 16)")(
      "nodes", cli::po::value<std::string>(&p.nodes),
      "project the run to each of these numbers of nodes of --gpus-per-node GPUs, e.g. 1,2,4,16")(
      "gpus-per-node", cli::po::value<int>(&p.gpus_per_node)->default_value(4), "GPUs of each node for --nodes")(
      "network", cli::po::value<std::string>(&p.network)->default_value("25GB/s,2us"),
      "the nodes' network: bandwidth,latency (its ±50 % are projected too)")(
      "calibration", cli::po::value<std::string>(&p.calibration),
      "StarPU's measurements of the run's tasks on one GPU of the machine projected: a folder with bus/ and "
      "codelets/ (bench/calibrate.sh) or the STARPU_HOME of calibrating runs")(
      "host", cli::po::value<std::string>(&p.host),
      "the calibrated machine's name in --calibration (default: its only one)")(
      "measured", cli::po::value<std::string>(&p.measured),
      "SECONDS[@SHOTS]: the run's time (of its first SHOTS shots) on one calibrated GPU; fits the GPU's "
      "concurrency (without it a simulated GPU runs one shot at a time)")(
      "concurrency", cli::po::value<double>(&p.concurrency),
      "instead of --measured: the GPU's concurrency K that a plan with --measured printed (of a smaller run "
      "on the same machine)")(
      "simulator", cli::po::value<std::string>(&p.simulator),
      "the simulation build's starwave (default: $STARWAVE_SIMULATOR, else starwave-sim beside this one)");
  desc.add(d);
}

void check_projection_options(const cli::po::variables_map& vm, const Projection& p) {
  for (const char* name : {"gpus-per-node", "network", "calibration", "host", "measured", "concurrency", "simulator"})
    cli::refuse_if_given(vm, name, p.wanted(), "without --gpus or --nodes");
  for (const char* name : {"gpus-per-node", "network"})  // they describe the nodes
    cli::refuse_if_given(vm, name, !p.wanted() || !p.nodes.empty(), "without --nodes");
  cli::refuse_if_given(vm, "concurrency", !cli::given(vm, "measured"), "with --measured (which fits it)");
  if (cli::given(vm, "concurrency") && !(p.concurrency > 0))
    throw InputError("--concurrency: must be > 0 (got " + number_text(p.concurrency) + ")");
}

int projection_shots() {
  const char* v = std::getenv(kShotsVariable);
  if (!v) return 0;
#ifdef STARWAVE_SIMGRID
  const std::string text = v;
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos || std::atoi(v) < 1)
    throw InputError(std::string(kShotsVariable) + ": a number of shots, not '" + text + "'");
  // A plan killed (SIGTERM, SIGKILL) takes its simulated run along, which would otherwise run on
  // in the plan's removed folder.
  if (const char* parent = std::getenv(kParentVariable)) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (std::to_string(::getppid()) != parent) throw RuntimeError("the projection that started this run has ended");
  }
  return std::atoi(v);
#else
  // A projection started this build as its simulator: it would project again, for ever.
  throw InputError(
      "--simulator: this starwave is not the simulation build (cmake -DSTARWAVE_SIMGRID=ON: "
      "starwave-sim), but a projection started it as one");
#endif
}

int project(const std::string& command, const Projection& p, const Model& m, const Survey& s, int value_bytes, int argc,
            char** argv) {
  const int nshots = s.nshots();
  const std::vector<int> gpus = counts(p.gpus.empty() ? "1" : p.gpus, "--gpus", simulation::kMaxGpus);
  const std::vector<int> nodes = p.nodes.empty() ? std::vector<int>{} : counts(p.nodes, "--nodes", 1 << 20);
  if (p.gpus_per_node < 1 || p.gpus_per_node > simulation::kMaxGpus)
    throw InputError("--gpus-per-node: 1 … " + std::to_string(simulation::kMaxGpus) + " (got " +
                     std::to_string(p.gpus_per_node) + ")");
  const Network net = parse_network(p.network);
  if (p.calibration.empty())
    throw InputError(
        "--calibration: required with --gpus or --nodes: StarPU's measurements of this run's tasks on one "
        "GPU (docs/cluster.md, \"Projected scaling\")");
  const std::string sampling = simulation::sampling_folder(p.calibration);
  std::string host = p.host;
  if (host.empty()) {
    const std::vector<std::string> hosts = simulation::calibrated_hosts(sampling);
    if (hosts.size() != 1) {
      std::string names;
      for (const std::string& h : hosts) names += (names.empty() ? "" : ", ") + h;
      throw InputError("--calibration: " + p.calibration + " holds " +
                       (hosts.empty() ? std::string("no machine's bus files") : "machines " + names) +
                       ": name one with --host");
    }
    host = hosts[0];
  }
  const std::pair<double, int> measured =
      p.measured.empty() ? std::pair{0.0, nshots} : parse_measured(p.measured, nshots);
  Simulator sim(find_simulator(p.simulator), sampling, host, command, argc, argv);

  // The first simulations before the first word: a calibration that lacks the run's tasks is
  // refused with nothing printed.
  const double unscaled = measured.first > 0 ? sim.once(1, measured.second, 1.0) : 0.0;
  sim.k = measured.first > 0 ? unscaled / measured.first : p.concurrency > 0 ? p.concurrency : 1.0;
  if (!(sim.k >= 1e-3 && sim.k <= 1e3))  // a GPU's concurrent shots as one worker: 1 … a few
    throw InputError(std::string(measured.first > 0 ? "--measured" : "--concurrency") +
                     ": gives K = " + number_text(sim.k) + ", outside 0.001 … 1000: is it the run's time on one GPU?");
  const double one = sim.median(1, nshots);
  std::cout << "plan: " << command << " of " << nshots << (nshots == 1 ? " shot" : " shots")
            << " projected with StarPU-SimGrid from " << p.calibration << " (host " << host << ")\n";
  if (measured.first > 0)
    std::cout << "  a GPU's concurrency K = " << fmt("%.5g", sim.k) << ": one simulated worker takes "
              << fmt("%.4g", unscaled) << " s for " << measured.second << " shots, measured " << measured.first
              << " s\n";
  else if (p.concurrency > 0)
    std::cout << "  a GPU's concurrency K = " << fmt("%.5g", sim.k) << " (--concurrency)\n";
  else
    std::cout << "  no --measured: a simulated GPU runs one task at a time (StarPU 1.3.10), a real one several; "
                 "give the run's measured one-GPU time to fit that\n";
  std::cout << "\n  GPUs  " << command << " s  speed-up  efficiency\n";
  int paying = 1;
  for (int g : gpus) {
    const double t = sim.median(g, nshots), eff = one / t / g;
    if (eff >= 0.8) paying = std::max(paying, g);
    std::printf("  %4d  %10.4g  %8.2f  %9.1f %%\n", g, t, one / t, 100 * eff);
    std::fflush(stdout);
  }
  if (paying == gpus.back())
    std::cout << "  every one-node configuration projected runs at >= 80 % efficiency (up to " << paying << " GPUs)\n";
  else
    std::cout << "  more GPUs stop paying at " << paying << " GPUs: beyond, efficiency < 80 %\n";

  if (!nodes.empty())  // a rank's gradient and illumination travel
    print_nodes(sim, command, nodes, p.gpus_per_node, nshots, 2.0 * value_bytes * double(m.cells()), net, p.network);
  std::cout << "plan: projected, nothing run on this machine's devices, nothing written\n";
  return 0;
}

}  // namespace starwave::commands
