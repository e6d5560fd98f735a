// drivers/model.cpp — `starwave model --model vp.h5 --survey s.h5 --out data.h5`.
#include <unistd.h>

#include <iostream>
#include <memory>

#include "drivers/commands.hpp"
#include "drivers/config.hpp"
#include "src/io/hdf5.hpp"
#include "src/runtime/runtime.hpp"
#include "src/safety/outputs.hpp"
#include "src/workflows/modeling.hpp"

namespace starwave::commands {

int model(int argc, char** argv) {
  NumericalOptions o;
  cli::NumericalText numerical;
  std::string model_path, survey_path, out;
  cli::CommonFlags flags;
  cli::po::options_description desc("starwave model");
  desc.add_options()("model", cli::po::value<std::string>(&model_path)->required(), "velocity model (HDF5)")(
      "survey", cli::po::value<std::string>(&survey_path)->required(), "survey or data file (HDF5)")(
      "out", cli::po::value<std::string>(&out)->required(), "output data file (HDF5)");
  cli::add_numerical_options(desc, o, numerical);
  cli::add_common_flags(desc, flags);
  cli::po::variables_map vm;
  cli::parse("model", argc, argv, desc, vm);
  cli::finish_numerical_options(o, numerical);
  cli::refuse_if_given(vm, "storage", false,
                       "in model: it chooses what the adjoint keeps (gradient, rtm and fwi take it)");
  cli::refuse_if_given(vm, "checkpoint-every", false,
                       "in model: it chooses what the adjoint keeps (gradient, rtm and fwi take it)");
  cli::refuse_if_given(vm, "store-compression", false,
                       "in model: it chooses what the adjoint keeps (gradient, rtm and fwi take it)");
  // Under MPI rank 0 writes, so rank 0 holds the output's lock.
  const safety::OutputClaim claim(out, "--out", flags.overwrite, {model_path, survey_path}, mpi::rank() == 0);
  safety::refuse_other_format_name(out, "--out", safety::Format::kHdf5);

  const Model m = io::read_model(model_path);
  const Survey s = io::read_survey(survey_path, false, [](int) { return false; });  // recorded data not needed
  check_modeling_inputs(m, s, o);  // every refusal before StarPU starts

  Runtime rt;
  const bool root = rt.rank() == 0;  // under MPI: every rank models its shots, rank 0 writes them all
  const bool tty = root && isatty(STDERR_FILENO) && !flags.quiet;
  ModelingReport report;
  std::unique_ptr<io::DataWriter> writer;  // each shot goes to disk as it completes
  if (root) writer = std::make_unique<io::DataWriter>(out, s, &m);
  model_each_shot(
      m, s, o, [&](int shot, const float* traces) { writer->write_shot(shot, traces); }, &report,
      [&](int done, int total) {
        if (tty) std::cerr << "\r  shots " << done << "/" << total << std::flush;
      });
  if (tty) std::cerr << "\n";
  if (!root) return 0;
  writer->commit();
  if (!flags.quiet) {
    std::cout << "wrote " << out << ": " << s.nshots() << " shots × " << s.nrec() << " receivers × " << s.nt
              << " samples; internal dt = " << report.time.dt << " s (k = " << report.time.k << ", stable limit "
              << report.time.dt_stable << " s); " << report.seconds << " s on " << rt.cpu_workers() << " CPU + "
              << rt.cuda_workers() << " CUDA workers"
              << (rt.size() > 1 ? " on rank 0 of " + std::to_string(rt.size()) : "") << " ("
              << report.cell_updates / report.seconds / 1e9 << " G cell updates/s)\n";
  }
  return 0;
}

}  // namespace starwave::commands
