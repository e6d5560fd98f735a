// src/workflows/fwi.cpp — the inversion loop, readable as the algorithm. For each band:
//   Φ, g, P ← gradient(v) (P: the preconditioner from the source illumination)
//   repeat (L-BFGS): d ← −H g (H₀ = P^½ B P^½, B the smoothing; active bounds removed)
//           trials v_t = P(v + α d), α halved until Φ(v_t) ≤ Φ + c₁ gᵀ(v_t − v)
//           update the pairs; v, Φ, g ← the accepted trial; save the state
//   or (Adam, GD): g ← gradient on this iteration's batch; v ← P(v − step(H g)); save
// Each evaluation is one gradient task graph (src/workflows/gradient.cpp); the optimiser
// works on its result here, on the calling thread, once the graph has drained. Under
// several MPI ranks rank 0 runs this loop and announces each evaluation; the other ranks
// follow(), building the same graph on their own shots.
#include "src/workflows/fwi.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "graph/clock.hpp"
#include "graph/data.hpp"
#include "src/base/checksum.hpp"
#include "src/base/error.hpp"
#include "src/io/hdf5.hpp"
#include "src/numerics/filters.hpp"
#include "src/optim/first_order.hpp"
#include "src/optim/lbfgs.hpp"
#include "src/runtime/runtime.hpp"
#include "src/synthetic/synth.hpp"
#include "src/workflows/data_fit.hpp"
#include "src/workflows/fwi_state.hpp"
#include "src/workflows/gradient.hpp"
#include "src/workflows/modeling.hpp"
#include "src/workflows/source_estimate.hpp"

