// graph/resting.hpp — StarPU's workers rest while no task graph runs. StarPU 1.3's drivers
// poll for tasks in a tight loop, so an idle worker keeps a core busy; paused
// (starpu_pause), they sleep. The Runtime puts them to rest as StarPU starts; everything
// that needs them — a submission, a wait, a read of a result, a transfer — wakes them first
// (wake()), and each workflow puts them back to rest when its graph is done (Resting), so
// reading inputs, writing results, drawing pictures and the optimiser's step on the calling
// thread leave the cores to other work (docs/design.md §3).
#pragma once

namespace starwave::graph {

/// Resumes the workers if they rest; cheap when they are awake.
void wake();
/// Waits for the tasks submitted and pauses the workers, if they are awake and this is the
/// only rank. Called from the submitting thread only.
void rest();
/// StarPU has started (its workers rest) or is about to stop (they must run to stop).
void started();
void stopping();

/// Wakes the workers for a workflow's graph and rests them when it is done.
class Resting {
 public:
  Resting() { wake(); }
  ~Resting() { rest(); }
  Resting(const Resting&) = delete;
  Resting& operator=(const Resting&) = delete;
};

}  // namespace starwave::graph
