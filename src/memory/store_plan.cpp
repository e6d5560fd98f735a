// src/memory/store_plan.cpp — the store each shot keeps, and the shots in flight it allows.
#include "src/memory/store_plan.hpp"

#include <algorithm>

#include "src/base/error.hpp"

namespace starwave {

int parse_store_compression(const std::string& text, const std::string& option) {
  for (int k : {pack16::kNone, pack16::kHalf, pack16::kBfloat, pack16::kZfp16, pack16::kZfp12, pack16::kZfp8})
    if (text == compression_name(k)) return k;
  throw InputError(option + ": must be 'none', 'fp16', 'bf16', 'zfp16', 'zfp12' or 'zfp8' (got '" + text + "')");
}
namespace {

/// Steps an interval of a split store (out of core) holds: a 32nd of the steps, so that the
/// two intervals a shot holds in memory are a 16th of its store, each interval's buffer
/// (L + 2 slots of `slot` bytes: the two at its edges kept twice) at most `largest` bytes.
constexpr int kSplitIntervals = 32;
int split_interval(int nsteps, std::uint64_t slot, std::uint64_t largest) {
  const std::uint64_t most = std::max<std::uint64_t>(largest / std::max<std::uint64_t>(slot, 1), 3) - 2;
  const std::uint64_t share = std::uint64_t((std::max(nsteps, 1) + kSplitIntervals - 1) / kSplitIntervals);
  return int(std::min(most, share));
}

/// p with plan `s` for its store.
template <typename T>
ShotProblem<T> with_plan(ShotProblem<T> p, const StorePlan& s) {
  static_cast<StorePlan&>(p) = s;
  return p;
}

/// The GPUs a shot of p's store may run on: none for a ZFP store (the CPU's).
template <typename T>
std::vector<GpuRoom> shot_gpus(const ShotProblem<T>& p, const StoreRoom& room) {
  return pack16::zfp_rate(p.compression) > 0 ? std::vector<GpuRoom>{} : room.gpus;
}

/// What a refusal suggests: out of core first where the store is what does not fit.
std::string refusal_hint(int storage, bool scratch) {
  const std::string out_of_core = scratch ? "" : "--scratch DIR (the store out of core), ";
  if (storage == StorePlan::kStoreFull)
    return "use " + out_of_core + "--storage boundary, or fewer workers with STARPU_NCPU";
  if (storage == StorePlan::kStoreBoundary)
    return out_of_core +
           "a smaller model, a shorter record, --storage shell (the edges' gradient then inexact), or fewer workers "
           "with STARPU_NCPU";
  return out_of_core + "a smaller model, a shorter record, or fewer workers with STARPU_NCPU";
}

/// A split store's shots: on one kind of worker, no more than the scratch disk holds.
int place_split_shots(const MemoryNeed& need, const StoreRoom& room, StoreShots& out) {
  ShotPlacement& where = out.where;
  out.split_on_gpus = !where.gpu.empty() && where.gpus_take_shots;
  if (out.split_on_gpus && where.cpu_workers > 0) {
    where.cpu = 0;
    where.cpu_takes_shots = false;
    where.left_out = "a shot out of core (--scratch) runs on one kind of worker";
  }
  if (need.intervals > 0 && room.require_file_size)
    room.require_file_size(need.scratch / std::uint64_t(need.intervals), "an interval of the store out of core takes");
  const std::uint64_t fit = need.scratch > 0 ? room.disk.bytes / need.scratch : ~std::uint64_t(0);
  if (fit == 0) {
    const auto [store, there] = bytes_text_apart(double(need.scratch), double(room.disk.bytes));
    throw InputError(room.scratch_option + ": a shot's store takes " + store + ", more than the " + there + " " +
                     room.disk.bound);
  }
  return int(std::min<std::uint64_t>(std::uint64_t(std::max(1, where.total())), fit));
}

}  // namespace

template <typename T>
MemoryNeed shot_need(const ShotProblem<T>& p, const ShotHoldings& h) {
  const std::uint64_t t = sizeof(T);
  MemoryNeed need;
  need.checkpoint_every = p.intervals() > 1 ? p.checkpoint_every : 0;
  if (p.compression != pack16::kNone) need.store_words = compression_name(p.compression);
  need.store_kind = storage_name(p.storage);
  need.checkpoints = t * p.checkpoints_size();
  // Store, final state, states; with a split store, two intervals (the one a task uses and
  // the next) and the shot's own work arrays: the other intervals may be on disk.
  const std::uint64_t intervals = p.split_store ? std::uint64_t(std::min(2, p.intervals())) : 1;
  need.store = t * (intervals * p.store_size() + 2 * p.grid_size()) + need.checkpoints;
  const std::uint64_t own_work = p.split_store ? t * (p.work_size() + p.adjoint_work_size()) : 0;
  if (p.split_store) {
    need.scratch = t * std::uint64_t(p.intervals()) * p.store_size();
    need.intervals = p.intervals();
    need.checkpoint_every = 0;
  }
  need.per_shot = need.store + own_work + h.per_shot;
  // Each worker's scratch; a split store's shots carry their own (above): then only a plain
  // forward's takes a worker's.
  need.per_worker =
      (p.split_store ? (h.plain_forward ? t * p.work_size() : 0) : t * (p.work_size() + p.adjoint_work_size())) +
      h.born_work;
  need.shared = h.shared;
  return need;
}

template <typename T>
StorePlan choose_store(const ShotProblem<T>& p, const StoreRequest& r, const ShotHoldings& h, const StoreRoom& room) {
  if (pack16::zfp_rate(r.compression) > 0 && room.cpus == 0)
    throw InputError("--store-compression " + std::string(compression_name(r.compression)) +
                     ": a ZFP store is written and read by CPU workers, and this run has none (STARPU_NCPU=0)");
  StorePlan plan;
  plan.storage = r.storage;
  plan.compression = r.compression;
  plan.checkpoint_every = std::max(0, r.checkpoint_every);
  plan.split_store = room.scratch && r.checkpoint_every > 0;
  if (r.checkpoint_every != StoreRequest::kAuto || (!room.scratch && r.storage == StorePlan::kStoreFull)) return plan;
  const ShotProblem<T> whole = with_plan(p, plan);
  if (fits_one_shot(shot_need(whole, h), room.cpus, room.host, shot_gpus(whole, room))) return plan;
  if (room.scratch)
    plan.split_store = true;
  else
    plan.checkpoint_every = checkpoint_interval(p.nsteps, sizeof(T) * std::uint64_t(whole.slot_size()),
                                                sizeof(T) * std::uint64_t(whole.checkpoint_size()));
  return plan;
}

template <typename T>
void split_intervals(ShotProblem<T>& p, const StoreRoom& room) {
  const std::uint64_t t = sizeof(T), slot = t * std::uint64_t(p.slot_size());
  const bool asked = p.checkpoint_every > 0;
  if (!asked) p.checkpoint_every = split_interval(p.nsteps, slot, room.largest_piece);
  if (t * p.store_size() <= room.largest_piece) return;
  const std::uint64_t most = room.largest_piece / slot;
  throw InputError((asked ? "--checkpoint-every " + std::to_string(p.checkpoint_every) : room.scratch_option) +
                   ": an interval of the store would take " + bytes_text(double(t * p.store_size())) +
                   ", more than the " + bytes_text(double(room.largest_piece)) +
                   " StarPU moves to disk in one piece (its 1.3 disk backend moves less than 2 GiB a call); " +
                   (most >= 3 ? "use --checkpoint-every " + std::to_string(most - 2) + " or less"
                              : "one step's store is too large for it: a smaller model, or no out of core"));
}

template <typename T>
StoreShots place_store_shots(const ShotProblem<T>& p, const MemoryNeed& need, const StoreRoom& room) {
  StoreShots out;
  out.where =
      place_shots(need, room.cpus, room.host, shot_gpus(p, room), "this run", refusal_hint(p.storage, room.scratch));
  if (pack16::zfp_rate(p.compression) > 0 && !room.gpus.empty()) {
    out.where.gpu.assign(room.gpus.size(), 0);
    out.where.gpus_take_shots = false;
    out.where.left_out = "a ZFP store is the CPU's";
  }
  out.shots = p.split_store ? place_split_shots(need, room, out) : std::max(1, out.where.total());
  return out;
}

template <typename T>
std::uint64_t full_store_bytes(const ShotProblem<T>& p) {
  ShotProblem<T> full = p;
  full.storage = StorePlan::kStoreFull;
  full.checkpoint_every = 0;
  full.compression = pack16::kNone;
  return sizeof(T) * (full.store_size() + 2 * full.grid_size());
}

#define STARWAVE_STORE_PLAN(T)                                                                          \
  template MemoryNeed shot_need<T>(const ShotProblem<T>&, const ShotHoldings&);                         \
  template StorePlan choose_store<T>(const ShotProblem<T>&, const StoreRequest&, const ShotHoldings&,   \
                                     const StoreRoom&);                                                 \
  template void split_intervals<T>(ShotProblem<T>&, const StoreRoom&);                                  \
  template StoreShots place_store_shots<T>(const ShotProblem<T>&, const MemoryNeed&, const StoreRoom&); \
  template std::uint64_t full_store_bytes<T>(const ShotProblem<T>&);
STARWAVE_STORE_PLAN(float)
STARWAVE_STORE_PLAN(double)
#undef STARWAVE_STORE_PLAN

}  // namespace starwave
