// drivers/fwi.cpp — `starwave fwi --model init.h5 --data obs.h5 --out result.h5
// --iterations N [--optimizer lbfgs|adam|gd] [--bands 3,5,8] [--smooth M] [--resume]
// [--true-model vp.h5] [...]`. fwi() reads as the run: parse the command, claim the
// outputs, read the inputs, refuse what cannot run, invert (drawing and reporting each
// iteration), write the result.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "drivers/commands.hpp"
#include "drivers/config.hpp"
#include "kernels/misfit_trace.hpp"
#include "src/base/error.hpp"
#include "src/io/hdf5.hpp"
#include "src/plot/figures.hpp"
#include "src/runtime/runtime.hpp"
#include "src/runtime/scratch.hpp"
#include "src/safety/outputs.hpp"
#include "src/safety/signals.hpp"
#include "src/workflows/data_fit.hpp"
#include "src/workflows/fwi.hpp"
#include "src/workflows/gradient.hpp"
#include "src/workflows/modeling.hpp"

namespace starwave::commands {
namespace {

/// What `starwave fwi` was asked to do.
struct FwiCommand {
  NumericalOptions o;
  FwiOptions f;
  std::string model_path, data_path, out, true_path, figures_dir;
  int figures_every = 1;
  cli::CommonFlags flags;
  std::vector<std::string> inputs() const { return {model_path, data_path, true_path}; }
  int bands() const { return std::max<int>(1, int(f.bands.size())); }
};

/// "3,5,8" → {3, 5, 8}; InputError naming --bands otherwise.
std::vector<double> parse_bands(const std::string& text) {
  if (text.empty()) return {};
  return cli::parse_numbers(text, "--bands: '" + text + "' is not a comma-separated list of frequencies in Hz");
}

/// The command line (and --config file), with every option that means nothing for the
/// chosen optimiser refused rather than ignored.
FwiCommand parse_command(int argc, char** argv, bool plan_only = false) {
  FwiCommand c;
  cli::NumericalText numerical;
  std::string bands_text, optimizer, misfit, estimate, offsets, window;
  double window_velocity = 0;
  long long seed = 1;  // read signed: Boost takes "-1" for an unsigned as 4294967295
  cli::po::options_description desc(plan_only ? "starwave plan fwi" : "starwave fwi");
  auto out_value = cli::po::value<std::string>(&c.out);
  if (!plan_only) out_value->required();
  desc.add_options()("model", cli::po::value<std::string>(&c.model_path)->required(), "initial velocity model (HDF5)")(
      "data", cli::po::value<std::string>(&c.data_path)->required(), "observed data file (HDF5, with /data)")(
      "out", out_value,
      plan_only ? "the run's output (plan: not touched)"
                : "output: /vp, /history/misfit, settings; the restart state goes to OUT.state")(
      "iterations", cli::po::value<int>(&c.f.iterations)->default_value(10), "iterations (per band with --bands)")(
      "vmin", cli::po::value<double>(&c.f.vmin)->default_value(0),
      "lower velocity bound, m/s (0 = 0.75 × initial min)")("vmax", cli::po::value<double>(&c.f.vmax)->default_value(0),
                                                            "upper velocity bound, m/s (0 = 1.25 × initial max)")(
      "memory", cli::po::value<int>(&c.f.memory)->default_value(5), "L-BFGS memory (pairs)")(
      "optimizer", cli::po::value<std::string>(&optimizer)->default_value("lbfgs"),
      "lbfgs, adam or gd (plain gradient descent)")("batch-shots",
                                                    cli::po::value<int>(&c.f.batch_shots)->default_value(0),
                                                    "adam, gd: shots per iteration, drawn from --seed (0 = all)")(
      "seed", cli::po::value<long long>(&seed)->default_value(1),
      "adam, gd: seed of the shot batches (0 … 4294967295)")(
      "learning-rate", cli::po::value<double>(&c.f.learning_rate)->default_value(20),
      "adam, gd: step in m/s (gd: the largest change)")(
      "bands", cli::po::value<std::string>(&bands_text),
      "frequency continuation: low-pass corners in Hz, e.g. 3,5,8 (data and wavelet filtered per band)")(
      "misfit", cli::po::value<std::string>(&misfit)->default_value("l2"), misfit_help())(
      "offsets", cli::po::value<std::string>(&offsets),
      "the traces the misfit compares, by source–receiver offset in m: MIN,MAX, or one MIN,MAX a band with ':' "
      "between (a cosine taper over a tenth of the range outside it)")("window", cli::po::value<std::string>(&window),
                                                                       window_help())(
      "window-velocity", cli::po::value<double>(&window_velocity), window_velocity_help())(
      "estimate-source", cli::po::value<std::string>(&estimate)->default_value("none"),
      "estimate the source wavelet at the start of each band from the data: band (one wavelet for every shot), "
      "shot (one a shot), none (the data file's wavelet as it is)")(
      "smooth", cli::po::value<double>(&c.f.smooth)->default_value(0),
      "Gaussian smoothing of the gradient, m (0 = none)")("resume", cli::po::bool_switch(&c.f.resume),
                                                          "continue from OUT.state (after a crash or a stop)")(
      "true-model", cli::po::value<std::string>(&c.true_path), "true model (synthetic studies): model error reported")(
      "fix-top", cli::po::value<double>(&c.f.fix_top)->default_value(0),
      "keep the velocity of rows shallower than this (m), e.g. a water layer")(
      "figures", cli::po::value<std::string>(&c.figures_dir),
      "folder for the pictures (default: OUT without .h5, plus _figures)")(
      "figures-every", cli::po::value<int>(&c.figures_every)->default_value(1),
      "draw the pictures every N iterations (0 = at the end only); each drawing models one shot");
  cli::add_numerical_options(desc, c.o, numerical);
  cli::add_common_flags(desc, c.flags);
  cli::po::variables_map vm;
  cli::parse(plan_only ? "plan fwi" : "fwi", argc, argv, desc, vm);
  cli::finish_numerical_options(c.o, numerical);
  FwiOptions& f = c.f;
  f.bands = parse_bands(bands_text);
  f.misfit = parse_misfit(misfit);
  f.estimate = parse_source_estimation(estimate);
  if (vm.count("offsets")) f.offsets = parse_offsets(offsets, c.bands());
  if (vm.count("window-velocity") && !vm.count("window"))
    throw InputError("--window-velocity: only with --window (the window it places)");
  if (vm.count("window")) f.window = parse_window(window, window_velocity);
  if (c.figures_every < 0) throw InputError("--figures-every: must be 0 (at the end only) or a number of iterations");
  if (seed < 0 || seed > 4294967295LL) throw InputError("--seed: must be a whole number from 0 to 4294967295");
  f.seed = unsigned(seed);
  if (!optim::parse_optimizer(optimizer, f.optimizer))
    throw InputError("--optimizer: must be 'lbfgs', 'adam' or 'gd' (got '" + optimizer + "')");
  const bool lbfgs = f.optimizer == optim::Optimizer::kLbfgs;
  cli::refuse_if_given(vm, "batch-shots", !lbfgs,
                       "with --optimizer lbfgs, which uses every shot (adam and gd take batches)");
  cli::refuse_if_given(vm, "seed", !lbfgs,
                       "with --optimizer lbfgs, which uses every shot (it draws adam's and gd's batches)");
  cli::refuse_if_given(vm, "seed", f.batch_shots > 0, "without --batch-shots (it draws the shots of each batch)");
  cli::refuse_if_given(vm, "learning-rate", !lbfgs, "with --optimizer lbfgs, whose line search chooses the step");
  cli::refuse_if_given(vm, "memory", lbfgs, "with --optimizer " + optimizer + " (it is L-BFGS's)");
  if (f.resume && c.flags.overwrite)
    throw InputError("--resume continues the saved run and --overwrite starts again: choose one");
  f.state = c.out + ".state";
  if (c.figures_dir.empty()) c.figures_dir = std::filesystem::path(c.out).replace_extension("").string() + "_figures";
  return c;
}

/// The restart state beside the result: no folder, device or input in its place (checked
/// now, not after the first iteration's work), and an existing one continued (--resume) or
/// replaced (--overwrite), never silently.
safety::OutputClaim claim_state(const FwiCommand& c) {
  safety::OutputClaim claim(c.f.state, "--out (for the restart state OUT.state)", true, c.inputs(), false);
  if (!c.f.resume && std::filesystem::exists(c.f.state) && !c.flags.overwrite)
    throw InputError(c.f.state +
                     ": a saved inversion state exists; pass --resume to continue it or --overwrite to "
                     "start again");
  return claim;
}

std::vector<std::string> drawings(const FwiCommand& c) {
  std::vector<std::string> names = {"initial.png",  "observed.png", "current.png",
                                    "gradient.png", "misfit.png",   "residual.png"};
  if (!c.true_path.empty()) names.push_back("true.png");
  if (c.f.estimate != SourceEstimation::kNone)
    for (int b = 1; b <= c.bands(); ++b) {
      names.push_back("wavelet_" + std::to_string(b) + ".png");
      names.push_back("wavelet_spectrum_" + std::to_string(b) + ".png");
    }
  return names;
}

/// |W(f)| of a wavelet over f = 0 … Nyquist of its FFT zero-padded to the power of two ≥ 2 nt.
std::vector<double> amplitude_spectrum(const std::vector<float>& w) {
  const long nt = long(w.size()), n = imaging::envelope_fft_length(nt);
  const std::vector<double> tw = imaging::fft_twiddles(n);
  std::vector<double> z(static_cast<std::size_t>(2 * n), 0.0);
  for (long t = 0; t < nt; ++t) z[std::size_t(2 * t)] = w[std::size_t(t)];
  imaging::fft(z.data(), n, tw.data(), -1);
  std::vector<double> a(std::size_t(n / 2 + 1));
  for (long k = 0; k <= n / 2; ++k) a[std::size_t(k)] = std::hypot(z[std::size_t(2 * k)], z[std::size_t(2 * k + 1)]);
  return a;
}

/// The run's inputs. The survey is read without its traces: each shot's are read (and
/// band-filtered) as it is submitted, every evaluation (streamed: peak memory does not
/// grow with the shots).
struct FwiInputs {
  Model initial, truth;  // truth: --true-model, when given
  Survey survey;
  std::vector<float> shown_traces;  // rank 0: the observed traces of the shot the pictures show
};

/// The shot the pictures show: the middle one.
int shown_shot(const Survey& s) { return s.nshots() / 2; }

void read_inputs(FwiCommand& c, FwiInputs& in) {
  in.initial = io::read_model(c.model_path);
  in.survey = io::read_survey(c.data_path, true, [](int) { return false; });
  // Each shot read once before any work: checked for NaN/Inf, its checksum kept for the
  // restart state's record, and the shown shot's traces for the pictures.
  StreamedData data = stream_observed_data(c.data_path, in.survey, mpi::rank() == 0 ? shown_shot(in.survey) : -1);
  c.f.observed = std::move(data.read);
  c.f.observed_checksums = std::move(data.checksums);
  in.shown_traces = std::move(data.kept);
  if (c.true_path.empty()) return;
  in.truth = io::read_model(c.true_path);
  const Model& a = in.initial;
  if (in.truth.dim != a.dim || in.truth.nz != a.nz || in.truth.ny != a.ny || in.truth.nx != a.nx)
    throw InputError(c.true_path + ": --true-model must have the initial model's shape");
  c.f.true_model = &in.truth;
}

/// The pictures: true (if given), initial and current model on one colour scale, the
/// latest gradient, the middle shot's observed gather and its residual on the same grey
/// scale, and the misfit curve. The first ones are drawn once a state exists (a run killed
/// before it leaves none, so the same command runs again; one killed after it is continued
/// with --resume, which replaces them); they go again if the run fails, and stay with a
/// stopped run's result.
class FwiPictures {
 public:
  FwiPictures(const FwiCommand& c, const FwiInputs& in, figures::Folder& folder)
      : c_(c), in_(in), folder_(folder), shown_(shown_shot(in.survey)) {
    const Survey& s = in.survey;
    const Model& scale = c.f.true_model ? in.truth : in.initial;
    lo_ = scale.vmin();
    hi_ = scale.vmax();
    one_.dim = s.dim;
    one_.dt = s.dt;
    one_.nt = s.nt;
    one_.sources = {s.sources[std::size_t(shown_)]};
    one_.wavelets = {s.wavelet(shown_)};
    one_.receivers = {s.receivers_of(shown_)};
    observed_.rows = s.nrec();
    observed_.cols = int(s.nt);
    observed_.values = in.shown_traces;
    data_scale_ = figures::clip_amplitude(observed_.values, 0.98);
    lines_ = s.receiver_lines(shown_);  // 3-D: the receiver lines side by side
    shot_name_ = "shot " + std::to_string(shown_);
  }

