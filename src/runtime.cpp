#include "src/runtime.hpp"

#include <starpu.h>

#ifdef STARWAVE_USE_MPI
#include <hwloc.h>
#include <mpi.h>
#include <starpu_mpi.h>
#endif
#ifdef STARWAVE_USE_CUDA
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include "codelets/distribution.hpp"
#include "codelets/failure.hpp"
#include "kernels/cpu/levels.hpp"
#include "src/error.hpp"
#include "src/files.hpp"
#include "src/host_memory.hpp"
#include "src/starpu_home.hpp"

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

/// Refuses, in one line naming the variable, the environment StarPU would abort on (after
/// a run had claimed its output): a number variable that is not a whole number ≥ 0, a
/// worker binding list without one number, a scheduler it does not have. (Its home:
/// starpu_home::prepare.)
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

#ifdef STARWAVE_USE_MPI
bool env_set(const char* name) { return std::getenv(name) != nullptr; }

/// MPI once per process, MPI_THREAD_MULTIPLE (StarPU-MPI's progression thread and the
/// host's own collectives call MPI concurrently), finalised at exit after every Runtime
/// has shut StarPU down.
void ensure_mpi() {
  int ready = 0;
  MPI_Initialized(&ready);
  if (ready) return;
  // StarPU-MPI's progression thread polls MPI while any transfer is pending (for the
  // reduction tree, most of a gradient): where it shares a core with a worker, Open MPI
  // must yield that core while it waits. Measured on 2 ranks × 1 worker on 2 cores: the
  // gradient took 1.36× one rank × 2 workers without it, 1.02× with it (docs/benchmarks.md
  // "MPI"). A value the user set stays.
  setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
    throw RuntimeError("MPI: MPI_Init_thread failed");
  if (provided < MPI_THREAD_MULTIPLE)
    throw RuntimeError(
        "MPI: this MPI library does not support MPI_THREAD_MULTIPLE (StarPU-MPI's thread and "
        "starwave's collectives both call MPI)");
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  graph::set_world(rank, size);  // the one record of this process's place (graph::world_rank())
  std::atexit([] {
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
  });
}

/// Ranks sharing a node split its cores and GPUs (see runtime.hpp): an equal run of cores
/// each, one left to StarPU-MPI's progression thread and one per GPU worker's driver
/// thread when the run is long enough.
void split_node(struct starpu_conf& conf, int node_rank, int node_size, int per_gpu) {
  if (node_size < 2) return;
  int ngpus = 0;
#ifdef STARWAVE_USE_CUDA
  if (cudaGetDeviceCount(&ngpus) != cudaSuccess) ngpus = 0;
#endif
  int my_gpus = 0;
  if (!env_set("STARPU_NCUDA") && !env_set("STARPU_WORKERS_CUDAID") && !env_set("CUDA_VISIBLE_DEVICES") &&
      conf.ncuda < 0) {
    conf.use_explicit_workers_cuda_gpuid = 1;
    for (int g = node_rank; g < ngpus; g += node_size) conf.workers_cuda_gpuid[my_gpus++] = unsigned(g);
    conf.ncuda = my_gpus;
  } else if (conf.ncuda > 0) {
    my_gpus = conf.ncuda;
  }
  if (env_set("STARPU_WORKERS_CPUID") || env_set("STARPU_WORKERS_GETBIND")) return;
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return;
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return;
  }
  const int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  if (ncores > 0) {
    const int per_rank = std::max(1, ncores / node_size), first = (node_rank * per_rank) % ncores;
    std::vector<unsigned> pus;  // the first PU of each of this rank's cores (StarPU's bind ids)
    for (int c = first; c < first + per_rank && c < ncores; ++c) {
      hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, unsigned(c));
      hwloc_obj_t pu = core ? hwloc_get_obj_inside_cpuset_by_type(topo, core->cpuset, HWLOC_OBJ_PU, 0) : nullptr;
      if (pu) pus.push_back(pu->logical_index);
    }
    if (!pus.empty()) {
      conf.use_explicit_workers_bindid = 1;
      for (int i = 0; i < STARPU_NMAXWORKERS; ++i) conf.workers_bindid[i] = pus[std::size_t(i) % pus.size()];
      if (conf.ncpus < 0) conf.ncpus = std::max(1, int(pus.size()) - 1 - my_gpus * per_gpu);
    }
  }
  hwloc_topology_destroy(topo);
}
#endif

