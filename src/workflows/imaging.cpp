// src/workflows/imaging.cpp — the gradient and RTM algorithm on the task graph of docs/design.md
// §3. Per shot:
//     forward_keep(s) → misfit(s) → adjoint(s) → image(s)
// then the contributions are summed by a fixed binary tree over shot index (built as a
// binary counter while shots are submitted), so the result has the same bits whatever
// ran where (codelets/reduction.hpp). At most one shot per CPU worker and two per CUDA
// worker of a rank are in flight
// (codelets/window.hpp); each shot's data is handed back after its last task
// (codelets/shots.hpp).
#include "src/workflows/imaging.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>
#include <vector>

#include "codelets/adjoint.hpp"
#include "codelets/distribution.hpp"
#include "codelets/failure.hpp"
#include "codelets/forward.hpp"
#include "codelets/image.hpp"
#include "codelets/misfit.hpp"
#include "codelets/reduction.hpp"
#include "codelets/shots.hpp"
#include "codelets/window.hpp"
#include "kernels/imaging.hpp"
#include "src/base/error.hpp"
#include "src/io/hdf5.hpp"
#include "src/memory/plan.hpp"
#include "src/memory/room.hpp"
#include "src/runtime/runtime.hpp"
#include "src/synthetic/synth.hpp"
#include "src/workflows/modeling.hpp"