namespace starwave {
namespace {

using fwi_state::Setting;
using fwi_state::State;

/// Under several MPI ranks rank 0 runs the inversion and, before each evaluation, tells
/// the other ranks what to evaluate: [kind, band, batch size, batch shots…, model…]; before a
/// band's source estimation the same with kEstimate (they model their shots), and after it
/// kWavelets, then the wavelets (shared_wavelets); before a band's arrivals are picked, kPick
/// (they model their shots), and after its windows are made kWindows, then the windows.
enum Announcement { kEvaluate = 0, kFinished = 1, kStopped = 2, kEstimate = 3, kWavelets = 4, kPick = 5, kWindows = 6 };

void announce(Announcement kind, int band, const std::vector<int>& shots, const std::vector<double>& model) {
  std::vector<double> order{double(kind), double(band), double(shots.size())};
  order.insert(order.end(), shots.begin(), shots.end());
  order.insert(order.end(), model.begin(), model.end());
  mpi::broadcast(order);
}

/// Rank 0's wavelets to the other ranks: the announcement, then shared_wavelets' broadcast.
void announce_wavelets(const std::vector<std::vector<float>>& w) {
  announce(kWavelets, 0, {}, {});
  shared_wavelets(w);
}

/// Rank 0's windows on every rank (the announcement, then a broadcast); `mine` elsewhere.
std::vector<float> shared_windows(const std::vector<float>& mine) {
  std::vector<double> v(mine.begin(), mine.end());
  mpi::broadcast(v);
  return {v.begin(), v.end()};
}

/// The survey with the wavelets a band models with: the estimates when there are some.
Survey with_wavelets(const Survey& s, const std::vector<std::vector<float>>& w) {
  Survey out = s;
  if (!w.empty()) out.wavelets = w;
  return out;
}

/// The survey of band `band`: its wavelets and held data low-passed (none without bands), its
/// traces weighted by the band's offset range (--offsets) and windowed by `windows` (--window;
/// empty: every sample).
Survey band_of(const Survey& s, const FwiOptions& f, int band, const std::vector<float>& windows = {}) {
  Survey b = f.bands.empty() ? s : filters::lowpassed(s, f.bands[std::size_t(band)]);
  if (!f.offsets.empty()) b = offset_selected(b, f.offsets[f.offsets.size() == 1 ? 0 : std::size_t(band)]);
  b.windows = windows;
  return b;
}

/// Band `band`'s source of streamed observed traces: f.observed low-passed as each shot is
/// read (as filters::lowpassed does to data held in memory); none when the data are held.
std::function<std::vector<float>(int)> band_observed(const Survey& s, const FwiOptions& f, int band) {
  if (!f.observed || f.bands.empty()) return f.observed;
  const double fc = f.bands[std::size_t(band)], dt = s.dt;
  const std::size_t nt = std::size_t(s.nt);
  return [&f, fc, dt, nt](int shot) {
    std::vector<float> d = f.observed(shot);
    for (std::size_t t = 0; t + nt <= d.size(); t += nt) filters::lowpass(d.data() + t, nt, dt, fc);
    return d;
  };
}

/// The inversion's velocity bounds: --vmin/--vmax, or 0.75 × the initial minimum and 1.25 × its maximum.
struct Bounds {
  double lower, upper;
};
Bounds bounds(const Model& initial, const FwiOptions& f) {
  return {f.vmin > 0 ? f.vmin : 0.75 * initial.vmin(), f.vmax > 0 ? f.vmax : 1.25 * initial.vmax()};
}

/// The other ranks' part: each evaluation rank 0 announces, on this rank's shots, until
/// rank 0 is done. The optimiser runs on rank 0 alone.
FwiResult follow(const Model& initial, const Survey& s, const NumericalOptions& o, const FwiOptions& f) {
  FwiResult result;
  Survey band_survey;
  int survey_band = -1;
  std::vector<std::vector<float>> wavelets;  // rank 0's estimates, as announced
  std::vector<float> windows;                // and its windows
  for (;;) {
    std::vector<double> order;
    mpi::broadcast(order);
    if (!order.empty() && (int(order[0]) == kWavelets || int(order[0]) == kWindows)) {
      if (int(order[0]) == kWavelets)
        wavelets = shared_wavelets({});
      else
        windows = shared_windows({});
      survey_band = -1;
      continue;
    }
    if (order.empty() || (int(order[0]) != kEvaluate && int(order[0]) != kEstimate && int(order[0]) != kPick)) {
      result.stopped = !order.empty() && int(order[0]) == kStopped;
      break;
    }
    const int band = int(order[1]), nbatch = int(order[2]);
    if (band != survey_band) {
      band_survey = band_of(with_wavelets(s, wavelets), f, band, windows);
      survey_band = band;
    }
    Model m = initial;
    m.vp.assign(order.begin() + 3 + nbatch, order.end());
    if (int(order[0]) == kEstimate) {  // this rank's shots modelled; rank 0 takes their traces
      model_each_shot(m, band_survey, o, {}, nullptr);
      continue;
    }
    if (int(order[0]) == kPick) {  // as rank 0's picked_arrivals (its broadcast included)
      picked_arrivals(m, band_of(with_wavelets(s, wavelets), f, band), o);
      continue;
    }
    GradientHooks hooks;
    hooks.observed = band_observed(s, f, band);
    hooks.misfit = f.misfit;
    for (int k = 0; k < nbatch; ++k) hooks.shots.push_back(int(order[std::size_t(3 + k)]));
    hooks.inputs_checked = true;  // by invert(), for every model within the bounds
    misfit_gradient(m, band_survey, o, hooks);
  }
  result.model = initial;
  return result;
}

/// The optimiser: its updates of the State, and the line search's transient state (a
/// function of the saved State, so a resumed run recomputes it exactly).
class Optimizer {
 public:
  Optimizer(const Model& shape, const FwiOptions& f, double lower, double upper, State& st)
      : shape_(shape), f_(f), lower_(lower), upper_(upper), st_(st) {}

  /// H₀ up to L-BFGS's scale: P^½ B P^½ with B = C C, C the Gaussian of σ/√2 with zero
  /// edges, so H₀ is symmetric positive semi-definite and zero on fixed cells.
  void precondition(std::vector<double>& q) const {
    for (std::size_t j = 0; j < q.size(); ++j) q[j] *= std::sqrt(st_.precond[j]);
    if (f_.smooth > 0) {
      const double sigma = f_.smooth / std::sqrt(2.0);
      for (int k = 0; k < 2; ++k)
        q = filters::gaussian(q, shape_.nz, shape_.ny, shape_.nx, shape_.dz, shape_.dy, shape_.dx, sigma,
                              filters::Edge::kZero);
    }
    for (std::size_t j = 0; j < q.size(); ++j) q[j] *= std::sqrt(st_.precond[j]);
  }

