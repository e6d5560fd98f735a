#include "src/host_memory.hpp"

#include <starpu.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace starwave::host_memory {
namespace {

std::atomic<bool> pinning{false};

/// The process's pool, never destroyed: StarPU may free buffers while the process exits.
MappingPool& pool() {
  static MappingPool* p = new MappingPool;
  return *p;
}

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

}  // namespace

void* MappingPool::fresh(std::size_t length, bool huge, bool pin) {
  const std::size_t slack = huge ? kHugePage : 0;
  void* raw = mmap(nullptr, length + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  char* start = static_cast<char*>(raw);
  if (huge) {  // trim to a 2 MiB-aligned start: only whole aligned 2 MiB ranges become huge pages
    char* aligned = reinterpret_cast<char*>(round_up(reinterpret_cast<std::uintptr_t>(start), kHugePage));
    if (aligned > start) munmap(start, std::size_t(aligned - start));
    const std::size_t tail = std::size_t(start + length + slack - (aligned + length));
    if (tail > 0) munmap(aligned + length, tail);
    start = aligned;
    madvise(start, length, MADV_HUGEPAGE);  // advice: without THP the buffer still works
  }
  if (pin && starpu_memory_pin(start, length) != 0) {
    munmap(start, length);
    return nullptr;
  }
  return start;
}

void MappingPool::unmap(const Mapping& m) {
  if (m.pinned) starpu_memory_unpin(m.base, m.length);
  munmap(m.base, m.length);
}

void* MappingPool::take(std::size_t size, bool pin) {
  const std::size_t length = round_up(std::max<std::size_t>(size, 1), std::size_t(sysconf(_SC_PAGESIZE)));
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
#ifdef __SANITIZE_ADDRESS__
        // A reused buffer holds the last shot's values, not a fresh mapping's zeros: in
        // the sanitizer build it is filled with NaN, so that a kernel that reads what it
        // never wrote shows in the tests' results.
        std::memset(reused.base, 0xff, reused.length);
#endif
        return reused.base;
      }
    // None fits: the oldest kept ones go until what is mapped stays within the most ever
    // in use, counting this buffer — so what is kept never adds to the peak.
    const std::size_t most = std::max(most_used_, used_bytes_ + length);
    std::size_t drop = 0;
    while (drop < kept_.size() && used_bytes_ + length + kept_bytes_ > most) kept_bytes_ -= kept_[drop++].length;
    stale.assign(kept_.begin(), kept_.begin() + long(drop));
    kept_.erase(kept_.begin(), kept_.begin() + long(drop));
    used_bytes_ += length;  // claimed now, so that concurrent requests count it
    most_used_ = most;
  }
  for (const Mapping& k : stale) unmap(k);
  void* start = fresh(length, length >= kHugeFrom, pin);
  const std::lock_guard<std::mutex> guard(lock_);
  if (!start) {
    used_bytes_ -= length;
    return nullptr;
  }
  used_[start] = Mapping{start, length, pin};
  return start;
}

bool MappingPool::give_back(void* p) {
  Mapping freed;
  {
    const std::lock_guard<std::mutex> guard(lock_);
    const auto it = used_.find(p);
    if (it == used_.end()) return false;
    freed = it->second;
    used_.erase(it);
    used_bytes_ -= freed.length;
    if (kept_.size() < kKept) {
      kept_.push_back(freed);
      kept_bytes_ += freed.length;
      return true;
    }
  }
  unmap(freed);
  return true;
}

std::size_t MappingPool::used_bytes() {
  const std::lock_guard<std::mutex> guard(lock_);
  return used_bytes_;
}

std::size_t MappingPool::kept_bytes() {
  const std::lock_guard<std::mutex> guard(lock_);
  return kept_bytes_;
}

void set_pinning(bool on) { pinning = on; }

int allocate(unsigned /*node*/, void** a, std::size_t size, int flags) {
  const bool pin = (flags & STARPU_MALLOC_PINNED) && pinning;
  if (size >= kMappedFrom || pin) {
    *a = pool().take(size, pin);
  } else if (posix_memalign(a, 64, size == 0 ? 64 : size) != 0) {
    *a = nullptr;
  }
  return *a ? 0 : -ENOMEM;
}

int release(unsigned /*node*/, void* a, std::size_t /*size*/, int /*flags*/) {
  if (a && !pool().give_back(a)) std::free(a);  // not a mapping: from posix_memalign
  return 0;
}

void install() { starpu_malloc_set_hooks(allocate, release); }

}  // namespace starwave::host_memory
