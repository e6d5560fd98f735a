// src/workflows/modeling.cpp — the modeling algorithm: one forward task per shot, submitted
// through insert_forward() with a bounded window of shots in flight, each shot's traces
// handed on (to the output file) as its task finishes: memory is bounded by the window,
// not by the number of shots.
#include "src/workflows/modeling.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "codelets/born.hpp"
#include "codelets/failure.hpp"
#include "codelets/forward.hpp"
#include "graph/clock.hpp"
#include "graph/data.hpp"
#include "graph/resting.hpp"
#include "graph/shots.hpp"
#include "graph/window.hpp"
#include "kernels/shot_state.hpp"
#include "src/base/error.hpp"
#include "src/runtime/mpi.hpp"
#include "src/workflows/shot_run.hpp"

namespace starwave {
namespace {

/// Receives one shot's traces in the run's precision as doubles (nrec × nt).
using ExactSink = std::function<void(int shot, const double* traces)>;

/// Where each shot's traces go (rank 0), and the run's report; with `states`, where the shots'
/// states start (`states->initial`, or from rest) and end (`states->end`).
struct Outputs {
  const ShotSink& sink;
  const ExactSink& exact_sink;
  ModelingReport* report;
  const std::function<void(int, int)>& on_shot_done;
  ShotStates* states = nullptr;
};

/// One modeling graph: per shot a forward task, d = F(v), or with a perturbation δv a born
/// task, d = J δv (the background and scattered fields together, kernels/cpu/born.hpp);
/// a bounded window of shots in flight, each shot's traces handed on in order.
template <typename T>
class Modeling {
 public:
  Modeling(const Model& m, const Survey& s, const NumericalOptions& o, const std::vector<double>* dv)
      : m_(m), s_(s), o_(o), dv_(dv), run_(set_up_shots<T>(m, s, o)) {}

  void run(const Outputs& out) {
    const graph::Resting resting;  // the workers run this graph, and rest once it is done
    const ShotProblem<T>& layout = run_.layout;
    const int nshots = s_.nshots();
    states_ = out.states;
    batch_ = choose_batch();
    const int window = plan_window();
    // No batch larger than the window of shots; rank 0's on every rank (they register their
    // handles in one order, graph/data.hpp).
    batch_ = std::min(batch_, window);
    if (graph::distributed()) batch_ = mpi::from_rank0(batch_);
    graph::take_shots_on(true, true);  // a modeled shot keeps no store: small on any worker
    graph::Data medium = graph::per_rank_vector(run_.medium.buffer.data(), run_.medium.buffer.size(), sizeof(T));
    std::vector<T> scatter = dv_ ? born_scatter(layout, m_, *dv_, o_.perturb_layers) : std::vector<T>{};
    graph::Data scatter_data;
    if (dv_) scatter_data = graph::per_rank_vector(scatter.data(), scatter.size(), sizeof(T));
    graph::Data work = graph::scratch_vector(work_size(), sizeof(T));
    if (states_) end_states_.assign(std::size_t(nshots), {});
    Handing hand(*this, out);
    graph::InOrder<InFlight> in_flight(window, [&](InFlight& f) { hand.on(f); });
    // d ← F(m) (or J δv), shot by shot: each rank's first shot, then each rank's second … (rank
    // 0 hands the traces on in this order; in shot order it would wait on its own block first).
    bool stopped = false;
    int submitted = 0;
    if (batch_ > 1) {
      for (const std::vector<int>& batch : graph::interleaved_batches(nshots, batch_)) {
        if (submitted++ > 0 && (stopped = interrupted())) break;
        for (InFlight& f : submit_batch(batch, medium, work)) in_flight.add(std::move(f));
      }
    } else {
      for (const int shot : graph::interleaved_shots(nshots)) {
        if (submitted++ > 0 && (stopped = interrupted())) break;
        in_flight.add(submit(shot, medium, scatter_data, work));
      }
    }
    in_flight.drain();
    for (graph::Data* h : {&medium, &scatter_data, &work})
      if (*h) h->close();
    if (const std::string failure = codelets::take_failure(); !failure.empty()) throw TaskError(failure);
    if (stopped) throw interruption();
    if (out.report) {
      out.report->time = run_.time;
      out.report->seconds = run_.seconds();
      out.report->cell_updates = run_.cell_updates(nshots, dv_ ? 2 : 1);
    }
  }

 private:
  struct InFlight {
    int shot;
    graph::Data traces;
    graph::Data end;  // its end state (a run from states)
  };

