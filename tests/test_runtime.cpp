// tests/test_runtime.cpp — the task graph on StarPU: traces bit-for-bit identical whatever
// the number of CPU workers and the scheduler, equal to the kernel run directly, and
// bounded submission with many more shots than workers; the buffers StarPU allocates.
#include <gtest/gtest.h>
#include <hwloc.h>
#include <starpu.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "codelets/failure.hpp"
#include "graph/resting.hpp"
#include "src/base/error.hpp"
#include "src/memory/plan.hpp"
#include "src/runtime/host_memory.hpp"
#include "src/runtime/runtime.hpp"
#include "src/runtime/scratch.hpp"
#include "src/synthetic/synth.hpp"
#include "src/workflows/modeling.hpp"
#include "tests/helpers.hpp"

namespace starwave::test {
namespace {

namespace fs = std::filesystem;

struct Case {
  Model model;
  Survey survey;
  NumericalOptions options;
};

Case small_case(bool double_precision) {
  SynthOptions so;
  so.kind = "marmousi-like";
  so.nz = 40;
  so.nx = 90;
  so.spacing = 10;
  Case c{synthesize(so), {}, {}};
  SurveyOptions sv;
  sv.nshots = 7;  // more shots than workers: the submission window is exercised
  sv.receiver_every = 3;
  sv.frequency = 12;
  sv.dt = 2e-3;  // larger than the stable step: internal resampling (k > 1)
  sv.t_max = 0.5;
  c.survey = regular_survey(c.model, sv);
  c.options.order = 8;
  c.options.precision = double_precision ? Precision::kDouble : Precision::kSingle;
  return c;
}

std::vector<float> run_with(const Case& c, int ncpus, const std::string& sched) {
  RuntimeOptions ro;
  ro.ncpus = ncpus;
  ro.ncuda = 0;
  ro.scheduler = sched;
  Runtime rt(ro);
  EXPECT_EQ(rt.cpu_workers(), ncpus);
  EXPECT_EQ(rt.scheduler(), sched);
  return model_shots(c.model, c.survey, c.options, nullptr);
}

TEST(Runtime, TracesBitForBitAcrossWorkersAndSchedulers) {
  const Case c = small_case(false);
  const std::vector<float> ref = run_with(c, 1, "eager");
  ASSERT_EQ(ref.size(), std::size_t(c.survey.nshots()) * c.survey.nrec() * c.survey.nt);
  float peak = 0;
  for (float v : ref) peak = std::max(peak, std::abs(v));
  ASSERT_GT(peak, 0.f);
  for (const auto& [ncpus, sched] :
       std::vector<std::pair<int, std::string>>{{2, "eager"}, {1, "lws"}, {2, "lws"}, {1, "dmda"}, {2, "dmda"}}) {
    const std::vector<float> d = run_with(c, ncpus, sched);
    ASSERT_EQ(d.size(), ref.size());
    EXPECT_EQ(std::memcmp(d.data(), ref.data(), ref.size() * sizeof(float)), 0)
        << ncpus << " CPU workers, scheduler " << sched;
  }
}

/// For the duration of a test, STARWAVE_SHOT_BATCH = `batch`.
struct ShotBatchSet {
  explicit ShotBatchSet(const char* batch) { setenv("STARWAVE_SHOT_BATCH", batch, 1); }
  ~ShotBatchSet() { unsetenv("STARWAVE_SHOT_BATCH"); }
};

TEST(Runtime, ShotBatchesGiveEveryShotItsOwnBits) {
  const Case c = small_case(false);
  const std::vector<float> ref = run_with(c, 1, "eager");
  for (const char* batch : {"3", "7", "16"})  // 7 shots: batches of 3, 3 and 1; one of all; fewer shots than asked
    for (const auto& [ncpus, sched] : std::vector<std::pair<int, std::string>>{{1, "eager"}, {2, "dmda"}}) {
      const ShotBatchSet set(batch);
      const std::vector<float> d = run_with(c, ncpus, sched);
      ASSERT_EQ(d.size(), ref.size());
      EXPECT_EQ(std::memcmp(d.data(), ref.data(), ref.size() * sizeof(float)), 0)
          << "batches of " << batch << ", " << ncpus << " CPU workers, scheduler " << sched;
    }
  const Case d = small_case(true);
  const ShotBatchSet set("4");
  const std::vector<float> in_double = run_with(d, 2, "dmda");
  const std::vector<double> direct = run_shot<double>(d.model, d.survey, d.options, 5);
  const std::size_t per_shot = std::size_t(d.survey.nrec()) * std::size_t(d.survey.nt);
  for (std::size_t i = 0; i < per_shot; ++i) ASSERT_EQ(in_double[5 * per_shot + i], float(direct[i])) << i;
}

TEST(MemoryPlan, ShotBatchesOnlyWhereAGpuGainsAndWithinTheRoom) {
  const std::uint64_t gib = std::uint64_t(1) << 30;
  EXPECT_EQ(shot_batch(32, 16, 0, 0, 1 << 20, 2 * gib, 0), 1);  // CPU workers alone
  EXPECT_EQ(shot_batch(32, 8, 8, 8, 1 << 20, 2 * gib, 0), 1);   // 8 CUDA workers on a GPU: their streams
  EXPECT_EQ(shot_batch(32, 8, 8, 2, 1 << 20, 2 * gib, 0), 1);
  EXPECT_EQ(shot_batch(32, 8, 8, 1, 1 << 20, 2 * gib, 0), 4);  // one a GPU: the shots shared out over the workers
  EXPECT_EQ(shot_batch(1000, 8, 8, 1, 1 << 20, 2 * gib, 0), kMostBatched);
  EXPECT_EQ(shot_batch(3, 8, 8, 1, 1 << 20, 2 * gib, 0), 1);
  EXPECT_EQ(shot_batch(1000, 8, 8, 1, gib / 8, gib / 2, 0), 1);  // one shot's 128 MiB is a quarter of 512 MiB
  EXPECT_EQ(shot_batch(1000, 8, 8, 1, gib / 16, gib / 2, 0), 2);
  EXPECT_EQ(shot_batch(32, 16, 0, 0, 1 << 20, 2 * gib, 5), 5);  // asked
  EXPECT_EQ(shot_batch(32, 8, 8, 8, 1 << 20, 2 * gib, 5), 5);
  EXPECT_EQ(most_workers_on_a_gpu({}), 0);
  EXPECT_EQ(most_workers_on_a_gpu({GpuRoom{{gib, "GPU 0"}, 1}, GpuRoom{{gib, "GPU 1"}, 8}}), 8);
  // A worker's room: main memory's over all workers, or a GPU's over its own, the least.
  const memory::MemoryRoom host{16 * gib, "test"};
  EXPECT_EQ(batch_worker_room(host, 8, {}), 2 * gib);
  EXPECT_EQ(batch_worker_room(host, 10, {GpuRoom{{8 * gib, "GPU 0"}, 8}}), gib);
  EXPECT_EQ(batch_worker_room(host, 10, {GpuRoom{{80 * gib, "GPU 0"}, 8}, GpuRoom{{8 * gib, "GPU 1"}, 2}}),
            8 * gib / 5);
  for (const char* bad : {"0", "-2", "two", "3x", "1025"}) {
    const ShotBatchSet set(bad);
    try {
      shot_batch_asked();
      ADD_FAILURE() << "STARWAVE_SHOT_BATCH=" << bad << " taken";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("STARWAVE_SHOT_BATCH=" + std::string(bad)), std::string::npos) << e.what();
    }
  }
  const ShotBatchSet set("12");
  EXPECT_EQ(shot_batch_asked(), 12);
}

TEST(Runtime, TaskResultEqualsDirectKernelRunInDouble) {
  const Case c = small_case(true);
  const std::vector<float> d = run_with(c, 2, "dmda");
  const int nrec = c.survey.nrec(), nt = int(c.survey.nt);
  for (int shot : {0, 3, 6}) {
    const std::vector<double> direct = run_shot<double>(c.model, c.survey, c.options, shot);
    for (int i = 0; i < nrec * nt; ++i)
      ASSERT_EQ(d[std::size_t(shot) * nrec * nt + std::size_t(i)], float(direct[std::size_t(i)])) << "shot " << shot;
  }
}

/// CPU seconds this process has used, every thread.
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

/// CPU seconds the process uses while its main thread sleeps `seconds`.
double cpu_while_sleeping(double seconds) {
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return process_cpu_seconds() - before;
}

TEST(Runtime, IdleWorkersRestBeforeAndBetweenGraphsAndWakeForTheNext) {
  // StarPU's drivers poll while they wait for tasks: two awake workers would use ~2 CPU
  // seconds a second. Resting, they use none, before the first graph and after each.
  const Case c = small_case(false);
  RuntimeOptions ro;
  ro.ncpus = 2;
  ro.ncuda = 0;
  Runtime rt(ro);
  const double sleep = 0.5;
  EXPECT_LT(cpu_while_sleeping(sleep), 0.2 * sleep) << "as StarPU has started";
  const std::vector<float> first = model_shots(c.model, c.survey, c.options, nullptr);
  EXPECT_LT(cpu_while_sleeping(sleep), 0.2 * sleep) << "after a graph";
  const std::vector<float> second = model_shots(c.model, c.survey, c.options, nullptr);  // woken again
  ASSERT_EQ(second.size(), first.size());
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0);
  EXPECT_LT(cpu_while_sleeping(sleep), 0.2 * sleep) << "after a second graph";
}

