// src/memory/plan.hpp — what a run needs in memory, known before any work, against
// what the machine has (docs/design.md §3: peak memory is bounded by the shots in flight). The
// workflows describe their buffers; this decides how many shots may be in flight, or
// refuses a run that cannot fit with one line saying what takes the room.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/memory/room.hpp"

namespace starwave {

/// What a run holds beyond the buffers a workflow counts (HDF5's caches, a shot's traces as
/// they are read and copied, the result as it is written): a run's peak was 2–5 MiB above
/// its counted buffers in 2-D runs of 0.26–0.78 GiB, so the room for the buffers is the
/// process's less 8 MiB (room_for_buffers). Outside StarPU's buffers: StarPU's own caps
/// (starpu_room) are not lowered by it.
inline constexpr std::uint64_t kRunOwnBytes = std::uint64_t(8) << 20;

struct MemoryNeed {
  std::uint64_t shared = 0;             // once per process: the medium, the velocity, the reduction's sums
  std::uint64_t per_worker = 0;         // each worker's work arrays (STARPU_SCRATCH)
  std::uint64_t per_shot = 0;           // each shot in flight, the store included
  std::uint64_t store = 0;              // of per_shot: the forward wavefield kept for the adjoint
  std::uint64_t checkpoints = 0;        // of store: the forward states kept (checkpointing)
  int checkpoint_every = 0;             // steps between them; 0: every step's store is kept
  std::uint64_t scratch = 0;            // out of core: the split store's intervals, all of them (may go to disk)
  int intervals = 0;                    // out of core: their number
  std::string store_words;              // "fp16" or "bf16" for a 16-bit store (--store-compression), else empty
  std::string store_kind = "boundary";  // what the store keeps (--storage): boundary or shell
  int batch = 1;                        // shots a task runs together (shot_batch): a worker keeps two tasks' in flight

