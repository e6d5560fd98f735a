// codelets/born.hpp — the `born` task of docs/design.md §3: one shot's Born modelling J δv
// (kernels/cpu/born.hpp), the background and scattered fields stepped together.
#pragma once

#include <starpu.h>

#include "kernels/shot.hpp"

namespace starwave {

/// The handles of one born task. `medium` (R) and the shot's `nodes` and `signals` (R) as a
/// forward task's (codelets/forward.hpp); `scatter` (R): 2δv/v on the padded grid
/// (born_scatter, grid_size() values); `traces` (W): the Born traces, nrec × nt; `work`
/// (SCRATCH, one per worker): born_work_size() values. For J and Jᵀ in one graph, also
/// u's `store` (W), `final_state` (W) and, with checkpoints, `checkpoints` (W), as
/// forward_keep writes them (codelets/forward.hpp): the adjoint task reads them as it reads
/// a forward's.
struct BornHandles {
  starpu_data_handle_t medium, scatter, nodes, signals, traces, work;
  starpu_data_handle_t store = nullptr, final_state = nullptr, checkpoints = nullptr;
};

/// Values of a born task's scratch: the background's and the scattered field's work arrays,
/// and a row (cpu::born's scratch).
template <typename T>
std::size_t born_work_size(const ShotProblem<T>& layout) {
  return 2 * layout.work_size() + std::size_t(layout.stride);
}

/// Submits born(s) with the grid/time layout of the run (pointers are ignored); with
/// h.store, the born task that keeps u (born_keep, born_checkpoints). CPU workers run it
/// (a CUDA codelet is not built yet).
template <typename T>
void insert_born(const BornHandles& h, const ShotProblem<T>& layout, int order);

}  // namespace starwave
