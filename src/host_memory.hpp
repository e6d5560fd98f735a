// src/host_memory.hpp — how the buffers StarPU allocates in main memory are obtained
// (starpu_malloc_set_hooks; installed by Runtime before StarPU starts).
//
// A shot's large buffers (its boundary store above all: tens of MB, written once per time
// step; its traces) are allocated by StarPU's workers for each shot and freed when it is
// done. Each one from kMappedFrom on gets a mapping of its own, so that freeing it gives
// the memory back (from glibc's heaps it would stay, and peak memory grew with the number
// of shots: +65 MB from 4 to 24 shots in bench/stream_memory.sh, before session 13 set
// glibc's mmap threshold to 1 MiB for that). From kHugeFrom on the mapping is aligned to
// 2 MiB and advised for transparent huge pages (madvise MADV_HUGEPAGE; the kernel's
// default THP mode "madvise" honours it, "never" ignores it; with the default defrag
// setting a fault may compact memory first): one page fault and one clear per 2 MiB
// instead of 512. And up to kKept freed mappings are kept for the next buffer of the same
// length (the next shot's, or the next gradient's in an inversion), which then costs no
// fault and no clear. A request that none of them fits releases the oldest until what is
// mapped stays within the most the pool ever had in use, so what is kept never raises the
// pool's peak; a full list gives its oldest up for the newest; trim() (at the end of a
// Runtime) releases them all. Measured on the demo's gradient (8 shots of 190 × 440
// cells, 2 workers): 190 000 page faults → 13 000 (README "The two commands"). Smaller
// buffers come from posix_memalign, 64-byte aligned (kernels/shot.hpp's rows).
//
// Pinning: where CUDA workers exist StarPU asks for pinned buffers (STARPU_MALLOC_PINNED)
// and, without a hook, would use cudaHostAlloc. Here such a buffer always gets a mapping
// of its own (whole pages, never shared with another buffer), pinned by starpu_memory_pin
// (cudaHostRegister) and unpinned before it is unmapped; kept mappings stay pinned, so a
// reused one also saves the registration. If the registration fails the buffer stays
// pageable (StarPU then copies synchronously). STARPU_DISABLE_PINNING=1 is honoured.
//
// Sanitizer build: a buffer's page-rounding tail and every kept mapping are poisoned for
// ASan (an overflow into the tail, or a use after StarPU freed it, is reported), and a
// reused buffer is filled with NaN (a kernel reading what it never wrote shows in the
// tests' results).
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

/// Hands allocate/release to StarPU (before starpu_init).
void install();

}  // namespace starwave::host_memory
