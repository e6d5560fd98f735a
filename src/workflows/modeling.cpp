// src/workflows/modeling.cpp — the modeling algorithm: one forward task per shot, submitted
// through insert_forward() with a bounded window of shots in flight, each shot's traces
// handed on (to the output file) as its task finishes: memory is bounded by the window,
// not by the number of shots.
#include "src/workflows/modeling.hpp"

#include <starpu.h>

#include <algorithm>
#include <chrono>
#include <deque>

#include "codelets/forward.hpp"
#include "src/error.hpp"

namespace starwave {
namespace {

template <typename T>
struct ShotInFlight {
  int shot;
  ShotInputs<T> inputs;  // host memory of the read-only handles: alive until the task ends
  std::vector<T> traces;
  starpu_data_handle_t traces_handle;
};

template <typename T>
void run(const Model& m, const Survey& s, const NumericalOptions& o, const ShotSink& sink, ModelingReport* report,
         const std::function<void(int, int)>& on_shot_done) {
  const auto t0 = std::chrono::steady_clock::now();
  const TimeStepping ts = choose_time_step(m, s, o);
  const Medium<T> med = build_medium<T>(m, o, ts, int(s.nt), dominant_frequency(s.wavelet(0), s.dt));
  const int nrec = s.nrec(), nt = int(s.nt), nshots = s.nshots();
  std::vector<float> shot_traces(std::size_t(nrec) * nt);

  starpu_data_handle_t medium, work;
  starpu_vector_data_register(&medium, STARPU_MAIN_RAM, uintptr_t(med.buffer.data()), uint32_t(med.buffer.size()),
                              sizeof(T));
  starpu_vector_data_register(&work, -1, 0, uint32_t(med.layout.work_size()), sizeof(T));

  const int window = std::max(2, 2 * int(starpu_worker_get_count()));
  std::deque<ShotInFlight<T>> in_flight;
  int done = 0;
  auto finish_oldest = [&] {
    ShotInFlight<T>& f = in_flight.front();
    starpu_data_unregister(f.traces_handle);  // waits for the task and brings traces home
    for (std::size_t i = 0; i < f.traces.size(); ++i) shot_traces[i] = float(f.traces[i]);
    const int shot = f.shot;
    in_flight.pop_front();
    sink(shot, shot_traces.data());
    if (on_shot_done) on_shot_done(++done, nshots);
  };

  for (int shot = 0; shot < nshots; ++shot) {
    ShotInFlight<T> f{shot, shot_inputs(med, m, s, ts, shot), std::vector<T>(std::size_t(nrec) * nt), nullptr};
    ShotProblem<T> layout = med.layout;
    layout.source_index = f.inputs.nodes[0];
    layout.nrec = nrec;
    ForwardHandles h{medium, nullptr, nullptr, nullptr, work};
    starpu_vector_data_register(&h.nodes, STARPU_MAIN_RAM, uintptr_t(f.inputs.nodes.data()),
                                uint32_t(f.inputs.nodes.size()), sizeof(long));
    starpu_vector_data_register(&h.source, STARPU_MAIN_RAM, uintptr_t(f.inputs.source.data()),
                                uint32_t(f.inputs.source.size()), sizeof(T));
    starpu_vector_data_register(&h.traces, STARPU_MAIN_RAM, uintptr_t(f.traces.data()), uint32_t(f.traces.size()),
                                sizeof(T));
    f.traces_handle = h.traces;
    insert_forward<T>(h, layout, o.order);
    starpu_data_unregister_submit(h.nodes);
    starpu_data_unregister_submit(h.source);
    in_flight.push_back(std::move(f));
    if (int(in_flight.size()) >= window) finish_oldest();
  }
  while (!in_flight.empty()) finish_oldest();
  starpu_data_unregister(medium);
  starpu_data_unregister(work);

  if (report) {
    report->time = ts;
    report->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    report->cell_updates = double(med.layout.nz) * med.layout.nx * ts.nsteps * nshots;
  }
}

}  // namespace

void check_modeling_inputs(const Model& m, const Survey& s, const NumericalOptions& o) {
  o.validate();
  choose_time_step(m, s, o);  // refuses an unstable or non-dividing --internal-dt
  Medium<float> med;          // only the layout is needed to check positions
  med.model_top = o.free_surface ? 0 : o.pml_width;
  med.layout.set_grid(m.nz + med.model_top + o.pml_width, m.nx + 2 * o.pml_width, o.order / 2);
  med.model_left = o.pml_width;
  for (int shot = 0; shot < s.nshots(); ++shot) {
    node_index(med, m, s.sources[std::size_t(shot)], "source " + std::to_string(shot));
    const auto& rec = s.receivers_of(shot);
    for (std::size_t r = 0; r < rec.size(); ++r)
      node_index(med, m, rec[r], "receiver " + std::to_string(r) + " of shot " + std::to_string(shot));
  }
}

void model_each_shot(const Model& m, const Survey& s, const NumericalOptions& o, const ShotSink& sink,
                     ModelingReport* report, const std::function<void(int, int)>& on_shot_done) {
  check_modeling_inputs(m, s, o);
  if (o.double_precision)
    run<double>(m, s, o, sink, report, on_shot_done);
  else
    run<float>(m, s, o, sink, report, on_shot_done);
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

}  // namespace starwave