  /// After each save of the state: the first time, the pictures that do not change.
  void on_saved() {
    if (first_drawn_) return;
    first_drawn_ = true;
    folder_.create();
    if (c_.f.true_model) figures::plot_model(folder_.file("true.png"), field(in_.truth.vp), "true model", lo_, hi_);
    figures::plot_model(folder_.file("initial.png"), field(in_.initial.vp), "initial model", lo_, hi_);
    figures::plot_gather(folder_.file("observed.png"), observed_, in_.survey.dt, "observed data, " + shot_name_,
                         lines_);
    for (const auto& [band, w] : wavelets_) draw_wavelet(band, w);
  }

  /// After a band's source estimation: the shown shot's wavelet models its residual from
  /// now on, and is drawn with its amplitude spectrum (once the folder exists).
  void on_wavelets(int band, const std::vector<std::vector<float>>& w) {
    const std::vector<float>& mine = w.size() == 1 ? w[0] : w[std::size_t(shown_)];
    one_.wavelets = {mine};
    wavelets_.emplace_back(band, mine);
    if (first_drawn_) draw_wavelet(band, mine);
  }

  /// After each iteration: drawn every --figures-every iterations, else kept for finish().
  void on_iteration(const FwiProgress& p) {
    if (c_.figures_every > 0 && p.iteration % c_.figures_every == 0) {
      draw(p);
      undrawn_.reset();
      return;
    }
    undrawn_ = std::make_unique<Undrawn>(Undrawn{p, *p.model, *p.gradient, *p.precond, *p.history, *p.history_band});
    undrawn_->p.model = &undrawn_->model;
    undrawn_->p.gradient = &undrawn_->gradient;
    undrawn_->p.precond = &undrawn_->precond;
    undrawn_->p.history = &undrawn_->history;
    undrawn_->p.history_band = &undrawn_->history_band;
  }

