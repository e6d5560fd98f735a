// src/runtime/runtime.hpp — StarPU's lifetime, and MPI's when a launcher started several ranks.
// One Runtime at a time per process; the scheduler defaults to dmda (history-based perf
// models, docs/design.md §3) unless STARPU_SCHED says otherwise. Launched by mpirun/mpiexec/srun
// as several ranks (and built with starpu-mpi), the Runtime starts starpu-mpi on
// MPI_COMM_WORLD; MPI itself is started once per process by mpi::start_if_launched()
// (first thing in main, so any failure can end every rank) and finalised at exit, so
// Runtimes may come and go.
//
// Ranks sharing a node split it: each takes an equal run of the node's cores (in hwloc's
// order, so a rank's cores are neighbours) and every local_size-th GPU, unless StarPU's
// own variables (STARPU_WORKERS_CPUID, STARPU_WORKERS_GETBIND; STARPU_NCUDA,
// STARPU_WORKERS_CUDAID, CUDA_VISIBLE_DEVICES) say otherwise.
#pragma once

#include <string>
#include <vector>

#include "src/runtime/mpi.hpp"

struct starpu_conf;

namespace starwave {

struct RuntimeOptions {
  int ncpus = -1;  // CPU workers; -1 = StarPU's choice (STARPU_NCPU or every core)
  int ncuda = -1;  // GPUs used; -1 = every GPU
  // CUDA workers per GPU: the shots it runs at once, each on its own stream and driver
  // thread (docs/design.md §3 "A GPU is kept busy"); -1 = $STARPU_NWORKER_PER_CUDA, else
  // kDefaultWorkersPerGpu or fewer, so that driver threads take at most half the cores.
  int workers_per_gpu = -1;
  std::string scheduler;  // empty = $STARPU_SCHED or dmda
  // One process whatever launched it (the Python module: under mpirun or srun each process runs
  // its own calls; the ranks' shots are spread by the command line alone).
  bool alone = false;
};

/// Shots in flight per GPU by default (docs/benchmarks.md "GPUs": measured on an H100, 8 gave the
/// most cell updates per second of 1 … 16).
constexpr int kDefaultWorkersPerGpu = 8;

class Runtime {
 public:
  explicit Runtime(const RuntimeOptions& o = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int rank() const { return rank_; }  // 0 … size − 1 (0 without MPI)
  int size() const { return size_; }  // MPI ranks (1 without MPI)

  int cpu_workers() const;
  int cuda_workers() const;
  int gpus() const;  // distinct GPUs the CUDA workers drive (cuda_workers() / gpus() shots each)
  int workers() const;
  /// Where the CPU workers run (hwloc's logical PU numbers), in worker order.
  std::vector<int> cpu_worker_pus() const;
  /// The CPU kernels' instruction-set levels compiled in and the one running:
  /// "baseline, avx2, avx512; running avx512" (kernels/cpu/levels.hpp).
  static std::string cpu_kernels();
  /// The StarPU library this process runs ("1.3.10"), usable without a Runtime.
  static std::string starpu_version();
  std::string scheduler() const;
  /// The hwloc plugins left unloaded while StarPU starts (HWLOC_PLUGINS_BLACKLIST, unless the
  /// user set it): those StarPU never asks for; libxml2's stays when a topology file is given
  /// (STARPU_HWLOC_INPUT, HWLOC_XMLFILE), since hwloc's own parser reads only hwloc's XML.
  static const char* hwloc_plugins_left_out();
  /// Ranks on this node and this rank's place among them (1 and 0 without MPI).
  int node_ranks() const { return node_size_; }
  int node_rank() const { return node_rank_; }

 private:
  /// starpu_init (or starpu-mpi's, on the node's share of its cores and GPUs when a launcher
  /// started several ranks), with STARPU_LIMIT_CPU_MEM set for --scratch just before.
  void start_starpu(struct starpu_conf& conf, const RuntimeOptions& o, int per_gpu);
  void stop_starpu() noexcept;

  int rank_ = 0, size_ = 1, node_rank_ = 0, node_size_ = 1;
  bool mpi_ = false;
  bool set_cpu_limit_ = false;  // STARPU_LIMIT_CPU_MEM set for --scratch, unset again at the end
};

}  // namespace starwave
