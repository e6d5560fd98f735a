// src/runtime/runtime.cpp — see runtime.hpp.
#include "src/runtime/runtime.hpp"

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
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include "codelets/failure.hpp"
#include "graph/data.hpp"
#include "graph/resting.hpp"
#include "kernels/cpu/levels.hpp"
#include "src/base/error.hpp"
#include "src/memory/plan.hpp"
#include "src/memory/room.hpp"
#include "src/runtime/environment.hpp"
#include "src/runtime/host_memory.hpp"
#include "src/runtime/mpi.hpp"
#include "src/runtime/scratch.hpp"
#include "src/runtime/starpu_home.hpp"

#ifdef STARWAVE_USE_CUDA
// Set by the StarPU that scripts/setup builds (absent from another StarPU: weak).
extern "C" __attribute__((weak)) void (*starpu_cuda_fatal_error_hook)(const char* where, const char* message);
#endif

namespace starwave {
namespace {

#ifdef STARWAVE_USE_CUDA

/// A CUDA fault that leaves the device unusable (an illegal address, a lost GPU) surfaces
/// in StarPU's driver thread, after the task's launches; nothing can unwind from there,
/// so the process ends now, in one line (docs/design.md §3), instead of in StarPU's assertion.
void on_fatal_cuda_error(const char* where, const char* message) {
  // Several workers' driver threads may meet the fault at once: the first ends the process,
  // the others wait for that end (one line, not one per worker).
  static std::atomic<bool> ending{false};
  if (ending.exchange(true))
    for (;;) pause();
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
  const memory::MemoryRoom room = memory::memory_room();
  const std::string line = mpi::prefix() + error_prefix() + "out of memory: a task's buffer of " +
                           bytes_text(double(bytes)) + " could not be allocated for " + number_text(kStuckSeconds) +
                           " s while no task ran, within the " + bytes_text(double(room.bytes)) + " " + room.bound +
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
  const memory::MemoryRoom room = memory::address_room();
  if (room.bytes >= need) return;
  throw InputError("StarPU's " + std::to_string(threads) + " threads need about " + bytes_text(double(need)) +
                   " of address space to start (a stack of " + bytes_text(double(each - 4096)) +
                   " each, ulimit -s), more than the " + bytes_text(double(room.bytes)) + " " + room.bound +
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

/// For the memory plan: the main memory StarPU counts (it allocates no more there), and each
/// GPU's room with its CUDA workers (src/memory/plan.hpp, GpuRoom).
void note_memory() {
  const starpu_ssize_t total = starpu_memory_get_total(STARPU_MAIN_RAM);
  set_starpu_main_memory(total > 0 ? std::uint64_t(total) : 0);
  std::vector<GpuRoom> gpus;
#ifdef STARWAVE_USE_CUDA
  std::vector<int> devices, nodes;
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
    if (starpu_worker_get_type(int(w)) != STARPU_CUDA_WORKER) continue;
    const int dev = starpu_worker_get_devid(int(w));
    const auto at = std::find(devices.begin(), devices.end(), dev);
    if (at != devices.end()) {
      ++gpus[std::size_t(at - devices.begin())].workers;
      continue;
    }
    devices.push_back(dev);
    nodes.push_back(int(starpu_worker_get_memory_node(w)));
    gpus.push_back({{0, "GPU " + std::to_string(dev) + " has free"}, 1});
  }
  int current = 0;
  const bool restore = cudaGetDevice(&current) == cudaSuccess;
  for (std::size_t k = 0; k < gpus.size(); ++k) {
    const starpu_ssize_t counted = starpu_memory_get_total(unsigned(nodes[k]));
#ifdef STARWAVE_SIMGRID
    const std::size_t free = counted > 0 ? std::size_t(counted) : 0;  // a simulated GPU: its platform's memory
#else
    std::size_t free = 0, device_total = 0;
    if (cudaSetDevice(devices[k]) != cudaSuccess || cudaMemGetInfo(&free, &device_total) != cudaSuccess) free = 0;
#endif
    std::uint64_t room = free - free / 16;  // a sixteenth for CUDA's own: contexts, captured graphs
    if (counted > 0 && std::uint64_t(counted) < room) {
      room = std::uint64_t(counted);
      if (const char* v = std::getenv("STARPU_LIMIT_CUDA_MEM"); v && *v)
        gpus[k].room.bound = "STARPU_LIMIT_CUDA_MEM=" + std::string(v) + " (MiB) lets StarPU allocate on GPU " +
                             std::to_string(devices[k]);
      else
        gpus[k].room.bound = "StarPU counts on GPU " + std::to_string(devices[k]);
    }
    gpus[k].room.bytes = room;
  }
  if (restore) cudaSetDevice(current);
#endif
#ifdef STARWAVE_SIMGRID
  // A simulated GPU is one worker standing for a real GPU's kDefaultWorkersPerGpu (StarPU 1.3.10
  // simulates one; its task times are those workers' throughput, bench/project.py): it holds and
  // admits the shots they would.
  for (GpuRoom& g : gpus) g.workers *= kDefaultWorkersPerGpu;
#endif
  set_gpu_rooms(std::move(gpus));
}

/// The choices made before StarPU starts whatever the machine: the CPU kernels' level (the
/// best this CPU runs, or STARWAVE_CPU_ISA's), StarPU's environment checked, its home
/// repaired (a note each). Returns the GPUs the CUDA runtime counts.
int prepare_process() {
  if (const std::string why = cpu::choose_level_from_environment(); !why.empty()) throw InputError(why);
  check_starpu_environment();
  int gpus = 0;  // as StarPU counts them for its bus files: every device, whatever ncuda
#ifdef STARWAVE_USE_CUDA
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
#endif
  for (const std::string& note : starpu_home::prepare(gpus))
    std::fputs((mpi::prefix() + note_prefix() + printable(note) + "\n").c_str(), stderr);
  return gpus;
}

/// StarPU's configuration for `o`, and the environment StarPU reads as it starts: no FxT
/// trace unless asked (a ~130 MB buffer and ~0.35 s per process), `per_gpu` CUDA workers a
/// GPU, each with its own driver thread (one thread feeding every stream halved an H100's
/// throughput), the CUDA fault hook, and starwave's allocator for StarPU's main-memory buffers
/// (src/runtime/host_memory.hpp).
struct starpu_conf starpu_configuration(const RuntimeOptions& o, int per_gpu) {
  struct starpu_conf conf;
  if (starpu_conf_init(&conf) != 0) throw RuntimeError("StarPU: starpu_conf_init failed");
  if (o.ncpus >= 0) conf.ncpus = o.ncpus;
  if (o.ncuda >= 0) conf.ncuda = o.ncuda;
  conf.nopencl = 0;
  if (!o.scheduler.empty())
    conf.sched_policy_name = o.scheduler.c_str();
  else if (std::getenv("STARPU_SCHED") == nullptr)
    conf.sched_policy_name = "dmda";
  setenv("STARPU_FXT_TRACE", "0", 0);
  // StarPU 1.3 keeps a share of the buffers of each node it can evict from (a GPU; main
  // memory once a disk node exists) clean by copying dirty ones out in the background, as
  // idle requests (starpu_memchunk_tidy). A buffer without a home node, as every store,
  // trace and image is, is dirty from its allocation: each store on a GPU would be copied to
  // main memory for nothing, one request at a time, unregistering would wait for them, and
  // one posted after the graph's last look would outlive it into StarPU's shutdown (an
  // assertion on its request lists): the likely cause of the gradient batches' stall and the
  // aborts an H200 showed (docs/gpu.md). Off unless the user set either; eviction under
  // memory pressure still writes back what it must.
  if (!std::getenv("STARPU_MINIMUM_CLEAN_BUFFERS") && !std::getenv("STARPU_TARGET_CLEAN_BUFFERS")) {
    setenv("STARPU_MINIMUM_CLEAN_BUFFERS", "0", 1);
    setenv("STARPU_TARGET_CLEAN_BUFFERS", "0", 1);
  }
#ifdef STARWAVE_USE_CUDA
  if (&starpu_cuda_fatal_error_hook) starpu_cuda_fatal_error_hook = on_fatal_cuda_error;
  setenv("STARPU_NWORKER_PER_CUDA", std::to_string(per_gpu).c_str(), 1);
  setenv("STARPU_CUDA_THREAD_PER_WORKER", "1", 0);
#else
  (void)per_gpu;
#endif
  host_memory::install();
  host_memory::on_stuck({kStuckSeconds, codelets::idle_for, give_up_on_memory});
  require_room_for_threads(threads_to_start(conf, per_gpu));
  return conf;
}

/// Out of core (--scratch): StarPU moves data to its disk node only once its count of main
/// memory reaches a limit — the room of this process's share of the node (`ranks_on_node`),
/// less the run's own, unless the user set one. Returns whether it set STARPU_LIMIT_CPU_MEM;
/// refuses a room too small for out of core (as the plan says).
bool limit_starpu_for_scratch(int ranks_on_node) {
  if (!scratch::wanted() || std::getenv("STARPU_LIMIT_CPU_MEM") != nullptr) return false;
  const memory::MemoryRoom room = memory::memory_room();
  const std::uint64_t share = room.bytes / std::uint64_t(std::max(ranks_on_node, 1));
  const std::uint64_t mib = scratch::cpu_limit_mib(share);
  if (mib == 0)
    throw InputError(scratch::given() + ": out of core needs " + bytes_text(double(std::uint64_t(32) << 20) * 8 / 7) +
                     " of memory at least (16 MiB for StarPU, an eighth and 16 MiB for the run's own), more than the " +
                     bytes_text(double(share)) + " " + room.bound +
                     (ranks_on_node > 1 ? " (a share of " + std::to_string(ranks_on_node) + " ranks)" : ""));
  setenv("STARPU_LIMIT_CPU_MEM", std::to_string(mib).c_str(), 1);
  return true;
}

/// STARPU_DISK_SWAP hidden from StarPU while it starts (it would start a disk node of its own:
/// the run's is scratch::start's, in the folder scratch::set_folder took from the variable),
/// and given back after.
class SwapHidden {
 public:
  SwapHidden() {
    if (const char* v = std::getenv("STARPU_DISK_SWAP")) value_ = v, had_ = true, unsetenv("STARPU_DISK_SWAP");
  }
  ~SwapHidden() {
    if (had_) setenv("STARPU_DISK_SWAP", value_.c_str(), 1);
  }
  SwapHidden(const SwapHidden&) = delete;
  SwapHidden& operator=(const SwapHidden&) = delete;

 private:
  std::string value_;
  bool had_ = false;
};

/// An environment variable set while StarPU starts, when `when` and the user has not set it;
/// given back (unset) after.
class SetWhileStarting {
 public:
  SetWhileStarting(const char* name, const char* value, bool when)
      : name_(name), set_(when && std::getenv(name) == nullptr) {
    if (set_) setenv(name_, value, 1);
  }
  ~SetWhileStarting() {
    if (set_) unsetenv(name_);
  }
  SetWhileStarting(const SetWhileStarting&) = delete;
  SetWhileStarting& operator=(const SetWhileStarting&) = delete;

 private:
  const char* name_;
  bool set_;
};

/// hwloc's discovery of I/O devices, left out of the topology StarPU loads as it starts when
/// `off` (HWLOC_COMPONENTS). StarPU places CUDA workers near their GPU by it; with no GPU it
/// serves nothing, and reading the PCI devices' configuration from sysfs takes ~8 ms of every
/// process's start on a virtual machine (docs/benchmarks.md, "Start-up").
SetWhileStarting io_discovery_off(bool off) { return {"HWLOC_COMPONENTS", "-pci,-linuxio", off}; }

/// hwloc's plugins that StarPU never asks for, not loaded (Runtime::hwloc_plugins_left_out()):
/// OpenCL devices (StarPU runs no OpenCL workers here), the GL one, which tries to open X
/// displays :0 to :9, and libxml2's XML reader and writer, whose tables (ICU's) take a while
/// to load. About 2 ms of every start (docs/benchmarks.md, "Start-up").
SetWhileStarting unused_hwloc_plugins_left_out() {
  return {"HWLOC_PLUGINS_BLACKLIST", Runtime::hwloc_plugins_left_out(), true};
}

}  // namespace

const char* Runtime::hwloc_plugins_left_out() {
  const bool xml_given = std::getenv("STARPU_HWLOC_INPUT") != nullptr || std::getenv("HWLOC_XMLFILE") != nullptr;
  return xml_given ? "hwloc_opencl,hwloc_gl" : "hwloc_xml_libxml,hwloc_opencl,hwloc_gl";
}

Runtime::Runtime(const RuntimeOptions& o) {
  const int gpus = prepare_process();
  const int per_gpu = workers_per_gpu(o);
  struct starpu_conf conf = starpu_configuration(o, per_gpu);
  const SwapHidden swap_hidden;
  // Not with MPI ranks: their library may place its network by the devices hwloc finds.
  const SetWhileStarting io_off = io_discovery_off(gpus == 0 && (o.alone || mpi::launched_ranks() <= 1));
  const SetWhileStarting plugins = unused_hwloc_plugins_left_out();
  bool running = false;
  try {
    start_starpu(conf, o, per_gpu);
    running = true;
    scratch::start();     // the disk node once StarPU runs
    host_memory::trim();  // the buffer StarPU measured the disk with
  } catch (...) {
    if (running) stop_starpu();
    if (set_cpu_limit_) unsetenv("STARPU_LIMIT_CPU_MEM");  // the next Runtime of the process must not inherit it
    set_cpu_limit_ = false;
    throw;
  }
  graph::started();
  host_memory::set_pinning(starpu_cuda_worker_get_count() > 0);
  note_memory();
  if (mpi_) rank_ = mpi::rank(), size_ = mpi::size();
}

void Runtime::start_starpu(struct starpu_conf& conf, const RuntimeOptions& o, int per_gpu) {
#ifdef STARWAVE_USE_MPI
  if (!o.alone && mpi::launched_ranks() > 1) {
    mpi::ensure_started();
    MPI_Comm node;  // the ranks of this node
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
      MPI_Comm_rank(node, &node_rank_);
      MPI_Comm_size(node, &node_size_);
      MPI_Comm_free(&node);
    }
    mpi::split_node(conf, node_rank_, node_size_, per_gpu);
    set_cpu_limit_ = limit_starpu_for_scratch(node_size_);
    const int ret = starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, &conf);
    if (ret == -ENODEV) throw RuntimeError("StarPU: no worker available (check STARPU_NCPU / STARPU_NCUDA)");
    if (ret != 0) throw RuntimeError("StarPU-MPI: starpu_mpi_init_conf failed (error " + std::to_string(ret) + ")");
    mpi_ = true;
    return;
  }
#else
  (void)o;
  (void)per_gpu;
#endif
  set_cpu_limit_ = limit_starpu_for_scratch(1);
  const int ret = starpu_init(&conf);
  if (ret == -ENODEV) throw RuntimeError("StarPU: no worker available (check STARPU_NCPU / STARPU_NCUDA)");
  if (ret != 0) throw RuntimeError("StarPU: starpu_init failed (error " + std::to_string(ret) + ")");
}

Runtime::~Runtime() {
  graph::stopping();  // resting workers could not see StarPU stop
  stop_starpu();
  scratch::stop();  // this process's scratch folder, with what StarPU left in it
  if (set_cpu_limit_) unsetenv("STARPU_LIMIT_CPU_MEM");
  set_gpu_rooms({});
  host_memory::trim();  // the buffers StarPU freed and the pool kept
}

void Runtime::stop_starpu() noexcept {
#ifdef STARWAVE_USE_MPI
  if (mpi_)
    starpu_mpi_shutdown();
  else
#endif
    starpu_shutdown();
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
