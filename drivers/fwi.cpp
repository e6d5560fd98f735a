// drivers/fwi.cpp — `starwave fwi --model init.h5 --data obs.h5 --out result.h5
// --iterations N [--vmin V] [--vmax V] [--resume] [--true-model vp.h5]`.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "drivers/commands.hpp"
#include "src/config.hpp"
#include "src/error.hpp"
#include "src/io.hpp"
#include "src/runtime.hpp"
#include "src/workflows/fwi.hpp"

namespace starwave::commands {
namespace {

std::atomic<int> g_signal{0};
extern "C" void on_signal(int sig) { g_signal = sig; }

}  // namespace

int fwi(int argc, char** argv) {
  NumericalOptions o;
  cli::NumericalText numerical;
  FwiOptions f;
  std::string model_path, data_path, out, true_path;
  cli::CommonFlags flags;
  cli::po::options_description desc("starwave fwi");
  desc.add_options()("model", cli::po::value<std::string>(&model_path)->required(), "initial velocity model (HDF5)")(
      "data", cli::po::value<std::string>(&data_path)->required(), "observed data file (HDF5, with /data)")(
      "out", cli::po::value<std::string>(&out)->required(),
      "output: /vp, /history/misfit, settings; the restart state goes to OUT.state")(
      "iterations", cli::po::value<int>(&f.iterations)->default_value(10), "L-BFGS iterations")(
      "vmin", cli::po::value<double>(&f.vmin)->default_value(0), "lower velocity bound, m/s (0 = 0.75 × initial min)")(
      "vmax", cli::po::value<double>(&f.vmax)->default_value(0), "upper velocity bound, m/s (0 = 1.25 × initial max)")(
      "memory", cli::po::value<int>(&f.memory)->default_value(5), "L-BFGS memory (pairs)")(
      "resume", cli::po::bool_switch(&f.resume), "continue from OUT.state (after a crash or a stop)")(
      "true-model", cli::po::value<std::string>(&true_path), "true model (synthetic studies): model error reported");
  cli::add_numerical_options(desc, o, numerical);
  cli::add_common_flags(desc, flags);
  cli::po::variables_map vm;
  cli::parse("fwi", argc, argv, desc, vm);
  cli::finish_numerical_options(o, numerical);
  f.state = out + ".state";
  if (!f.resume) {
    io::check_output(out, flags.overwrite);
    if (std::filesystem::exists(f.state) && !flags.overwrite)
      throw InputError(f.state +
                       ": a saved inversion state exists; pass --resume to continue it or --overwrite to "
                       "start again");
  } else {
    io::check_output(out, true);  // the result of a resumed run replaces the earlier one
  }

  const Model initial = io::read_model(model_path);
  const Survey s = io::read_survey(data_path, true);
  Model truth;
  if (!true_path.empty()) {
    truth = io::read_model(true_path);
    if (truth.nz != initial.nz || truth.nx != initial.nx)
      throw InputError(true_path + ": --true-model must have the initial model's shape");
    f.true_model = &truth;
  }

  Runtime rt;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  f.stop_requested = [] { return g_signal != 0; };
  double total = 0;
  int first = -1;
  f.on_iteration = [&](const FwiProgress& p) {
    total += p.seconds;
    if (first < 0) first = p.iteration;
    if (flags.quiet) return;
    const double eta = total / (p.iteration - first + 1) * (f.iterations - p.iteration);
    std::printf("iteration %3d  misfit %.5g  relative %.4f", p.iteration, p.misfit, p.relative);
    if (p.model_error >= 0) std::printf("  model error %.4f", p.model_error);
    std::printf("  %.1f s (%d gradients)  ETA %.0f s\n", p.seconds, p.evaluations, eta);
    std::fflush(stdout);
  };
  const FwiResult r = invert(initial, s, o, f);
  io::write_fwi_result(out, r.model, r.misfit,
                       {{"iterations", r.iterations},
                        {"vmin", f.vmin},
                        {"vmax", f.vmax},
                        {"memory", f.memory},
                        {"order", o.order},
                        {"pml_width", o.pml_width},
                        {"free_surface", o.free_surface},
                        {"double_precision", o.double_precision}});
  if (r.stopped) {
    std::cerr << "starwave fwi: stopped by signal after iteration " << r.iterations << "; state saved in " << f.state
              << " (continue with --resume)\n";
    return 130;
  }
  if (!flags.quiet)
    std::cout << "wrote " << out << ": " << r.iterations << " iterations, misfit " << r.misfit.front() << " → "
              << r.misfit.back() << (r.converged ? " (the line search found no further decrease)" : "") << "\n";
  return 0;
}

}  // namespace starwave::commands
