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

}  // namespace starwave::safety