/// Fills its one vector buffer with ones (a task that writes a buffer without a home node).
void fill_ones(void* buffers[], void*) {
  std::memset(reinterpret_cast<void*>(STARPU_VECTOR_GET_PTR(buffers[0])), 1,
              STARPU_VECTOR_GET_NX(buffers[0]) * STARPU_VECTOR_GET_ELEMSIZE(buffers[0]));
}

/// Of `n` buffers without a home node, written in main memory by CPU tasks and then left alone
/// for `wait` seconds (at most; less once one is found) with the workers awake, how many have
/// a copy on the scratch disk node as well: what StarPU copied out with nothing asking.
int copied_out_unasked(int n, double wait) {
  unsigned disk = STARPU_MAXNODES;
  for (unsigned k = 0; k < starpu_memory_nodes_get_count(); ++k)
    if (starpu_node_get_kind(k) == STARPU_DISK_RAM) disk = k;
  if (disk == STARPU_MAXNODES) return -1;
  static starpu_codelet cl = [] {
    starpu_codelet c;
    starpu_codelet_init(&c);
    c.cpu_funcs[0] = fill_ones;
    c.nbuffers = 1;
    c.modes[0] = STARPU_W;
    c.name = "test_fill_ones";
    return c;
  }();
  const graph::Resting awake;
  std::vector<starpu_data_handle_t> h(std::size_t(n), nullptr);
  for (starpu_data_handle_t& x : h) {
    starpu_vector_data_register(&x, -1, 0, 16384, sizeof(float));
    EXPECT_EQ(starpu_task_insert(&cl, STARPU_W, x, 0), 0);
  }
  starpu_task_wait_for_all();
  int copied = 0;
  for (const auto start = std::chrono::steady_clock::now();
       copied == 0 && std::chrono::steady_clock::now() - start < std::chrono::duration<double>(wait);) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    for (starpu_data_handle_t x : h) copied += starpu_data_is_on_node(x, disk) ? 1 : 0;
  }
  for (starpu_data_handle_t x : h) starpu_data_unregister(x);
  return copied;
}

