// drivers/born.cpp — `starwave born --model v.h5 --perturbation dv.h5 --survey s.h5 --out d.h5`:
// the Born data J δv of every shot (docs/design.md §2), written as `model` writes its data.
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "drivers/commands.hpp"
#include "drivers/config.hpp"
#include "src/io/hdf5.hpp"
#include "src/runtime/runtime.hpp"
#include "src/safety/outputs.hpp"
#include "src/workflows/modeling.hpp"

namespace starwave::commands {

int born(int argc, char** argv) {
  NumericalOptions o;
  cli::NumericalText numerical;
  std::string model_path, perturbation_path, survey_path, out;
  cli::CommonFlags flags;
  cli::po::options_description desc("starwave born");
  desc.add_options()("model", cli::po::value<std::string>(&model_path)->required(), "background velocity model (HDF5)")(
      "perturbation", cli::po::value<std::string>(&perturbation_path)->required(),
      "velocity perturbation δv, m/s: a model file on the same grid (HDF5, /vp)")(
      "survey", cli::po::value<std::string>(&survey_path)->required(), "survey or data file (HDF5)")(
      "out", cli::po::value<std::string>(&out)->required(), "output data file (HDF5): the Born data J δv");
  cli::add_numerical_options(desc, o, numerical);
  cli::add_common_flags(desc, flags);
  cli::po::variables_map vm;
  cli::parse("born", argc, argv, desc, vm);
  cli::finish_numerical_options(o, numerical);
  for (const char* option : {"storage", "checkpoint-every", "store-compression"})
    cli::refuse_if_given(vm, option, false,
                         "in born: it chooses what the adjoint keeps (gradient, rtm and fwi take it)");
  const safety::OutputClaim claim(out, "--out", flags.overwrite, {model_path, perturbation_path, survey_path},
                                  mpi::rank() == 0);
  safety::refuse_other_format_name(out, "--out", safety::Format::kHdf5);

  const Model m = io::read_model(model_path);
  const std::vector<double> dv = io::read_perturbation(perturbation_path, m);
  const Survey s = io::read_survey(survey_path, false, [](int) { return false; });  // recorded data not needed
  check_modeling_inputs(m, s, o);  // every refusal before StarPU starts
  check_perturbation(m, dv, perturbation_path);
  if (std::all_of(dv.begin(), dv.end(), [](double x) { return x == 0; }))
    std::cerr << "starwave born: note: " << perturbation_path
              << ": the perturbation is zero everywhere, so the Born data are zeros\n";

  Runtime rt;
  const bool root = rt.rank() == 0;
  ModelingReport report;
  std::unique_ptr<io::DataWriter> writer;  // each shot goes to disk as it completes
  if (root) writer = std::make_unique<io::DataWriter>(out, s, &m);
  born_each_shot(
      m, dv, s, o, [&](int shot, const float* traces) { writer->write_shot(shot, traces); }, &report);
  if (!root) return 0;
  writer->commit();
  if (!flags.quiet)
    std::cout << "wrote " << out << ": Born data J δv of " << s.nshots() << " shots × " << s.nrec() << " receivers × "
              << s.nt << " samples; internal dt = " << report.time.dt << " s (k = " << report.time.k << "); "
              << report.seconds << " s on " << rt.cpu_workers() << " CPU workers\n";
  return 0;
}

}  // namespace starwave::commands
