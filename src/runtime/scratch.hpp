// src/runtime/scratch.hpp — out of core (--scratch DIR or STARPU_DISK_SWAP, docs/design.md §3): a StarPU disk memory
// node in a folder of this process's own inside DIR (starwave-scratch.HOST.PID.XXXXXX), to which StarPU may move the
// intervals of a split store (ShotProblem::split_store) when main memory runs short, and from which it
// brings them back for the adjoint. The run holds a lock on a file in its folder (flock: the
// kernel frees it when the process ends, however it ends). The folder and StarPU's files in it
// are removed when the run ends (success, error, a signal, or a failed read or write of the
// disk node, which ends the run in one line); StarPU's files in a folder a run killed outright
// (SIGKILL) left — its lock free — are removed when the next run starts with the same DIR.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "src/memory/room.hpp"

namespace starwave::scratch {

/// --scratch DIR: checks that DIR is a folder this process may write, with room for StarPU's
/// disk node, under an open-files limit that lets StarPU keep its files open, and keeps it
/// for the next Runtime. With no DIR (empty), StarPU's own STARPU_DISK_SWAP (a folder; with
/// STARPU_DISK_SWAP_SIZE, MiB at most there; STARPU_DISK_SWAP_BACKEND unset or unistd) if
/// set, else none. Throws InputError naming the option or variable otherwise.
void set_folder(const std::string& dir);
/// `plan`: start() reckons the room DIR has and makes, registers and removes nothing.
void set_planning(bool planning);
/// Whether a run asked for scratch (set_folder with a folder), and where: "--scratch DIR"
/// or "STARPU_DISK_SWAP=DIR" (empty when none).
bool wanted();
std::string given();

/// The StarPU disk node, started by Runtime once StarPU runs: removes StarPU's files from the
/// folders that runs of this machine left in DIR (their locks free), makes
/// DIR/starwave-scratch.HOST.PID.XXXXXX with its locked owner file and registers StarPU's
/// unistd disk backend there with the room the file system has free (less a tenth). Throws
/// InputError for a folder that cannot serve, RuntimeError when StarPU refuses it.
void start();
/// After starpu_shutdown: removes this process's folder and everything in it.
void stop() noexcept;
/// Whether the disk node runs (between start and stop; planned, for a plan).
bool active();
/// The bytes StarPU may put in this process's scratch folder (0 when none).
std::uint64_t room();
/// Refuses (InputError naming the option) a file of `bytes` for StarPU's disk node (`what`:
/// "an interval of the store out of core takes") above this process's file-size limit
/// (ulimit -f): StarPU could never write it.
void require_file_size(std::uint64_t bytes, const std::string& what);
/// room() with what sets it, for messages: "StarPU may use there (nine tenths of its free
/// space)", or "STARPU_DISK_SWAP_SIZE allows".
memory::MemoryRoom disk_room();

/// The STARPU_LIMIT_CPU_MEM (MiB) to set before StarPU starts, when a run wants scratch and
/// none is set: StarPU moves data to disk only once its main-memory count reaches a limit.
/// `available`: the bytes this process may hold (memory::memory_room, shared by the ranks
/// on its node), less an eighth and 16 MiB for what it holds outside StarPU; 0 when that
/// leaves StarPU less than 16 MiB (the run is then refused: out of core cannot work there).
std::uint64_t cpu_limit_mib(std::uint64_t available);

}  // namespace starwave::scratch