/// For one scope: a scratch folder for the next Runtimes (their disk node), and StarPU's two
/// clean-buffer variables as they were before, whatever the scope ends with.
class ScratchAndCleanBuffers {
 public:
  ScratchAndCleanBuffers() : dir_(fs::temp_directory_path() / ("starwave-test-tidy-" + std::to_string(::getpid()))) {
    for (int k = 0; k < 2; ++k)
      if (const char* v = std::getenv(kNames[k])) saved_[k] = v, had_[k] = true;
    fs::create_directories(dir_);
    scratch::set_folder(dir_.string());
  }
  ~ScratchAndCleanBuffers() {
    for (int k = 0; k < 2; ++k) had_[k] ? setenv(kNames[k], saved_[k].c_str(), 1) : unsetenv(kNames[k]);
    try {
      scratch::set_folder("");
    } catch (...) {  // a STARPU_DISK_SWAP of the caller's own: not this test's
    }
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  ScratchAndCleanBuffers(const ScratchAndCleanBuffers&) = delete;
  ScratchAndCleanBuffers& operator=(const ScratchAndCleanBuffers&) = delete;

 private:
  static constexpr const char* kNames[2] = {"STARPU_MINIMUM_CLEAN_BUFFERS", "STARPU_TARGET_CLEAN_BUFFERS"};
  fs::path dir_;
  std::string saved_[2];
  bool had_[2] = {false, false};
};

TEST(Runtime, NothingIsCopiedOffANodeThatNoTaskOrMemoryShortageAsksFor) {
  // StarPU 1.3 keeps a share of the buffers of a node it can evict from clean by copying dirty
  // ones out in the background; main memory is such a node once a disk node exists, and a
  // buffer without a home node (every store) is dirty from its allocation. On a GPU those
  // copies are the likely cause of the gradient batches' stall (docs/gpu.md). Runtime turns
  // them off unless the user set StarPU's variables; set, they stand, and StarPU copies out.
  const ScratchAndCleanBuffers scope;
  RuntimeOptions ro;
  ro.ncpus = 1;
  ro.ncuda = 0;
  unsetenv("STARPU_MINIMUM_CLEAN_BUFFERS");
  unsetenv("STARPU_TARGET_CLEAN_BUFFERS");
  {
    Runtime rt(ro);
    ASSERT_TRUE(scratch::active());
    EXPECT_EQ(copied_out_unasked(100, 1.0), 0);
  }
  setenv("STARPU_MINIMUM_CLEAN_BUFFERS", "5", 1);  // StarPU's own defaults, the user's here
  setenv("STARPU_TARGET_CLEAN_BUFFERS", "10", 1);
  {
    Runtime rt(ro);
    ASSERT_TRUE(scratch::active());
    EXPECT_GT(copied_out_unasked(100, 10.0), 0);
  }
}

/// Whether hwloc finds PCI devices on this machine with I/O discovery on (the important ones,
/// as StarPU asks).
bool machine_has_pci() {
  hwloc_topology_t t;
  if (hwloc_topology_init(&t) != 0) return false;
  hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  const bool found = hwloc_topology_load(t) == 0 && hwloc_get_next_pcidev(t, nullptr) != nullptr;
  hwloc_topology_destroy(t);
  return found;
}

bool starpu_topology_has_pci() { return hwloc_get_next_pcidev(starpu_get_hwloc_topology(), nullptr) != nullptr; }

TEST(Runtime, StartsWithoutHwlocsIoDiscoveryWhereNoGpuIsAndGivesItsVariableBack) {
  // StarPU places CUDA workers by the PCI devices hwloc finds; without a GPU that discovery
  // (slow sysfs reads on a virtual machine) is left out of its start, and HWLOC_COMPONENTS is
  // as it was after; a value the user set stands and leaves the discovery on.
  // HWLOC_PLUGINS_BLACKLIST, which keeps the plugins StarPU never asks for unloaded while it
  // starts (test_cli sees which load), is given back the same way.
  unsetenv("HWLOC_COMPONENTS");
  unsetenv("HWLOC_PLUGINS_BLACKLIST");
  const bool pci = machine_has_pci();
  RuntimeOptions ro;
  ro.ncpus = 1;
  {
    Runtime rt(ro);
    const bool gpus = rt.cuda_workers() > 0;
    EXPECT_EQ(std::getenv("HWLOC_COMPONENTS"), nullptr);
    EXPECT_EQ(std::getenv("HWLOC_PLUGINS_BLACKLIST"), nullptr);
    EXPECT_EQ(starpu_topology_has_pci(), gpus && pci) << (gpus ? "a GPU, " : "no GPU, ") << "PCI devices " << pci;
  }
  setenv("HWLOC_COMPONENTS", "-gl", 1);  // the user's
  setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_opencl", 1);
  {
    Runtime rt(ro);
    ASSERT_NE(std::getenv("HWLOC_COMPONENTS"), nullptr);
    EXPECT_STREQ(std::getenv("HWLOC_COMPONENTS"), "-gl");
    ASSERT_NE(std::getenv("HWLOC_PLUGINS_BLACKLIST"), nullptr);
    EXPECT_STREQ(std::getenv("HWLOC_PLUGINS_BLACKLIST"), "hwloc_opencl");
    EXPECT_EQ(starpu_topology_has_pci(), pci);
  }
  unsetenv("HWLOC_COMPONENTS");
  unsetenv("HWLOC_PLUGINS_BLACKLIST");
}

TEST(Runtime, LeavesHwlocsXmlReaderLoadedWhereATopologyFileIsGiven) {
  // hwloc's own XML parser reads only hwloc's XML: with a topology file for StarPU or hwloc,
  // libxml2's plugin stays; the OpenCL and GL ones are left out either way.
  unsetenv("STARPU_HWLOC_INPUT");
  unsetenv("HWLOC_XMLFILE");
  const std::string plain = Runtime::hwloc_plugins_left_out();
  EXPECT_NE(plain.find("hwloc_xml_libxml"), std::string::npos) << plain;
  for (const char* var : {"STARPU_HWLOC_INPUT", "HWLOC_XMLFILE"}) {
    setenv(var, "topology.xml", 1);
    const std::string given = Runtime::hwloc_plugins_left_out();
    unsetenv(var);
    EXPECT_EQ(given.find("hwloc_xml_libxml"), std::string::npos) << var << ": " << given;
    for (const char* plugin : {"hwloc_opencl", "hwloc_gl"}) {
      EXPECT_NE(plain.find(plugin), std::string::npos) << plain;
      EXPECT_NE(given.find(plugin), std::string::npos) << var << ": " << given;
    }
  }
}

TEST(Runtime, TheMemoryPlanKnowsTheMainMemoryStarPUCounts) {
  // Once StarPU runs, the plan's room is no more than the main memory StarPU counts (it
  // allocates no more there): a room larger than any machine is bounded by it.
  RuntimeOptions ro;
  ro.ncpus = 1;
  ro.ncuda = 0;
  Runtime rt(ro);
  const memory::MemoryRoom huge{std::uint64_t(1) << 60, "this machine has available"};
  const memory::MemoryRoom room = starpu_room(huge);
  EXPECT_LT(room.bytes, huge.bytes);
  EXPECT_GT(room.bytes, std::uint64_t(64) << 20);
  EXPECT_NE(room.bound.find("StarPU counts as this machine's main memory"), std::string::npos) << room.bound;
}

}  // namespace
}  // namespace starwave::test