  /// The pictures show the last iteration, whatever --figures-every.
  void finish() {
    if (undrawn_) draw(undrawn_->p);
  }

 private:
  void draw_wavelet(int band, const std::vector<float>& w) {
    const FwiOptions& f = c_.f;
    const double dt = in_.survey.dt;
    const std::string which = (f.bands.empty() ? std::string()
                                               : "band " + std::to_string(band + 1) + " (" +
                                                     number_text(f.bands[std::size_t(band)]) + " Hz), ") +
                              (f.estimate == SourceEstimation::kShot ? shot_name_ : "every shot");
    double top = 0;  // to 1.5 × the last time above 1 % of the peak
    for (float x : w) top = std::max(top, double(std::abs(x)));
    std::size_t end = 1;
    for (std::size_t t = 0; t < w.size(); ++t)
      if (std::abs(w[t]) >= 0.01 * top) end = t;
    end = std::min(w.size(), std::max<std::size_t>(2, end + end / 2 + 1));
    figures::Curve wave{
        "estimated wavelet, " + which, "time (s)", "amplitude", {w.begin(), w.begin() + long(end)}, false, {}, {}};
    for (std::size_t t = 0; t < end; ++t) wave.x.push_back(double(t) * dt);
    figures::plot_curve(folder_.file("wavelet_" + std::to_string(band + 1) + ".png"), wave);
    const std::vector<double> amplitude = amplitude_spectrum(w);
    const double df = 1.0 / (dt * double(2 * (amplitude.size() - 1)));
    double peak = 0;
    for (double a : amplitude) peak = std::max(peak, a);
    std::size_t last = 1;  // to 1.5 × the highest frequency above 1 % of the peak
    for (std::size_t k = 0; k < amplitude.size(); ++k)
      if (amplitude[k] >= 0.01 * peak) last = k;
    last = std::min(amplitude.size(), std::max<std::size_t>(2, last + last / 2 + 1));
    figures::Curve spectrum{"its amplitude spectrum, " + which, "frequency (Hz)", "|W(f)|", {}, false, {}, {}};
    for (std::size_t k = 0; k < last; ++k) {
      spectrum.values.push_back(amplitude[k]);
      spectrum.x.push_back(double(k) * df);
    }
    figures::plot_curve(folder_.file("wavelet_spectrum_" + std::to_string(band + 1) + ".png"), spectrum);
  }

