// codelets/adjoint.hpp — the `adjoint` task of docs/design.md §3: one shot's back-propagation with
// the re-created forward field, and its imaging correlations.
#pragma once

#include <vector>

#include <starpu.h>

#include "kernels/shot.hpp"

namespace starwave {

/// The handles of one adjoint task. `medium`, `nodes`, `signals` as for the forward (R);
/// `residual`: nrec × nt adjoint source samples (R); `store`, `final_state`: what the
/// shot's forward_keep wrote (R); `correlation`, `illumination`: the model region (W);
/// `work`: layout.adjoint_work_size() values (SCRATCH); with checkpoints
/// (layout.checkpoints_size() > 0), `checkpoints` (R) and the store's ring rewritten (RW).
struct AdjointHandles {
  starpu_data_handle_t medium, nodes, signals, residual, store, final_state, correlation, illumination, work;
  starpu_data_handle_t checkpoints = nullptr;
  starpu_data_handle_t next_store = nullptr;  // adjoint_interval: the store of the interval after it, prefetched
  // Through states (adjoint_state; kernels/shot.hpp): the shot's initial state (R), the sweep's
  // start (R), its end (W, checkpoint_size() values) and the source gradient (W, nsteps values).
  starpu_data_handle_t initial_state = nullptr, adjoint_start = nullptr, adjoint_end = nullptr,
                       source_gradient = nullptr;
};

template <typename T>
void insert_adjoint(const AdjointHandles& h, const ShotProblem<T>& layout, int order);

/// One shot of an adjoint batch (insert_adjoint_batch): as in AdjointHandles.
struct BatchAdjointHandles {
  starpu_data_handle_t nodes, signals, residual, store, final_state, correlation, illumination;
};

/// Submits one adjoint task for the shots of a batch (docs/design.md §3, "Shot batches"):
/// shots of one layout whose forward batch kept whole stores (no checkpoints, not split, no
/// states or source gradient), `problems[b]` shot b's layout with its point counts; `work` a
/// scratch of problems[0].adjoint_batch_work_size(n) values. A CPU worker runs the shots one
/// after another, a CUDA worker each pass of a backward step in one launch for them all;
/// every shot's correlation and illumination (W) are those its own adjoint task computes.
template <typename T>
void insert_adjoint_batch(starpu_data_handle_t medium, starpu_data_handle_t work,
                          const std::vector<BatchAdjointHandles>& shots, const std::vector<ShotProblem<T>>& problems,
                          int order);

/// Submits adjoint interval j of a shot with a split store (layout.split_store): steps
/// interval_end(j) − 1 … interval_begin(j) backwards from the state in `work` (the shot's own
/// adjoint work: W for the last interval, which starts from `final_state` (R), then RW),
/// reading interval j's `store` (R), adding to `correlation` and `illumination` (W, then
/// RW). A shot's intervals are submitted last first; `where` as for insert_forward_interval;
/// `next_store` (interval j − 1's, or null): a CPU worker asks StarPU to bring it to main
/// memory as the task starts.
template <typename T>
void insert_adjoint_interval(const AdjointHandles& h, const ShotProblem<T>& layout, int j, int order, unsigned where);

}  // namespace starwave