namespace starwave::test {
namespace {

/// The VmFlags of the mapping that holds `p` (/proc/self/smaps), "" if none does.
std::string vm_flags(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      inside = at >= lo && at < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(HostMemory, LargeBuffersAreHugePageMappingsKeptForTheNextShot) {
  using namespace host_memory;
  // Whether this kernel takes the advice at all (a probe of our own).
  bool thp = false;
  if (void* probe = mmap(nullptr, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      probe != MAP_FAILED) {
    thp = madvise(probe, 4 << 20, MADV_HUGEPAGE) == 0;
    munmap(probe, 4 << 20);
  }
  const std::size_t MiB = std::size_t(1) << 20;
  MappingPool pool;
  const std::size_t big = 5 * MiB + 123, page = std::size_t(sysconf(_SC_PAGESIZE));
  const std::size_t big_mapped = (big + page - 1) / page * page;  // whole pages
  void* a = pool.take(big, false);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % kHugePage, 0u) << "aligned for huge pages";
  if (thp) {
    EXPECT_NE(vm_flags(a).find(" hg"), std::string::npos) << "advised for huge pages: " << vm_flags(a);
  }
  std::memset(a, 1, big);  // every byte is usable
  EXPECT_EQ(pool.used_bytes(), big_mapped);
  EXPECT_TRUE(pool.give_back(a));
  EXPECT_FALSE(pool.give_back(a)) << "not in use any more";
  EXPECT_EQ(pool.kept_bytes(), big_mapped);
  void* again = pool.take(big, false);  // the next shot's buffer of the same size: the kept one
  EXPECT_EQ(again, a);
  EXPECT_EQ(pool.kept_bytes(), 0u);
  // Between kMappedFrom and kHugeFrom: a mapping of its own, not advised.
  void* mid = pool.take(kMappedFrom + 5, false);
  ASSERT_NE(mid, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(mid) % page, 0u);
  EXPECT_EQ(vm_flags(mid).find(" hg"), std::string::npos) << vm_flags(mid);
  std::memset(mid, 2, kMappedFrom + 5);
  EXPECT_TRUE(pool.give_back(mid));
  EXPECT_TRUE(pool.give_back(again));
  EXPECT_EQ(pool.used_bytes(), 0u);
  // Both wait for a buffer of their size. A request neither fits releases the oldest
  // first, until what is mapped stays within the most ever in use (here the two
  // together): a 1 MiB buffer drops `mid`, keeps `a`.
  void* one = pool.take(MiB, false);
  EXPECT_EQ(pool.kept_bytes(), big_mapped);
  EXPECT_EQ(pool.take(big, false), a);
  EXPECT_TRUE(pool.give_back(a));
  EXPECT_TRUE(pool.give_back(one));
  // A request larger than the most ever in use releases every kept one.
  void* large = pool.take(8 * MiB, false);
  ASSERT_NE(large, nullptr);
  EXPECT_EQ(pool.kept_bytes(), 0u);
  EXPECT_TRUE(pool.give_back(large));
  // At most kKept are kept: a full list gives its oldest up for the newest.
  std::vector<void*> held;
  std::size_t newest = 0;
  for (std::size_t k = 1; k <= kKept + 1; ++k) held.push_back(pool.take(newest = k * MiB, false));
  for (void* p : held) EXPECT_TRUE(pool.give_back(p));
  EXPECT_EQ(pool.kept_bytes(), (kKept + 1) * (kKept + 2) / 2 * MiB - MiB) << "all but the first (1 MiB)";
  EXPECT_EQ(pool.used_bytes(), 0u);
  EXPECT_EQ(pool.take(newest, false), held.back());
  EXPECT_TRUE(pool.give_back(held.back()));
  pool.trim();
  EXPECT_EQ(pool.kept_bytes(), 0u);
  // The process's hooks: small buffers from the heap, 64-byte aligned like the kernels' rows.
  void* small = nullptr;
  ASSERT_EQ(allocate(0, &small, 1000, 0), 0);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small) % 64, 0u);
  std::memset(small, 3, 1000);
  EXPECT_EQ(release(0, small, 1000, 0), 0);
  void* mapped = nullptr;
  ASSERT_EQ(allocate(0, &mapped, 3 * MiB, 0), 0);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(mapped) % kHugePage, 0u);
  EXPECT_EQ(release(0, mapped, 3 * MiB, 0), 0);
}