  std::vector<std::pair<int, std::vector<float>>> wavelets_;  // the estimates so far, by band

  struct Undrawn {  // the latest iteration, when its pictures were skipped
    FwiProgress p;
    std::vector<double> model, gradient, precond, history, history_band;
  };

  std::size_t per_shot() const { return std::size_t(in_.survey.nrec()) * std::size_t(in_.survey.nt); }

  /// A model-sized field (a 3-D one shows three slices through its middle).
  figures::Field field(const std::vector<double>& v) const {
    const Model& m = in_.initial;
    return figures::Field{m.nz, m.ny, m.nx, m.dz, m.dy, m.dx, m.z0, m.y0, m.x0, std::vector<float>(v.begin(), v.end())};
  }

  void draw(const FwiProgress& p) {
    const FwiOptions& f = c_.f;
    const std::string when =
        "iteration " + std::to_string(p.iteration) +
        (f.bands.empty() ? std::string()
                         : " (band " + std::to_string(p.band + 1) + ": " + number_text(p.frequency) + " Hz)");
    figures::plot_model(folder_.file("current.png"), field(*p.model), "model after " + when, lo_, hi_);
    std::vector<double> pg(p.gradient->size());  // the preconditioned gradient: what moves the model
    for (std::size_t i = 0; i < pg.size(); ++i) pg[i] = (*p.precond)[i] * (*p.gradient)[i];
    figures::plot_section(folder_.file("gradient.png"), field(pg), "preconditioned gradient, " + when,
                          "dJ/dv, preconditioned");
    draw_misfit(p);
    draw_residual(p, when);
  }