  /// The band's first evaluation: Φ, g, and P from the source illumination (deep and edge
  /// cells, lit less, would otherwise hardly move), normalised to 1 at the best-lit level.
  void start_band(const std::vector<double>& g, const std::vector<double>& illumination, double misfit) {
    st_.g = g;
    st_.misfit = misfit;
    double peak = 0;
    for (double x : illumination) peak = std::max(peak, x);
    st_.precond.resize(illumination.size());
    for (std::size_t i = 0; i < illumination.size(); ++i)
      st_.precond[i] = peak / (illumination[i] + 0.01 * peak + 1e-300);
    // A zero fixes a cell: H₀ has no component there and, the cell never moving, no
    // L-BFGS pair has one either.
    for (int z = 0; z < shape_.nz && shape_.z0 + z * shape_.dz < f_.fix_top; ++z)
      for (int y = 0; y < shape_.ny; ++y)
        for (int x = 0; x < shape_.nx; ++x) st_.precond[shape_.index(z, y, x)] = 0;
    st_.history.push_back(misfit);
    st_.history_band.push_back(st_.band);
    st_.started = true;
  }

  /// L-BFGS: the direction at the current point and the line search's first trial.
  void propose(std::vector<double>& trial) {
    auto h0 = [&](std::vector<double>& q) { precondition(q); };
    d_ = optim::direction(st_.lbfgs, st_.v, st_.g, lower_, upper_, h0);
    if (optim::dot(d_, st_.g) >= 0) {  // not a descent direction: forget the pairs
      st_.lbfgs.s.clear();
      st_.lbfgs.y.clear();
      d_ = optim::direction(st_.lbfgs, st_.v, st_.g, lower_, upper_, h0);
    }
    double dmax = 0;
    for (double x : d_) dmax = std::max(dmax, std::abs(x));
    trials_ = 0;
    if (dmax == 0) {  // nothing can move: the band is over
      st_.band_over = true;
      return;
    }
    alpha_ = st_.lbfgs.s.empty() ? f_.first_step / dmax : 1.0;
    trial = optim::project_step(st_.v, d_, alpha_, lower_, upper_);
  }

  /// L-BFGS: Φ and g at `trial` decide it (Armijo on the projected step). Accepted (true):
  /// the pairs, the new point and the next proposal in `trial`. Else `trial` becomes the
  /// next, shorter trial, or after 12 the band is over.
  bool line_search(const std::vector<double>& g, double misfit, std::vector<double>& trial) {
    double decrease = 0;  // gᵀ(v_t − v), the projected step's first-order change
    for (std::size_t i = 0; i < trial.size(); ++i) decrease += st_.g[i] * (trial[i] - st_.v[i]);
    ++trials_;
    if (std::isfinite(misfit) && misfit <= st_.misfit + 1e-4 * decrease) {
      optim::update(st_.lbfgs, st_.v, trial, st_.g, g);
      st_.v = trial;
      st_.g = g;
      finish_iteration(misfit);
      propose(trial);
      return true;
    }
    if (trials_ == 12) {
      st_.band_over = true;
      return false;
    }
    alpha_ *= 0.5;
    trial = optim::project_step(st_.v, d_, alpha_, lower_, upper_);
    return false;
  }

  /// Adam (β₁ 0.9, β₂ 0.999, moments restarted with each band) or plain gradient descent
  /// on this iteration's batch gradient, preconditioned; `misfit` is the batch's at v.
  void batch_step(const std::vector<double>& g, double misfit) {
    std::vector<double> h = g;
    precondition(h);
    if (f_.optimizer == optim::Optimizer::kAdam)
      optim::adam_step(st_.v, st_.adam_m, st_.adam_v, h, st_.band_iteration + 1, f_.learning_rate, st_.precond, lower_,
                       upper_);
    else
      optim::gd_step(st_.v, h, f_.learning_rate, lower_, upper_);
    st_.g = g;
    finish_iteration(misfit);
  }

