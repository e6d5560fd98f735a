// src/base/error.hpp — typed errors with a message a user can act on. `main` prints what() as
// one line on stderr and exits non-zero.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

namespace starwave {

/// Bad input from the user: a file, an option or a value. The message names it.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A failure of the runtime or a library underneath (StarPU, CUDA, HDF5, MPI).
struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A task failed on its worker (a CUDA launch refused, a device error): the message names
/// the task, the launch and the device's own words. Raised by the workflows once their task
/// graph has drained (codelets/failure.hpp).
struct TaskError : RuntimeError {
  using RuntimeError::RuntimeError;
};

/// The caller asked the run to stop (safety::request_interrupt: Ctrl-C in Python): no new shot
/// was started, the shots under way finished, their results dropped.
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A number as a person writes it in a message: 1e+10, 0.0007, 2990.
inline std::string number_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

/// `text` as one printable line: control characters escaped (\n, \r, \t, \xNN; the
/// C1 controls and U+2028/U+2029 as \uNNNN) and bytes that are not UTF-8 as \xNN, so a
/// file name holding a newline keeps a message on one line and cannot forge another.
std::string printable(const std::string& text);

/// The command a run does ("gradient"), for messages said outside main's own catch (a
/// device fault, a worker that cannot go on): error_prefix() is then "starwave gradient:
/// error: ", before set_command "starwave: error: ".
void set_command(const std::string& cmd);
std::string error_prefix();
/// "starwave CMD: note: ": what a run did for the user that they should know.
std::string note_prefix();

/// "1.5 GiB", "12 MiB", "640 B".
std::string bytes_text(double bytes);
/// Two sizes a message compares ("takes A, more than the B …"), each with the digits that
/// keep them apart: 36.2 MiB and 36 MiB, never 36 MiB and 36 MiB.
std::pair<std::string, std::string> bytes_text_apart(double a, double b);

/// The words of an OS error (errno) for a message, with a hint where one helps:
/// ENOSPC → "no space left on device (the disk is full)".
std::string os_cause(int err);

}  // namespace starwave