  /// Φ at the start, then after each iteration; a band starts with Φ of its own data at
  /// the iteration the last one ended (so the curve jumps there, upwards).
  void draw_misfit(const FwiProgress& p) {
    figures::Curve curve{"misfit", "iteration", "misfit Φ (log scale)", *p.history, true, {}, {}};
    for (std::size_t k = 0; k < p.history_band->size(); ++k) {
      const double band = (*p.history_band)[k], at = double(k) - band;
      curve.x.push_back(at);
      if (!c_.f.bands.empty() && (k == 0 || band != (*p.history_band)[k - 1]))
        curve.marks.emplace_back(at, number_text(c_.f.bands[std::size_t(band)]) + " Hz");
    }
    figures::plot_curve(folder_.file("misfit.png"), curve);
  }

  /// The middle shot modeled in the current model, less its observed traces (the other
  /// ranks wait meanwhile).
  void draw_residual(const FwiProgress& p, const std::string& when) {
    const Survey& s = in_.survey;
    Model m = in_.initial;
    m.vp = *p.model;
    const std::vector<float> syn = model_shots_alone(m, one_, c_.o);
    figures::Image2D res;
    res.rows = s.nrec();
    res.cols = int(s.nt);
    res.values.resize(per_shot());
    const std::vector<float> w = s.trace_weights(shown_);  // dead traces and padding: none
    for (std::size_t i = 0; i < per_shot(); ++i)
      res.values[i] = w[i / std::size_t(s.nt)] * (syn[i] - observed_.values[i]);
    figures::plot_gather(folder_.file("residual.png"), res, s.dt,
                         "weighted residual (modeled − observed), " + shot_name_ + ", after " + when, lines_, 0.98,
                         data_scale_);
  }

  const FwiCommand& c_;
  const FwiInputs& in_;
  figures::Folder& folder_;
  const int shown_;
  double lo_ = 0, hi_ = 0, data_scale_ = 0;
  Survey one_;                 // the middle shot, for its residual gather
  figures::Image2D observed_;  // its data; residuals are drawn on its scale
  std::vector<int> lines_;
  std::string shot_name_;
  bool first_drawn_ = false;
  std::unique_ptr<Undrawn> undrawn_;
};

/// What the run says as it goes: the memory plan once, a live count of the shots done in
/// the running evaluation (on a terminal), one line per iteration with its estimated time
/// to the end.
class FwiReport {
 public:
  explicit FwiReport(const FwiCommand& c) : c_(c), live_(!c.flags.quiet && isatty(STDERR_FILENO)) {}

