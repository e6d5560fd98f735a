// codelets/distribution.hpp — where each piece of DESIGN §3's task graph lives when
// starwave runs as several MPI ranks (starpu-mpi), and the one way data enters a graph.
//
// Every rank builds the same graph in the same order. A handle is registered on every
// rank, owned by one: shot s's data by rank s mod size (round-robin), the model side
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

namespace starwave::graph {

/// The world the graphs are built for: set by the Runtime when it starts starpu-mpi.
void set_world(int rank, int size);
int rank();  // 0 … size − 1 (0 with one process or in a LocalScope)
int size();  // 1 with one process or in a LocalScope
inline bool distributed() { return size() > 1; }
/// The rank that owns shot s (round-robin), and whether that is this one.
inline int owner(int shot) { return shot % size(); }
inline bool mine(int shot) { return owner(shot) == rank(); }

/// Within its lifetime, graphs are built for this process alone (rank 0 of 1): for work
/// that only one rank does (rank 0's pictures), which must not advance the shared tags.
class LocalScope {
 public:
  LocalScope();
  ~LocalScope();
  LocalScope(const LocalScope&) = delete;
  LocalScope& operator=(const LocalScope&) = delete;

 private:
  int rank_, size_;
};

/// A vector of `n` elements owned by rank `owner`: there backed by `host` (StarPU
/// allocates it when `host` is null), elsewhere an empty placeholder that StarPU-MPI
/// fills when a task there reads it. Call it on every rank, in the same order.
starpu_data_handle_t owned_vector(int owner, const void* host, std::size_t n, std::size_t elem);

/// A read-only input of `n` elements owned by rank `owner`: there a copy of `host` (which
/// may go as soon as this returns) in memory StarPU allocates — pinned where CUDA workers
/// exist, so its transfer to a GPU is asynchronous (DESIGN §3) — elsewhere a placeholder as
/// in owned_vector(). Call it on every rank, in the same order.
starpu_data_handle_t input_vector(int owner, const void* host, std::size_t n, std::size_t elem);

/// A read-only input each rank holds its own copy of (`host`, computed by every rank the
/// same way; copied as by input_vector()): tasks read the local copy; nothing is ever sent.
starpu_data_handle_t per_rank_vector(const void* host, std::size_t n, std::size_t elem);

/// Work space (STARPU_SCRATCH): local to each rank, never sent.
starpu_data_handle_t scratch_vector(std::size_t n, std::size_t elem);

/// Starts the transfer of `h` to rank `node` (from its owner; nothing with one process).
/// Every rank calls it; the node then reads it with starpu_data_acquire.
void send_to(starpu_data_handle_t h, int node);

}  // namespace starwave::graph