 private:
  void finish_iteration(double misfit) {
    st_.misfit = misfit;
    st_.history.push_back(misfit);
    st_.history_band.push_back(st_.band);
    ++st_.iteration;
    ++st_.band_iteration;
  }

  const Model& shape_;
  const FwiOptions& f_;
  const double lower_, upper_;
  State& st_;
  std::vector<double> d_;  // the line search's direction
  double alpha_ = 0;
  int trials_ = 0;
};

/// What an iteration's report says: the state after it, and the time and evaluations since
/// the last report.
FwiProgress progress(const State& st, const FwiOptions& f, int evaluations, double since) {
  FwiProgress p;
  p.iteration = st.iteration;
  p.band = st.band;
  p.frequency = f.bands.empty() ? 0 : f.bands[std::size_t(st.band)];
  p.misfit = st.misfit;
  double band_start = st.history.back();
  for (std::size_t k = st.history.size(); k-- > 0;)
    if (st.history_band[k] == st.band) band_start = st.history[k];
  p.relative = band_start > 0 ? st.misfit / band_start : 0;  // data fitted from the start: 0, not 0/0
  p.model_error = f.true_model ? model_error(st.v, *f.true_model) : -1;
  p.seconds = graph::clock_seconds() - since;
  p.evaluations = evaluations;
  p.model = &st.v;
  p.gradient = &st.g;
  p.precond = &st.precond;
  p.history = &st.history;
  p.history_band = &st.history_band;
  return p;
}

/// The next band starts afresh: no L-BFGS pairs, no Adam moments, a first evaluation.
void next_band(State& st) {
  ++st.band;
  st.band_iteration = 0;
  st.started = st.band_over = false;
  st.lbfgs.s.clear();
  st.lbfgs.y.clear();
  std::fill(st.adam_m.begin(), st.adam_m.end(), 0.0);
  std::fill(st.adam_v.begin(), st.adam_v.end(), 0.0);
}

}  // namespace

double model_error(const std::vector<double>& v, const Model& truth) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    num += (v[i] - truth.vp[i]) * (v[i] - truth.vp[i]);
    den += truth.vp[i] * truth.vp[i];
  }
  return std::sqrt(num / den);
}

std::vector<int> batch_of(unsigned seed, int t, int nshots, int k) {
  std::vector<int> all(static_cast<std::size_t>(nshots));
  for (int i = 0; i < nshots; ++i) all[std::size_t(i)] = i;
  if (k <= 0 || k >= nshots) return all;
  std::mt19937_64 rng(std::uint64_t(seed) * 0x9E3779B97F4A7C15ull + std::uint64_t(t));
  for (int i = nshots - 1; i > 0; --i) {  // Fisher–Yates with our own index draw (portable)
    const int j = int(rng() % std::uint64_t(i + 1));
    std::swap(all[std::size_t(i)], all[std::size_t(j)]);
  }
  all.resize(std::size_t(k));
  std::sort(all.begin(), all.end());
  return all;
}

