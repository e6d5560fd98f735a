// drivers/gradient.cpp — `starwave gradient --model vp.h5 --data obs.h5 --out grad.h5`,
// `starwave rtm --model vp.h5 --data obs.h5 --out image.h5`, and `starwave plan gradient|rtm …`
// (the same options; the memory plan printed, nothing run, nothing written; with --gpus or
// --nodes the run projected to more GPUs and nodes, drivers/project.hpp).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "drivers/commands.hpp"
#include "drivers/config.hpp"
#include "drivers/project.hpp"
#include "src/base/error.hpp"
#include "src/io/hdf5.hpp"
#include "src/runtime/runtime.hpp"
#include "src/runtime/scratch.hpp"
#include "src/safety/outputs.hpp"
#include "src/synthetic/synth.hpp"
#include "src/workflows/data_fit.hpp"
#include "src/workflows/gradient.hpp"
#include "src/workflows/source_estimate.hpp"

namespace starwave::commands {
namespace {

/// The image (finished from the raw stack: compensated, differentiated, muted, never all
/// zero) or the gradient, with their illumination, into `out`.
void write_result(bool rtm, const std::string& out, const Model& m, const Survey& s, const RtmOptions& rtm_options,
                  imaging::Misfit misfit, SourceEstimation estimate, const TimeWindow& window, const ImagingResult& r,
                  const std::vector<double>& source_gradient) {
  const std::vector<std::vector<float>> wavelets =
      estimate == SourceEstimation::kNone ? std::vector<std::vector<float>>{} : s.wavelets;
  if (rtm) {
    const RtmImage image = rtm_image(m, s, r, rtm_options);
    std::map<std::string, std::vector<double>> fields{
        {"/image", image.image}, {"/image_raw", r.values}, {"/illumination", r.illumination}};
    if (!r.receiver_illumination.empty()) fields["/receiver_illumination"] = r.receiver_illumination;
    io::write_fields(out, m, fields,
                     {{"mute_depth", image.mute_depth},
                      {"direct_smooth", direct_wave_smoothing(m, s, rtm_options)},
                      {"imaging_condition", double(int(rtm_options.condition))},
                      {"illumination", double(int(rtm_options.compensation))},
                      {"estimate_source", double(int(estimate))}},
                     {}, wavelets);
  } else {
    std::map<std::string, double> scalars = window_attributes(window);
    scalars.insert(
        {{"misfit", r.misfit}, {"misfit_function", double(int(misfit))}, {"estimate_source", double(int(estimate))}});
    io::write_fields(out, m, {{"/gradient", r.values}, {"/illumination", r.illumination}}, scalars, {}, wavelets,
                     source_gradient.empty()
                         ? io::Tables{}
                         : io::Tables{{"/source_gradient", {std::size_t(s.nshots()), source_gradient}}});
  }
}

/// --direct-wave (the word `direct`) and --direct-smooth, checked.
void finish_rtm_options(RtmOptions& rtm_options, const std::string& direct) {
  rtm_options.direct = parse_direct_wave(direct);
  if (!(rtm_options.smooth >= 0))
    throw InputError("--direct-smooth: must be 0 (the default length) or a smoothing length in m");
  if (rtm_options.smooth > 0 && rtm_options.direct != DirectWave::kSmooth)
    throw InputError("--direct-smooth: only with --direct-wave smooth");
}

/// The run's last line: what it wrote, the misfit, the time step and the seconds.
void say_written(bool rtm, const std::string& out, const Model& m, const Survey& s, const RtmOptions& rtm_options,
                 const ImagingResult& r, const Runtime& rt) {
  std::cout << "wrote " << out << ": " << (rtm ? "image" : "gradient") << " of " << s.nshots() << " shots";
  if (!rtm) std::cout << ", misfit " << r.misfit;
  if (rtm && rtm_options.direct == DirectWave::kSmooth)
    std::cout << " less the data modeled in the model smoothed over " << direct_wave_smoothing(m, s, rtm_options)
              << " m";
  std::cout << "; internal dt = " << r.time.dt << " s (k = " << r.time.k << "); " << r.seconds << " s on "
            << rt.cpu_workers() << " CPU + " << rt.cuda_workers() << " CUDA workers"
            << (rt.size() > 1 ? " on rank 0 of " + std::to_string(rt.size()) : "") << "\n";
}

/// What one `gradient`, `rtm` or `plan gradient|rtm` call asks, its options parsed and checked.
struct Call {
  std::string command;
  bool rtm = false, plan_only = false;
  NumericalOptions o;
  std::string model_path, data_path, out;
  RtmOptions rtm_options;
  imaging::Misfit misfit = imaging::Misfit::kL2;        // gradient: --misfit
  SourceEstimation estimate = SourceEstimation::kNone;  // --estimate-source
  std::vector<OffsetRange> offsets;                     // gradient: --offsets (one range), {} = all
  TimeWindow window;                                    // gradient: --window
  cli::CommonFlags flags;
  Projection projection;
  bool source_gradient = false;  // gradient: --source-gradient
};

Call parse_call(const std::string& command, int argc, char** argv, bool plan_only) {
  Call c;
  c.command = command;
  c.rtm = command == "rtm";
  c.plan_only = plan_only;
  cli::NumericalText numerical;
  std::string direct = "smooth", condition = imaging_condition_name(RtmOptions{}.condition),
              compensation = compensation_name(RtmOptions{}.compensation);
  cli::po::options_description desc(std::string(plan_only ? "starwave plan " : "starwave ") + command);
  auto out_value = cli::po::value<std::string>(&c.out);
  if (!plan_only) out_value->required();
  desc.add_options()("model", cli::po::value<std::string>(&c.model_path)->required(),
                     c.rtm ? "migration velocity model (HDF5)" : "velocity model the gradient is taken at (HDF5)")(
      "data", cli::po::value<std::string>(&c.data_path)->required(), "observed data file (HDF5, with /data)")(
      "out", out_value,
      plan_only ? "the run's output (plan: not touched)"
      : c.rtm   ? "output: /image, /image_raw, /illumination (and /receiver_illumination)"
                : "output: /gradient, /illumination, attribute misfit");
  if (c.rtm)
    desc.add_options()("direct-wave", cli::po::value<std::string>(&direct)->default_value("smooth"),
                       "what is subtracted from the data before migrating them: smooth (data modeled in a "
                       "smoothed copy of the migration model: the direct wave, not the reflections; works in "
                       "smooth and sharp models), model (data modeled in the migration model itself: only for a "
                       "smooth model), none")(
        "direct-smooth", cli::po::value<double>(&c.rtm_options.smooth)->default_value(0),
        "--direct-wave smooth: Gaussian smoothing length, m (0 = half a dominant wavelength at the model's "
        "mean velocity)")(
        "imaging-condition", cli::po::value<std::string>(&condition)->default_value(condition),
        "how /image is made: cross (the compensated stack's depth derivative), laplacian (its Laplacian "
        "filter, −∇²) or isic (the inverse-scattering imaging condition's stack, compensated)")(
        "illumination", cli::po::value<std::string>(&compensation)->default_value(compensation),
        "what the stack is divided by: source (Σu²), receiver (Σλ², the back-propagated data's) or both "
        "(√(Σu² Σλ²))");
  std::string misfit = misfit_name(c.misfit), estimate = source_estimation_name(c.estimate);
  std::string offsets, window;
  double window_velocity = 0;
  if (!c.rtm)
    desc.add_options()("misfit", cli::po::value<std::string>(&misfit)->default_value(misfit), misfit_help())(
        "offsets", cli::po::value<std::string>(&offsets),
        "the traces the misfit compares, by source–receiver offset in m: MIN,MAX (a cosine taper over a tenth of "
        "the range outside it)")("window", cli::po::value<std::string>(&window), window_help())(
        "window-velocity", cli::po::value<double>(&window_velocity), window_velocity_help())(
        "source-gradient", cli::po::bool_switch(&c.source_gradient),
        "also write /source_gradient: ∂Φ/∂w, the misfit's gradient with respect to each shot's wavelet samples "
        "(shots × nt)");
  desc.add_options()("estimate-source", cli::po::value<std::string>(&estimate)->default_value(estimate),
                     "estimate the source wavelet from the data first (written as /wavelet): band (one for every "
                     "shot), shot (one a shot), none (the data file's wavelet as it is)");
  cli::add_numerical_options(desc, c.o, numerical);
  cli::add_common_flags(desc, c.flags);
  if (plan_only) add_projection_options(desc, c.projection);
  cli::po::variables_map vm;
  cli::parse(plan_only ? "plan " + command : command, argc, argv, desc, vm);
  cli::finish_numerical_options(c.o, numerical);
  if (c.rtm) {
    finish_rtm_options(c.rtm_options, direct);
    c.rtm_options.condition = parse_imaging_condition(condition);
    c.rtm_options.compensation = parse_compensation(compensation);
  }
  if (plan_only) check_projection_options(vm, c.projection);
  if (!c.rtm) c.misfit = parse_misfit(misfit);
  if (vm.count("offsets")) c.offsets = parse_offsets(offsets, 1);
  if (vm.count("window-velocity") && !vm.count("window"))
    throw InputError("--window-velocity: only with --window (the window it places)");
  if (vm.count("window")) c.window = parse_window(window, window_velocity);
  c.estimate = parse_source_estimation(estimate);
  return c;
}

/// The evaluation (gradient or RTM stack) of the call on a running Runtime: the plan line
/// first unless quiet (always for a plan); only the first `simulated_shots` shots when
/// simulated (0: all).
ImagingResult evaluate(const Call& c, const Model& m, const Survey& s, GradientHooks hooks, int simulated_shots) {
  for (int shot = 0; shot < std::min(simulated_shots, s.nshots()); ++shot) hooks.shots.push_back(shot);
  hooks.plan_only = c.plan_only && simulated_shots == 0;
  hooks.misfit = c.misfit;
  if ((!c.flags.quiet || c.plan_only) && simulated_shots == 0)
    hooks.on_plan = [&](const MemoryNeed& need, std::uint64_t full_store, const ShotPlacement& where, int shots) {
      std::cout << c.command << ": " << s.nshots() << (s.nshots() == 1 ? " shot; " : " shots; ")
                << plan_text(need, full_store, where, shots) << std::endl;
    };
  return c.rtm ? rtm_stack(m, s, c.o, hooks, c.rtm_options) : misfit_gradient(m, s, c.o, hooks);
}

int run(const std::string& command, int argc, char** argv, bool plan_only = false) {
  const Call c = parse_call(command, argc, argv, plan_only);
  if (plan_only) scratch::set_planning(true);  // a plan makes and removes nothing in --scratch DIR
  std::optional<safety::OutputClaim> claim;    // a plan writes nothing
  if (!plan_only) {
    claim.emplace(c.out, "--out", c.flags.overwrite, std::vector<std::string>{c.model_path, c.data_path},
                  mpi::rank() == 0);
    safety::refuse_other_format_name(c.out, "--out", safety::Format::kHdf5);
  }

  const Model m = io::read_model(c.model_path);
  // The survey and /data's shape now; each shot's traces are read as it is submitted
  // (streamed: peak memory does not grow with the number of shots).
  Survey s = io::read_survey(c.data_path, true, [](int) { return false; });
  if (!c.offsets.empty()) s = offset_selected(s, c.offsets[0]);  // the misfit's traces, weighted
  if (c.window.on()) {
    check_window(c.window, s);
    if (c.window.velocity > 0) s = windowed(s, c.window, velocity_arrivals(s, c.window));
  }
  check_imaging_inputs(m, s, c.o, true);  // every refusal before StarPU starts
  GradientHooks hooks;
  hooks.observed = stream_observed_data(c.data_path, s).read;  // checks this rank's shots for NaN/Inf
  hooks.inputs_checked = true;
  if (c.rtm && c.rtm_options.direct == DirectWave::kSmooth)
    check_smoothing_length(m, c.rtm_options.smooth, "--direct-smooth");
  // A projection (plan --gpus/--nodes) simulates this run; the simulation build's starwave,
  // started by it, runs the first shots of the run itself (projection_shots) on its machine.
  const int simulated_shots = c.projection.wanted() ? projection_shots() : 0;
  if (c.projection.wanted() && simulated_shots == 0)
    return project(command, c.projection, m, s, c.o.precision == Precision::kDouble ? 8 : 4, argc, argv);

  Runtime rt;
  if (c.window.on() && c.window.velocity == 0 && !plan_only && simulated_shots == 0)
    s = windowed(s, c.window, picked_arrivals(m, s, c.o));  // the arrivals in the data modelled in m
  Survey used = s;                                          // the data file's wavelets, or the ones the data ask for
  if (c.estimate != SourceEstimation::kNone && !plan_only && simulated_shots == 0)
    used.wavelets = shared_wavelets(estimate_wavelets(m, s, s, c.o, c.estimate, hooks.observed, "the data"));
  std::vector<double> source_gradient;  // --source-gradient: rank 0's
  if (c.source_gradient && !plan_only && simulated_shots == 0) hooks.source_gradient = &source_gradient;
  const ImagingResult r = evaluate(c, m, used, hooks, simulated_shots);
  if (rt.rank() != 0) return 0;  // the result is rank 0's, and so is the output
  if (simulated_shots > 0) {
    std::printf("simulated: %.9g s\n", r.seconds);
    return 0;
  }
  if (plan_only) {
    say_planned(r, rt);
    return 0;
  }
  write_result(c.rtm, c.out, m, used, c.rtm_options, c.misfit, c.estimate, c.window, r, source_gradient);
  if (!c.flags.quiet) say_written(c.rtm, c.out, m, s, c.rtm_options, r, rt);
  return 0;
}

}  // namespace

void say_planned(const ImagingResult& r, const Runtime& rt) {
  std::cout << "plan: " << r.time.nsteps << " internal steps of " << r.time.dt << " s a shot, on " << rt.cpu_workers()
            << " CPU + " << rt.cuda_workers() << " CUDA workers"
            << (rt.size() > 1 ? " a rank, " + std::to_string(rt.size()) + " ranks" : "") << "; nothing run"
            << std::endl;
}

int gradient(int argc, char** argv) { return run("gradient", argc, argv); }
int rtm(int argc, char** argv) { return run("rtm", argc, argv); }
int plan(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "fwi") return plan_fwi(argc - 1, argv + 1);
  if (what != "gradient" && what != "rtm")
    throw InputError("name the run to plan, with its options: plan gradient …, plan rtm … or plan fwi …" +
                     (what.empty() ? std::string() : " (got '" + what + "')"));
  return run(what, argc - 1, argv + 1, true);
}

}  // namespace starwave::commands
