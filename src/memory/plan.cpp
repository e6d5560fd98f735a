#include "src/memory/plan.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <mutex>

#include "src/base/error.hpp"
#include "src/memory/room.hpp"

namespace starwave {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

std::atomic<std::uint64_t> g_starpu_main_memory{0};
std::mutex g_gpus_mutex;
std::vector<GpuRoom> g_gpus;

std::uint64_t add(std::uint64_t a, std::uint64_t b) { return a > kMax - b ? kMax : a + b; }
std::uint64_t times(std::uint64_t a, std::uint64_t k) { return k != 0 && a > kMax / k ? kMax : a * k; }

/// How many shots of `per_shot` bytes fit in `room` beside `fixed`, `most` at most.
int fitting(std::uint64_t room, std::uint64_t fixed, std::uint64_t per_shot, int most) {
  int k = 0;
  while (k < most && add(fixed, times(per_shot, std::uint64_t(k + 1))) <= room) ++k;
  return k;
}

/// What a GPU holds beside its shots: the run's shared data and its workers' scratch.
std::uint64_t gpu_fixed(const MemoryNeed& need, const GpuRoom& g) {
  return add(need.shared, times(need.per_worker, std::uint64_t(std::max(g.workers, 0))));
}

std::string shot_parts(const MemoryNeed& need) {
  std::string parts = "one shot in flight takes " + bytes_text(double(need.per_shot));
  if (need.store > 0) parts += " (the stored forward wavefield " + bytes_text(double(need.store)) + ")";
  return parts;
}

}  // namespace

std::uint64_t MemoryNeed::total(int workers, int shots) const {
  return add(add(shared, times(per_worker, std::uint64_t(std::max(workers, 0)))),
             times(per_shot, std::uint64_t(std::max(shots, 0))));
}

void set_starpu_main_memory(std::uint64_t bytes) { g_starpu_main_memory.store(bytes); }

void set_gpu_rooms(std::vector<GpuRoom> gpus) {
  const std::lock_guard<std::mutex> lock(g_gpus_mutex);
  g_gpus = std::move(gpus);
}

std::vector<GpuRoom> gpu_rooms() {
  const std::lock_guard<std::mutex> lock(g_gpus_mutex);
  return g_gpus;
}

int ShotPlacement::total() const {
  int n = cpu;
  for (int g : gpu) n += g;
  return n;
}

memory::MemoryRoom room_for_buffers() {
  memory::MemoryRoom r = memory::memory_room();
  if (r.bytes != kMax) {
    r.bytes = r.bytes > kRunOwnBytes ? r.bytes - kRunOwnBytes : 0;
    r.bound += ", less " + bytes_text(double(kRunOwnBytes)) + " for the run's own working memory";
  }
  return r;
}

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

int shot_batch(int shots, int workers, int cuda_workers, int most_on_a_gpu, std::uint64_t work_bytes,
               std::uint64_t worker_room, int asked) {
  if (asked >= 1) return asked;
  if (cuda_workers <= 0 || shots <= 1 || most_on_a_gpu > 1) return 1;
  int batch = std::min(kMostBatched, std::max(1, shots / std::max(1, workers)));
  while (batch > 1 && times(work_bytes, std::uint64_t(batch)) > worker_room / 4) --batch;
  return batch;
}

int most_workers_on_a_gpu(const std::vector<GpuRoom>& gpus) {
  int most = 0;
  for (const GpuRoom& g : gpus) most = std::max(most, g.workers);
  return most;
}

int batch_held(const ShotPlacement& where, const std::vector<GpuRoom>& gpus, int batch) {
  int held = std::min(batch, where.total() / 2);
  if (where.gpus_take_shots)
    for (std::size_t i = 0; i < gpus.size() && i < where.gpu.size(); ++i)
      if (gpus[i].workers > 0) held = std::min(held, where.gpu[i] / gpus[i].workers);
  return std::max(1, held);
}

std::uint64_t batch_worker_room(const memory::MemoryRoom& host, int workers, const std::vector<GpuRoom>& gpus) {
  std::uint64_t least = host.bytes / std::uint64_t(std::max(1, workers));
  for (const GpuRoom& g : gpus)
    if (g.workers > 0) least = std::min(least, g.room.bytes / std::uint64_t(g.workers));
  return least;
}

int shot_batch_asked() {
  const char* v = std::getenv("STARWAVE_SHOT_BATCH");
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 1 || n > 1024)
    throw InputError("STARWAVE_SHOT_BATCH=" + std::string(v) +
                     ": the shots a task runs together must be a whole number from 1 to 1024");
  return int(n);
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
    std::string parts = shot_parts(need);
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

bool fits_one_shot(const MemoryNeed& need, int cpu_workers, const memory::MemoryRoom& host,
                   const std::vector<GpuRoom>& gpus) {
  if (gpus.empty()) return need.total(cpu_workers, 1) <= starpu_room(host).bytes;
  for (const GpuRoom& g : gpus)
    if (add(gpu_fixed(need, g), need.per_shot) <= g.room.bytes) return true;
  return false;
}

