// src/runtime/environment.cpp — see environment.hpp.
#include "src/runtime/environment.hpp"

#include <starpu.h>

#include <cstdlib>
#include <string>

#include "src/base/error.hpp"

namespace starwave {
namespace {

/// The StarPU variables this build reads as whole numbers ≥ 0 (starpu_get_env_number in
/// StarPU 1.3.10's sources: any other value aborts the process with an assertion), less
/// those for hardware it is not built for (MIC, SCC, SimGrid, OpenCL devices).
constexpr const char* kStarpuNumbers[] = {
    "BACKOFF_MAX",
    "BACKOFF_MIN",
    "BUS_CALIBRATE",
    "BUS_STATS",
    "CALIBRATE",
    "CALIBRATE_MINIMUM",
    "CATCH_SIGNALS",
    "COMM_STATS",
    "CUDA_PIPELINE",
    "CUDA_THREAD_PER_DEV",
    "CUDA_THREAD_PER_WORKER",
    "DISABLE_ASYNCHRONOUS_COPY",
    "DISABLE_ASYNCHRONOUS_CUDA_COPY",
    "DISABLE_KERNELS",
    "DISABLE_PINNING",
    "DISK_SWAP_SIZE",
    "DISPLAY_BINDINGS",
    "ENABLE_CUDA_GPU_GPU_DIRECT",
    "FXT_TRACE",
    "GENERATE_TRACE",
    "GLOBAL_ARBITER",
    "HISTORY_MAX_ERROR",
    "LIMIT_BANDWIDTH",
    "LIMIT_CPU_MEM",
    "LIMIT_CPU_NUMA_MEM",
    "LIMIT_CUDA_MEM",
    "LIMIT_MAX_SUBMITTED_TASKS",
    "LIMIT_MIN_SUBMITTED_TASKS",
    "MAIN_THREAD_BIND",
    "MAIN_THREAD_COREID",
    "MAIN_THREAD_CPUID",
    "MAX_MEMORY_USE",
    "MAX_PRIO",
    "MAX_WORKERSIZE",
    "MEMORY_STATS",
    "MINIMUM_AVAILABLE_MEM",
    "MINIMUM_CLEAN_BUFFERS",
    "MIN_PRIO",
    "MIN_WORKERSIZE",
    "MPI_CACHE",
    "MPI_CACHE_STATS",
    "MPI_COOP_SENDS",
    "MPI_NDETACHED_SEND",
    "MPI_NOBIND",
    "MPI_NREADY_PROCESS",
    "MPI_PRIORITIES",
    "MPI_THREAD_COREID",
    "MPI_THREAD_CPUID",
    "NCPU",
    "NCPUS",
    "NCUDA",
    "NOPENCL",
    "NTHREADS_PER_CORE",
    "NWORKER_PER_CUDA",
    "PCI_FLAT",
    "PERF_MODEL_HOMOGENEOUS_CPU",
    "PERF_MODEL_HOMOGENEOUS_CUDA",
    "PREFETCH",
    "RESERVE_NCPU",
    "SCHED_READY",
    "SILENT",
    "SINGLE_COMBINED_WORKER",
    "STATS",
    "TARGET_AVAILABLE_MEM",
    "TARGET_CLEAN_BUFFERS",
    "TASK_PROGRESS",
    "TRACE_BUFFER_SIZE",
    "USE_NUMA",
    "WATCHDOG_CRASH",
    "WATCHDOG_DELAY",
    "WORKERS_GETBIND",
    "WORKERS_NOBIND",
    "WORKER_TREE",
};

}  // namespace

void check_starpu_environment() {
  auto whole = [](const char* v) {  // what strtol reads whole and StarPU takes: [space][+]digits
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    return *end == '\0' && n >= 0 && n <= 2147483647L;
  };
  for (const char* name : kStarpuNumbers) {
    const std::string var = std::string("STARPU_") + name;
    if (const char* v = std::getenv(var.c_str()); v && !whole(v))
      throw InputError("environment: " + var + "='" + v + "' must be a whole number, 0 or more");
  }
  for (const char* var : {"STARPU_WORKERS_CPUID", "STARPU_WORKERS_COREID"})
    if (const char* v = std::getenv(var)) {
      const std::string list(v);
      const bool digits = list.find_first_not_of("0123456789 ,-") == std::string::npos;
      if (!digits || list.find_first_of("0123456789") == std::string::npos ||
          list.find_first_not_of(" ") == std::string::npos || list[list.find_first_not_of(" ")] == '-')
        throw InputError(std::string("environment: ") + var + "='" + v +
                         "' must list processing units, e.g. '0 1 2' or '0-7'");
    }
  if (const char* v = std::getenv("STARPU_SCHED"); v && *v) {
    std::string known;
    bool found = false;
    for (starpu_sched_policy** p = starpu_sched_get_predefined_policies(); *p; ++p) {
      found = found || std::string((*p)->policy_name) == v;
      if (std::string((*p)->policy_name).rfind("modular-", 0) != 0)  // and the modular-* ones
        known += (known.empty() ? "" : ", ") + std::string((*p)->policy_name);
    }
    if (!found)
      throw InputError(std::string("environment: STARPU_SCHED='") + v + "' is not a StarPU scheduler (" + known +
                       ", modular-…)");
  }
}

}  // namespace starwave
