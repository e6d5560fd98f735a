// graph/shots.hpp — one shot's data in a task graph (docs/design.md §3), as types that register,
// own and hand back its handles (graph/data.hpp): registered on every rank in
// the same order, owned by the shot's rank, which alone is given what the shot reads
// (the other ranks pass nulls and register placeholders). Whatever a workflow does not
// move out is handed back when the shot goes out of scope, after its last task.
#pragma once

#include <cstddef>
#include <vector>

#include "graph/data.hpp"
#include "kernels/shot.hpp"

namespace starwave::graph {

/// What one shot reads, on the shot's rank (copied into the handles; nulls elsewhere).
template <typename T>
struct ShotReads {
  const long* nodes = nullptr;      // ShotProblem<T>::nodes_size() indices (kernels/shot.hpp)
  const T* signals = nullptr;       // signals_size(): the source term's nsteps samples, the points' weights
  const float* observed = nullptr;  // nrec × nt observed traces (gradient and RTM only)
  const float* weights = nullptr;   // nrec trace weights (gradient and RTM only), then the windows'
  bool windowed = false;            // nrec × 3 values (every rank: the handle's size)
  bool split_observed = false;      // `observed` holds 2 × nrec × nt floats: the samples, then their remainders
                                    // (a float64 cotangent; every rank: the handle's size)
};

/// The data of a shot's forward task: what `model` computes.
struct ForwardShot {
  Data nodes, signals, traces;
};

/// The data of a shot's forward → misfit → adjoint → image chain (gradient and RTM).
struct ImagingShot {
  Data nodes, signals, observed, weights;                                // read-only inputs
  Data traces, residual, store, final_state, correlation, illumination;  // made and used in the shot
  Data misfit;        // ½‖d_syn − d_obs‖², home in the caller's double on the shot's rank
  Data contribution;  // [gradient | illumination (ShotProblem::illumination_sums() arrays)] over the model
                      // region, for the reduction tree
  Data reference;     // RTM: the traces modeled in the reference model (registered when asked)
  Data checkpoints;   // the forward's states, with checkpoints (ShotProblem::checkpoint_every)
  // With a split store (ShotProblem::split_store; `store` then unregistered): a buffer per
  // interval, and the forward's and the adjoint's work arrays, the shot's own (its state
  // passes from one interval's task to the next).
  std::vector<Data> intervals;
  Data forward_work, adjoint_work;
};

/// `p` is the shot's layout (grid, nrec, nt, nsteps, storage), the same on every rank.
template <typename T>
ForwardShot forward_shot(int owner, const ShotProblem<T>& p, const ShotReads<T>& reads);
/// `reference`: also register the traces of a second forward (RTM's reference model).
template <typename T>
ImagingShot imaging_shot(int owner, const ShotProblem<T>& p, const ShotReads<T>& reads, double* misfit,
                         bool reference = false);

}  // namespace starwave::graph