#ifdef STARWAVE_USE_CUDA
}  // namespace
}  // namespace starwave

// Set by the StarPU that scripts/setup builds (absent from another StarPU: weak).
extern "C" __attribute__((weak)) void (*starpu_cuda_fatal_error_hook)(const char* where, const char* message);

namespace starwave {
namespace {

/// A CUDA fault that leaves the device unusable (an illegal address, a lost GPU) surfaces
/// in StarPU's driver thread, after the task's launches; nothing can unwind from there,
/// so the process ends now, in one line (docs/design.md §3), instead of in StarPU's assertion.
void on_fatal_cuda_error(const char* where, const char* message) {
  std::string what = where ? where : "StarPU's CUDA driver";
  if (what.rfind("starwave_", 0) == 0) what = what.substr(9) + " task";  // a codelet's perf-model symbol
  const std::string line = mpi::prefix() + error_prefix() + "CUDA error in " + printable(what) +
                           ", on the device: " + printable(message ? message : "unknown error") + "\n";
  std::fputs(line.c_str(), stderr);
  mpi::abort_all(1);
}
#endif

/// CUDA workers per GPU: the option, else $STARPU_NWORKER_PER_CUDA, else
/// kDefaultWorkersPerGpu — fewer where the GPUs' driver threads (one per worker) would
/// take more than half of the cores.
int workers_per_gpu(const RuntimeOptions& o) {
  if (o.workers_per_gpu > 0) return o.workers_per_gpu;
  if (const char* v = std::getenv("STARPU_NWORKER_PER_CUDA"); v && std::atoi(v) > 0) return std::atoi(v);
  int ngpus = 0;
#ifdef STARWAVE_USE_CUDA
  if (o.ncuda == 0 || cudaGetDeviceCount(&ngpus) != cudaSuccess) ngpus = 0;
#endif
  if (ngpus <= 0) return kDefaultWorkersPerGpu;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return int(std::clamp<long>(cores / (2L * ngpus), 1L, long(kDefaultWorkersPerGpu)));
}

/// How long allocations may fail, with no task running, before the run gives up.
constexpr double kStuckSeconds = 20;

/// StarPU retries a buffer it cannot allocate for ever; with no task running nothing will
/// free memory, so the run ends here with one line (host_memory::on_stuck).
void give_up_on_memory(std::size_t bytes) {
  const files::MemoryRoom room = files::memory_room();
  const std::string line = mpi::prefix() + error_prefix() + "out of memory: a task's buffer of " +
                           files::bytes_text(double(bytes)) + " could not be allocated for " +
                           number_text(kStuckSeconds) + " s while no task ran, within the " +
                           files::bytes_text(double(room.bytes)) + " " + room.bound +
                           "; raise the limit, or run fewer shots at once (STARPU_NCPU)\n";
  std::fputs(line.c_str(), stderr);
  mpi::abort_all(1);
}

/// StarPU starts a thread per worker (a CUDA worker's driver too) and aborts when one
/// cannot start. Each thread reserves a stack of `ulimit -s` in the address space: under
/// `ulimit -v` the room left must hold them, or the run is refused before StarPU starts.
void require_room_for_threads(int threads) {
  struct rlimit as {
  }, stack{};
  if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY) return;
  // glibc's thread stacks: ulimit -s, or 2 MiB when it is unlimited; plus a guard page.
  std::uint64_t each = 2u << 20;
  if (getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur != RLIM_INFINITY) each = stack.rlim_cur;
  each += 4096;
  // What StarPU maps besides the stacks as it starts (measured: ~40 MiB for its tables,
  // its perf-model files and the libraries it loads late), with a margin.
  constexpr std::uint64_t kStarpuStart = std::uint64_t(96) << 20;
  const std::uint64_t need = std::uint64_t(threads) * each + kStarpuStart;
  const files::MemoryRoom room = files::address_room();
  if (room.bytes >= need) return;
  throw InputError("StarPU's " + std::to_string(threads) + " threads need about " + files::bytes_text(double(need)) +
                   " of address space to start (a stack of " + files::bytes_text(double(each - 4096)) +
                   " each, ulimit -s), more than the " + files::bytes_text(double(room.bytes)) + " " + room.bound +
                   ": raise the limit, or start fewer workers (STARPU_NCPU)");
}

/// The threads StarPU will start for `conf`: a CPU worker per core unless told, and each
/// CUDA worker with its driver thread.
int threads_to_start(const struct starpu_conf& conf, int per_gpu) {
  long cpus = conf.ncpus;
  if (cpus < 0) {
    const char* v = std::getenv("STARPU_NCPU");
    cpus = v && *v ? std::atol(v) : sysconf(_SC_NPROCESSORS_ONLN);
  }
  int gpus = 0;
#ifdef STARWAVE_USE_CUDA
  if (conf.ncuda != 0 && cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
  if (conf.ncuda > 0) gpus = std::min(gpus, conf.ncuda);
#endif
  return int(std::max(1L, cpus)) + 2 * gpus * per_gpu + 2;  // + StarPU's own and the MPI progress thread
}

}  // namespace

namespace mpi {

void start_if_launched() {
  const int ranks = Runtime::launched_ranks();
#ifdef STARWAVE_USE_MPI
  if (ranks > 1) ensure_mpi();
#else
  // Without starpu-mpi every rank would do the whole job and write the same files.
  if (ranks > 1)
    throw InputError("this starwave was built without MPI (STARWAVE_USE_MPI=OFF) but launched as " +
                     std::to_string(ranks) + " ranks; start one process, or rebuild with MPI");
#endif
}

int rank() { return graph::world_rank(); }
int size() { return graph::world_size(); }

#ifdef STARWAVE_USE_MPI
constexpr std::size_t kMpiChunk = std::size_t(1) << 30;
#endif

void broadcast([[maybe_unused]] std::vector<double>& v) {
#ifdef STARWAVE_USE_MPI
  if (size() < 2) return;
  unsigned long long n = v.size();
  if (MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
    throw RuntimeError("MPI: MPI_Bcast failed");
  v.resize(n);
  for (std::size_t at = 0; at < n; at += kMpiChunk)  // MPI counts in int: pieces of at most 2^30
    if (MPI_Bcast(v.data() + at, int(std::min<std::size_t>(kMpiChunk, n - at)), MPI_DOUBLE, 0, MPI_COMM_WORLD) !=
        MPI_SUCCESS)
      throw RuntimeError("MPI: MPI_Bcast failed");
#endif
}

void sum_to_root([[maybe_unused]] std::vector<double>& v) {
#ifdef STARWAVE_USE_MPI
  if (size() < 2 || v.empty()) return;
  for (std::size_t at = 0; at < v.size(); at += kMpiChunk) {  // MPI counts in int: pieces of at most 2^30
    const int n = int(std::min<std::size_t>(kMpiChunk, v.size() - at));
    const int ret = rank() == 0 ? MPI_Reduce(MPI_IN_PLACE, v.data() + at, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD)
                                : MPI_Reduce(v.data() + at, nullptr, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (ret != MPI_SUCCESS) throw RuntimeError("MPI: MPI_Reduce failed");
  }
#endif
}

std::string prefix() {
  return size() > 1 ? "[rank " + std::to_string(rank()) + "/" + std::to_string(size()) + "] " : "";
}

void abort_all(int code) {
  files::remove_tracked();  // no temporary or lock outlives the run, even one cut short
  std::fflush(stdout);
  std::fflush(stderr);
#ifdef STARWAVE_USE_MPI
  int ready = 0, done = 0;
  MPI_Initialized(&ready);
  MPI_Finalized(&done);
  if (ready && !done && size() > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::_Exit(code);
}

}  // namespace mpi

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
  // The CPU kernels' instruction-set level (kernels/cpu/levels.hpp): the best this CPU runs,
  // or the one STARWAVE_CPU_ISA names.
  if (const std::string why = cpu::choose_level_from_environment(); !why.empty()) throw InputError(why);
  check_starpu_environment();
  int gpus = 0;  // as StarPU counts them for its bus files: every device, whatever ncuda
#ifdef STARWAVE_USE_CUDA
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
#endif
  for (const std::string& note : starpu_home::prepare(gpus))
    std::fputs((mpi::prefix() + note_prefix() + printable(note) + "\n").c_str(), stderr);
  struct starpu_conf conf;
  if (starpu_conf_init(&conf) != 0) throw RuntimeError("StarPU: starpu_conf_init failed");
  if (o.ncpus >= 0) conf.ncpus = o.ncpus;
  if (o.ncuda >= 0) conf.ncuda = o.ncuda;
  conf.nopencl = 0;
  if (!o.scheduler.empty())
    conf.sched_policy_name = o.scheduler.c_str();
  else if (std::getenv("STARPU_SCHED") == nullptr)
    conf.sched_policy_name = "dmda";
  // StarPU built with FxT records a trace by default: a ~130 MB buffer and ~0.35 s per
  // process, and a file in /tmp at exit. Off unless asked for (STARPU_FXT_TRACE=1).
  setenv("STARPU_FXT_TRACE", "0", 0);
  const int per_gpu = workers_per_gpu(o);
#ifdef STARWAVE_USE_CUDA
  if (&starpu_cuda_fatal_error_hook) starpu_cuda_fatal_error_hook = on_fatal_cuda_error;
  // Several shots per GPU, each CUDA worker with its own stream and its own driver thread
  // (measured on an H100: one thread feeding every stream halves the throughput).
  setenv("STARPU_NWORKER_PER_CUDA", std::to_string(per_gpu).c_str(), 1);
  setenv("STARPU_CUDA_THREAD_PER_WORKER", "1", 0);
#endif
  // Buffers StarPU allocates in main memory (a shot's scratch, store and traces, copies
  // from other nodes): 64-byte aligned like ours, the large ones on huge pages
  // (src/host_memory.hpp).
  host_memory::install();
  host_memory::on_stuck({kStuckSeconds, codelets::idle_for, give_up_on_memory});
  require_room_for_threads(threads_to_start(conf, per_gpu));
#ifdef STARWAVE_USE_MPI
  if (launched_ranks() > 1) {
    ensure_mpi();
    MPI_Comm node;  // the ranks of this node
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
      MPI_Comm_rank(node, &node_rank_);
      MPI_Comm_size(node, &node_size_);
      MPI_Comm_free(&node);
    }
    split_node(conf, node_rank_, node_size_, per_gpu);
    const int ret = starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, &conf);
    if (ret == -ENODEV) throw RuntimeError("StarPU: no worker available (check STARPU_NCPU / STARPU_NCUDA)");
    if (ret != 0) throw RuntimeError("StarPU-MPI: starpu_mpi_init_conf failed (error " + std::to_string(ret) + ")");
    mpi_ = true;
    host_memory::set_pinning(starpu_cuda_worker_get_count() > 0);
    rank_ = mpi::rank();
    size_ = mpi::size();
    return;
  }
#endif
  const int ret = starpu_init(&conf);
  if (ret == -ENODEV) throw RuntimeError("StarPU: no worker available (check STARPU_NCPU / STARPU_NCUDA)");
  if (ret != 0) throw RuntimeError("StarPU: starpu_init failed (error " + std::to_string(ret) + ")");
  host_memory::set_pinning(starpu_cuda_worker_get_count() > 0);
}

Runtime::~Runtime() {
#ifdef STARWAVE_USE_MPI
  if (mpi_)
    starpu_mpi_shutdown();
  else
#endif
    starpu_shutdown();
  host_memory::trim();  // the buffers StarPU freed and the pool kept
}

int Runtime::cpu_workers() const { return int(starpu_cpu_worker_get_count()); }
int Runtime::cuda_workers() const { return int(starpu_cuda_worker_get_count()); }
int Runtime::workers() const { return int(starpu_worker_get_count()); }
std::vector<int> Runtime::cpu_worker_pus() const {
  std::vector<int> pus;
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w)
    if (starpu_worker_get_type(int(w)) == STARPU_CPU_WORKER) pus.push_back(starpu_worker_get_bindid(int(w)));
  return pus;
}
std::string Runtime::cpu_kernels() {
  std::string out;
  for (cpu::Level l : cpu::compiled_levels())
    out += std::string(out.empty() ? "" : ", ") + cpu::level_name(l) + (cpu::supported(l) ? "" : " (not on this CPU)");
  return out + "; running " + cpu::level_name(cpu::level());
}
std::string Runtime::starpu_version() {
  int major = 0, minor = 0, release = 0;
  starpu_get_version(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}
int Runtime::gpus() const {
  std::vector<int> devices;
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w)
    if (starpu_worker_get_type(int(w)) == STARPU_CUDA_WORKER) devices.push_back(starpu_worker_get_devid(int(w)));
  std::sort(devices.begin(), devices.end());
  return int(std::unique(devices.begin(), devices.end()) - devices.begin());
}

std::string Runtime::scheduler() const {
  struct starpu_sched_policy* p = starpu_sched_ctx_get_sched_policy(0);
  return p && p->policy_name ? p->policy_name : "unknown";
}

}  // namespace starwave
