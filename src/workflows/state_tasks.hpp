// src/workflows/state_tasks.hpp — the buffers of a data_vjp() through states (internal to
// src/workflows/gradient.cpp; GradientHooks::states): each shot's initial state and the
// backward sweep's start, converted from the caller's dense arrays as the shot is submitted,
// and its sweep's end and source gradient, converted back once its tasks are done
// (kernels/shot_state.hpp; the time axis folded back onto the wavelet's samples); and the
// source gradients alone (GradientHooks::source_gradient, any ranks).
#pragma once

#include <utility>
#include <vector>

#include "codelets/adjoint.hpp"
#include "codelets/failure.hpp"
#include "codelets/forward.hpp"
#include "graph/data.hpp"
#include "kernels/shot_state.hpp"
#include "src/workflows/modeling.hpp"
#include "src/workflows/shot_run.hpp"

namespace starwave {

/// A wavelet's cotangent (nt samples, into `out`) from an adjoint's source samples (one an inner
/// step, Σ_j w_j μ[m+1]): δ_h times the transpose of the wavelet's resampling onto the inner steps.
template <typename T>
void wavelet_cotangent(const Model& m, const T* steps, std::size_t nsteps, int k, int nt, double* out) {
  const double delta_h = m.three_d() ? 1.0 / (m.dz * m.dy * m.dx) : 1.0 / (m.dz * m.dx);
  const std::vector<double> samples = upsample_transpose(std::vector<double>(steps, steps + nsteps), k, nt);
  for (int j = 0; j < nt; ++j) out[j] = delta_h * samples[std::size_t(j)];
}

/// One shot's state buffers; empty (null handles) for a run without states.
struct StateShot {
  int shot = -1;
  graph::Data initial, start, end, source;
  /// The forward's and the adjoint's handles with these buffers.
  ForwardHandles forward(ForwardHandles h) const {
    h.initial_state = initial;
    return h;
  }
  AdjointHandles adjoint(AdjointHandles h) const {
    h.initial_state = initial;
    h.adjoint_start = start;
    h.adjoint_end = end;
    h.source_gradient = source;
    return h;
  }
};

template <typename T>
class StateTasks {
 public:
  StateTasks(const ShotRun<T>& run, const Model& m, const Survey& s, StateGradients& g)
      : m_(m),
        g_(g),
        layout_(run.layout),
        k_(run.time.k),
        nt_(int(s.nt)),
        end_(std::size_t(s.nshots())),
        source_(std::size_t(s.nshots())) {
    run.medium.attach(layout_, run.medium.buffer.data());  // vdt2 and the CPML coefficients, for the conversions
    const std::size_t n = std::size_t(s.nshots());
    if ((!g.initial.empty() && g.initial.size() != n * g.per_shot) ||
        (!g.end_cotangent.empty() && g.end_cotangent.size() != n * g.per_shot))
      throw InputError("the states hold another number of values than the shots' (" + std::to_string(n * g.per_shot) +
                       ")");
    g.initial_cotangent.assign(n * g.per_shot, 0.0);
    g.wavelet_gradient.assign(n * std::size_t(nt_), 0.0);
  }

  /// Shot `shot`'s buffers, on its rank `owner`.
  StateShot submit(int shot, int owner) {
    const std::size_t at = std::size_t(shot) * g_.per_shot, size = layout_.checkpoint_size();
    std::vector<T> initial(size, T(0)), start(size, T(0));
    if (!g_.initial.empty()) state::from_dense(layout_, g_.initial.data() + at, initial.data());
    if (!g_.end_cotangent.empty()) state::adjoint_start_from(layout_, g_.end_cotangent.data() + at, start.data());
    end_[std::size_t(shot)].assign(size, T(0));
    source_[std::size_t(shot)].assign(std::size_t(layout_.nsteps), T(0));
    StateShot h;
    h.shot = shot;
    h.initial = graph::input_vector(owner, initial.data(), size, sizeof(T));
    h.start = graph::input_vector(owner, start.data(), size, sizeof(T));
    h.end = graph::owned_vector(owner, end_[std::size_t(shot)].data(), size, sizeof(T));
    h.source = graph::owned_vector(owner, source_[std::size_t(shot)].data(), std::size_t(layout_.nsteps), sizeof(T));
    return h;
  }

  /// Each shot's outputs, home once its tasks are done, into the caller's arrays: the initial
  /// state's cotangent, and the wavelet's (δ_h times the transpose of its resampling onto the
  /// internal steps: ShotInputs' source samples).
  void hand_on(std::vector<StateShot>& shots) {
    for (StateShot& h : shots) {
      for (graph::Data* d : {&h.initial, &h.start, &h.end, &h.source}) d->close();
      const std::size_t shot = std::size_t(h.shot);
      state::initial_cotangent_from(layout_, end_[shot].data(), g_.initial_cotangent.data() + shot * g_.per_shot);
      wavelet_cotangent(m_, source_[shot].data(), source_[shot].size(), k_, nt_,
                        g_.wavelet_gradient.data() + shot * std::size_t(nt_));
      std::vector<T>().swap(end_[shot]);
      std::vector<T>().swap(source_[shot]);
    }
  }

 private:
  const Model& m_;
  StateGradients& g_;
  ShotProblem<T> layout_;  // the medium attached
  int k_, nt_;
  std::vector<std::vector<T>> end_, source_;  // each shot's, until handed on
};

/// The wavelets' gradient of a gradient without states (GradientHooks::source_gradient): each
/// shot's adjoint samples its field at the source into a buffer of its rank, sent to rank 0,
/// which turns it into the wavelet's samples' gradient (as StateTasks::hand_on) once every task
/// is done.
template <typename T>
class SourceGradients {
 public:
  SourceGradients(const ShotRun<T>& run, const Model& m, const Survey& s, std::vector<double>& out)
      : m_(m), out_(out), k_(run.time.k), nt_(int(s.nt)), nsteps_(std::size_t(run.layout.nsteps)) {
    out.assign(std::size_t(s.nshots()) * std::size_t(nt_), 0.0);
  }

  /// Shot `shot`'s buffer on its rank `owner`, for its adjoint task (then sent to rank 0).
  starpu_data_handle_t submit(int shot, int owner) {
    shots_.push_back({shot, graph::owned_vector(owner, nullptr, nsteps_, sizeof(T))});
    return shots_.back().data;
  }
  void sent() { graph::send_to(shots_.back().data, 0); }

  /// Every shot's gradient into the caller's array (rank 0; after the graph's tasks).
  void hand_on() {
    for (Shot& h : shots_) {
      if (graph::rank() == 0 && !codelets::failed()) {
        const graph::Reading r(h.data);
        wavelet_cotangent(m_, r.values<T>(), nsteps_, k_, nt_, out_.data() + std::size_t(h.shot) * std::size_t(nt_));
      }
      h.data.release();
    }
  }

 private:
  struct Shot {
    int shot;
    graph::Data data;
  };
  const Model& m_;
  std::vector<double>& out_;
  int k_, nt_;
  std::size_t nsteps_;
  std::vector<Shot> shots_;
};

}  // namespace starwave
