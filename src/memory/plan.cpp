#include "src/memory/plan.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>

#include "src/base/error.hpp"
#include "src/memory/room.hpp"

namespace starwave {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

std::atomic<std::uint64_t> g_starpu_main_memory{0};

std::uint64_t add(std::uint64_t a, std::uint64_t b) { return a > kMax - b ? kMax : a + b; }
std::uint64_t times(std::uint64_t a, std::uint64_t k) { return k != 0 && a > kMax / k ? kMax : a * k; }

}  // namespace

std::uint64_t MemoryNeed::total(int workers, int shots) const {
  return add(add(shared, times(per_worker, std::uint64_t(std::max(workers, 0)))),
             times(per_shot, std::uint64_t(std::max(shots, 0))));
}

void set_starpu_main_memory(std::uint64_t bytes) { g_starpu_main_memory.store(bytes); }

memory::MemoryRoom starpu_room(const memory::MemoryRoom& have) {
  // StarPU's own caps on what it allocates in main memory: a run that needs more waits for
  // memory that never frees, for ever. STARPU_LIMIT_CPU_MEM (MiB; whole, checked by Runtime),
  // and the main memory it counts (hwloc's figure, which the variable can lower, not raise).
  memory::MemoryRoom r = have;
  if (const char* v = std::getenv("STARPU_LIMIT_CPU_MEM"); v && *v)
    if (const std::uint64_t cap = times(std::strtoull(v, nullptr, 10), 1024 * 1024); cap < r.bytes)
      r = {cap, "STARPU_LIMIT_CPU_MEM=" + std::string(v) + " (MiB) lets StarPU allocate"};
  if (const std::uint64_t counted = g_starpu_main_memory.load(); counted > 0 && counted < r.bytes)
    r = {counted,
         "StarPU counts as this machine's main memory (hwloc's figure: StarPU allocates no more there, "
         "whatever the system has free)"};
  return r;
}

int checkpoint_interval(int nsteps, std::uint64_t slot, std::uint64_t state) {
  int best = std::max(nsteps, 1);
  std::uint64_t least = kMax;
  for (int every = std::max(nsteps, 1); every >= 1; --every) {
    const std::uint64_t ring = times(slot, std::uint64_t(std::min(every + 2, nsteps + 1)));
    const std::uint64_t states = times(state, std::uint64_t((nsteps + every - 1) / every - 1));
    if (add(ring, states) < least) {
      least = add(ring, states);
      best = every;
    }
  }
  return best;
}

int shots_in_flight(const MemoryNeed& need, int workers, int wanted, const memory::MemoryRoom& have,
                    const std::string& what, const std::string& hint) {
  const memory::MemoryRoom capped = starpu_room(have);
  const std::uint64_t available = capped.bytes;
  const std::string& room = capped.bound;
  if (need.total(workers, 1) > available) {
    std::string parts = "one shot in flight takes " + bytes_text(double(need.per_shot));
    if (need.store > 0) parts += " (the stored forward wavefield " + bytes_text(double(need.store)) + ")";
    parts +=
        (workers == 1 ? std::string(", its one worker ") : ", each of the " + std::to_string(workers) + " workers ") +
        bytes_text(double(need.per_worker)) + ", and the run " + bytes_text(double(need.shared));
    throw InputError(what + " needs " + bytes_text(double(need.total(workers, 1))) + " at least: " + parts +
                     "; more than the " + bytes_text(double(available)) + " " + room + " (" + hint + ")");
  }
  int shots = std::max(1, wanted);
  while (shots > 1 && need.total(workers, shots) > available) --shots;
  return shots;
}

std::string plan_text(const MemoryNeed& need, std::uint64_t full_store, int in_flight) {
  std::string text = "one shot in flight holds " + bytes_text(double(need.per_shot));
  const std::string words = need.store_words.empty() ? "" : " in " + need.store_words;
  if (need.checkpoint_every > 0)
    text += ", of which the store " + bytes_text(double(need.store)) + words + " with checkpoints every " +
            std::to_string(need.checkpoint_every) + " steps (" + bytes_text(double(need.checkpoints)) +
            "; one more forward run a shot)";
  else if (need.store > 0 && need.store < full_store)
    text += ", of which the " + need.store_kind + " store " + bytes_text(double(need.store)) + words +
            " (the whole wavefield would be " + bytes_text(double(full_store)) + ")";
  else if (need.store > 0)
    text += ", of which the whole stored wavefield " + bytes_text(double(need.store)) + words;
  return text + "; " + std::to_string(in_flight) + (in_flight == 1 ? " shot" : " shots") + " in flight";
}

}  // namespace starwave