  /// Bytes with `workers` workers and `shots` shots in flight (saturating, never wrapping).
  std::uint64_t total(int workers, int shots) const;
};

/// The number of shots to keep in flight: `wanted`, or fewer when the room `available`
/// (memory::memory_room) cannot hold them (the results are the same whatever the number:
/// only the schedule changes). Refuses (InputError) a run whose single shot does not fit:
/// "`what` needs …, more than the … this machine has available (`hint`)".
int shots_in_flight(const MemoryNeed& need, int workers, int wanted, const memory::MemoryRoom& available,
                    const std::string& what, const std::string& hint);

/// A GPU's room for shots: its CUDA workers, and what StarPU may allocate there (the least
/// of StarPU's count for it, which STARPU_LIMIT_CUDA_MEM sets, and the device's free memory
/// as the run starts, less a sixteenth of that for CUDA's own: contexts, captured graphs).
struct GpuRoom {
  memory::MemoryRoom room;  // bound: "GPU 0 has free", "STARPU_LIMIT_CUDA_MEM=… (MiB) lets StarPU allocate on GPU 0"
  int workers = 0;
};
/// The GPUs this process's CUDA workers use (Runtime sets them as StarPU starts; none
/// without CUDA workers).
void set_gpu_rooms(std::vector<GpuRoom> gpus);
std::vector<GpuRoom> gpu_rooms();

/// Where a window's shots may run and how many each memory holds. A shot's store lives
/// where its forward ran: in main memory for a CPU worker, on the GPU for a CUDA worker.
struct ShotPlacement {
  int cpu_workers = 0;
  int cpu = 0;                  // shots in flight on the CPU workers (one a worker at most)
  std::vector<int> gpu;         // on each GPU (two a CUDA worker at most)
  bool cpu_takes_shots = true;  // false: one shot does not fit main memory beside the GPUs' needs
  bool gpus_take_shots = true;  // false: one shot does not fit any GPU
  std::string left_out;         // why the CPU workers or the GPUs take no shots ("" when all do)
  int total() const;
};
/// The window of a run with `cpu_workers` CPU workers and `gpus`: without GPUs,
/// shots_in_flight's (one shot per CPU worker, two at least); with them, two per CUDA worker
/// that each GPU holds beside its workers' scratch and the run's shared data, and one per
/// CPU worker that main memory holds beside the GPU shots' traces; the CPU workers (or the
/// GPUs) take no shots when one does not fit there. Refuses (InputError) a run whose shot
/// fits nowhere, as shots_in_flight does.
ShotPlacement place_shots(const MemoryNeed& need, int cpu_workers, const memory::MemoryRoom& host,
                          const std::vector<GpuRoom>& gpus, const std::string& what, const std::string& hint);
/// Whether a shot of `need` fits where the run would put shots: on a GPU when there is one
/// (a GPU shot is ~100 a CPU core's), else in main memory.
bool fits_one_shot(const MemoryNeed& need, int cpu_workers, const memory::MemoryRoom& host,
                   const std::vector<GpuRoom>& gpus);

/// memory::memory_room() less kRunOwnBytes, the bound saying so: what a run's counted buffers
/// may take.
memory::MemoryRoom room_for_buffers();

/// `have`, or less where StarPU caps what it allocates in main memory: STARPU_LIMIT_CPU_MEM
/// (MiB), or the main memory StarPU counts (set_starpu_main_memory) — hwloc's figure, which
/// on some virtual machines is less than what the system gives.
memory::MemoryRoom starpu_room(const memory::MemoryRoom& have);
/// The bytes StarPU counts as main memory (starpu_memory_get_total once it runs; 0: unknown).
void set_starpu_main_memory(std::uint64_t bytes);
/// The interval L ≥ 1 (steps) between the checkpoints of a shot of `nsteps` steps whose store
/// keeps `slot` bytes a step and whose forward state takes `state` bytes: the one whose ring of
/// min(L + 2, nsteps + 1) slots and ⌈nsteps / L⌉ − 1 states take the fewest bytes (the longest
/// such L; kernels/shot.hpp, ShotProblem::checkpoint_every).
int checkpoint_interval(int nsteps, std::uint64_t slot, std::uint64_t state);
/// The most shots a forward task runs together where the plan chooses (docs/design.md §3,
/// "Shot batches").
inline constexpr int kMostBatched = 16;
/// The batch a placement made for batches of `batch` (MemoryNeed::batch) holds: `batch`, fewer
/// where a GPU that takes shots holds less than a batch a CUDA worker or the window less than
/// two batches; 1 where it holds none.
int batch_held(const ShotPlacement& where, const std::vector<GpuRoom>& gpus, int batch);
/// The shots one modelling task runs together: `asked` where it is ≥ 1 (STARWAVE_SHOT_BATCH,
/// shot_batch_asked()); else 1 without CUDA workers (a CPU worker runs a batch's shots one
/// after another: nothing to gain) and where a GPU has several CUDA workers (their streams
/// already run several shots at once, and faster than batches: docs/gpu.md); with one CUDA
/// worker a GPU, the rank's `shots` shared out over its `workers`, at most kMostBatched, fewer
/// while a batch's scratch (`work_bytes` a shot) would take over a quarter of a worker's share
/// of the room (`worker_room`: the least of main memory's and each GPU's room over their
/// workers, batch_worker_room()).
int shot_batch(int shots, int workers, int cuda_workers, int most_on_a_gpu, std::uint64_t work_bytes,
               std::uint64_t worker_room, int asked);
/// The most CUDA workers one GPU has (0 without CUDA workers).
int most_workers_on_a_gpu(const std::vector<GpuRoom>& gpus);
/// A worker's share of the room for a batch's scratch: main memory's `host` over `workers`,
/// each GPU's over its CUDA workers, the least of them.
std::uint64_t batch_worker_room(const memory::MemoryRoom& host, int workers, const std::vector<GpuRoom>& gpus);
/// STARWAVE_SHOT_BATCH: 0 where unset or empty, else the shots it names (1 … 1024); any other
/// value refused (InputError naming the variable).
int shot_batch_asked();

/// One line for the user before a run starts: "one shot in flight holds 45.1 MB, of which
/// the boundary store 30.2 MB (the whole wavefield would be 5.3 GB); 4 shots in flight",
/// with GPUs "…; 16 shots in flight (16 on the GPU, none on the 8 CPU workers: …)".
/// `full_store`: the bytes of a full-wavefield store, said only when `need.store` is less;
/// `shots`: the run's shot count (no more are in flight).
std::string plan_text(const MemoryNeed& need, std::uint64_t full_store, const ShotPlacement& where, int shots);

}  // namespace starwave