void check_fwi_inputs(const Model& initial, const Survey& s, const NumericalOptions& o, const FwiOptions& f) {
  if (f.iterations < 0) throw InputError("--iterations: must be 0 or more");
  if (f.memory < 1) throw InputError("--memory: must be at least 1");
  if (f.batch_shots < 0 || f.batch_shots > s.nshots())
    throw InputError("--batch-shots: must be between 0 (all) and the number of shots, " + std::to_string(s.nshots()));
  if (!(f.learning_rate > 0)) throw InputError("--learning-rate: must be positive");
  check_smoothing_length(initial, f.smooth, "--smooth");
  if (f.fix_top < 0) throw InputError("--fix-top: must be a depth in m (0 = none)");
  if (f.fix_top > initial.z0 + (initial.nz - 1) * initial.dz)
    throw InputError("--fix-top: " + number_text(f.fix_top) +
                     " m keeps every row of the model fixed: nothing to invert");
  for (std::size_t b = 0; b < f.bands.size(); ++b) {
    if (!(f.bands[b] > 0) || !(f.bands[b] < 0.5 / s.dt))
      throw InputError("--bands: " + number_text(f.bands[b]) + " Hz is not between 0 and the data's Nyquist " +
                       number_text(0.5 / s.dt) + " Hz");
    if (b > 0 && !(f.bands[b] > f.bands[b - 1])) throw InputError("--bands: the frequencies must increase");
  }
  if (!f.offsets.empty() && f.offsets.size() != 1 && f.offsets.size() != std::max<std::size_t>(1, f.bands.size()))
    throw InputError("--offsets: give one range for all bands or one a band");
  for (const OffsetRange& r : f.offsets) offset_selected(s, r);  // each selects a trace
  if (f.window.on()) {
    check_window(f.window, s);
    if (f.window.velocity > 0) windowed(s, f.window, velocity_arrivals(s, f.window));  // some window in the record
  }
  if (f.vmin < 0) throw InputError("--vmin: must be a velocity in m/s (0 = 0.75 × the initial minimum)");
  if (f.vmax < 0) throw InputError("--vmax: must be a velocity in m/s (0 = 1.25 × the initial maximum)");
  const auto [lower, upper] = bounds(initial, f);
  if (!(lower < upper)) throw InputError("--vmin/--vmax: the lower bound must be below the upper one");
  if (upper < initial.vmin() || lower > initial.vmax())  // the first projection would flatten the model
    throw InputError("--vmin/--vmax: the bounds " + number_text(lower) + "–" + number_text(upper) +
                     " m/s exclude every velocity of the initial model (" + number_text(initial.vmin()) + "–" +
                     number_text(initial.vmax()) + " m/s): are they in m/s?");
  check_imaging_inputs(initial, s, o, bool(f.observed));
  // The inversion may take the model up to `upper`, and each evaluation chooses its time
  // step for the model it is given: a bound no time step can follow is refused now, not
  // after an iteration's work (one cell of that velocity on the model's grid stands in;
  // the initial model passed the same checks above, so what fails here is the bound).
  Model fastest;
  fastest.dim = initial.dim;
  fastest.nz = fastest.ny = fastest.nx = 1;
  fastest.dz = initial.dz;
  fastest.dy = initial.dy;
  fastest.dx = initial.dx;
  fastest.vp = {upper};
  try {
    choose_time_step(fastest, s, o);
  } catch (const InputError& e) {
    throw InputError("--vmax: the inversion's upper bound " + number_text(upper) + " m/s" +
                     (f.vmax > 0 ? std::string() : " (by default 1.25 × the initial model's maximum)") +
                     " cannot be modeled (lower --vmax" + (o.internal_dt > 0 ? ", or --internal-dt" : "") +
                     "): " + e.what());
  }
}

void check_resume(const Model& initial, const Survey& s, const NumericalOptions& o, const FwiOptions& f) {
  if (!f.resume) return;
  const std::vector<Setting> now = fwi_state::made_with(initial, s, o, f);
  if (graph::rank() == 0) fwi_state::check_made_with(f.state, now);
}

namespace {

/// Where the inversion starts: the saved state (`resume`), checked against what made it and
/// the bounds, or the initial model projected on the bounds.
State starting_state(const Model& initial, const FwiOptions& f, Bounds b, const std::vector<Setting>& made) {
  State st;
  if (f.resume) {
    fwi_state::check_made_with(f.state, made);
    st = fwi_state::load(f.state, initial.vp.size());
    // Every model an inversion saves lies within its bounds: a value outside them (negative,
    // NaN, edited by hand) is a damaged state, never a model to continue from.
    for (std::size_t i = 0; i < st.v.size(); ++i)
      if (!(st.v[i] >= b.lower && st.v[i] <= b.upper))
        throw InputError("--resume: " + f.state + ": /vp holds " + number_text(st.v[i]) + " m/s at cell " +
                         std::to_string(i) + ", outside the inversion's bounds " + number_text(b.lower) + "–" +
                         number_text(b.upper) + " m/s: the state is damaged; start again with --overwrite");
    return st;
  }
  st.v = initial.vp;
  for (double& v : st.v) v = std::clamp(v, b.lower, b.upper);
  st.lbfgs.memory = f.memory;
  st.optimizer = int(f.optimizer);
  if (f.optimizer == optim::Optimizer::kAdam) {
    st.adam_m.assign(st.v.size(), 0.0);
    st.adam_v.assign(st.v.size(), 0.0);
  }
  return st;
}

/// Rank 0's inversion: band by band from where the state is (a resumed run enters
/// mid-band), each iteration evaluated, stepped, saved and reported.
class Inversion {
 public:
  Inversion(const Model& initial, const Survey& s, const NumericalOptions& o, const FwiOptions& f, Bounds b,
            std::vector<Setting> made)
      : initial_(initial),
        s_(s),
        o_(o),
        f_(f),
        made_(std::move(made)),
        st_(starting_state(initial, f, b, made_)),
        opt_(initial, f, b.lower, b.upper, st_) {}