namespace starwave {
namespace {

/// The shots of one evaluation, ascending: the hooks' mini-batch, or every shot.
std::vector<int> evaluation_shots(const Survey& s, const GradientHooks& hooks) {
  std::vector<int> shots = hooks.shots;
  if (shots.empty())
    for (int k = 0; k < s.nshots(); ++k) shots.push_back(k);
  for (int k : shots)
    if (k < 0 || k >= s.nshots()) throw RuntimeError("imaging: no shot " + std::to_string(k) + " in the survey");
  return shots;
}

/// `reference` (RTM, mode kRtm): the model whose modeled data are subtracted from the
/// observed ones; null: the model `m` itself (the forward that keeps the wavefield).
template <typename T>
ImagingResult run(const Model& m, const Survey& s, const NumericalOptions& o, int mode, const GradientHooks& hooks,
                  const Model* reference = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  ImagingResult result;
  const TimeStepping ts = choose_time_step(m, s, o);
  const double f0 = dominant_frequency(s.wavelet(0), s.dt);
  const Medium<T> med = build_medium<T>(m, o, ts, int(s.nt), f0);
  Medium<T> ref_med;
  if (reference) {
    ref_med = build_medium<T>(*reference, o, ts, int(s.nt), f0);
    if (ref_med.buffer.size() != med.buffer.size() || ref_med.layout.grid_size() != med.layout.grid_size())
      throw RuntimeError("imaging: the reference model's grid differs from the migration model's");
  }
  ShotProblem<T> layout = med.layout;
  layout.storage = o.full_storage ? ShotProblem<T>::kStoreFull : ShotProblem<T>::kStoreBoundary;
  layout.nrec = s.nrec();
  const std::size_t region = m.cells(), traces = std::size_t(s.nrec()) * s.nt;
  if (std::size_t(layout.model_cells()) != region)
    throw RuntimeError("imaging: the padded grid's model region does not match the model");
  const std::vector<int> shots = evaluation_shots(s, hooks);
  const int count = int(shots.size());
  using Tree = graph::ReductionTree<graph::Data>;

  // Shots in flight: one per CPU worker, two per CUDA worker (its shots take milliseconds:
  // the next one waits ready while the submitting thread reads a shot's data), two at
  // least; fewer if memory is short; a run that cannot hold one is refused before any
  // work or handle (docs/design.md §3, §9). A shot's tasks run one after another, so a second shot
  // per CPU worker only holds memory: with 2 × workers the demo's
  // gradient took 7 % longer and peaked at 335 MB instead of 196.
  const int workers = graph::workers();
  MemoryNeed need;
  const std::uint64_t t = sizeof(T);
  need.store = t * (layout.store_size() + 2 * layout.grid_size());  // the store and the final state
  need.per_shot = need.store + t * (std::uint64_t(ts.nsteps) + (reference ? 3 : 2) * traces + 4 * region) +
                  sizeof(float) * traces + points_bytes<T>(layout, most_point_nodes(m, s)) + sizeof(double);
  need.per_worker = t * (layout.work_size() + layout.adjoint_work_size());
  need.shared =
      t * (med.buffer.size() + ref_med.buffer.size() + region + 2 * region * std::uint64_t(Tree::most_held(count)));
  const int window_size =
      shots_in_flight(need, workers, std::max(2, workers + graph::cuda_workers()), memory::memory_room(), "this run",
                      o.full_storage ? "use --storage boundary, or fewer workers with STARPU_NCPU"
                                     : "a smaller model, a shorter record, or fewer workers with STARPU_NCPU");
  if (hooks.on_plan && graph::rank() == 0) {
    ShotProblem<T> full = layout;
    full.storage = ShotProblem<T>::kStoreFull;
    hooks.on_plan(need, t * (full.store_size() + 2 * full.grid_size()), std::min(window_size, count));
  }

  // Read-only inputs every rank builds itself; work arrays local to each worker.
  std::vector<T> velocity(m.vp.begin(), m.vp.end());
  graph::Data medium = graph::per_rank_vector(med.buffer.data(), med.buffer.size(), sizeof(T));
  graph::Data ref_medium;
  if (reference) ref_medium = graph::per_rank_vector(ref_med.buffer.data(), ref_med.buffer.size(), sizeof(T));
  graph::Data vel = graph::per_rank_vector(velocity.data(), region, sizeof(T));
  graph::Data fwork = graph::scratch_vector(layout.work_size(), sizeof(T));
  graph::Data awork = graph::scratch_vector(layout.adjoint_work_size(), sizeof(T));
  graph::Data misfit_scratch = graph::scratch_vector(imaging::kMisfitBlocks, sizeof(double));
  std::vector<double> misfits(std::size_t(count), 0.0);  // by place in the evaluation; this rank's shots
  std::vector<graph::Data> misfit_data;                  // each shot's, home in misfits[i]

  int local = 0;
  for (int shot : shots) local += graph::mine(shot) ? 1 : 0;
  graph::Window window(window_size, local, hooks.on_shot_done);
  Tree tree([](graph::Data& sum, graph::Data&& part) { insert_reduce(sum, part); });  // sum += part

  for (int i = 0; i < count; ++i) {
    const int shot = shots[std::size_t(i)], owner = graph::owner(shot);
    ShotProblem<T> p = layout;
    ShotInputs<T> inputs;
    std::vector<float> weights, streamed;
    graph::ShotReads<T> reads;
    if (owner == graph::rank()) {
      window.admit();
      inputs = shot_inputs(med, m, s, ts, shot);
      weights = s.trace_weights(shot);
      const float* observed = s.observed(shot);
      if (!observed && hooks.observed) {  // streamed: read now, copied into the handle below, then dropped
        streamed = hooks.observed(shot);
        if (streamed.size() != traces)
          throw RuntimeError("imaging: shot " + std::to_string(shot) + "'s observed traces have " +
                             std::to_string(streamed.size()) + " samples, not " + std::to_string(traces));
        observed = streamed.data();
      }
      reads = {inputs.nodes.data(), inputs.signals.data(), observed, weights.data()};
    }
    point_counts(med, m, s, shot, inputs).apply(p);  // the handles' sizes, on every rank
    graph::ImagingShot d = graph::imaging_shot<T>(owner, p, reads, &misfits[std::size_t(i)], reference != nullptr);
    insert_forward<T>({medium, d.nodes, d.signals, d.traces, fwork, d.store, d.final_state}, p, o.order);
    if (reference) insert_forward<T>({ref_medium, d.nodes, d.signals, d.reference, fwork}, p, o.order);
    insert_misfit({reference ? d.reference : d.traces, d.observed, d.residual, d.misfit, misfit_scratch, d.weights},
                  mode);
    insert_adjoint<T>(
        {medium, d.nodes, d.signals, d.residual, d.store, d.final_state, d.correlation, d.illumination, awork}, p,
        o.order);
    insert_image({d.correlation, d.illumination, vel, d.contribution}, mode, &graph::Window::done, &window);
    tree.add(std::move(d.contribution));  // each sum runs where its left part lives
    misfit_data.push_back(std::move(d.misfit));
  }
  graph::Data root = tree.finish();

  // The result lives on rank 0.
  graph::send_to(root, 0);
  if (graph::rank() == 0) {
    const graph::Reading sum(root);
    result.values.assign(sum.values<T>(), sum.values<T>() + region);
    result.illumination.assign(sum.values<T>() + region, sum.values<T>() + 2 * region);
  }
  root.close();
  for (graph::Data& d : misfit_data) d.close();         // waits, brings the value home
  window.drain();                                       // every local callback has run
  if (graph::distributed()) mpi::sum_to_root(misfits);  // one rank holds each: the sum is that value exactly
  for (double j : misfits) result.misfit += j;          // in shot order: the same bits every run
  for (graph::Data* d : {&medium, &ref_medium, &vel, &fwork, &awork, &misfit_scratch})
    if (*d) d->close();
  if (const std::string failure = codelets::take_failure(); !failure.empty()) throw TaskError(failure);

  result.time = ts;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  result.cell_updates = 2.0 * layout.nz * layout.ny * layout.nx * ts.nsteps * count;
  return result;
}

/// The image's mute at `depth` (m): 0 down to `acquisition`, a sin² taper to 1 at `mute`.
double mute_weight(double depth, double acquisition, double mute) {
  if (depth <= acquisition) return 0;
  if (depth >= mute) return 1;
  return std::pow(std::sin(M_PI / 2 * (depth - acquisition) / (mute - acquisition)), 2);
}

ImagingResult run_any(const Model& m, const Survey& s, const NumericalOptions& o, int mode, const GradientHooks& hooks,
                      const Model* reference = nullptr) {
  check_imaging_inputs(m, s, o, bool(hooks.observed));
  return o.double_precision ? run<double>(m, s, o, mode, hooks, reference)
                            : run<float>(m, s, o, mode, hooks, reference);
}

}  // namespace

std::vector<double> finish_rtm_image(const Model& m, const std::vector<double>& raw,
                                     const std::vector<double>& illumination, double acquisition_depth,
                                     double mute_depth) {
  double peak = 0;
  for (double v : illumination) peak = std::max(peak, v);
  std::vector<double> c(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) c[i] = raw[i] / (illumination[i] + 0.01 * peak + 1e-300);
  auto at = [&](int z, int y, int x) { return c[m.index(std::clamp(z, 0, m.nz - 1), y, x)]; };  // edge replication
  std::vector<double> out(raw.size());
  for (int z = 0; z < m.nz; ++z) {
    const double w = mute_weight(m.z0 + z * m.dz, acquisition_depth, mute_depth);
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x) out[m.index(z, y, x)] = w * (at(z + 1, y, x) - at(z - 1, y, x)) / (2 * m.dz);
  }
  return out;
}