  bool live() const { return live_; }

  void on_shot_done(int done, int total) {
    if (done == 1) ++gradient_;
    std::fprintf(stderr, "\r  iteration %d, gradient %d: %d/%d shots done ", reported_.load() + 1, gradient_.load(),
                 done, total);
    std::fflush(stderr);
  }

  /// The first evaluation's plan; the others are the same or smaller (mini-batches).
  void on_plan(const MemoryNeed& need, std::uint64_t full_store, const ShotPlacement& where, int shots) {
    if (planned_) return;
    planned_ = true;
    std::printf("fwi: each gradient: %s\n", plan_text(need, full_store, where, shots).c_str());
    std::fflush(stdout);
  }

  /// Before the iteration's pictures: the live count is cleared.
  void iteration_done(const FwiProgress& p) {
    if (live_) std::fprintf(stderr, "\r\033[K");
    reported_ = p.iteration;
    gradient_ = 0;
  }

  void print(const FwiProgress& p) {
    total_ += p.seconds;
    if (first_ < 0) first_ = p.iteration;
    if (c_.flags.quiet) return;
    const double eta = total_ / (p.iteration - first_ + 1) * std::max(0, c_.f.iterations * c_.bands() - p.iteration);
    std::printf("iteration %3d", p.iteration);
    if (!c_.f.bands.empty()) std::printf("  band %d/%d (%g Hz)", p.band + 1, c_.bands(), p.frequency);
    std::printf("  misfit %.5g  relative %.4f", p.misfit, p.relative);
    if (p.model_error >= 0) std::printf("  model error %.4f", p.model_error);
    // Three digits below 100 s (a simulated run's iterations are compared with measured ones).
    std::printf(p.seconds < 100 ? "  %.3g s" : "  %.0f s", p.seconds);
    std::printf(" (%d gradients)  ETA %.0f s\n", p.evaluations, eta);
    std::fflush(stdout);
  }

