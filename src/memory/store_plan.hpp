// src/memory/store_plan.hpp — which store a shot keeps for the adjoint, and how many shots are
// then in flight where (docs/design.md §9): the whole store in memory when a shot fits, else
// out of core (--scratch) or checkpoints at the interval that takes the least memory. The
// memory plan decides from the options and the run's room; a workflow describes what its
// shots hold beside the store (ShotHoldings), reads the decision (the StorePlan part of its
// ShotProblem) and submits the tasks it implies.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/shot.hpp"
#include "src/memory/plan.hpp"
#include "src/memory/room.hpp"

namespace starwave {

/// What the options ask of the store.
struct StoreRequest {
  static constexpr int kAuto = -1;
  int storage = StorePlan::kStoreBoundary;  // the workflow's default applied (--storage)
  int compression = pack16::kNone;          // --store-compression
  int checkpoint_every = kAuto;             // kAuto: the plan chooses; 0: every slot in memory; N: intervals of N steps
};

/// The store compression named `text` ('none', 'fp16', 'bf16', 'zfp16', 'zfp12', 'zfp8'); an
/// InputError naming `option` for any other.
int parse_store_compression(const std::string& text, const std::string& option);

/// Where a run's shots may go, as the runtime reports it as the run starts.
struct StoreRoom {
  int cpus = 0;                     // CPU workers
  std::vector<GpuRoom> gpus;        // the CUDA workers' GPUs (gpu_rooms())
  memory::MemoryRoom host;          // main memory for the counted buffers (room_for_buffers())
  bool scratch = false;             // a scratch folder is active (--scratch): the store may go out of core
  std::string scratch_option;       // "--scratch DIR", for messages
  memory::MemoryRoom disk;          // what StarPU may write there
  std::uint64_t largest_piece = 0;  // the largest buffer StarPU moves to disk in one piece
  /// Refuses a file of `bytes` the process may not write (ulimit -f), `what` saying what it holds.
  std::function<void(std::uint64_t bytes, const std::string& what)> require_file_size;
};

/// What a workflow's shot in flight holds besides its store and work arrays, and what the
/// run holds once.
struct ShotHoldings {
  std::uint64_t per_shot = 0;  // inputs, traces, residuals, the image's sums, a shot's points
  std::uint64_t shared = 0;    // once per process: the medium, the velocity, the reduction's sums
  bool plain_forward =
      false;  // a forward without a store per shot too (RTM's reference): it takes a worker's work array
  std::uint64_t born_work = 0;  // J and Jᵀ in one graph: a worker's born scratch (codelets/born.hpp), bytes
};

/// What the run holds with the shot's store plan as `p` has it (p's StorePlan part).
template <typename T>
MemoryNeed shot_need(const ShotProblem<T>& p, const ShotHoldings& h);

/// The store plan of the options and the room (the same on every rank given the same room:
/// under several ranks the caller takes rank 0's): --checkpoint-every N > 0 asks for
/// intervals of N steps, out of core with scratch, else checkpoints; 0 for the whole store;
/// kAuto for the whole store when a shot fits where shots would run (a GPU if there is one),
/// else out of core with scratch (as fast as checkpoints or faster: docs/benchmarks.md), else
/// checkpoints (not for kStoreFull, whose point is the whole field). A ZFP store without CPU
/// workers is refused (InputError): only they write and read it.
template <typename T>
StorePlan choose_store(const ShotProblem<T>& p, const StoreRequest& r, const ShotHoldings& h, const StoreRoom& room);

/// Out of core: every slot kept, in intervals StarPU may move to disk. Sets p.checkpoint_every
/// to the interval (the one asked, else a 32nd of the steps within room.largest_piece);
/// refuses (InputError) an interval asked that StarPU cannot move in one piece.
template <typename T>
void split_intervals(ShotProblem<T>& p, const StoreRoom& room);

/// Where the shots of a run with p's store run, and how many are in flight.
struct StoreShots {
  ShotPlacement where;
  int shots = 1;               // in flight at most
  bool split_on_gpus = false;  // a split store's shots run on the GPUs (else on the CPU workers)
};
/// place_shots for p's store (a ZFP store's shots on the CPU workers alone); a split store's
/// on one kind of worker (the GPUs when they take shots: the CPU's and the CUDA adjoint keep
/// their running sums apart), no more than the scratch disk holds every interval of. Refuses
/// (InputError) a run whose shot fits nowhere, saying what would help.
template <typename T>
StoreShots place_store_shots(const ShotProblem<T>& p, const MemoryNeed& need, const StoreRoom& room);

/// Bytes of the whole wavefield's store of p's shot (the plan's line compares the store with it).
template <typename T>
std::uint64_t full_store_bytes(const ShotProblem<T>& p);

}  // namespace starwave