  FwiResult run() {
    const int nbands = std::max<int>(1, int(f_.bands.size()));
    if (!st_.windows.empty() && st_.windows.size() != 3 * std::size_t(s_.nshots()) * std::size_t(s_.nrec()))
      throw InputError(f_.state + ": the saved time windows are not 3 values a trace of this survey");
    if (graph::distributed() && !st_.wavelets.empty()) announce_wavelets(st_.wavelets);  // a resumed run's
    if (graph::distributed() && !st_.windows.empty()) announce_windows();
    while (st_.band < nbands) {
      if (!st_.started && f_.window.on()) {
        if (stopping()) break;
        make_windows();
      }
      if (!st_.started && f_.estimate != SourceEstimation::kNone) {
        if (stopping()) break;
        estimate_wavelets();
      }
      const Survey band_survey = band_of(with_wavelets(s_, st_.wavelets), f_, st_.band, st_.windows);
      run_band(band_survey);
      if (result_.stopped) break;
      result_.converged = st_.band_over;  // the band could not move any more
      next_band(st_);
    }
    if (graph::distributed()) announce(result_.stopped ? kStopped : kFinished, st_.band, {}, {});
    result_.model = initial_;
    result_.model.vp = st_.v;
    result_.misfit = st_.history;
    result_.band = st_.history_band;
    result_.iterations = st_.iteration;
    result_.wavelets = st_.wavelets;
    return result_;
  }

 private:
  /// The band's iterations, from its first evaluation (Φ, g, the preconditioner) unless the
  /// state has it, until its count, a line search that finds no decrease, or a stop.
  void run_band(const Survey& band_survey) {
    const bool lbfgs = f_.optimizer == optim::Optimizer::kLbfgs;
    std::vector<double> trial;  // L-BFGS: the point the line search tries next
    bool have_trial = false;
    if (!st_.started) {
      if (stopping()) return;
      const ImagingResult e = evaluate(band_survey, {}, st_.v);
      opt_.start_band(e.values, e.illumination, e.misfit);
      if (lbfgs) {
        opt_.propose(trial);
        have_trial = true;
      }
      save_state();
    }
    while (!st_.band_over && st_.band_iteration < f_.iterations) {
      if (lbfgs) {          // trials along the direction until one is accepted (it proposes the next)
        if (!have_trial) {  // a resumed run: the proposal made before the state was saved
          opt_.propose(trial);
          have_trial = true;
          if (st_.band_over) break;
        }
        if (stopping()) return;
        const ImagingResult e = evaluate(band_survey, {}, trial);
        if (!opt_.line_search(e.values, e.misfit, trial)) continue;  // a shorter trial, or the band is over
      } else {                                                       // one Adam/GD step on this iteration's batch
        if (stopping()) return;
        const ImagingResult e =
            evaluate(band_survey, batch_of(f_.seed, st_.iteration + 1, s_.nshots(), f_.batch_shots), st_.v);
        opt_.batch_step(e.values, e.misfit);
      }
      report();
    }
  }

