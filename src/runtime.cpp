#include "src/runtime.hpp"

#include <starpu.h>

#ifdef STARWAVE_USE_MPI
#include <mpi.h>
#include <starpu_mpi.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <string>

#include "src/error.hpp"

namespace starwave {
namespace {

#ifdef STARWAVE_USE_MPI
/// MPI once per process (threads: StarPU-MPI's progression thread calls MPI), finalised
/// at exit after every Runtime has shut StarPU down.
void ensure_mpi() {
  int ready = 0;
  MPI_Initialized(&ready);
  if (ready) return;
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
    throw RuntimeError("MPI: MPI_Init_thread failed");
  std::atexit([] {
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
  });
}
#endif

}  // namespace

int Runtime::launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"}) {
    const char* v = std::getenv(name);
    if (v && std::atoi(v) > 0) return std::atoi(v);
  }
  // srun (a job step, not the batch script around it)
  if (std::getenv("SLURM_PROCID") && std::getenv("SLURM_STEP_NUM_TASKS"))
    return std::max(1, std::atoi(std::getenv("SLURM_STEP_NUM_TASKS")));
  return 1;
}

Runtime::Runtime(const RuntimeOptions& o) {
  struct starpu_conf conf;
  if (starpu_conf_init(&conf) != 0) throw RuntimeError("StarPU: starpu_conf_init failed");
  if (o.ncpus >= 0) conf.ncpus = o.ncpus;
  if (o.ncuda >= 0) conf.ncuda = o.ncuda;
  conf.nopencl = 0;
  if (!o.scheduler.empty())
    conf.sched_policy_name = o.scheduler.c_str();
  else if (std::getenv("STARPU_SCHED") == nullptr)
    conf.sched_policy_name = "dmda";
  // Buffers StarPU allocates (the wavefield scratch, copies on other nodes) start on
  // 64-byte boundaries like ours, so the kernels' rows are aligned (kernels/shot.hpp).
  starpu_malloc_set_align(64);
#ifdef STARWAVE_USE_MPI
  if (launched_ranks() > 1) {
    ensure_mpi();
    const int ret = starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, &conf);
    if (ret == -ENODEV) throw RuntimeError("StarPU: no worker available (check STARPU_NCPU / STARPU_NCUDA)");
    if (ret != 0) throw RuntimeError("StarPU-MPI: starpu_mpi_init_conf failed (error " + std::to_string(ret) + ")");
    mpi_ = true;
    starpu_mpi_comm_rank(MPI_COMM_WORLD, &rank_);
    starpu_mpi_comm_size(MPI_COMM_WORLD, &size_);
    return;
  }
#endif
  const int ret = starpu_init(&conf);
  if (ret == -ENODEV) throw RuntimeError("StarPU: no worker available (check STARPU_NCPU / STARPU_NCUDA)");
  if (ret != 0) throw RuntimeError("StarPU: starpu_init failed (error " + std::to_string(ret) + ")");
}

Runtime::~Runtime() {
#ifdef STARWAVE_USE_MPI
  if (mpi_) {
    starpu_mpi_shutdown();
    return;
  }
#endif
  starpu_shutdown();
}

int Runtime::cpu_workers() const { return int(starpu_cpu_worker_get_count()); }
int Runtime::cuda_workers() const { return int(starpu_cuda_worker_get_count()); }
int Runtime::workers() const { return int(starpu_worker_get_count()); }

std::string Runtime::scheduler() const {
  struct starpu_sched_policy* p = starpu_sched_ctx_get_sched_policy(0);
  return p && p->policy_name ? p->policy_name : "unknown";
}

}  // namespace starwave
