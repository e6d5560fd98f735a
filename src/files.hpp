// src/files.hpp — what a run may write, and what it must never touch (docs/design.md §5).
//
// The rules a user can rely on, each kept in one place here:
// - An output is claimed before any work: its folder must exist, an existing file is
//   replaced only with --overwrite, and it may never be one of the run's inputs (whatever
//   the flags). The claim locks the output (a lock file beside it) so that a second run
//   on the same output is refused while the first one owns it.
// - Files are written into a temporary beside the output and renamed into place when
//   complete. Temporaries and locks are removed on every exit path: errors (destructors),
//   SIGINT/SIGTERM/SIGHUP (a handler that removes them, then lets the signal end the
//   process) and a device fault (the fault hook).
// - Before a large allocation, its size is checked against what the machine has.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace starwave::files {

/// Installs the handlers of SIGINT, SIGTERM and SIGHUP (remove every tracked path, then
/// die by the signal, or — while a graceful stop is armed — only note the first signal),
/// and ignores SIGPIPE and SIGXFSZ so that a full disk or a file-size limit becomes a
/// failed write with its message, not a signal. Called once, first thing in main.
void install_signal_handlers();

/// While armed (fwi), the first SIGINT/SIGTERM/SIGHUP only sets stop_requested(): the run
/// ends at the next safe point and saves its state; a second one ends it at once.
void arm_graceful_stop(bool armed);
bool stop_requested();
int stop_signal();

/// Paths removed on every exit path (async-signal-safe removal): files, and folders
/// (removed after the files, and only when empty).
void track(const std::string& path);
void untrack(const std::string& path);
/// Removes every tracked path; async-signal-safe (the signal and device-fault handlers).
void remove_tracked() noexcept;
/// Removes the temporaries of `target` that runs killed outright (SIGKILL) left beside it
/// (`.NAME.tmp.PID.N` whose process is gone).
void remove_stale_temporaries_of(const std::string& target);

/// A temporary file beside `target` (a hidden name with the process id), created empty and
/// exclusively (never through a link, never over an existing file), removed by the
/// destructor unless commit() renamed it over `target`.
class Temporary {
 public:
  explicit Temporary(const std::string& target);
  ~Temporary();
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;
  const std::string& path() const { return path_; }
  /// Renames the temporary over the target (InputError naming the target on failure).
  void commit();
  /// Removes the temporary now.
  void discard() noexcept;

 private:
  std::string target_, path_;
  bool live_ = true;
};

/// An output claimed for this run (see the rules above). `option` names it in messages
/// ("--out"); `inputs` are the run's input files (an output may never be one of them);
/// with `lock`, a lock file `.NAME.lock` beside the output holds the claim until the
/// object is destroyed (under MPI only the writing rank locks). With the lock held, the
/// temporaries of this output left by a run that was killed outright (SIGKILL) are removed.
class OutputClaim {
 public:
  OutputClaim() = default;
  OutputClaim(const std::string& path, const std::string& option, bool overwrite,
              const std::vector<std::string>& inputs, bool lock);
  ~OutputClaim();
  OutputClaim(OutputClaim&& o) noexcept;
  OutputClaim& operator=(OutputClaim&& o) noexcept;
  OutputClaim(const OutputClaim&) = delete;
  OutputClaim& operator=(const OutputClaim&) = delete;

 private:
  void release() noexcept;
  std::string lock_path_;
  int fd_ = -1;
};

/// Every read of an input in a run reads the file its first read did. While an InputPins
/// lives (main makes one per run), the first read of a path records the file (device,
/// inode, size, modification time) and each later read checks it: a file renamed over
/// the input meanwhile (as `model --overwrite` does) or rewritten in place is refused with
/// RuntimeError "PATH: replaced (changed) while this run was reading it" — never a mixture
/// of two files. Without an InputPins (library use, unit tests) nothing is checked.
class InputPins {
 public:
  InputPins();
  ~InputPins();
  InputPins(const InputPins&) = delete;
  InputPins& operator=(const InputPins&) = delete;
};
/// Records (first read) or checks (later reads) `path`, open for reading as `fd`.
void require_unchanged(const std::string& path, int fd);
/// Forgets `path` (this run replaced the file: later reads see its new content).
void unpin(const std::string& path);