std::pair<double, double> rtm_mute(const Model& m, const Survey& s) {
  double depth = m.z0;
  for (const auto& p : s.sources) depth = std::max(depth, p.z);
  for (int shot = 0; shot < s.nshots(); ++shot)
    for (const auto& p : s.receivers_of(shot)) depth = std::max(depth, p.z);
  double vmin = m.vp[0];
  for (std::size_t i = 0; i < std::size_t(m.ny) * std::size_t(m.nx); ++i)
    vmin = std::min(vmin, m.vp[i]);  // the top plane
  return {depth, depth + vmin / dominant_frequency(s.wavelet(0), s.dt)};
}

std::function<std::vector<float>(int shot)> stream_observed_data(const std::string& path, const Survey& s) {
  const std::size_t traces = std::size_t(s.nrec()) * std::size_t(s.nt);
  for (int shot = 0; shot < s.nshots(); ++shot)
    if (graph::mine(shot) && io::read_slice(path, "/data", shot).values.size() != traces)  // refuses NaN/Inf
      throw InputError(path + ": /data shot " + std::to_string(shot) + " is not nrec × nt");
  // Each shot was checked above: a read that fails during the run (memory taken meanwhile,
  // the file replaced) is a failure of the run, not bad input.
  return [path](int shot) {
    try {
      return io::read_slice(path, "/data", shot).values;
    } catch (const InputError& e) {
      throw RuntimeError(e.what());
    }
  };
}