  /// One evaluation: Φ, ∂Φ/∂v and the illumination at `model` on `shots` (empty: all), on
  /// rank 0 once its task graph has drained. The other ranks are told first (band, shots,
  /// model), so that they build the same graph.
  ImagingResult evaluate(const Survey& survey, const std::vector<int>& shots, const std::vector<double>& model) {
    if (graph::distributed()) announce(kEvaluate, st_.band, shots, model);
    Model m = initial_;
    m.vp = model;
    GradientHooks hooks;
    hooks.on_shot_done = f_.on_shot_done;
    hooks.on_plan = f_.on_plan;
    hooks.shots = shots;
    hooks.observed = band_observed(s_, f_, st_.band);
    hooks.misfit = f_.misfit;
    hooks.inputs_checked = true;  // by invert(), for every model within the bounds
    ++evaluations_;
    return misfit_gradient(m, survey, o_, hooks);
  }

  /// The band's wavelets: the Wiener filter between the data modelled with the current ones
  /// (the previous band's estimates, else the survey's), low-passed as the band's data, and
  /// the band's observed data, summed per shot, then over all shots in shot order (`band`)
  /// or kept per shot (`shot`), applied to the current unfiltered wavelets.
  void estimate_wavelets() {
    const Survey current = with_wavelets(s_, st_.wavelets);
    const Survey band_survey = band_of(current, f_, st_.band, st_.windows);
    if (graph::distributed()) announce(kEstimate, st_.band, {}, st_.v);
    Model m = initial_;
    m.vp = st_.v;
    const std::string band = f_.bands.empty() ? std::string("the data") : "band " + std::to_string(st_.band + 1);
    st_.wavelets =
        starwave::estimate_wavelets(m, current, band_survey, o_, f_.estimate, band_observed(s_, f_, st_.band), band);
    if (graph::distributed()) announce_wavelets(st_.wavelets);
    if (f_.on_wavelets) f_.on_wavelets(st_.band, st_.wavelets);
  }

  /// The band's time windows: around the arrivals at the window's velocity, or picked in the
  /// data modelled with the current model and wavelets (as the band filters them).
  void make_windows() {
    const Survey band_survey = band_of(with_wavelets(s_, st_.wavelets), f_, st_.band);
    Model m = initial_;
    m.vp = st_.v;
    std::vector<double> arrivals;
    if (f_.window.velocity > 0) {
      arrivals = velocity_arrivals(band_survey, f_.window);
    } else {
      if (graph::distributed()) announce(kPick, st_.band, {}, st_.v);
      arrivals = picked_arrivals(m, band_survey, o_);
    }
    st_.windows = windowed(band_survey, f_.window, arrivals).windows;
    if (graph::distributed()) announce_windows();
  }

  void announce_windows() {
    announce(kWindows, st_.band, {}, {});
    shared_windows(st_.windows);
  }

  bool stopping() { return result_.stopped = f_.stop_requested && f_.stop_requested(); }

  void save_state() {
    if (!f_.state.empty()) fwi_state::save(f_.state, st_, made_);
    if (f_.on_saved) f_.on_saved();
  }

  /// An iteration is complete: the state to disk, then the report.
  void report() {
    save_state();
    if (f_.on_iteration) f_.on_iteration(progress(st_, f_, evaluations_, t0_));
    t0_ = graph::clock_seconds();
    evaluations_ = 0;
  }

  const Model& initial_;
  const Survey& s_;
  const NumericalOptions& o_;
  const FwiOptions& f_;
  const std::vector<Setting> made_;
  State st_;
  Optimizer opt_;
  FwiResult result_;
  double t0_ = graph::clock_seconds();  // of the iteration (and the band start before it)
  int evaluations_ = 0;                 // since the last report
};

}  // namespace

NumericalOptions fwi_numerics(const Model& initial, NumericalOptions o) {
  if (o.pml_velocity == 0) o.pml_velocity = initial.vmax();
  return o;
}

FwiResult invert(const Model& initial, const Survey& s, const NumericalOptions& given, const FwiOptions& f) {
  const NumericalOptions o = fwi_numerics(initial, given);
  if (!f.inputs_checked) check_fwi_inputs(initial, s, o, f);
  std::vector<Setting> made = f.state.empty() ? std::vector<Setting>{} : fwi_state::made_with(initial, s, o, f);
  if (graph::rank() != 0) return follow(initial, s, o, f);
  return Inversion(initial, s, o, f, bounds(initial, f), std::move(made)).run();
}

}  // namespace starwave
