// src/runtime/projection.hpp — the machinery of `starwave plan … --gpus/--nodes` (docs/cluster.md,
// "Projected scaling"): the simulation build's starwave run as a child process on a simulated
// machine of G calibrated GPUs (Simulator), bounded in time and ended with the plan, and the
// reduction's messages between nodes (reduction_receives). The plan's options and its table
// stay in drivers/project.cpp.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace starwave::projection {

/// Set in a simulated run that a projection started: how many of the survey's first shots it runs.
constexpr const char* kShotsVariable = "STARWAVE_PROJECTION_SHOTS";
/// Set with it: the plan's pid (its simulated run ends with it).
constexpr const char* kParentVariable = "STARWAVE_PROJECTION_PARENT";

/// The simulation build's starwave: `given` (--simulator), else $STARWAVE_SIMULATOR, else
/// starwave-sim beside this program; InputError when it is not a program.
std::string find_simulator(const std::string& given);

/// Seconds a simulated run may take before the plan gives up on it:
/// $STARWAVE_SIMULATION_SECONDS, else 600.
double simulation_limit();

/// Runs `args` with `env`, its stdout and stderr into files `out` and `err`, in a process
/// group of its own that this run kills on every exit path (safety::track_child) and when it
/// takes more than `limit` seconds. Its exit status, 128 + its signal, or -1 when it ran out
/// of time.
int run_child(const std::vector<std::string>& args, const std::vector<std::string>& env, const std::string& out,
              const std::string& err, double limit);

/// A folder of this process's own, removed on every exit path.
class Folder {
 public:
  Folder();
  ~Folder();
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Simulated runs of `plan COMMAND ARGV…` by the simulation build `simulator` on machines of
/// G GPUs of host `host`'s calibration in `sampling` (src/runtime/simulated_machine.hpp), each
/// GPU task's time divided by k.
class Simulator {
 public:
  Simulator(std::string simulator, std::string sampling, std::string host, std::string command, int argc, char** argv);

  double k = 1;  // the GPU's throughput factor

  /// The median of the simulations with K × {0.99, 1, 1.01}.
  double median(int gpus, int shots);
  /// One simulated run of the first `shots` shots on `gpus` GPUs, each task's GPU time / k_now.
  double once(int gpus, int shots, double k_now);

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
std::pair<int, int> reduction_receives(int shots, int nodes);

}  // namespace starwave::projection
