// src/safety/outputs.hpp — what a run may write, and what it must never touch (docs/design.md §5).
//
// The rules a user can rely on, each kept in one place here:
// - An output is claimed before any work: its folder must exist, an existing file is
//   replaced only with --overwrite, and it may never be one of the run's inputs (whatever
//   the flags). The claim locks the output (a lock file beside it) so that a second run
//   on the same output is refused while the first one owns it.
// - Files are written into a temporary beside the output and renamed into place when
//   complete. Temporaries and locks are removed on every exit path: errors (destructors),
//   SIGINT/SIGTERM/SIGHUP (src/safety/signals.hpp) and a device fault (the fault hook).
// - An output's size is checked against the disk before the work.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace starwave::safety {

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

/// Refuses (InputError naming `option` and `folder`) a folder of pictures under the name of
/// one of the run's own outputs (`outputs`: each path and what it is, "the result (--out)"),
/// which would stop that output being written at the end of the run.
void refuse_folder_over_outputs(const std::string& folder, const std::string& option,
                                const std::vector<std::pair<std::string, std::string>>& outputs);

/// Refuses (InputError naming `path` and `what`) a file of `bytes` that the disk holding
/// `path`'s folder has no room for, or that the file-size limit (ulimit -f) forbids: said
/// before the work, not when the disk fills hours into a run.
void require_disk(const std::string& path, std::uint64_t bytes, const std::string& what);

}  // namespace starwave::safety