  /// Rank 0's hand-on of a shot's traces, in float32 and (when asked) in the run's precision.
  struct Handing {
    Handing(const Modeling& workflow, const Outputs& o)
        : w(workflow),
          out(o),
          per_shot(std::size_t(workflow.run_.layout.nrec) * std::size_t(workflow.s_.nt)),
          traces(per_shot),
          exact(o.exact_sink ? per_shot : 0) {}
    void on(InFlight& f) {
      if (graph::rank() == 0) {
        const graph::Reading r(f.traces);
        for (std::size_t i = 0; i < per_shot; ++i) traces[i] = graph::kSimulated ? 0.0f : float(r.values<T>()[i]);
        for (std::size_t i = 0; i < exact.size(); ++i) exact[i] = graph::kSimulated ? 0.0 : double(r.values<T>()[i]);
        // Receivers past the shot's count are padding: their traces are written as zeros.
        const long used = long(std::size_t(w.s_.count(f.shot)) * std::size_t(w.s_.nt));
        std::fill(traces.begin() + used, traces.end(), 0.0f);
        if (!exact.empty()) std::fill(exact.begin() + used, exact.end(), 0.0);
      }
      f.traces.close();  // on the shot's rank: waits for its task (and the send)
      if (f.end) {
        f.end.close();  // its values are home
        if (!codelets::failed()) w.hand_on_state(f.shot);
      }
      if (graph::rank() == 0 && !codelets::failed()) {  // a failed task's traces are never handed on
        if (out.sink) out.sink(f.shot, traces.data());
        if (out.exact_sink) out.exact_sink(f.shot, exact.data());
        if (out.on_shot_done) out.on_shot_done(++done, w.s_.nshots());
      }
    }
    const Modeling& w;
    const Outputs& out;
    const std::size_t per_shot;
    std::vector<float> traces;
    std::vector<double> exact;
    int done = 0;
  };

  /// A worker's scratch: a forward's work arrays, a batch's, or a born task's (two fields and a grid).
  std::size_t work_size() const {
    if (dv_) return born_work_size(run_.layout);
    return batch_ > 1 ? run_.layout.batch_work_size(batch_) : run_.layout.work_size();
  }

  /// The shots a forward task runs together (shot_batch, docs/design.md §3): forwards that
  /// keep their traces alone; one a task for J, for runs from states and simulated unless asked. No more than the
  /// largest rank's block of shots, and a scratch a StarPU vector holds (< 2^32 values).
  int choose_batch() const {
    const int asked = shot_batch_asked();
    if (dv_ || states_) return 1;
    if (graph::kSimulated && asked == 0) return 1;  // a calibration (bench/calibration) times one shot a task
    const int block = (s_.nshots() + graph::size() - 1) / graph::size();
    const std::vector<GpuRoom> gpus = gpu_rooms();
    int batch = shot_batch(block, graph::workers(), graph::cuda_workers(), most_workers_on_a_gpu(gpus),
                           sizeof(T) * run_.layout.batch_stride(),
                           batch_worker_room(room_for_buffers(), graph::workers(), gpus), asked);
    batch = std::max(1, std::min(batch, block));
    while (batch > 1 && run_.layout.batch_work_size(batch) > std::size_t(UINT32_MAX)) --batch;
    return batch;
  }

  /// Shots in flight: 2 × workers per rank, fewer if memory is short.
  int plan_window() const {
    const ShotProblem<T>& layout = run_.layout;
    const std::size_t per_shot = std::size_t(layout.nrec) * std::size_t(s_.nt);
    MemoryNeed need;
    need.per_shot =
        sizeof(T) * (per_shot + std::uint64_t(run_.time.nsteps)) + points_bytes<T>(layout, most_point_nodes(m_, s_));
    need.per_worker = sizeof(T) * work_size();
    need.shared = sizeof(T) * (run_.medium.buffer.size() + (dv_ ? layout.grid_size() : 0)) + sizeof(float) * per_shot;
    // Two tasks a worker in flight: with batches, two batches' shots.
    return shots_in_window(need, std::max(2, 2 * graph::workers() * graph::size()) * batch_,
                           "a smaller model, a shorter record, or fewer workers with STARPU_NCPU");
  }

