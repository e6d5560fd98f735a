// codelets/forward.hpp — the `forward` task of docs/design.md §3: one shot's propagation.
#pragma once

#include <starpu.h>

#include <vector>

#include "kernels/shot.hpp"

namespace starwave {

/// The handles of one forward task. `medium`: v²Δt² grid and CPML coefficients (R);
/// `nodes`: int64, the source's and receivers' nodes (R); `signals`: the nsteps source
/// samples and the points' weights (R) (kernels/shot.hpp);
/// `traces`: nrec × nt (W); `work`: wavefield scratch of layout.work_size() values
/// (SCRATCH, one per worker). For a gradient or an image, also `store` (W, layout's
/// store_size() values, strategy in layout.storage) and `final_state` (W, 2 grids); null
/// for plain modeling; with checkpoints (layout.checkpoints_size() > 0), `checkpoints` (W).
/// With `initial_state` (R) and `end_state` (W), each layout.checkpoint_size() values: a forward
/// from that state that keeps its last (no store).
struct ForwardHandles {
  starpu_data_handle_t medium, nodes, signals, traces, work;
  starpu_data_handle_t store = nullptr, final_state = nullptr, checkpoints = nullptr;
  starpu_data_handle_t initial_state = nullptr, end_state = nullptr;
};

/// Submits forward(s) with the grid/time layout of the run (pointers are ignored).
template <typename T>
void insert_forward(const ForwardHandles& h, const ShotProblem<T>& layout, int order);

/// One shot of a batch (insert_forward_batch): its nodes and signals (R) and traces (W), as
/// in ForwardHandles; a gradient's shot, its store and final state (W).
struct BatchShotHandles {
  starpu_data_handle_t nodes, signals, traces;
  starpu_data_handle_t store = nullptr, final_state = nullptr;
};

/// Submits one forward task for the shots of a batch (docs/design.md §3, "Shot batches"):
/// shots of one layout that keep their traces, and all or none a whole store and a final
/// state (no checkpoints, not split), `problems[b]` shot b's layout with its
/// point counts (pointers ignored); `work` a scratch of problems[0].batch_work_size(n)
/// values. A CPU worker runs the shots one after another, a CUDA worker each pass of them
/// all in one launch; every shot's traces are those its own forward task computes.
template <typename T>
void insert_forward_batch(starpu_data_handle_t medium, starpu_data_handle_t work,
                          const std::vector<BatchShotHandles>& shots, const std::vector<ShotProblem<T>>& problems,
                          int order);

/// Submits forward interval j of a shot with a split store (layout.split_store): steps
/// [interval_begin(j), interval_end(j)) from the state in `work` (the shot's own, W for
/// j = 0, then RW), its samples into `traces` (W, then RW), interval j's slots into `store`
/// (W), after the last interval the final state (W). A shot's intervals are submitted in
/// order; `where` (STARPU_CPU or STARPU_CUDA; 0: any) keeps its tasks on one kind of worker.
template <typename T>
void insert_forward_interval(const ForwardHandles& h, const ShotProblem<T>& layout, int j, int order, unsigned where);

}  // namespace starwave
