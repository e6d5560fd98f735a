// src/runtime/scratch.hpp — out of core (--scratch DIR or STARPU_DISK_SWAP, docs/design.md §3): a StarPU disk memory
// node in a folder of this process's own inside DIR (starwave-scratch.HOST.PID), to which StarPU may move the intervals
// of a split store (ShotProblem::split_store) when main memory runs short, and from which it
// brings them back for the adjoint. The folder and StarPU's files in it are removed when the
// run ends (success, error, or a signal); those a run killed outright (SIGKILL) left are
// removed when the next run starts with the same DIR.
#pragma once

#include <cstdint>
#include <string>

namespace starwave::scratch {

/// --scratch DIR: checks that DIR is a folder this process may write, and keeps it for the
/// next Runtime. With no DIR (empty), StarPU's own STARPU_DISK_SWAP (a folder; with
/// STARPU_DISK_SWAP_SIZE, MiB at most there; STARPU_DISK_SWAP_BACKEND unset or unistd) if
/// set, else none. Throws InputError naming the option or variable otherwise.
void set_folder(const std::string& dir);
/// Whether a run asked for scratch (set_folder with a folder), and where: "--scratch DIR"
/// or "STARPU_DISK_SWAP=DIR" (empty when none).
bool wanted();
std::string given();

/// The StarPU disk node, started by Runtime once StarPU runs: removes the folders dead runs
/// of this machine left in DIR, makes DIR/starwave-scratch.HOST.PID and registers StarPU's unistd disk backend
/// there with the room the file system has free (less a tenth). Throws RuntimeError.
void start();
/// After starpu_shutdown: removes this process's folder and everything in it.
void stop() noexcept;
/// Whether the disk node runs (between start and stop).
bool active();
/// The bytes StarPU may put in this process's scratch folder (0 when none), and the same
/// said with what sets it ("… StarPU may use there (nine tenths of its free space)").
std::uint64_t room();
std::string room_text();

/// The STARPU_LIMIT_CPU_MEM (MiB) to set before StarPU starts, when a run wants scratch and
/// none is set: StarPU moves data to disk only once its main-memory count reaches a limit.
/// `available`: the bytes this process may hold (memory::memory_room, shared by the ranks
/// on its node), less an eighth and 16 MiB for what it holds outside StarPU.
std::uint64_t cpu_limit_mib(std::uint64_t available);

}  // namespace starwave::scratch
