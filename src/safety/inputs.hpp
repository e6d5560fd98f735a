// src/safety/inputs.hpp — a run reads one version of each input file (docs/design.md §5).
#pragma once

#include <string>

namespace starwave::safety {

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

/// Refuses (InputError naming `path`) an input that is not a regular file — missing, a
/// folder, a named pipe (FIFO), a device or a socket — by stat() alone: nothing is opened,
/// so a pipe nobody writes cannot block the run. Every input is read from a file, some more
/// than once (docs/guarantees.md).
void require_input_file(const std::string& path);
/// The same for a folder an option names (`--calibration DIR`): it must be a folder, and every
/// entry below it a regular file or a folder (`what` names the option in the message).
void require_input_folder(const std::string& path, const std::string& what);

}  // namespace starwave::safety
