// drivers/main.cpp — `starwave SUBCOMMAND [options]`: dispatch, and every error turned into
// one line on stderr and a non-zero exit.
#include <chrono>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>
#include <thread>

#include "drivers/commands.hpp"
#include "drivers/config.hpp"
#include "src/base/error.hpp"
#include "src/memory/room.hpp"
#include "src/runtime/host_memory.hpp"
#include "src/runtime/runtime.hpp"
#include "src/safety/inputs.hpp"
#include "src/safety/signals.hpp"
#include "starwave_version.hpp"

#ifdef STARWAVE_SIMGRID
// StarPU-SimGrid runs the application's main as a simulated actor: its header renames it.
#include <starpu_simgrid_wrap.h>
#endif

namespace {

const char* kUsage =
    "usage: starwave SUBCOMMAND [options]   (starwave SUBCOMMAND --help for its options;\n"
    "       starwave --version for the version and commit it was built from)\n"
    "  info     workers, StarPU/MPI/HDF5 versions, build options\n"
    "  synth    write a built-in velocity model (constant, layered, marmousi-like, marmousi2)\n"
    "  survey   write a regular surface acquisition with a Ricker wavelet\n"
    "  model    forward-model every shot of a survey: synthetic data\n"
    "  born     the Born (linearised) data J δv of a velocity perturbation\n"
    "  gradient misfit and its exact gradient with respect to the velocity\n"
    "  rtm      reverse-time migration image of observed data\n"
    "  lsrtm    least-squares RTM: the perturbation whose Born data fit the data (CG, --resume)\n"
    "  fwi      full-waveform inversion (L-BFGS, bounds, restart with --resume)\n"
    "  plan     what a gradient, rtm or fwi run would hold in memory, without running it\n"
    "  plot     draw a model or a shot gather as PNG\n"
    "  import   SEG-Y shot records to a data file\n"
    "  export   a data file's shot records, or a model, image or gradient, to SEG-Y\n";

/// Under several MPI ranks a failure on one rank must end them all (the others would wait
/// for its messages forever): print the failing rank's message, then abort the job.
int fail(const std::string& cmd, const std::string& message, int code, bool input_error) {
  // Input errors are usually the same on every rank (a bad option, a missing file): let
  // rank 0 speak for them all, so the message appears once; a rank whose failure is its
  // own (its shots cannot be read) still ends the job a moment later.
  if (input_error && starwave::mpi::rank() != 0) std::this_thread::sleep_for(std::chrono::seconds(1));
  // One write: under a launcher each piece of a line may travel on its own, and the MPI
  // library's abort notice could land between the rank's prefix and its message.
  std::cerr << (starwave::mpi::prefix() + "starwave " + starwave::printable(cmd) +
                ": error: " + starwave::printable(message) + "\n")
            << std::flush;
  if (starwave::mpi::size() > 1) starwave::mpi::abort_all(code);
  return code;
}

/// An exception that escapes a task (a worker thread) or a callback ends the job the same way.
void on_terminate() {
  std::string what = "unexpected failure";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
    }
  }
  std::cerr << (starwave::mpi::prefix() + starwave::error_prefix() + starwave::printable(what) + "\n")
            << std::flush;  // one write
  starwave::mpi::abort_all(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    if (argc > 2) {
      std::cerr << "starwave --version: error: unexpected word '" << starwave::printable(argv[2]) << "'\n";
      return 2;
    }
    std::cout << "starwave " STARWAVE_VERSION " (" STARWAVE_COMMIT ")\n";
    return 0;
  }
  const std::string cmd = argv[1];
  starwave::set_command(cmd);
  starwave::host_memory::one_arena_under_address_limit();  // before any thread
  starwave::host_memory::map_large_blocks();
  starwave::safety::install_signal_handlers();  // temporaries and locks go with any signal
  starwave::memory::name_failed_allocations();  // "out of memory" says what for
  try {
    starwave::mpi::start_if_launched();  // first: from here on any failure can end every rank
    if (starwave::mpi::size() > 1) std::set_terminate(on_terminate);
    const starwave::safety::InputPins pins;  // an input replaced or rewritten mid-run is refused
    if (cmd == "info") return starwave::commands::info(argc - 1, argv + 1);
    // Commands without shots are rank 0's alone (the others would write the same files).
    const bool single = cmd == "synth" || cmd == "survey" || cmd == "plot" || cmd == "import" || cmd == "export";
    if (single && starwave::mpi::rank() != 0) return 0;
    if (cmd == "synth") return starwave::commands::synth(argc - 1, argv + 1);
    if (cmd == "survey") return starwave::commands::survey(argc - 1, argv + 1);
    if (cmd == "model") return starwave::commands::model(argc - 1, argv + 1);
    if (cmd == "born") return starwave::commands::born(argc - 1, argv + 1);
    if (cmd == "gradient") return starwave::commands::gradient(argc - 1, argv + 1);
    if (cmd == "fwi") return starwave::commands::fwi(argc - 1, argv + 1);
    if (cmd == "rtm") return starwave::commands::rtm(argc - 1, argv + 1);
    if (cmd == "lsrtm") return starwave::commands::lsrtm(argc - 1, argv + 1);
    if (cmd == "plan") return starwave::commands::plan(argc - 1, argv + 1);
    if (cmd == "plot") return starwave::commands::plot(argc - 1, argv + 1);
    if (cmd == "import") return starwave::commands::import_segy(argc - 1, argv + 1);
    if (cmd == "export") return starwave::commands::export_segy(argc - 1, argv + 1);
    return fail(cmd, "unknown subcommand (see starwave --help)", 2, true);
  } catch (const starwave::cli::HelpShown&) {
    return 0;
  } catch (const starwave::InputError& e) {
    return fail(cmd, e.what() + starwave::cli::config_origin(e.what()), 2, true);
  } catch (const std::filesystem::filesystem_error& e) {  // our words, not the library's
    const std::string where = e.path1().empty() ? "" : e.path1().string() + ": ";
    return fail(cmd, where + starwave::os_cause(e.code().value()), 1, false);
  } catch (const std::bad_alloc&) {
    std::string why = "out of memory";
    try {  // what asked for it, and what bounds it: "out of memory reading d.h5: /data (…)"
      const std::string use = starwave::memory::out_of_memory_use();
      const starwave::memory::MemoryRoom room = starwave::memory::memory_room();
      why += (use.empty() ? std::string() : " reading " + use) + " (the run needs more than the " +
             starwave::bytes_text(double(room.bytes)) + " " + room.bound + ")";
    } catch (...) {
    }
    return fail(cmd, why, 1, false);
  } catch (const std::exception& e) {
    return fail(cmd, e.what(), 1, false);
  }
}
