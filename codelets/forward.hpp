// codelets/forward.hpp — the `forward` task of DESIGN §3: one shot's propagation.
#pragma once

#include <starpu.h>

#include "kernels/shot.hpp"

namespace starwave {

/// The handles of one forward task. `medium`: v²Δt² grid and CPML coefficients (R);
/// `nodes`: int64 [source index, receiver indices…] (R); `source`: nsteps samples (R);
/// `traces`: nrec × nt (W); `work`: wavefield scratch of layout.work_size() values
/// (SCRATCH, one per worker).
struct ForwardHandles {
  starpu_data_handle_t medium, nodes, source, traces, work;
};

/// Submits forward(s) with the grid/time layout of the run (pointers are ignored).
template <typename T>
void insert_forward(const ForwardHandles& h, const ShotProblem<T>& layout, int order);

}  // namespace starwave
