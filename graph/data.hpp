// graph/data.hpp — where each piece of docs/design.md §3's task graph lives when
// starwave runs as several MPI ranks (starpu-mpi), and the one way data enters a graph.
//
// Every rank builds the same graph in the same order. A handle is registered on every
// rank, owned by one: shot s's data by the rank whose block of consecutive shots holds s
// (owner(): the reduction tree over shot index then crosses ranks only near its root), the model side
// (the reduction's root, the model the optimiser writes) by rank 0. A task runs where
// the data it writes lives; StarPU-MPI sends whatever it reads from elsewhere. Read-only
// inputs every rank computes for itself (the padded medium, the velocity) are per-rank
// data: each rank reads its own copy and nothing is sent. Tags come from one counter
// that every rank advances in the same order, so the same handle has the same tag
// everywhere.
//
// With one process (or inside a LocalScope) all of this reduces to plain StarPU: every
// shot is this process's, and submission is starpu_task_insert.
#pragma once

#include <starpu.h>

#include <cstddef>
#include <stdexcept>
#include <vector>

#include "graph/world.hpp"

namespace starwave::graph {

/// The world the graphs are built for: this process's place, but rank 0 of 1 inside a
/// LocalScope.
int rank();
int size();
inline bool distributed() { return size() > 1; }
/// The rank that owns shot s of a survey of `nshots`, and whether that is this one: rank r owns
/// the consecutive shots ⌈r·nshots/N⌉ … ⌈(r+1)·nshots/N⌉ − 1 (N ranks; their counts differ by one
/// at most). The reduction tree sums neighbouring shots first, so with blocks only the merges
/// near its root cross ranks: log₂ N messages per rank, where shot s on rank s mod N sent half
/// of all the shots' contributions to rank 0 (docs/cluster.md, "What travels").
inline int owner(int shot, int nshots) {
  return int((static_cast<long long>(shot) * size()) / (nshots > 0 ? nshots : 1));
}
inline bool mine(int shot, int nshots) { return owner(shot, nshots) == rank(); }
/// Shots 0 … nshots − 1 in the order that starts every rank's shots alike: the first shot of
/// each rank's block, then the second of each, …; shot order with one process. A workflow that
/// waits on its shots in submission order (rank 0 writing modeled data) submits them so.
std::vector<int> interleaved_shots(int nshots);
/// The same order in batches (docs/design.md §3, "Shot batches"): each rank's block cut into
/// runs of at most `batch` consecutive shots, the first batch of each rank, then the second
/// of each, …; batches of one are interleaved_shots().
std::vector<std::vector<int>> interleaved_batches(int nshots, int batch);

/// Within its lifetime, graphs are built for this process alone (rank 0 of 1): for work
/// that only one rank does (rank 0's pictures), which must not advance the shared tags.
class LocalScope {
 public:
  LocalScope();
  ~LocalScope();
  LocalScope(const LocalScope&) = delete;
  LocalScope& operator=(const LocalScope&) = delete;
};

/// StarPU refused what a graph asked of it (a task, a buffer): the message says what.
struct Refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One piece of registered data: it owns its StarPU handle (and, under MPI, its tag and
/// owner) and hands it back when it goes, so no path (an exception included) leaks one.
/// How it goes depends on whose memory it is:
///  - memory the caller gave (owned_vector() with `host`, on the owner rank): unregistered
///    waiting for its tasks, so the values are home before the caller's memory may go;
///  - memory StarPU allocated (everything else): released without waiting; StarPU
///    unregisters it after its last task.
/// It converts to the handle for the insert_<op>() calls; a temporary does not, so a
/// handle cannot be handed back before the task that uses it is submitted.
class Data {
 public:
  Data() = default;
  Data(Data&& o) noexcept : handle_(o.handle_), callers_memory_(o.callers_memory_) { o.handle_ = nullptr; }
  Data& operator=(Data&& o) noexcept;
  Data(const Data&) = delete;
  Data& operator=(const Data&) = delete;
  ~Data() { release(); }

  operator starpu_data_handle_t() const& { return handle_; }
  operator starpu_data_handle_t() const&& = delete;
  explicit operator bool() const { return handle_ != nullptr; }

  /// Hands the handle back now, as the destructor would.
  void release() noexcept;
  /// Unregisters now, waiting for every task that uses it: the caller's memory then holds
  /// the final values.
  void close();

 private:
  friend Data owned_vector(int, const void*, std::size_t, std::size_t);
  friend Data input_vector(int, const void*, std::size_t, std::size_t);
  friend Data per_rank_vector(const void*, std::size_t, std::size_t);
  friend Data scratch_vector(std::size_t, std::size_t);
  friend Data shot_buffer(int, std::size_t, std::size_t);
  Data(starpu_data_handle_t h, bool callers_memory) : handle_(h), callers_memory_(callers_memory) {}

  starpu_data_handle_t handle_ = nullptr;
  bool callers_memory_ = false;
};

/// The largest piece of data StarPU may move to a disk memory node (out of core, --scratch):
/// StarPU 1.3's unistd backend moves less than 2 GiB a call and does not retry the rest, so
/// every handle StarPU allocates that is larger stays in memory (starpu_data_set_ooc_flag).
constexpr std::uint64_t kLargestDiskPiece = std::uint64_t(1) << 30;

/// A vector of `n` elements owned by rank `owner`: there backed by `host` (StarPU
/// allocates it when `host` is null), elsewhere an empty placeholder that StarPU-MPI
/// fills when a task there reads it. Call it on every rank, in the same order.
Data owned_vector(int owner, const void* host, std::size_t n, std::size_t elem);

/// A shot's buffer of `n` elements that only its own rank's tasks use and whose length no
/// codelet reads (its store, final state, checkpoints), allocated by StarPU where its first
/// task runs: of any length. StarPU 1.3 counts a vector's elements in 32 bits; past
/// 2^32 − 1 the vector holds k-element groups (elements of elem · k bytes, the last group
/// padded), so a 3-D store of tens of GiB is one handle.
Data shot_buffer(int owner, std::size_t n, std::size_t elem);

/// A read-only input of `n` elements owned by rank `owner`: there a copy of `host` (which
/// may go as soon as this returns) in memory StarPU allocates — pinned where CUDA workers
/// exist, so its transfer to a GPU is asynchronous (docs/design.md §3) — elsewhere a placeholder as
/// in owned_vector(). Call it on every rank, in the same order.
Data input_vector(int owner, const void* host, std::size_t n, std::size_t elem);

/// A read-only input each rank holds its own copy of (`host`, computed by every rank the
/// same way; copied as by input_vector()): tasks read the local copy; nothing is ever sent.
Data per_rank_vector(const void* host, std::size_t n, std::size_t elem);

/// Work space (STARPU_SCRATCH): local to each rank, never sent.
Data scratch_vector(std::size_t n, std::size_t elem);

/// Starts the transfer of `d` to rank `node` (from its owner; nothing with one process).
/// Every rank calls it; the node then reads it with a Reading.
void send_to(const Data& d, int node);

/// A handle's values in this process's main memory, for the Reading's lifetime (after
/// the tasks that write it; no task may write it meanwhile).
class Reading {
 public:
  explicit Reading(const Data& d);
  ~Reading();
  Reading(const Reading&) = delete;
  Reading& operator=(const Reading&) = delete;
  template <typename T>
  const T* values() const {
    return static_cast<const T*>(values_);
  }

 private:
  starpu_data_handle_t handle_;
  const void* values_;
};

/// The workers StarPU runs in this process (CPU and CUDA): the shots in flight are counted
/// from it.
int workers();
/// The CUDA workers among them.
int cuda_workers();
/// Which kinds of worker take the wave tasks (forward, adjoint) of the graphs submitted
/// next: the memory plan's choice (src/memory/plan.hpp, ShotPlacement: a shot that does not
/// fit main memory runs on the GPUs alone; one that fits no GPU on the CPU workers alone).
/// Each workflow sets it before its first task; at least one kind must be true.
void take_shots_on(bool cpu, bool cuda);
/// Whether a worker of this kind takes wave tasks now.
bool takes_shots(bool cpu_worker);

}  // namespace starwave::graph
