// codelets/failure.hpp — how a task that cannot do its work fails without ending the
// process: a codelet runs on a StarPU worker thread, where an exception or an abort would
// take the whole job down with a stack trace. It records the first failure here (a CUDA
// launch refused, a device error, or a failure injected by a test), every later task of
// the run skips its work, and the workflow, once its graph has drained, rethrows it as a
// TaskError (src/base/error.hpp): one line on stderr, exit 1, no output file (docs/design.md §3).
#pragma once

#include <string>

namespace starwave::codelets {

/// Records `message` unless a failure is already recorded (the first one is the cause).
void record_failure(const std::string& message);

/// Whether task `task` (a codelet name: forward, adjoint, misfit, image, reduce)
/// must skip its work: a failure is recorded, or the environment variable
/// STARWAVE_TEST_FAIL_TASK names this task (the tests' way to make a task fail on a
/// machine without a GPU; the failure is then recorded as the task's).
bool must_skip(const char* task);

/// Whether a failure is recorded.
bool failed();

/// Whether STARWAVE_TEST_FAIL_TASK asks task `task`'s CUDA implementation to fault the
/// device ("forward-on-device": a write through a null pointer, the kind of fault that
/// leaves the GPU unusable), for the tests of that path on a machine with a GPU.
bool device_fault_requested(const char* task);

/// Held by every codelet while it runs: whether the workers are doing anything, for the
/// run that waits on an allocation StarPU keeps retrying (src/runtime/host_memory.hpp).
class Busy {
 public:
  Busy();
  ~Busy();
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;
};
/// Whether no codelet runs now, nor has ended in the last `seconds`.
bool idle_for(double seconds);

/// The recorded failure, and clears it; empty when every task succeeded.
std::string take_failure();

}  // namespace starwave::codelets