TEST(HostMemory, AllocationsFailingWhileNothingRunsEndTheRunInsteadOfWaitingForEver) {
  // StarPU retries an allocation that fails for ever. While tasks run (they will free
  // memory) the failures may go on; once they have lasted the set time with no task
  // running and no success in between, the run is ended (here: recorded).
  using namespace host_memory;
  static bool idle = false;
  static std::size_t given_up = 0;
  on_stuck({0.2, [](double) { return idle; }, [](std::size_t bytes) { given_up = bytes; }});
  const std::size_t huge = std::size_t(1) << 62;  // no machine maps this
  void* p = nullptr;
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(allocate(0, &p, huge, 0), -ENOMEM);
    EXPECT_EQ(p, nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
  }
  EXPECT_EQ(given_up, 0u) << "tasks were running";
  idle = true;
  void* small = nullptr;
  ASSERT_EQ(allocate(0, &small, 1000, 0), 0);  // a success: the count starts again
  release(0, small, 1000, 0);
  EXPECT_EQ(allocate(0, &p, huge, 0), -ENOMEM);
  EXPECT_EQ(given_up, 0u) << "the first failure";
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_EQ(allocate(0, &p, huge, 0), -ENOMEM);
  EXPECT_EQ(given_up, huge) << "failing for 0.25 s while nothing ran";
  on_stuck({});

  // Whether tasks run: a codelet holds codelets::Busy while it does.
  {
    const codelets::Busy busy;
    EXPECT_FALSE(codelets::idle_for(0));
  }
  EXPECT_TRUE(codelets::idle_for(0));
  EXPECT_FALSE(codelets::idle_for(60)) << "a task ended just now";
}

}  // namespace
}  // namespace starwave::test
