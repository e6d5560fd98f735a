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

#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

#include "src/base/error.hpp"
#include "src/model/model.hpp"
#include "src/model/survey.hpp"
#include "src/runtime/projection.hpp"
#include "src/runtime/simulated_machine.hpp"

namespace starwave::commands {
namespace {

using projection::kParentVariable;
using projection::kShotsVariable;
using projection::Simulator;

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
    const auto [received, depth] = projection::reduction_receives(nshots, n);
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
  Simulator sim(projection::find_simulator(p.simulator), sampling, host, command, argc, argv);

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
