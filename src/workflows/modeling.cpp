// src/workflows/modeling.cpp — the modeling algorithm: one forward task per shot, submitted
// through insert_forward() with a bounded window of shots in flight, each shot's traces
// handed on (to the output file) as its task finishes: memory is bounded by the window,
// not by the number of shots.
#include "src/workflows/modeling.hpp"

#include <algorithm>

#include "codelets/failure.hpp"
#include "codelets/forward.hpp"
#include "graph/clock.hpp"
#include "graph/data.hpp"
#include "graph/resting.hpp"
#include "graph/shots.hpp"
#include "graph/window.hpp"
#include "src/base/error.hpp"
#include "src/workflows/shot_run.hpp"

namespace starwave {
namespace {

/// Receives one shot's traces in the run's precision as doubles (nrec × nt).
using ExactSink = std::function<void(int shot, const double* traces)>;

template <typename T>
void run(const Model& m, const Survey& s, const NumericalOptions& o, const ShotSink& sink, const ExactSink& exact_sink,
         ModelingReport* report, const std::function<void(int, int)>& on_shot_done) {
  const graph::Resting resting;  // the workers run this graph, and rest once it is done
  const ShotRun<T> run = set_up_shots<T>(m, s, o);
  const ShotProblem<T>& layout = run.layout;
  const int nshots = s.nshots();
  const std::size_t per_shot = std::size_t(layout.nrec) * std::size_t(s.nt);
  std::vector<float> shot_traces(per_shot);
  std::vector<double> exact_traces(exact_sink ? per_shot : 0);

  // Shots in flight: 2 × workers per rank, fewer if memory is short.
  MemoryNeed need;
  need.per_shot =
      sizeof(T) * (per_shot + std::uint64_t(run.time.nsteps)) + points_bytes<T>(layout, most_point_nodes(m, s));
  need.per_worker = sizeof(T) * layout.work_size();
  need.shared = sizeof(T) * run.medium.buffer.size() + sizeof(float) * per_shot;
  const int window = shots_in_window(need, std::max(2, 2 * graph::workers() * graph::size()),
                                     "a smaller model, a shorter record, or fewer workers with STARPU_NCPU");
  graph::take_shots_on(true, true);  // a modeled shot keeps no store: small on any worker

  graph::Data medium = graph::per_rank_vector(run.medium.buffer.data(), run.medium.buffer.size(), sizeof(T));
  graph::Data work = graph::scratch_vector(layout.work_size(), sizeof(T));

  // Shots in flight, in submission order (the window above). Rank 0 receives every shot's
  // traces and hands them on in that order; the other ranks just compute their own.
  struct InFlight {
    int shot;
    graph::Data traces;
  };
  int done = 0;
  const auto hand_on = [&](InFlight& f) {
    if (graph::rank() == 0) {
      const graph::Reading r(f.traces);
      for (std::size_t i = 0; i < per_shot; ++i) shot_traces[i] = graph::kSimulated ? 0.0f : float(r.values<T>()[i]);
      for (std::size_t i = 0; i < exact_traces.size(); ++i)
        exact_traces[i] = graph::kSimulated ? 0.0 : double(r.values<T>()[i]);
      // Receivers past the shot's count are padding: their traces are written as zeros.
      const long used = long(std::size_t(s.count(f.shot)) * std::size_t(s.nt));
      std::fill(shot_traces.begin() + used, shot_traces.end(), 0.0f);
      if (exact_sink) std::fill(exact_traces.begin() + used, exact_traces.end(), 0.0);
    }
    f.traces.close();                                 // on the shot's rank: waits for its task (and the send)
    if (graph::rank() == 0 && !codelets::failed()) {  // a failed task's traces are never handed on
      if (sink) sink(f.shot, shot_traces.data());
      if (exact_sink) exact_sink(f.shot, exact_traces.data());
      if (on_shot_done) on_shot_done(++done, nshots);
    }
  };
  graph::InOrder<InFlight> in_flight(window, hand_on);

  // d ← F(m), shot by shot: each rank's first shot, then each rank's second … (rank 0 hands the
  // traces on in this order; in shot order it would wait on its own block before the others').
  bool stopped = false;
  int submitted = 0;
  for (const int shot : graph::interleaved_shots(nshots)) {
    if (submitted++ > 0 && (stopped = interrupted())) break;
    const int owner = graph::owner(shot, nshots);
    const typename ShotRun<T>::Shot x = run.shot(m, s, shot);
    graph::ShotReads<T> reads;
    if (owner == graph::rank()) reads = {x.inputs.nodes.data(), x.inputs.signals.data()};
    graph::ForwardShot d = graph::forward_shot<T>(owner, x.problem, reads);
    insert_forward<T>({medium, d.nodes, d.signals, d.traces, work}, x.problem, o.order);
    graph::send_to(d.traces, 0);
    in_flight.add({shot, std::move(d.traces)});
  }
  in_flight.drain();
  medium.close();
  work.close();
  if (const std::string failure = codelets::take_failure(); !failure.empty()) throw TaskError(failure);
  if (stopped) throw interruption();

  if (report) {
    report->time = run.time;
    report->seconds = run.seconds();
    report->cell_updates = run.cell_updates(nshots, 1);
  }
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
  with_precision(o.precision, [&](auto t) { run<decltype(t)>(m, s, o, sink, {}, report, on_shot_done); });
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

std::vector<double> model_shots_exact(const Model& m, const Survey& s, const NumericalOptions& o) {
  check_modeling_inputs(m, s, o);
  const std::size_t per_shot = std::size_t(s.nrec()) * std::size_t(s.nt);
  std::vector<double> data(std::size_t(s.nshots()) * per_shot);
  const ExactSink keep = [&](int shot, const double* traces) {
    std::copy(traces, traces + per_shot, data.begin() + long(std::size_t(shot) * per_shot));
  };
  with_precision(o.precision, [&](auto t) { run<decltype(t)>(m, s, o, {}, keep, nullptr, {}); });
  return data;
}

std::vector<float> model_shots_alone(const Model& m, const Survey& s, const NumericalOptions& o) {
  const graph::LocalScope alone;
  return model_shots(m, s, o, nullptr);
}

}  // namespace starwave
