// drivers/fwi.cpp — `starwave fwi --model init.h5 --data obs.h5 --out result.h5
// --iterations N [--optimizer lbfgs|adam|gd] [--bands 3,5,8] [--smooth M] [--resume]
// [--true-model vp.h5] [...]`.
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "drivers/commands.hpp"
#include "src/config.hpp"
#include "src/error.hpp"
#include "src/figures.hpp"
#include "src/files.hpp"
#include "src/io.hpp"
#include "src/runtime.hpp"
#include "src/workflows/fwi.hpp"
#include "src/workflows/imaging.hpp"
#include "src/workflows/modeling.hpp"

namespace starwave::commands {
namespace {

/// "3,5,8" → {3, 5, 8}; InputError naming --bands otherwise.
std::vector<double> parse_bands(const std::string& text) {
  if (text.empty()) return {};
  return cli::parse_numbers(text, "--bands: '" + text + "' is not a comma-separated list of frequencies in Hz");
}

}  // namespace

int fwi(int argc, char** argv) {
  NumericalOptions o;
  cli::NumericalText numerical;
  FwiOptions f;
  std::string model_path, data_path, out, true_path, figures_dir, bands_text;
  int figures_every = 1;
  long long seed = 1;  // read signed: Boost takes "-1" for an unsigned as 4294967295
  cli::CommonFlags flags;
  cli::po::options_description desc("starwave fwi");
  desc.add_options()("model", cli::po::value<std::string>(&model_path)->required(), "initial velocity model (HDF5)")(
      "data", cli::po::value<std::string>(&data_path)->required(), "observed data file (HDF5, with /data)")(
      "out", cli::po::value<std::string>(&out)->required(),
      "output: /vp, /history/misfit, settings; the restart state goes to OUT.state")(
      "iterations", cli::po::value<int>(&f.iterations)->default_value(10), "iterations (per band with --bands)")(
      "vmin", cli::po::value<double>(&f.vmin)->default_value(0), "lower velocity bound, m/s (0 = 0.75 × initial min)")(
      "vmax", cli::po::value<double>(&f.vmax)->default_value(0), "upper velocity bound, m/s (0 = 1.25 × initial max)")(
      "memory", cli::po::value<int>(&f.memory)->default_value(5), "L-BFGS memory (pairs)")(
      "optimizer", cli::po::value<std::string>(&f.optimizer)->default_value("lbfgs"),
      "lbfgs, adam or gd (plain gradient descent)")("batch-shots",
                                                    cli::po::value<int>(&f.batch_shots)->default_value(0),
                                                    "adam, gd: shots per iteration, drawn from --seed (0 = all)")(
      "seed", cli::po::value<long long>(&seed)->default_value(1),
      "adam, gd: seed of the shot batches (0 … 4294967295)")(
      "learning-rate", cli::po::value<double>(&f.learning_rate)->default_value(20),
      "adam, gd: step in m/s (gd: the largest change)")(
      "bands", cli::po::value<std::string>(&bands_text),
      "frequency continuation: low-pass corners in Hz, e.g. 3,5,8 (data and wavelet filtered per band)")(
      "smooth", cli::po::value<double>(&f.smooth)->default_value(0),
      "Gaussian smoothing of the gradient, m (0 = none)")("resume", cli::po::bool_switch(&f.resume),
                                                          "continue from OUT.state (after a crash or a stop)")(
      "true-model", cli::po::value<std::string>(&true_path), "true model (synthetic studies): model error reported")(
      "fix-top", cli::po::value<double>(&f.fix_top)->default_value(0),
      "keep the velocity of rows shallower than this (m), e.g. a water layer")(
      "figures", cli::po::value<std::string>(&figures_dir),
      "folder for the pictures (default: OUT without .h5, plus _figures)")(
      "figures-every", cli::po::value<int>(&figures_every)->default_value(1),
      "draw the pictures every N iterations (0 = at the end only); each drawing models one shot");
  cli::add_numerical_options(desc, o, numerical);
  cli::add_common_flags(desc, flags);
  cli::po::variables_map vm;
  cli::parse("fwi", argc, argv, desc, vm);
  cli::finish_numerical_options(o, numerical);
  f.bands = parse_bands(bands_text);
  if (figures_every < 0) throw InputError("--figures-every: must be 0 (at the end only) or a number of iterations");
  if (seed < 0 || seed > 4294967295LL) throw InputError("--seed: must be a whole number from 0 to 4294967295");
  f.seed = unsigned(seed);
  // Options that mean nothing here are refused, not ignored.
  const bool lbfgs = f.optimizer == "lbfgs";
  cli::refuse_if_given(vm, "batch-shots", !lbfgs,
                       "with --optimizer lbfgs, which uses every shot (adam and gd take batches)");
  cli::refuse_if_given(vm, "seed", !lbfgs,
                       "with --optimizer lbfgs, which uses every shot (it draws adam's and gd's batches)");
  cli::refuse_if_given(vm, "seed", f.batch_shots > 0, "without --batch-shots (it draws the shots of each batch)");
  cli::refuse_if_given(vm, "learning-rate", !lbfgs, "with --optimizer lbfgs, whose line search chooses the step");
  cli::refuse_if_given(vm, "memory", lbfgs, "with --optimizer " + f.optimizer + " (it is L-BFGS's)");
  if (f.resume && flags.overwrite)
    throw InputError("--resume continues the saved run and --overwrite starts again: choose one");

  // The outputs: the result, the restart state beside it and the pictures. None may be an
  // input; under MPI rank 0 writes them all and holds the result's lock.
  const bool root = mpi::rank() == 0;
  const std::vector<std::string> inputs = {model_path, data_path, true_path};
  f.state = out + ".state";
  const files::OutputClaim claim(out, "--out", flags.overwrite || f.resume, inputs, root);  // resumed: replaced
  files::refuse_other_format_name(out, "--out", files::Format::kHdf5);
  // The state beside it: no folder, device or input in its place (checked now, not after
  // the first iteration's work); its own existence is the question below.
  const files::OutputClaim state_claim(f.state, "--out (for the restart state OUT.state)", true, inputs, false);
  if (!f.resume && std::filesystem::exists(f.state) && !flags.overwrite)
    throw InputError(f.state +
                     ": a saved inversion state exists; pass --resume to continue it or --overwrite to "
                     "start again");
  if (figures_dir.empty()) figures_dir = (std::filesystem::path(out).replace_extension("").string()) + "_figures";
  {  // a folder under the result's (or state's) name would stop it being written, at the end
    namespace fs = std::filesystem;
    auto where = [](const std::string& p) {  // no error: a path that cannot be resolved compares as written
      std::error_code ec;
      const fs::path w = fs::weakly_canonical(fs::absolute(p, ec), ec);
      return ec ? fs::path(p).lexically_normal() : w;
    };
    const fs::path folder = where(figures_dir);
    if (folder == where(out))
      throw InputError("--figures: " + figures_dir + " is the name of the result (--out); choose another folder");
    if (folder == where(f.state))
      throw InputError("--figures: " + figures_dir + " is the name of the restart state (" + f.state +
                       "); choose another folder");
  }
  std::vector<std::string> drawings = {"initial.png",  "observed.png", "current.png",
                                       "gradient.png", "misfit.png",   "residual.png"};
  if (!true_path.empty()) drawings.push_back("true.png");
  figures::Folder pictures(figures_dir, "--figures", drawings, flags.overwrite || f.resume, inputs, root);

  const Model initial = io::read_model(model_path);
  // The survey and /data's shape now; each shot's traces are read (and band-filtered) as it
  // is submitted, every evaluation (streamed: peak memory does not grow with the shots).
  const Survey s = io::read_survey(data_path, true, [](int) { return false; });
  f.observed = stream_observed_data(data_path, s);  // checks this rank's shots for NaN/Inf
  Model truth;
  if (!true_path.empty()) {
    truth = io::read_model(true_path);
    if (truth.dim != initial.dim || truth.nz != initial.nz || truth.ny != initial.ny || truth.nx != initial.nx)
      throw InputError(true_path + ": --true-model must have the initial model's shape");
    f.true_model = &truth;
  }

  check_fwi_inputs(initial, s, o, f);  // every refusal before StarPU starts
  check_resume(initial, s, o, f);      // and before a picture is drawn: the saved state must be this run's
  if (!root) {                         // the other ranks evaluate what rank 0 asks for, on their shots
    Runtime rt;
    return invert(initial, s, o, f).stopped ? 130 : 0;
  }

  // Pictures: true (if given), initial and current model on one colour scale, the latest
  // gradient, the middle shot's observed gather and its residual on the same grey scale,
  // and the misfit curve. Drawn only once every refusal is behind us; removed again if the
  // run fails (a stopped run keeps them with its result).
  Runtime rt;
  const int shown = s.nshots() / 2;
  // Under MPI the middle shot may be another rank's: rank 0 reads it for itself.
  const Survey shown_data = io::read_survey(data_path, true, [&](int k) { return k == shown; });
  const Model& scale_model = f.true_model ? truth : initial;
  const double lo = scale_model.vmin(), hi = scale_model.vmax();
  auto field = [&](const std::vector<double>& v) {  // a 3-D model shows three slices through its middle
    return figures::Field{initial.nz, initial.ny, initial.nx, initial.dz, initial.dy,
                          initial.dx, initial.z0, initial.y0, initial.x0, std::vector<float>(v.begin(), v.end())};
  };

  Survey one;  // the middle shot, for its residual gather
  one.dim = s.dim;
  one.dt = s.dt;
  one.nt = s.nt;
  one.sources = {s.sources[std::size_t(shown)]};
  one.wavelets = {s.wavelet(shown)};
  one.receivers = {s.receivers_of(shown)};
  const std::size_t per_shot = std::size_t(s.nrec()) * std::size_t(s.nt);
  figures::Image2D observed;  // the middle shot's data; residuals are drawn on its scale
  observed.rows = s.nrec();
  observed.cols = int(s.nt);
  const float* shown_traces = shown_data.observed(shown);
  observed.values.assign(shown_traces, shown_traces + per_shot);
  const double data_scale = figures::clip_amplitude(observed.values, 0.98);
  const std::vector<int> lines = s.receiver_lines(shown);  // 3-D: the receiver lines side by side
  const std::string shot_name = "shot " + std::to_string(shown);
  // The first pictures once a state exists: a run killed before it leaves none, so the same
  // command runs again; one killed after it is continued with --resume, which replaces them.
  bool first_drawn = false;
  f.on_saved = [&] {
    if (first_drawn) return;
    first_drawn = true;
    pictures.create();
    if (f.true_model) figures::plot_model(pictures.file("true.png"), field(truth.vp), "true model", lo, hi);
    figures::plot_model(pictures.file("initial.png"), field(initial.vp), "initial model", lo, hi);
    figures::plot_gather(pictures.file("observed.png"), observed, s.dt, "observed data, " + shot_name, lines);
  };
  auto figures_now = [&](const FwiProgress& p) {
    const std::string when =
        "iteration " + std::to_string(p.iteration) +
        (f.bands.empty() ? std::string()
                         : " (band " + std::to_string(p.band + 1) + ": " + number_text(p.frequency) + " Hz)");
    figures::plot_model(pictures.file("current.png"), field(*p.model), "model after " + when, lo, hi);
    std::vector<double> pg(p.gradient->size());  // the preconditioned gradient: what moves the model
    for (std::size_t i = 0; i < pg.size(); ++i) pg[i] = (*p.precond)[i] * (*p.gradient)[i];
    figures::plot_section(pictures.file("gradient.png"), field(pg), "preconditioned gradient, " + when,
                          "dJ/dv, preconditioned");
    // J at the start, then after each iteration; a band starts with J of its own data at
    // the iteration the last one ended (so the curve jumps there, upwards).
    figures::Curve curve{"misfit", "iteration", "misfit J (log scale)", *p.history, true, {}, {}};
    for (std::size_t k = 0; k < p.history_band->size(); ++k) {
      const double band = (*p.history_band)[k], at = double(k) - band;
      curve.x.push_back(at);
      if (!f.bands.empty() && (k == 0 || band != (*p.history_band)[k - 1]))
        curve.marks.emplace_back(at, number_text(f.bands[std::size_t(band)]) + " Hz");
    }
    figures::plot_curve(pictures.file("misfit.png"), curve);
    Model m = initial;
    m.vp = *p.model;
    const std::vector<float> syn = model_shots_alone(m, one, o);  // the other ranks wait meanwhile
    figures::Image2D res;
    res.rows = s.nrec();
    res.cols = int(s.nt);
    res.values.resize(per_shot);
    const std::vector<float> w = s.trace_weights(shown);  // dead traces and padding: none
    for (std::size_t i = 0; i < per_shot; ++i) res.values[i] = w[i / std::size_t(s.nt)] * (syn[i] - shown_traces[i]);
    figures::plot_gather(pictures.file("residual.png"), res, s.dt,
                         "weighted residual (modeled − observed), " + shot_name + ", after " + when, lines, 0.98,
                         data_scale);
  };
  files::arm_graceful_stop(true);  // a first SIGINT/SIGTERM ends the run at the next iteration, saved
  f.stop_requested = [] { return files::stop_requested(); };
  // A live count of the shots done in the running evaluation, on a terminal only.
  const bool live = !flags.quiet && isatty(STDERR_FILENO);
  std::atomic<int> reported{0}, gradient{0};  // iterations reported, gradients begun in the next
  if (live)
    f.on_shot_done = [&](int done, int total) {
      if (done == 1) ++gradient;
      std::fprintf(stderr, "\r  iteration %d, gradient %d: %d/%d shots done ", reported.load() + 1, gradient.load(),
                   done, total);
      std::fflush(stderr);
    };
  bool planned = false;  // held here: each evaluation gets its own copy of the hook
  if (!flags.quiet)
    f.on_plan = [&planned](const MemoryNeed& need, std::uint64_t full_store, int in_flight) {
      if (planned) return;  // the first evaluation's; the others are the same or smaller (mini-batches)
      planned = true;
      std::printf("fwi: each gradient: %s\n", plan_text(need, full_store, in_flight).c_str());
      std::fflush(stdout);
    };
  const int nbands = std::max<int>(1, int(f.bands.size()));
  struct Undrawn {  // the latest iteration, when its pictures were skipped (--figures-every)
    FwiProgress p;
    std::vector<double> model, gradient, precond, history, history_band;
  };
  std::unique_ptr<Undrawn> undrawn;
  double total = 0;
  int first = -1;
  f.on_iteration = [&](const FwiProgress& p) {
    if (live) std::fprintf(stderr, "\r\033[K");
    reported = p.iteration;
    gradient = 0;
    if (figures_every > 0 && p.iteration % figures_every == 0) {
      figures_now(p);
      undrawn.reset();
    } else {  // kept for the drawing at the end
      undrawn = std::make_unique<Undrawn>(Undrawn{p, *p.model, *p.gradient, *p.precond, *p.history, *p.history_band});
      undrawn->p.model = &undrawn->model;
      undrawn->p.gradient = &undrawn->gradient;
      undrawn->p.precond = &undrawn->precond;
      undrawn->p.history = &undrawn->history;
      undrawn->p.history_band = &undrawn->history_band;
    }
    total += p.seconds;
    if (first < 0) first = p.iteration;
    if (flags.quiet) return;
    const double eta = total / (p.iteration - first + 1) * std::max(0, f.iterations * nbands - p.iteration);
    std::printf("iteration %3d", p.iteration);
    if (!f.bands.empty()) std::printf("  band %d/%d (%g Hz)", p.band + 1, nbands, p.frequency);
    std::printf("  misfit %.5g  relative %.4f", p.misfit, p.relative);
    if (p.model_error >= 0) std::printf("  model error %.4f", p.model_error);
    std::printf("  %.1f s (%d gradients)  ETA %.0f s\n", p.seconds, p.evaluations, eta);
    std::fflush(stdout);
  };
  const FwiResult r = invert(initial, s, o, f);
  if (undrawn) figures_now(undrawn->p);  // the pictures show the last iteration whatever N
  io::write_fwi_result(out, r.model, r.misfit, r.band, f.bands,
                       {{"iterations", r.iterations},
                        {"vmin", f.vmin},
                        {"vmax", f.vmax},
                        {"memory", f.memory},
                        {"smooth", f.smooth},
                        {"fix_top", f.fix_top},
                        {"order", o.order},
                        {"pml_width", o.pml_width},
                        {"free_surface", o.free_surface},
                        {"double_precision", o.double_precision}});
  pictures.keep();
  if (r.stopped) {
    std::cerr << "starwave fwi: stopped by signal after iteration " << r.iterations << "; state saved in " << f.state
              << " (continue with --resume)\n";
    return 130;
  }
  if (!flags.quiet) {
    std::cout << "wrote " << out << ": " << r.iterations << " iterations"
              << (r.converged ? " (the last band's line search found no further decrease)" : "") << "\n";
    for (int b = 0; b < nbands; ++b) {  // each band's misfit, from its start to its end
      double start = -1, end = -1;
      for (std::size_t k = 0; k < r.misfit.size(); ++k)
        if (int(r.band[k]) == b) {
          if (start < 0) start = r.misfit[k];
          end = r.misfit[k];
        }
      if (start < 0) continue;
      std::printf("  misfit%s%s: %.5g → %.5g", f.bands.empty() ? "" : " at ",
                  f.bands.empty() ? "" : (number_text(f.bands[std::size_t(b)]) + " Hz").c_str(), start, end);
      if (start > 0)
        std::printf(" (%.1f%%)\n", 100 * end / start);
      else
        std::printf(" (the model already explains the data)\n");
    }
    if (f.true_model) {
      std::printf("  model error: %.4f → %.4f\n", model_error(initial.vp, truth), model_error(r.model.vp, truth));
    }
  }
  return 0;
}

}  // namespace starwave::commands
