#include "src/runtime/host_memory.hpp"

#include <malloc.h>
#include <starpu.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif

namespace starwave::host_memory {
namespace {

std::atomic<bool> pinning{false};

Stuck g_stuck;
std::atomic<long long> g_failing_since_ns{0};  // 0: the last allocation succeeded
std::atomic<bool> g_gave_up{false};

long long steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// After a failed allocation: gives up once allocations have failed for g_stuck.seconds
/// while nothing ran.
void note_failure(std::size_t size) {
  const long long now = steady_ns();
  long long since = 0;
  if (g_failing_since_ns.compare_exchange_strong(since, now) || !g_stuck.give_up || !g_stuck.idle) return;
  if (double(now - since) < g_stuck.seconds * 1e9 || !g_stuck.idle(g_stuck.seconds)) return;
  if (!g_gave_up.exchange(true)) g_stuck.give_up(size);
}

/// The process's pool, never destroyed: StarPU may free buffers while the process exits.
MappingPool& pool() {
  static MappingPool* p = new MappingPool;
  return *p;
}

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// ASan: bytes no one may touch (a kept mapping, a buffer's page-rounding tail), and back.
void poison([[maybe_unused]] void* p, [[maybe_unused]] std::size_t n) {
#ifdef __SANITIZE_ADDRESS__
  ASAN_POISON_MEMORY_REGION(p, n);
#endif
}
void unpoison([[maybe_unused]] void* p, [[maybe_unused]] std::size_t n) {
#ifdef __SANITIZE_ADDRESS__
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#endif
}

}  // namespace

MappingPool::Mapping MappingPool::fresh(std::size_t length, bool huge, bool pin) {
  const std::size_t slack = huge ? kHugePage : 0;
  void* raw = mmap(nullptr, length + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return {};
  char* start = static_cast<char*>(raw);
  if (huge) {  // trim to a 2 MiB-aligned start: only whole aligned 2 MiB ranges become huge pages
    char* aligned = reinterpret_cast<char*>(round_up(reinterpret_cast<std::uintptr_t>(start), kHugePage));
    if (aligned > start) munmap(start, std::size_t(aligned - start));
    const std::size_t tail = std::size_t(start + length + slack - (aligned + length));
    if (tail > 0) munmap(aligned + length, tail);
    start = aligned;
    madvise(start, length, MADV_HUGEPAGE);  // advice: without THP the buffer still works
  }
  // A registration that fails leaves the buffer pageable: slower copies, not a failed run.
  return Mapping{start, length, pin && starpu_memory_pin(start, length) == 0};
}

void MappingPool::unmap(const Mapping& m) {
  unpoison(m.base, m.length);  // a later mapping at this address starts clean
  if (m.pinned) starpu_memory_unpin(m.base, m.length);
  munmap(m.base, m.length);
}

MappingPool::~MappingPool() {
  for (const auto& [base, m] : used_) unmap(m);
  for (const Mapping& m : kept_) unmap(m);
}

void* MappingPool::take(std::size_t size, bool pin) {
  size = std::max<std::size_t>(size, 1);
  const std::size_t length = round_up(size, std::size_t(sysconf(_SC_PAGESIZE)));
  std::vector<Mapping> stale;
  {
    const std::lock_guard<std::mutex> guard(lock_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it)
      if (it->length == length && it->pinned == pin) {
        const Mapping reused = *it;
        kept_.erase(it);
        kept_bytes_ -= length;
        used_[reused.base] = reused;
        used_bytes_ += length;
        unpoison(reused.base, size);
#ifdef __SANITIZE_ADDRESS__
        // Not a fresh mapping's zeros but the last user's values: NaN here, so that a
        // kernel reading what it never wrote shows in the tests' results.
        std::memset(reused.base, 0xff, size);
#endif
        return reused.base;
      }
    // None fits: the oldest kept ones go until what is mapped stays within the most ever
    // in use, counting this buffer — so what is kept never raises the pool's peak.
    const std::size_t most = std::max(most_used_, used_bytes_ + length);
    std::size_t drop = 0;
    while (drop < kept_.size() && used_bytes_ + length + kept_bytes_ > most) kept_bytes_ -= kept_[drop++].length;
    stale.assign(kept_.begin(), kept_.begin() + long(drop));
    kept_.erase(kept_.begin(), kept_.begin() + long(drop));
    used_bytes_ += length;  // claimed now, so that concurrent requests count it
  }
  for (const Mapping& k : stale) unmap(k);
  Mapping m = fresh(length, length >= kHugeFrom, pin);
  if (!m.base) {  // the system refuses: whatever is kept goes, and one more try
    trim();
    m = fresh(length, length >= kHugeFrom, pin);
  }
  const std::lock_guard<std::mutex> guard(lock_);
  if (!m.base) {
    used_bytes_ -= length;
    return nullptr;
  }
  most_used_ = std::max(most_used_, used_bytes_ + kept_bytes_);
  used_[m.base] = m;
  poison(static_cast<char*>(m.base) + size, length - size);
  return m.base;
}

bool MappingPool::give_back(void* p) {
  Mapping freed, evicted;
  {
    const std::lock_guard<std::mutex> guard(lock_);
    const auto it = used_.find(p);
    if (it == used_.end()) return false;
    freed = it->second;
    used_.erase(it);
    used_bytes_ -= freed.length;
    if (kept_.size() == kKept) {  // full: the oldest makes room
      evicted = kept_.front();
      kept_bytes_ -= evicted.length;
      kept_.erase(kept_.begin());
    }
    poison(freed.base, freed.length);
    kept_.push_back(freed);
    kept_bytes_ += freed.length;
  }
  if (evicted.base) unmap(evicted);
  return true;
}

void MappingPool::trim() {
  std::vector<Mapping> stale;
  {
    const std::lock_guard<std::mutex> guard(lock_);
    stale.swap(kept_);
    kept_bytes_ = 0;
  }
  for (const Mapping& m : stale) unmap(m);
}

std::size_t MappingPool::used_bytes() {
  const std::lock_guard<std::mutex> guard(lock_);
  return used_bytes_;
}

std::size_t MappingPool::kept_bytes() {
  const std::lock_guard<std::mutex> guard(lock_);
  return kept_bytes_;
}

void set_pinning(bool cuda_workers) { pinning = cuda_workers && starpu_get_env_number("STARPU_DISABLE_PINNING") <= 0; }

void trim() { pool().trim(); }

// The hooks are called from StarPU's C code: nothing may escape them.
int allocate(unsigned /*node*/, void** a, std::size_t size, int flags) {
  *a = nullptr;
  try {
    const bool pin = (flags & STARPU_MALLOC_PINNED) && pinning;
    if (size >= kMappedFrom || pin) {
      *a = pool().take(size, pin);
    } else if (posix_memalign(a, 64, size == 0 ? 64 : size) != 0) {
      *a = nullptr;
    }
  } catch (...) {
    *a = nullptr;
  }
  if (*a) {
    g_failing_since_ns.store(0, std::memory_order_relaxed);
    return 0;
  }
  note_failure(size);
  return -ENOMEM;
}

int release(unsigned /*node*/, void* a, std::size_t /*size*/, int /*flags*/) {
  try {
    if (a && !pool().give_back(a)) std::free(a);  // not a mapping: from posix_memalign
  } catch (...) {                                 // std::mutex failing: the buffer stays mapped, unused
  }
  return 0;
}

void install() { starpu_malloc_set_hooks(allocate, release); }

void on_stuck(const Stuck& s) { g_stuck = s; }

void one_arena_under_address_limit() {
  struct rlimit lim {};
  if (getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) mallopt(M_ARENA_MAX, 1);
}

void map_large_blocks() { mallopt(M_MMAP_THRESHOLD, 1 << 20); }  // a fixed threshold: no longer raised

}  // namespace starwave::host_memory
