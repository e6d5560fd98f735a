// drivers/main.cpp — `starwave SUBCOMMAND [options]`: dispatch, and every error turned into
// one line on stderr and a non-zero exit.
#include <cstring>
#include <iostream>
#include <string>

#include "drivers/commands.hpp"
#include "src/config.hpp"
#include "src/error.hpp"
#include "src/runtime.hpp"

namespace {

const char* kUsage =
    "usage: starwave SUBCOMMAND [options]   (starwave SUBCOMMAND --help for its options)\n"
    "  info     workers, StarPU/MPI/HDF5 versions, build options\n"
    "  synth    write a built-in velocity model (constant, layered, marmousi-like, marmousi2)\n"
    "  survey   write a regular surface acquisition with a Ricker wavelet\n"
    "  model    forward-model every shot of a survey: synthetic data\n"
    "  gradient misfit and its exact gradient with respect to the velocity\n"
    "  rtm      reverse-time migration image of observed data\n"
    "  fwi      full-waveform inversion (L-BFGS, bounds, restart with --resume)\n"
    "  plot     draw a model or a shot gather as PNG\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  try {
    if (cmd == "info") return starwave::commands::info(argc - 1, argv + 1);
    // Until the workflows distribute shots over ranks, several ranks would each do the whole
    // job and write the same files: refuse, on every rank, before any work.
    if (const int ranks = starwave::Runtime::launched_ranks(); ranks > 1 && cmd != "--help")
      throw starwave::InputError("runs over several MPI ranks are not supported yet (" + std::to_string(ranks) +
                                 " launched); start one process: it uses every core and GPU of its machine");
    if (cmd == "synth") return starwave::commands::synth(argc - 1, argv + 1);
    if (cmd == "survey") return starwave::commands::survey(argc - 1, argv + 1);
    if (cmd == "model") return starwave::commands::model(argc - 1, argv + 1);
    if (cmd == "gradient") return starwave::commands::gradient(argc - 1, argv + 1);
    if (cmd == "fwi") return starwave::commands::fwi(argc - 1, argv + 1);
    if (cmd == "rtm") return starwave::commands::rtm(argc - 1, argv + 1);
    if (cmd == "plot") return starwave::commands::plot(argc - 1, argv + 1);
    std::cerr << "starwave: unknown subcommand '" << cmd << "' (see starwave --help)\n";
    return 2;
  } catch (const starwave::cli::HelpShown&) {
    return 0;
  } catch (const starwave::InputError& e) {
    std::cerr << "starwave " << cmd << ": error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "starwave " << cmd << ": error: " << e.what() << "\n";
    return 1;
  }
}
