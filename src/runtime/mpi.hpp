// src/runtime/mpi.hpp — the process's place among MPI ranks, usable before any Runtime
// exists, and the host's own collectives. Without MPI (one process, or a build without
// starpu-mpi) rank 0 of 1.
#pragma once

#include <string>
#include <vector>

struct starpu_conf;

namespace starwave::mpi {

/// Whether a launcher (Open MPI, MPICH/Hydra, Slurm with PMI/PMIx) started this process
/// as one of several ranks: its world size from the environment, 1 otherwise.
int launched_ranks();
/// Under a launcher that started several ranks: starts MPI (once per process, threads
/// allowed: StarPU-MPI's progression thread and the host's collectives below both call
/// it) and tells the task graphs their world. Nothing otherwise. Call it first in main.
void start_if_launched();
int rank();  // 0 without MPI
int size();  // 1 without MPI
/// Rank 0's vector on every rank (resized there).
void broadcast(std::vector<double>& v);
/// The element-wise sum over ranks, on rank 0 (the other ranks' vectors are unchanged).
void sum_to_root(std::vector<double>& v);
/// Rank 0's `value` on every rank; the least of every rank's `value`, on every rank (every
/// rank calls them, in the same order).
int from_rank0(int value);
int least_over_ranks(int value);
/// "[rank k/n] " under several ranks, "" otherwise: the start of every log line.
std::string prefix();
/// Ends every rank now with `code` (a process alone just exits).
[[noreturn]] void abort_all(int code);

#ifdef STARWAVE_USE_MPI
/// MPI once per process, MPI_THREAD_MULTIPLE, finalised at exit (Runtime and
/// start_if_launched).
void ensure_started();
/// Ranks sharing a node split its cores and GPUs (src/runtime/runtime.hpp).
void split_node(struct starpu_conf& conf, int node_rank, int node_size, int per_gpu);
#endif

}  // namespace starwave::mpi
