// src/runtime.hpp — StarPU's lifetime. One Runtime at a time per process; the scheduler
// defaults to dmda (history-based perf models, DESIGN §3) unless STARPU_SCHED says
// otherwise. Launched by mpirun/mpiexec/srun (and built with starpu-mpi), it also starts
// starpu-mpi on MPI_COMM_WORLD: MPI itself is initialised once per process and finalised
// at exit, so Runtimes may come and go.
#pragma once

#include <string>

namespace starwave {

struct RuntimeOptions {
  int ncpus = -1;         // CPU workers; -1 = StarPU's choice (STARPU_NCPU or every core)
  int ncuda = -1;         // CUDA workers; -1 = every GPU
  std::string scheduler;  // empty = $STARPU_SCHED or dmda
};

class Runtime {
 public:
  explicit Runtime(const RuntimeOptions& o = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int rank() const { return rank_; }  // 0 … size − 1 (0 without MPI)
  int size() const { return size_; }  // MPI ranks (1 without MPI)

  /// Whether a launcher (Open MPI, MPICH/Hydra, Slurm with PMI/PMIx) started this process
  /// as one of several ranks: its world size from the environment, 1 otherwise.
  static int launched_ranks();

  int cpu_workers() const;
  int cuda_workers() const;
  int workers() const;
  std::string scheduler() const;

 private:
  int rank_ = 0, size_ = 1;
  bool mpi_ = false;
};

}  // namespace starwave