 private:
  const FwiCommand& c_;
  const bool live_;
  std::atomic<int> reported_{0}, gradient_{0};  // iterations reported, gradients begun in the next
  bool planned_ = false;
  double total_ = 0;
  int first_ = -1;
};

void write_result(const FwiCommand& c, const FwiResult& r) {
  const FwiOptions& f = c.f;
  std::map<std::string, double> settings = window_attributes(f.window);
  settings.insert({{"iterations", r.iterations},
                   {"vmin", f.vmin},
                   {"vmax", f.vmax},
                   {"memory", f.memory},
                   {"smooth", f.smooth},
                   {"fix_top", f.fix_top},
                   {"order", c.o.order},
                   {"pml_width", c.o.pml_width},
                   {"free_surface", c.o.free_surface},
                   {"double_precision", c.o.precision == Precision::kDouble},
                   {"misfit_function", double(int(f.misfit))},
                   {"estimate_source", double(int(f.estimate))}});
  io::write_fwi_result(c.out, r.model, r.misfit, r.band, f.bands, settings, r.wavelets);
}

/// Each band's misfit from its start to its end, and the model error when it is known.
void print_summary(const FwiCommand& c, const FwiInputs& in, const FwiResult& r) {
  std::cout << "wrote " << c.out << ": " << r.iterations << " iterations"
            << (r.converged ? " (the last band's line search found no further decrease)" : "") << "\n";
  const std::vector<double>& bands = c.f.bands;
  for (int b = 0; b < c.bands(); ++b) {
    double start = -1, end = -1;
    for (std::size_t k = 0; k < r.misfit.size(); ++k)
      if (int(r.band[k]) == b) {
        if (start < 0) start = r.misfit[k];
        end = r.misfit[k];
      }
    if (start < 0) continue;
    std::printf("  misfit%s%s: %.5g → %.5g", bands.empty() ? "" : " at ",
                bands.empty() ? "" : (number_text(bands[std::size_t(b)]) + " Hz").c_str(), start, end);
    if (start > 0)
      std::printf(" (%.1f%%)\n", 100 * end / start);
    else
      std::printf(" (the model already explains the data)\n");
  }
  if (c.f.true_model)
    std::printf("  model error: %.4f → %.4f\n", model_error(in.initial.vp, in.truth),
                model_error(r.model.vp, in.truth));
}

}  // namespace

int plan_fwi(int argc, char** argv) {
  FwiCommand c = parse_command(argc, argv, true);
  scratch::set_planning(true);  // a plan makes and removes nothing in --scratch DIR
  FwiInputs in;
  read_inputs(c, in);
  check_fwi_inputs(in.initial, in.survey, c.o, c.f);
  Runtime rt;
  GradientHooks hooks;  // an evaluation of the first band, as fwi makes it: its plan, nothing run
  hooks.plan_only = true;
  hooks.inputs_checked = true;
  for (int k = 0; k < c.f.batch_shots; ++k) hooks.shots.push_back(k);  // a mini-batch's count
  hooks.on_plan = [&](const MemoryNeed& need, std::uint64_t full_store, const ShotPlacement& where, int shots) {
    std::cout << "fwi: each gradient: " << plan_text(need, full_store, where, shots) << std::endl;
  };
  const ImagingResult r = misfit_gradient(in.initial, in.survey, c.o, hooks);
  if (rt.rank() == 0) say_planned(r, rt);
  return 0;
}

int fwi(int argc, char** argv) {
  FwiCommand c = parse_command(argc, argv);

  // The outputs, claimed before any work: the result, the restart state beside it and the
  // pictures. None may be an input; under MPI rank 0 writes them all and holds the lock.
  const bool root = mpi::rank() == 0;
  const bool replace = c.flags.overwrite || c.f.resume;  // a resumed run replaces its result
  const safety::OutputClaim result(c.out, "--out", replace, c.inputs(), root);
  safety::refuse_other_format_name(c.out, "--out", safety::Format::kHdf5);
  const safety::OutputClaim state = claim_state(c);
  safety::refuse_folder_over_outputs(
      c.figures_dir, "--figures",
      {{c.out, "the result (--out)"}, {c.f.state, "the restart state (" + c.f.state + ")"}});
  figures::Folder folder(c.figures_dir, "--figures", drawings(c), replace, c.inputs(), root);

  FwiInputs in;
  read_inputs(c, in);
  check_fwi_inputs(in.initial, in.survey, c.o, c.f);  // every refusal before StarPU starts
  c.f.inputs_checked = true;                          // and only then
  check_resume(in.initial, in.survey, c.o, c.f);      // and before a picture: the saved state must be this run's
  if (!root) {                                        // the other ranks evaluate what rank 0 asks for, on their shots
    Runtime rt;
    return invert(in.initial, in.survey, c.o, c.f).stopped ? 130 : 0;
  }

  Runtime rt;
  FwiPictures pictures(c, in, folder);
  FwiReport report(c);
  c.f.on_saved = [&] { pictures.on_saved(); };
  c.f.on_wavelets = [&](int band, const std::vector<std::vector<float>>& w) { pictures.on_wavelets(band, w); };
  c.f.on_iteration = [&](const FwiProgress& p) {
    report.iteration_done(p);
    pictures.on_iteration(p);
    report.print(p);
  };
  if (report.live()) c.f.on_shot_done = [&](int done, int total) { report.on_shot_done(done, total); };
  if (!c.flags.quiet)
    c.f.on_plan = [&](const MemoryNeed& need, std::uint64_t full_store, const ShotPlacement& where, int shots) {
      report.on_plan(need, full_store, where, shots);
    };
  safety::arm_graceful_stop(true);  // a first SIGINT/SIGTERM ends the run at the next iteration, saved
  c.f.stop_requested = [] { return safety::stop_requested(); };

  const FwiResult r = invert(in.initial, in.survey, c.o, c.f);
  pictures.finish();
  write_result(c, r);
  folder.keep();
  if (r.stopped) {
    std::cerr << "starwave fwi: stopped by signal after iteration " << r.iterations << "; state saved in " << c.f.state
              << " (continue with --resume)\n";
    return 130;
  }
  if (!c.flags.quiet) print_summary(c, in, r);
  return 0;
}

}  // namespace starwave::commands