void check_imaging_inputs(const Model& m, const Survey& s, const NumericalOptions& o, bool streamed) {
  check_modeling_inputs(m, s, o);
  for (int shot = 0; shot < s.nshots() && !streamed; ++shot)  // this rank's shots (every shot with one process)
    if (graph::mine(shot) && !s.observed(shot))
      throw InputError("--data: the survey carries no observed data of shape (nshots, nrec, nt) = (" +
                       std::to_string(s.nshots()) + ", " + std::to_string(s.nrec()) + ", " + std::to_string(s.nt) +
                       ") for shot " + std::to_string(shot));
}

ImagingResult misfit_gradient(const Model& m, const Survey& s, const NumericalOptions& o, const GradientHooks& hooks) {
  return run_any(m, s, o, imaging::kGradient, hooks);
}

double direct_wave_smoothing(const Model& m, const Survey& s, const RtmOptions& rtm) {
  if (rtm.direct != DirectWave::kSmooth) return 0;
  if (rtm.smooth > 0) return rtm.smooth;
  double mean = 0;
  for (double v : m.vp) mean += v;
  mean /= double(m.vp.size());
  const double extent = std::max({(m.nz - 1) * m.dz, (m.nx - 1) * m.dx, (m.ny - 1) * m.dy});
  return std::min(0.5 * mean / dominant_frequency(s.wavelet(0), s.dt), extent);
}

Model direct_wave_model(const Model& m, const Survey& s, const RtmOptions& rtm) {
  const double sigma = direct_wave_smoothing(m, s, rtm);
  check_smoothing_length(m, sigma, "--direct-smooth");
  const Model smooth = smoothed(m, sigma);
  const auto [acquisition, mute] = rtm_mute(m, s);
  Model out = m;
  const std::size_t plane = std::size_t(m.ny) * std::size_t(m.nx);
  for (int z = 0; z < m.nz; ++z) {
    const double w = mute_weight(m.z0 + z * m.dz, acquisition, mute);  // the smoothed copy's weight
    for (std::size_t i = std::size_t(z) * plane; i < std::size_t(z + 1) * plane; ++i)
      out.vp[i] = (1 - w) * m.vp[i] + w * smooth.vp[i];
  }
  return out;
}

DirectWave parse_direct_wave(const std::string& text) {
  if (text == "smooth") return DirectWave::kSmooth;
  if (text == "model") return DirectWave::kModel;
  if (text == "none") return DirectWave::kNone;
  throw InputError("--direct-wave: '" + text + "' is not one of smooth, model, none");
}

ImagingResult rtm_stack(const Model& m, const Survey& s, const NumericalOptions& o, const GradientHooks& hooks,
                        const RtmOptions& rtm) {
  switch (rtm.direct) {
    case DirectWave::kModel:
      return run_any(m, s, o, imaging::kRtm, hooks);
    case DirectWave::kNone:
      return run_any(m, s, o, imaging::kRtmObserved, hooks);
    case DirectWave::kSmooth:
      break;
  }
  const Model reference = direct_wave_model(m, s, rtm);
  return run_any(m, s, o, imaging::kRtm, hooks, &reference);
}

void check_rtm_image(const std::vector<double>& image, const RtmOptions& rtm) {
  if (std::any_of(image.begin(), image.end(), [](double v) { return v != 0; })) return;
  const std::string hint =
      rtm.direct == DirectWave::kModel
          ? "the migration model predicts the recorded data (reflections included) and --direct-wave model "
            "subtracts what it predicts: use --direct-wave smooth (the default) or none"
          : "the observed data leave nothing to migrate below the acquisition's mute: check that --data holds "
            "recorded traces, not zeros, and that the record is long enough for reflections";
  throw InputError("the image is zero everywhere: " + hint);
}

}  // namespace starwave