/// What a command writes under its --out name.
enum class Format { kHdf5, kSegy, kPng };

/// Refuses (InputError naming `option` and `path`) an output name whose extension says
/// another format than `writes` (`model --out d.sgy`, `export --out d.h5`, `plot --out
/// a.jpg`, `--out vp.npy`): a file under such a name would not open as what it says.
/// Names with no extension, or one this list does not know, are the user's choice.
void refuse_other_format_name(const std::string& path, const std::string& option, Format writes);

/// Whether `path`'s extension (any case) is one of format `f`'s (`.h5`, `.SGY`, …).
bool named_as(const std::string& path, Format f);

/// Refuses (InputError naming `path`, then `advice`: what to do instead) an output that is a
/// symbolic link, dangling or not: a run neither writes through a link nor replaces one.
void refuse_link(const std::string& path, const std::string& advice);

/// Refuses (InputError) `path` when it is the same file as one of `inputs`.
void refuse_input_as_output(const std::string& path, const std::string& option, const std::vector<std::string>& inputs);

/// What this process may still allocate, and what bounds it: the least of the machine's
/// MemAvailable (the physical memory where /proc/meminfo is missing), its memory cgroup's
/// limit less what the cgroup holds (v1 or v2, the group's and every group's above it;
/// reclaimable page cache not counted as held), the address-space limit (ulimit -v) less
/// what the process maps, and the data limit (ulimit -d) less its data.
struct MemoryRoom {
  std::uint64_t bytes = 0;
  std::string bound;  // for messages, after the bytes: "this machine has available", "… (ulimit -v) of 1 GiB leaves"
};
MemoryRoom memory_room();
/// The address-space limit's part alone (bytes: the most a uint64 holds when unlimited).
MemoryRoom address_room();
/// memory_room().bytes.
std::uint64_t available_memory();

/// A memory cgroup's room, from /proc/self/cgroup's text and the mount points of the
/// unified (v2) and memory (v1) hierarchies ("" where absent): memory_room's part, apart
/// for the tests.
struct CgroupRoom {
  bool limited = false;
  std::uint64_t room = 0, limit = 0;
};
CgroupRoom cgroup_room(const std::string& proc_self_cgroup, const std::string& v2_root, const std::string& v1_root);

/// Names what this thread's allocations are for while it lives ("d.h5: /data"): should
/// one fail (std::bad_alloc), out_of_memory_use() says what asked for the memory.
class MemoryUse {
 public:
  explicit MemoryUse(std::string what);
  ~MemoryUse();
  MemoryUse(const MemoryUse&) = delete;
  MemoryUse& operator=(const MemoryUse&) = delete;
};
/// Installs the new-handler that notes the innermost MemoryUse of a failed allocation
/// (then throws std::bad_alloc as usual). Called once, in main.
void name_failed_allocations();
/// What the last failed allocation was for ("" when unnamed).
std::string out_of_memory_use();

/// Refuses (InputError) an allocation of `count` elements of `element_bytes` each that
/// overflows or exceeds the available memory. `what` names the file and dataset (or
/// the option) the size comes from.
void require_memory(std::uint64_t count, std::uint64_t element_bytes, const std::string& what);

/// Refuses (InputError naming `path` and `what`) a file of `bytes` that the disk holding
/// `path`'s folder has no room for, or that the file-size limit (ulimit -f) forbids: said
/// before the work, not when the disk fills hours into a run.
void require_disk(const std::string& path, std::uint64_t bytes, const std::string& what);

/// "1.5 GiB", "12 MiB", "640 B".
std::string bytes_text(double bytes);

/// The words of an OS error (errno) for a message, with a hint where one helps:
/// ENOSPC → "no space left on device (the disk is full)".
std::string os_cause(int err);

}  // namespace starwave::files
