// src/runtime/simulated_machine.hpp — a StarPU-SimGrid machine of G GPUs made from one GPU's
// calibration (docs/cluster.md, "Projected scaling"): what `starwave plan … --gpus` simulates.
//
// A calibration is the folder StarPU 1.3 fills under STARPU_HOME/.starpu/sampling on a real
// machine with one GPU (bus/HOST.bandwidth, .latency, .platform.v4.xml; codelets/45/*.HOST),
// or a copy of its bus/ and codelets/ folders (bench/calibrate.sh, bench/calibration/).
#pragma once

#include <string>
#include <vector>

namespace starwave::simulation {

/// StarPU's STARPU_MAXCUDADEVS in the simulation build (scripts/setup --simgrid).
constexpr int kMaxGpus = 16;

/// The calibration's sampling folder (the one holding bus/ and codelets/45/): `dir` itself,
/// or dir/.starpu/sampling when `dir` is a STARPU_HOME. Throws InputError naming --calibration.
std::string sampling_folder(const std::string& dir);
/// The host names the sampling folder has a platform of (bus/NAME.platform.v4.xml).
std::vector<std::string> calibrated_hosts(const std::string& sampling);

/// Writes under starpu_home/.starpu/sampling the bus and platform files of a machine of `gpus`
/// copies of the calibration's GPU (host `host`), each on its own link to main memory with the
/// measured bandwidth and latency, all sharing main memory's `host_bandwidth` (bytes/s; 0: the
/// links together), and the codelets' models with every CUDA time divided by `throughput` (a
/// GPU's concurrent shots as StarPU 1.3.10's one simulated worker), under the host name
/// `simulated` (run with STARPU_HOSTNAME=simulated, STARPU_PERF_MODEL_HOMOGENEOUS_CUDA=1).
/// Replaces a sampling folder it made; refuses any other. Throws InputError (the calibration
/// lacks a file) or RuntimeError (a write failed).
void write_machine(const std::string& sampling, const std::string& host, const std::string& starpu_home, int gpus,
                   double throughput, double host_bandwidth = 0);

}  // namespace starwave::simulation
