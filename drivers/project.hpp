// drivers/project.hpp — `starwave plan gradient|rtm … --gpus 1,2,4,8 --nodes 1,2,4,16`: the
// run's time projected to machines of several GPUs and nodes with StarPU-SimGrid
// (docs/cluster.md, "Projected scaling").
#pragma once

#include <string>

#include "drivers/config.hpp"

namespace starwave {
struct Model;
struct Survey;
}  // namespace starwave

namespace starwave::commands {

/// The projection's options (plan gradient|rtm only).
struct Projection {
  std::string gpus, nodes, network, calibration, host, measured, simulator;
  int gpus_per_node = 4;
  double concurrency = 0;  // K given (--concurrency); 0: fitted to --measured, or 1
  /// Whether the plan asks for a projection (--gpus or --nodes).
  bool wanted() const { return !gpus.empty() || !nodes.empty(); }
};

void add_projection_options(cli::po::options_description& desc, Projection& p);
/// Refuses the projection's other options without --gpus or --nodes (they would do nothing).
void check_projection_options(const cli::po::variables_map& vm, const Projection& p);

/// In a simulated run that project() started: how many of the survey's first shots it runs
/// (STARWAVE_PROJECTION_SHOTS); 0 in any other run.
int projection_shots();

/// Simulates `command` (gradient or rtm, with its options argv[1 … argc − 1] as given to
/// `plan`) on every configuration asked for and prints the table; nothing is written.
int project(const std::string& command, const Projection& p, const Model& m, const Survey& s, int value_bytes, int argc,
            char** argv);

}  // namespace starwave::commands
