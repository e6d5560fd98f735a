// drivers/lsrtm.cpp — `starwave lsrtm --model smooth.h5 --data obs.h5 --out image.h5
// --iterations N [--precondition illumination|receiver|both|none] [--resume] [--figures DIR]`. lsrtm()
// reads as the run: parse, claim the outputs, read the inputs, refuse what cannot run,
// iterate (drawing and reporting each iteration), write the image.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "drivers/commands.hpp"
#include "drivers/config.hpp"
#include "src/base/error.hpp"
#include "src/io/hdf5.hpp"
#include "src/plot/figures.hpp"
#include "src/runtime/mpi.hpp"
#include "src/runtime/runtime.hpp"
#include "src/safety/outputs.hpp"
#include "src/safety/signals.hpp"
#include "src/workflows/gradient.hpp"
#include "src/workflows/lsrtm.hpp"

namespace starwave::commands {
namespace {

/// The picture of iteration k: image_001.png …
std::string iteration_picture(int k) {
  char name[32];
  std::snprintf(name, sizeof name, "image_%03d.png", k);
  return name;
}

struct LsrtmCommand {
  NumericalOptions o;
  LsrtmOptions l;
  std::string model_path, data_path, out, figures_dir;
  cli::CommonFlags flags;
  std::vector<std::string> inputs() const { return {model_path, data_path}; }
};

LsrtmCommand parse_command(int argc, char** argv) {
  LsrtmCommand c;
  cli::NumericalText numerical;
  std::string precondition, mute;
  cli::po::options_description desc("starwave lsrtm");
  desc.add_options()("model", cli::po::value<std::string>(&c.model_path)->required(),
                     "background (migration) velocity model, smooth (HDF5)")(
      "data", cli::po::value<std::string>(&c.data_path)->required(), "observed data file (HDF5, with /data)")(
      "out", cli::po::value<std::string>(&c.out)->required(),
      "output: /image (δv, m/s), /rtm, /illumination, /history/misfit; the restart state goes to OUT.state")(
      "iterations", cli::po::value<int>(&c.l.iterations)->default_value(10),
      "conjugate-gradient iterations (each: one J and one Jᵀ a shot)")(
      "precondition", cli::po::value<std::string>(&precondition)->default_value(precondition_name(LsrtmOptions{})),
      "diagonal preconditioner: illumination (1 / the source illumination Σu²), receiver (1 / Σλ² of the "
      "back-propagated data), both (1 / √(Σu² Σλ²)) or none")(
      "mute", cli::po::value<std::string>(&mute)->default_value("acquisition"),
      "acquisition (δv held at 0 down to the deepest source or receiver, tapered over a wavelength below, as "
      "rtm mutes its image) or none")("fix-top", cli::po::value<double>(&c.l.fix_top)->default_value(0),
                                      "δv held at 0 above this depth, m (e.g. a water layer; 0 = none)")(
      "resume", cli::po::bool_switch(&c.l.resume), "continue from OUT.state (after a crash or a stop)")(
      "figures", cli::po::value<std::string>(&c.figures_dir),
      "folder for the pictures (default: OUT without .h5, plus _figures)");
  cli::add_numerical_options(desc, c.o, numerical);
  cli::add_common_flags(desc, c.flags);
  cli::po::variables_map vm;
  cli::parse("lsrtm", argc, argv, desc, vm);
  cli::finish_numerical_options(c.o, numerical);
  parse_precondition(precondition, c.l);
  if (mute != "acquisition" && mute != "none")
    throw InputError("--mute: must be 'acquisition' or 'none' (got '" + mute + "')");
  c.l.mute = mute == "acquisition";
  if (c.l.resume && c.flags.overwrite)
    throw InputError("--resume continues the saved run and --overwrite starts again: choose one");
  c.l.state = c.out + ".state";
  if (c.figures_dir.empty()) c.figures_dir = std::filesystem::path(c.out).replace_extension("").string() + "_figures";
  return c;
}

/// The restart state beside the image: an existing one continued (--resume) or replaced
/// (--overwrite), never silently.
safety::OutputClaim claim_state(const LsrtmCommand& c) {
  safety::OutputClaim claim(c.l.state, "--out (for the restart state OUT.state)", true, c.inputs(), false);
  if (!c.l.resume && std::filesystem::exists(c.l.state) && !c.flags.overwrite)
    throw InputError(c.l.state +
                     ": a saved lsrtm state exists; pass --resume to continue it or --overwrite to start again");
  return claim;
}

/// The pictures' names: RTM's image, the image after each iteration, the misfit curve.
std::vector<std::string> drawings(int iterations) {
  std::vector<std::string> names{"rtm.png", "misfit.png"};
  for (int k = 1; k <= iterations; ++k) names.push_back(iteration_picture(k));
  return names;
}

/// The pictures after iteration p.iteration: RTM's image (Jᵀ W b) at the start, then the
/// image and the misfit curve.
void draw(const Model& m, figures::Folder& folder, const LsrtmProgress& p) {
  auto field = [&](const std::vector<double>& v) {
    return figures::Field{m.nz, m.ny, m.nx, m.dz, m.dy, m.dx, m.z0, m.y0, m.x0, std::vector<float>(v.begin(), v.end())};
  };
  folder.create();
  if (p.iteration == 0) {
    figures::plot_section(folder.file("rtm.png"), field(*p.rtm), "RTM image (J^T W b)", "-dPhi/dv");
    return;
  }
  figures::plot_section(folder.file(iteration_picture(p.iteration)), field(*p.image),
                        "LSRTM image after iteration " + std::to_string(p.iteration), "dv (m/s)");
  figures::plot_curve(folder.file("misfit.png"),
                      figures::Curve{"data misfit", "iteration", "misfit (log scale)", *p.history, true, {}, {}});
}

}  // namespace

int lsrtm(int argc, char** argv) {
  LsrtmCommand c = parse_command(argc, argv);
  const bool root = mpi::rank() == 0;
  const bool replace = c.flags.overwrite || c.l.resume;
  const safety::OutputClaim result(c.out, "--out", replace, c.inputs(), root);
  safety::refuse_other_format_name(c.out, "--out", safety::Format::kHdf5);
  const safety::OutputClaim state = claim_state(c);
  safety::refuse_folder_over_outputs(
      c.figures_dir, "--figures",
      {{c.out, "the result (--out)"}, {c.l.state, "the restart state (" + c.l.state + ")"}});
  check_lsrtm_iterations(c.l);  // before the pictures' names are listed, one an iteration
  figures::Folder folder(c.figures_dir, "--figures", drawings(c.l.iterations), replace, c.inputs(), root);

  const Model m = io::read_model(c.model_path);
  const Survey s = io::read_survey(c.data_path, true, [](int) { return false; });
  StreamedData data = stream_observed_data(c.data_path, s);  // each shot checked once, streamed after
  c.l.observed = std::move(data.read);
  c.l.observed_checksums = std::move(data.checksums);
  check_lsrtm_inputs(m, s, c.o, c.l);  // every refusal before StarPU starts
  c.l.inputs_checked = true;
  check_lsrtm_resume(m, s, c.o, c.l);

  Runtime rt;
  if (root && !c.flags.quiet)
    c.l.on_plan = [&](const MemoryNeed& need, std::uint64_t full_store, const ShotPlacement& where, int shots) {
      std::printf("lsrtm: each iteration: %s\n", plan_text(need, full_store, where, shots).c_str());
      std::fflush(stdout);
    };
  safety::arm_graceful_stop(true);  // a first SIGINT/SIGTERM ends the run after the iteration, saved
  c.l.stop_requested = [] { return safety::stop_requested(); };
  double total = 0;
  int first = -1;
  const LsrtmResult r = starwave::lsrtm(m, s, c.o, c.l, [&](const LsrtmProgress& p) {
    if (first < 0) first = p.iteration;
    total += p.seconds;
    if (!c.flags.quiet) {
      const double eta = total / (p.iteration - first + 1) * std::max(0, p.iterations - p.iteration);
      std::printf("iteration %3d  misfit %.5g  relative %.4f  %.3g s  ETA %.0f s\n", p.iteration, p.misfit,
                  p.misfit0 > 0 ? p.misfit / p.misfit0 : 0.0, p.seconds, eta);
      std::fflush(stdout);
    }
    draw(m, folder, p);
  });
  if (!root) return r.stopped ? 130 : 0;
  io::write_fields(c.out, m, {{"/image", r.image}, {"/rtm", r.rtm}, {"/illumination", r.illumination}},
                   {{"iterations", double(r.iterations)},
                    {"precondition", !c.l.precondition ? 0.0 : 1.0 + double(int(c.l.illumination))}},
                   {{"/history/misfit", r.misfit}});
  folder.keep();
  if (r.stopped) {
    std::cerr << "starwave lsrtm: stopped by signal after iteration " << r.iterations << "; state saved in "
              << c.l.state << " (continue with --resume)\n";
    return 130;
  }
  if (!c.flags.quiet)
    std::printf("wrote %s: LSRTM image after %d iterations; data misfit %.5g → %.5g (%.1f%%)\n", c.out.c_str(),
                r.iterations, r.misfit.front(), r.misfit.back(),
                r.misfit.front() > 0 ? 100 * r.misfit.back() / r.misfit.front() : 0.0);
  return 0;
}

}  // namespace starwave::commands