  /// Shot `shot`'s data and task: its traces handle, sent to rank 0, and its end state's.
  InFlight submit(int shot, graph::Data& medium, graph::Data& scatter, graph::Data& work) {
    const int owner = graph::owner(shot, s_.nshots());
    const typename ShotRun<T>::Shot x = run_.shot(m_, s_, shot);
    graph::ShotReads<T> reads;
    if (owner == graph::rank()) reads = {x.inputs.nodes.data(), x.inputs.signals.data()};
    graph::ForwardShot d = graph::forward_shot<T>(owner, x.problem, reads);
    InFlight f{shot, {}, {}};
    if (dv_) {
      insert_born<T>({medium, scatter, d.nodes, d.signals, d.traces, work}, x.problem, o_.order);
    } else if (states_) {
      const ShotProblem<T>& l = run_.layout;
      std::vector<T> initial(l.checkpoint_size());
      if (!states_->initial.empty())
        state::from_dense(l, states_->initial.data() + std::size_t(shot) * states_->per_shot, initial.data());
      else
        std::fill(initial.begin(), initial.end(), T(0));
      graph::Data start = graph::input_vector(owner, initial.data(), initial.size(), sizeof(T));
      std::vector<T>& end = end_states_[std::size_t(shot)];
      end.resize(l.checkpoint_size());
      f.end = graph::owned_vector(owner, end.data(), end.size(), sizeof(T));
      ForwardHandles h{medium, d.nodes, d.signals, d.traces, work};
      h.initial_state = start;
      h.end_state = f.end;
      insert_forward<T>(h, x.problem, o_.order);
    } else {
      insert_forward<T>({medium, d.nodes, d.signals, d.traces, work}, x.problem, o_.order);
    }
    graph::send_to(d.traces, 0);
    f.traces = std::move(d.traces);
    return f;
  }

  /// A batch's shots (consecutive shots of one rank) and their one forward task.
  std::vector<InFlight> submit_batch(const std::vector<int>& shots, graph::Data& medium, graph::Data& work) {
    std::vector<graph::ForwardShot> data;
    std::vector<BatchShotHandles> handles;
    std::vector<ShotProblem<T>> layouts;
    for (const int shot : shots) {
      const int owner = graph::owner(shot, s_.nshots());
      const typename ShotRun<T>::Shot x = run_.shot(m_, s_, shot);
      graph::ShotReads<T> reads;
      if (owner == graph::rank()) reads = {x.inputs.nodes.data(), x.inputs.signals.data()};
      data.push_back(graph::forward_shot<T>(owner, x.problem, reads));
      handles.push_back({data.back().nodes, data.back().signals, data.back().traces});
      layouts.push_back(x.problem);
    }
    insert_forward_batch<T>(medium, work, handles, layouts, o_.order);
    std::vector<InFlight> flights;
    for (std::size_t b = 0; b < shots.size(); ++b) {
      graph::send_to(data[b].traces, 0);
      flights.push_back(InFlight{shots[b], std::move(data[b].traces), {}});
    }
    return flights;
  }

  /// Shot `shot`'s end state, home, into states_->end as dense arrays.
  void hand_on_state(int shot) const {
    std::vector<T>& end = end_states_[std::size_t(shot)];
    state::to_dense(run_.layout, end.data(), states_->end.data() + std::size_t(shot) * states_->per_shot);
    std::vector<T>().swap(end);
  }

