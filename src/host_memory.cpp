#include "src/host_memory.hpp"

#include <starpu.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace starwave::host_memory {
namespace {

std::atomic<bool> pinning{false};

/// A buffer with a mapping of its own: the mapping's start and length, and whether it
/// was pinned.
struct Mapping {
  void* base = nullptr;
  std::size_t length = 0;
  bool pinned = false;
};

/// The mappings in use, by start; and the freed ones kept for the next buffer of the same
/// length and pinning (most often the next shot's).
struct Mappings {
  std::mutex lock;
  std::unordered_map<void*, Mapping> used;
  std::vector<Mapping> kept;
};

/// Never destroyed: StarPU may free buffers while the process exits.
Mappings& mappings() {
  static Mappings* m = new Mappings;
  return *m;
}

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

void unmap(const Mapping& m) {
  if (m.pinned) starpu_memory_unpin(m.base, m.length);
  munmap(m.base, m.length);
}

/// A mapping of its own for `size` bytes; huge-page aligned and advised when `huge`.
void* map(std::size_t size, bool huge, bool pin) {
  const std::size_t length = round_up(size, std::size_t(sysconf(_SC_PAGESIZE)));
  Mappings& m = mappings();
  std::vector<Mapping> stale;
  {
    const std::lock_guard<std::mutex> guard(m.lock);
    for (auto it = m.kept.begin(); it != m.kept.end(); ++it)
      if (it->length == length && it->pinned == pin) {
        const Mapping reused = *it;
        m.kept.erase(it);
        m.used[reused.base] = reused;
#ifdef __SANITIZE_ADDRESS__
        // A reused buffer holds the last shot's values, not a fresh mapping's zeros: in
        // the sanitizer build it is filled with NaN, so that a kernel that reads what it
        // never wrote shows in the tests' results.
        std::memset(reused.base, 0xff, reused.length);
#endif
        return reused.base;
      }
    // No kept mapping fits: they go, so that what is kept never adds to the peak.
    stale.swap(m.kept);
  }
  for (const Mapping& k : stale) unmap(k);
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
  const std::lock_guard<std::mutex> guard(m.lock);
  m.used[start] = Mapping{start, length, pin};
  return start;
}

}  // namespace

void set_pinning(bool on) { pinning = on; }

int allocate(unsigned /*node*/, void** a, std::size_t size, int flags) {
  const bool pin = (flags & STARPU_MALLOC_PINNED) && pinning;
  if (size >= kMappedFrom || pin) {
    *a = map(size, size >= kHugeFrom, pin);
  } else if (posix_memalign(a, 64, size == 0 ? 64 : size) != 0) {
    *a = nullptr;
  }
  return *a ? 0 : -ENOMEM;
}

int release(unsigned /*node*/, void* a, std::size_t /*size*/, int /*flags*/) {
  if (!a) return 0;
  Mapping freed;
  {
    Mappings& m = mappings();
    const std::lock_guard<std::mutex> guard(m.lock);
    const auto it = m.used.find(a);
    if (it == m.used.end()) {
      std::free(a);  // from posix_memalign
      return 0;
    }
    freed = it->second;
    m.used.erase(it);
    if (m.kept.size() < kKept) {
      m.kept.push_back(freed);
      return 0;
    }
  }
  unmap(freed);
  return 0;
}

void install() { starpu_malloc_set_hooks(allocate, release); }

}  // namespace starwave::host_memory