ShotPlacement place_shots(const MemoryNeed& need, int cpu_workers, const memory::MemoryRoom& host,
                          const std::vector<GpuRoom>& gpus, const std::string& what, const std::string& hint) {
  ShotPlacement p;
  p.cpu_workers = std::max(cpu_workers, 0);
  if (gpus.empty()) {
    p.cpu =
        shots_in_flight(need, p.cpu_workers, std::max(2, p.cpu_workers) * std::max(1, need.batch), host, what, hint);
    return p;
  }
  const memory::MemoryRoom main = starpu_room(host);
  for (const GpuRoom& g : gpus)
    p.gpu.push_back(
        fitting(g.room.bytes, gpu_fixed(need, g), need.per_shot, 2 * std::max(g.workers, 0) * std::max(1, need.batch)));
  // A GPU shot's traces, residual and misfit come home: main memory holds that part of each.
  const std::uint64_t home_part = need.per_shot - std::min(need.store, need.per_shot);
  auto home = [&](bool cpu_scratch) {
    return add(add(need.shared, times(need.per_worker, cpu_scratch ? std::uint64_t(p.cpu_workers) : 0)),
               times(home_part, std::uint64_t(p.total())));
  };
  while (p.total() > 0 && home(false) > main.bytes) --*std::max_element(p.gpu.begin(), p.gpu.end());
  p.cpu = p.cpu_workers > 0 ? fitting(main.bytes, home(true), need.per_shot, p.cpu_workers) : 0;
  p.gpus_take_shots = p.total() > p.cpu;
  p.cpu_takes_shots = p.cpu > 0;
  const GpuRoom& largest = *std::max_element(
      gpus.begin(), gpus.end(), [](const GpuRoom& a, const GpuRoom& b) { return a.room.bytes < b.room.bytes; });
  const std::string gpu_need = bytes_text(double(add(gpu_fixed(need, largest), need.per_shot))) + " on a GPU";
  const std::string gpu_room = "the " + bytes_text(double(largest.room.bytes)) + " " + largest.room.bound;
  const std::string main_room = "the " + bytes_text(double(main.bytes)) + " " + main.bound;
  if (!p.gpus_take_shots && !p.cpu_takes_shots) {
    if (fits_one_shot(need, p.cpu_workers, host, gpus))  // a GPU holds one, main memory not its traces
      shots_in_flight(MemoryNeed{need.shared, 0, home_part, 0}, 0, 1, host, what, hint);
    std::string text = what + " needs " + gpu_need + " at least: " + shot_parts(need) + ", each of its " +
                       std::to_string(largest.workers) + " CUDA workers " + bytes_text(double(need.per_worker)) +
                       ", and the run " + bytes_text(double(need.shared)) + "; more than " + gpu_room;
    if (p.cpu_workers > 0)
      text += ", and " + bytes_text(double(need.total(p.cpu_workers, 1))) + " in main memory, more than " + main_room;
    throw InputError(text + " (" + hint + ")");
  }
  if (!p.gpus_take_shots)
    p.left_out = "one shot needs " + gpu_need + ", more than " + gpu_room;
  else if (!p.cpu_takes_shots && p.cpu_workers > 0)
    p.left_out = "one shot beside the GPUs' needs " + bytes_text(double(add(home(true), need.per_shot))) +
                 " in main memory, more than " + main_room;
  return p;
}

std::string plan_text(const MemoryNeed& need, std::uint64_t full_store, const ShotPlacement& where, int shots) {
  std::string text = "one shot in flight holds " + bytes_text(double(need.per_shot));
  const std::string words = need.store_words.empty() ? "" : " in " + need.store_words;
  if (need.scratch > 0)
    text += ", of which the store " + bytes_text(double(need.store)) + words +
            " in memory, out of core: " + std::to_string(need.intervals) +
            (need.intervals == 1 ? " interval of " : " intervals of ") +
            bytes_text(double(need.scratch) / need.intervals) + " that StarPU may move to scratch files (" +
            bytes_text(double(need.scratch)) + " a shot)";
  else if (need.checkpoint_every > 0)
    text += ", of which the store " + bytes_text(double(need.store)) + words + " with checkpoints every " +
            std::to_string(need.checkpoint_every) + " steps (" + bytes_text(double(need.checkpoints)) +
            "; one more forward run a shot)";
  else if (need.store > 0 && need.store < full_store)
    text += ", of which the " + need.store_kind + " store " + bytes_text(double(need.store)) + words +
            " (the whole wavefield would be " + bytes_text(double(full_store)) + ")";
  else if (need.store > 0)
    text += ", of which the whole stored wavefield " + bytes_text(double(need.store)) + words;
  const int in_flight = std::max(1, std::min(where.total(), shots));
  text += "; " + std::to_string(in_flight) + (in_flight == 1 ? " shot" : " shots") + " in flight";
  if (where.gpu.empty()) return text;
  std::string gpus;
  for (int g : where.gpu) gpus += (gpus.empty() ? "" : " + ") + std::to_string(g);
  std::string split = !where.gpus_take_shots ? "none on the GPU" + std::string(where.gpu.size() > 1 ? "s" : "")
                      : where.gpu.size() > 1 ? gpus + " on the GPUs"
                                             : gpus + " on the GPU";
  if (where.cpu_workers > 0)
    split += where.cpu_takes_shots ? ", " + std::to_string(where.cpu) + " on the CPU workers"
                                   : ", none on the " + std::to_string(where.cpu_workers) + " CPU workers";
  if (!where.left_out.empty()) split += ": " + where.left_out;
  return text + " (at most " + split + ")";
}

}  // namespace starwave
