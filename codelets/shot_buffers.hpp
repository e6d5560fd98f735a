// codelets/shot_buffers.hpp — what a propagation task keeps beyond its shot's traces (Keeps),
// and where each of its buffers sits among the task's buffers (ShotBuffers): one function
// per task kind, read by the side that submits the task (insert_forward*, insert_adjoint*)
// and by the codelet that unpacks it, so the two cannot disagree.
#pragma once

#include <starpu.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace starwave::codelets {

/// What a forward or adjoint task works with besides the shot's inputs.
enum class Keeps : int {
  kTraces = 0,      // a forward that keeps its traces alone (modelling)
  kStore = 1,       // the shot's whole store and final state (forward_keep, forward_checkpoints, adjoint,
                    // adjoint_checkpoints), with its checkpoints where it has some
  kInterval = 2,    // one interval of a split store (forward_interval, adjoint_interval; layout.store_interval)
  kState = 3,       // a forward from a given state that hands on its last one (forward_state: Python's wavefields)
  kStoreState = 4,  // kStore from a given state, and an adjoint through states (forward_keep_state, adjoint_state)
  kStoreSource =
      5,  // an adjoint of kStore's that also samples its field at the source (adjoint_source: the wavelet's gradient)
};

/// Positions of a propagation task's buffers; −1: not among them.
struct ShotBuffers {
  int medium = 0, nodes = 1, signals = 2;
  int traces = 3;  // the forward's traces, the adjoint's residual
  int work = -1, store = -1, final_state = -1, checkpoints = -1, correlation = -1, illumination = -1;
  int initial_state = -1, end_state = -1, adjoint_start = -1, adjoint_end = -1, source_gradient = -1;
  int count = 0;
};

/// A forward task's buffers: medium, nodes, signals, traces, work; keeping the store, then
/// the store, the final state and (`checkpoints`) the checkpoints; an interval, then its
/// store and, for the interval that ends the shot (`last`), the final state; from a state,
/// then the initial state and the end state.
inline ShotBuffers forward_buffers(Keeps keeps, bool checkpoints, bool last) {
  ShotBuffers b;
  b.work = 4;
  b.count = 5;
  if (keeps == Keeps::kTraces) return b;
  if (keeps == Keeps::kState) {
    b.initial_state = b.count++;
    b.end_state = b.count++;
    return b;
  }
  const bool whole = keeps == Keeps::kStore || keeps == Keeps::kStoreState;
  b.store = b.count++;
  if (whole || last) b.final_state = b.count++;
  if (whole && checkpoints) b.checkpoints = b.count++;
  if (keeps == Keeps::kStoreState) b.initial_state = b.count++;
  return b;
}

/// An adjoint task's buffers: medium, nodes, signals, residual, store; for the whole store
/// then its final state, correlation, illumination, work and (`checkpoints`) the
/// checkpoints, then through states the initial state, the sweep's start and end, and (through
/// states or kStoreSource) the source gradient; for an interval, its work, correlation, illumination and, for the
/// interval the backward sweep starts with (`first`), the final state.
inline ShotBuffers adjoint_buffers(Keeps keeps, bool checkpoints, bool first, bool source = false) {
  ShotBuffers b;
  b.store = 4;
  if (keeps == Keeps::kInterval) {
    b.work = 5;
    b.correlation = 6;
    b.illumination = 7;
    b.count = 8;
    if (first) b.final_state = b.count++;
    if (source) b.source_gradient = b.count++;  // each interval writes its steps' samples
    return b;
  }
  b.final_state = 5;
  b.correlation = 6;
  b.illumination = 7;
  b.work = 8;
  b.count = 9;
  if (checkpoints) b.checkpoints = b.count++;
  if (keeps == Keeps::kStoreState) {  // then the states' buffers (kernels/shot.hpp)
    b.initial_state = b.count++;
    b.adjoint_start = b.count++;
    b.adjoint_end = b.count++;
  }
  if (keeps == Keeps::kStoreState || keeps == Keeps::kStoreSource) b.source_gradient = b.count++;
  return b;
}

/// One part of a task's buffers: its handle and access mode.
struct Part {
  starpu_data_handle_t handle = nullptr;
  enum starpu_data_access_mode mode = STARPU_R;
};

/// The parts of a propagation task, by name (those `b` does not place are ignored).
struct ShotParts {
  Part medium, nodes, signals, traces, work, store, final_state, checkpoints, correlation, illumination;
  Part initial_state, end_state, adjoint_start, adjoint_end, source_gradient;
};

namespace detail {
/// The parts that `b` places, in its order; every position filled once (else
/// std::logic_error: a layout and its parts disagree), with a handle where `handles`.
inline std::vector<struct starpu_data_descr> arrange(const ShotBuffers& b, const ShotParts& p, bool handles) {
  std::vector<struct starpu_data_descr> data(std::size_t(b.count), starpu_data_descr{nullptr, STARPU_R});
  std::vector<bool> filled(data.size(), false);
  const auto place = [&](int at, const Part& part) {
    if (at < 0) return;
    if (at >= b.count || filled[std::size_t(at)] || (handles && part.handle == nullptr))
      throw std::logic_error("a propagation task's buffer " + std::to_string(at) + " placed twice or without data");
    data[std::size_t(at)] = {part.handle, part.mode};
    filled[std::size_t(at)] = true;
  };
  place(b.medium, p.medium);
  place(b.nodes, p.nodes);
  place(b.signals, p.signals);
  place(b.traces, p.traces);
  place(b.work, p.work);
  place(b.store, p.store);
  place(b.final_state, p.final_state);
  place(b.checkpoints, p.checkpoints);
  place(b.correlation, p.correlation);
  place(b.illumination, p.illumination);
  place(b.initial_state, p.initial_state);
  place(b.end_state, p.end_state);
  place(b.adjoint_start, p.adjoint_start);
  place(b.adjoint_end, p.adjoint_end);
  place(b.source_gradient, p.source_gradient);
  for (const bool f : filled)
    if (!f) throw std::logic_error("a propagation task's buffers leave a position empty");
  return data;
}
}  // namespace detail

/// A task's buffers and their modes, in the order `b` gives.
inline std::vector<struct starpu_data_descr> in_order(const ShotBuffers& b, const ShotParts& p) {
  return detail::arrange(b, p, true);
}

/// A task's handles alone, in the order `b` gives (for a codelet that declares its modes).
inline std::vector<starpu_data_handle_t> handles_in_order(const ShotBuffers& b, const ShotParts& p) {
  std::vector<starpu_data_handle_t> h;
  for (const auto& d : detail::arrange(b, p, true)) h.push_back(d.handle);
  return h;
}

/// Declares a codelet's buffers (nbuffers, modes) as the parts' modes in the order `b` gives.
inline void declare_buffers(struct starpu_codelet& cl, const ShotBuffers& b, const ShotParts& modes) {
  const auto data = detail::arrange(b, modes, false);
  cl.nbuffers = int(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) cl.modes[i] = data[i].mode;
}

}  // namespace starwave::codelets