  const Model& m_;
  const Survey& s_;
  const NumericalOptions& o_;
  const std::vector<double>* dv_;
  const ShotRun<T> run_;
  ShotStates* states_ = nullptr;
  int batch_ = 1;                                   // shots a forward task runs together
  mutable std::vector<std::vector<T>> end_states_;  // each shot's end state until it is handed on
};

template <typename T>
void run(const Model& m, const Survey& s, const NumericalOptions& o, const Outputs& out,
         const std::vector<double>* dv = nullptr) {
  Modeling<T>(m, s, o, dv).run(out);
}

}  // namespace

void check_modeling_inputs(const Model& m, const Survey& s, const NumericalOptions& o) {
  o.validate();
  choose_time_step(m, s, o);                             // refuses an unstable or non-dividing --internal-dt
  const Medium<float> med = medium_layout<float>(m, o);  // only the layout is needed to check positions
  for (int shot = 0; shot < s.nshots(); ++shot) {
    point_nodes(med, m, s.sources[std::size_t(shot)], "source " + std::to_string(shot));
    const auto& rec = s.receivers_of(shot);
    for (std::size_t r = 0; r < std::size_t(s.count(shot)); ++r)  // past the count: padding, never placed
      point_nodes(med, m, rec[r], "receiver " + std::to_string(r) + " of shot " + std::to_string(shot));
  }
}

void model_each_shot(const Model& m, const Survey& s, const NumericalOptions& o, const ShotSink& sink,
                     ModelingReport* report, const std::function<void(int, int)>& on_shot_done) {
  check_modeling_inputs(m, s, o);
  const ExactSink none;
  with_precision(o.precision, [&](auto t) { run<decltype(t)>(m, s, o, Outputs{sink, none, report, on_shot_done}); });
}

std::vector<float> model_shots(const Model& m, const Survey& s, const NumericalOptions& o, ModelingReport* report,
                               const std::function<void(int, int)>& on_shot_done) {
  const std::size_t per_shot = std::size_t(s.nrec()) * std::size_t(s.nt);
  std::vector<float> data(std::size_t(s.nshots()) * per_shot);
  model_each_shot(
      m, s, o,
      [&](int shot, const float* traces) {
        std::copy(traces, traces + per_shot, data.begin() + long(shot * per_shot));
      },
      report, on_shot_done);
  return data;
}

namespace {

/// Every shot's traces in the run's precision, as doubles (nshots, nrec, nt): F(v), or with
/// `dv` the Born data J δv; with `states`, F(v) from and to the shots' states, by this process
/// alone (its states are in its memory).
std::vector<double> exact_traces(const Model& m, const Survey& s, const NumericalOptions& o,
                                 const std::vector<double>* dv, ShotStates* states = nullptr) {
  const std::size_t per_shot = std::size_t(s.nrec()) * std::size_t(s.nt);
  std::vector<double> data(std::size_t(s.nshots()) * per_shot);
  const ExactSink keep = [&](int shot, const double* traces) {
    std::copy(traces, traces + per_shot, data.begin() + long(std::size_t(shot) * per_shot));
  };
  const ShotSink no_sink;
  const std::function<void(int, int)> no_progress;
  with_precision(o.precision, [&](auto t) {
    std::optional<graph::LocalScope> alone;
    if (states) alone.emplace();
    run<decltype(t)>(m, s, o, Outputs{no_sink, keep, nullptr, no_progress, states}, dv);
  });
  return data;
}

}  // namespace

void check_perturbation(const Model& m, const std::vector<double>& dv, const std::string& named, bool bounded) {
  if (dv.size() != m.cells())
    throw InputError(named + ": " + std::to_string(dv.size()) + " values, the model " + std::to_string(m.cells()) +
                     " cells");
  const double vmax = bounded ? m.vmax() : 0, bound = bounded ? kPerturbationBound * vmax : HUGE_VAL;  // no scan else
  for (const double v : dv) {
    if (!std::isfinite(v)) throw InputError(named + ": holds a value that is not finite");
    if (std::abs(v) > bound)
      throw InputError(named + ": a perturbation of " + number_text(v) + " m/s, beyond " +
                       number_text(kPerturbationBound) + " × the model's largest velocity (" + number_text(vmax) +
                       " m/s): J δv is the data's change to first order in δv, for δv small against v (larger "
                       "ones overflow the scattered field)");
  }
}

std::vector<double> model_shots_exact(const Model& m, const Survey& s, const NumericalOptions& o) {
  check_modeling_inputs(m, s, o);
  return exact_traces(m, s, o, nullptr);
}

void born_each_shot(const Model& m, const std::vector<double>& dv, const Survey& s, const NumericalOptions& o,
                    const ShotSink& sink, ModelingReport* report, const std::function<void(int, int)>& on_shot_done) {
  check_modeling_inputs(m, s, o);
  check_perturbation(m, dv, "the perturbation", false);  // any scale here: the command line bounds its file's
  const ExactSink none;
  with_precision(o.precision, [&](auto t) {
    run<decltype(t)>(m, s, o, Outputs{sink, none, report, on_shot_done}, &dv);
  });
}

std::vector<double> born_shots_exact(const Model& m, const std::vector<double>& dv, const Survey& s,
                                     const NumericalOptions& o) {
  check_modeling_inputs(m, s, o);
  check_perturbation(m, dv, "the perturbation", false);  // any scale here: the command line bounds its file's
  return exact_traces(m, s, o, &dv);
}

ShotStates shot_states(const Model& m, const Survey& s, const NumericalOptions& o) {
  const Medium<float> med = medium_layout<float>(m, o);
  ShotStates st;
  st.components = state::components(med.layout);
  st.shape = {med.layout.nz, med.layout.ny, med.layout.nx};
  st.per_shot = std::size_t(st.components) * state::cells(med.layout);
  st.end.assign(std::size_t(s.nshots()) * st.per_shot, 0.0);
  return st;
}

std::vector<double> model_shots_with_states(const Model& m, const Survey& s, const NumericalOptions& o,
                                            ShotStates& states) {
  check_modeling_inputs(m, s, o);
  if (!states.initial.empty() && states.initial.size() != std::size_t(s.nshots()) * states.per_shot)
    throw InputError("the initial states hold " + std::to_string(states.initial.size()) + " values, not " +
                     std::to_string(std::size_t(s.nshots()) * states.per_shot) + " (every shot's)");
  for (double v : states.initial)
    if (!std::isfinite(v)) throw InputError("the initial states hold a value that is not finite");
  return exact_traces(m, s, o, nullptr, &states);
}

std::vector<float> model_shots_alone(const Model& m, const Survey& s, const NumericalOptions& o) {
  const graph::LocalScope alone;
  return model_shots(m, s, o, nullptr);
}

}  // namespace starwave
