// src/runtime/host_memory.hpp — how the buffers StarPU allocates in main memory are obtained
// (starpu_malloc_set_hooks; installed by Runtime before StarPU starts).
//
// A shot's large buffers (its boundary store above all, its traces) are allocated for each
// shot and freed when it is done. From kMappedFrom on each gets a mapping of its own, so
// freeing it gives the memory back; from kHugeFrom on the mapping is 2 MiB-aligned and
// advised for transparent huge pages (one fault and one clear per 2 MiB instead of 512).
// Up to kKept freed mappings are kept for the next buffer of the same length (the next
// shot's); a request none fits releases the oldest until what is mapped stays within the
// most the pool ever had in use, so keeping never raises the pool's peak. trim() (at the
// end of a Runtime) releases them all. Smaller buffers: posix_memalign, 64-byte aligned.
// Why and how much (page faults, timings): docs/benchmarks.md "Whole runs".
//
// Pinning: where CUDA workers exist StarPU asks for pinned buffers; here such a buffer has
// whole pages of its own, pinned by starpu_memory_pin (cudaHostRegister), unpinned before
// unmapping, kept pinned for reuse. A failed registration leaves it pageable;
// STARPU_DISABLE_PINNING=1 is honoured.
//
// Sanitizer build: a buffer's page-rounding tail and every kept mapping are ASan-poisoned,
// and a reused buffer is filled with NaN (a kernel reading what it never wrote shows).
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace starwave::host_memory {

/// From this size on, a buffer is a mapping of its own.
inline constexpr std::size_t kMappedFrom = std::size_t(1) << 20;
/// From this size on, that mapping is aligned and advised for huge pages.
inline constexpr std::size_t kHugeFrom = std::size_t(2) << 20;
/// The huge page size the mappings are aligned to.
inline constexpr std::size_t kHugePage = std::size_t(2) << 20;
/// At most this many freed mappings are kept for reuse.
inline constexpr std::size_t kKept = 8;

/// Buffers with a mapping of their own, and the freed ones kept for reuse. Thread-safe.
class MappingPool {
 public:
  MappingPool() { kept_.reserve(kKept); }  // give_back never allocates
  MappingPool(const MappingPool&) = delete;
  MappingPool& operator=(const MappingPool&) = delete;
  /// Unmaps every mapping, kept or in use.
  ~MappingPool();
  /// `size` bytes (whole pages; huge-page aligned and advised from kHugeFrom; pinned with
  /// starpu_memory_pin when `pin`): a kept mapping of the same length and pinning, or a
  /// fresh one. nullptr if the system refuses.
  void* take(std::size_t size, bool pin);
  /// Frees a buffer from take(): kept, or unmapped. False if `p` is not one of this
  /// pool's buffers in use (nothing done).
  bool give_back(void* p);
  /// Unmaps the kept mappings.
  void trim();
  std::size_t used_bytes();
  std::size_t kept_bytes();

 private:
  struct Mapping {
    void* base = nullptr;
    std::size_t length = 0;
    bool pinned = false;
  };
  /// A new mapping of `length` bytes; huge-page aligned and advised when `huge`; pinned
  /// when `pin` and the registration succeeds. base nullptr if the system refuses.
  static Mapping fresh(std::size_t length, bool huge, bool pin);
  static void unmap(const Mapping& m);
  std::mutex lock_;
  std::unordered_map<void*, Mapping> used_;
  std::vector<Mapping> kept_;  // oldest first
  std::size_t used_bytes_ = 0, kept_bytes_ = 0, most_used_ = 0;
};

/// StarPU's malloc hook: `*a` = a buffer of `size` bytes for memory node `node` (from the
/// process's MappingPool from kMappedFrom on, or when pinned; else posix_memalign, 64-byte
/// aligned); 0, or -ENOMEM with *a = nullptr.
int allocate(unsigned node, void** a, std::size_t size, int flags);
/// StarPU's free hook, for a buffer from allocate().
int release(unsigned node, void* a, std::size_t size, int flags);

/// Whether requests for pinned buffers are pinned: true once CUDA workers exist, unless
/// STARPU_DISABLE_PINNING is set.
void set_pinning(bool cuda_workers);

/// Unmaps the process pool's kept mappings (Runtime's end).
void trim();

/// StarPU retries an allocation that fails for ever: a worker spins, the run waits. When
/// allocate() has failed for `seconds` with no success in between and `idle(seconds)`
/// says no task ran meanwhile (nothing will free memory), `give_up(bytes)` is called once:
/// it ends the run with its message. Set by Runtime; none by default.
struct Stuck {
  double seconds = 20;
  bool (*idle)(double seconds) = nullptr;
  void (*give_up)(std::size_t bytes) = nullptr;
};
void on_stuck(const Stuck& s);

/// Hands allocate/release to StarPU (before starpu_init).
void install();

/// Under an address-space limit (ulimit -v), one malloc arena for every thread: glibc
/// otherwise reserves 64 MiB of address space for each thread's own arena as the thread
/// first allocates, at any time, so that what the memory plan measured would not hold.
/// Called first in main, before any thread exists.
void one_arena_under_address_limit();

/// Blocks of 1 MiB or more (a shot's observed traces, a model) are mapped for themselves and
/// returned to the system when freed: glibc otherwise raises its mmap threshold to the largest
/// block freed and from then on serves such blocks from heaps it keeps, so that a run reading
/// shot after shot could grow its peak with the number of shots. Called first in main.
void map_large_blocks();

}  // namespace starwave::host_memory
