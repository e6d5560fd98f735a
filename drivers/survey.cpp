// drivers/survey.cpp — `starwave survey --model model.h5 --out survey.h5`.
#include <iostream>

#include "drivers/commands.hpp"
#include "drivers/config.hpp"
#include "src/base/error.hpp"
#include "src/io/hdf5.hpp"
#include "src/safety/outputs.hpp"
#include "src/synthetic/synth.hpp"

namespace starwave::commands {

int survey(int argc, char** argv) {
  SurveyOptions o;
  std::string model_path, out;
  cli::CommonFlags flags;
  cli::po::options_description desc("starwave survey");
  desc.add_options()("model", cli::po::value<std::string>(&model_path)->required(), "velocity model (HDF5)")(
      "out", cli::po::value<std::string>(&out)->required(), "output survey file (HDF5)")(
      "nshots", cli::po::value<int>(&o.nshots)->default_value(8),
      "sources, evenly spread across the surface (along x)")(
      "nshots-y", cli::po::value<int>(&o.nshots_y)->default_value(1), "3-D: lines of sources along y (an areal grid)")(
      "source-depth", cli::po::value<double>(&o.source_depth)->default_value(-1), "m (default: second row)")(
      "receiver-depth", cli::po::value<double>(&o.receiver_depth)->default_value(-1), "m (default: second row)")(
      "receiver-every", cli::po::value<int>(&o.receiver_every)->default_value(1),
      "a receiver every n columns (and rows, in 3-D)")(
      "frequency", cli::po::value<double>(&o.frequency)->default_value(10), "Ricker peak frequency (Hz)")(
      "dt", cli::po::value<double>(&o.dt)->default_value(0), "sample interval in s (0 = automatic)")(
      "t-max", cli::po::value<double>(&o.t_max)->default_value(0), "record length in s (0 = automatic)");
  cli::add_common_flags(desc, flags);
  cli::po::variables_map vm;
  cli::parse("survey", argc, argv, desc, vm);
  for (const char* depth : {"source-depth", "receiver-depth"})
    if (cli::given(vm, depth) && vm[depth].as<double>() < 0)
      throw InputError(std::string("--") + depth + ": must be a depth in m below the model top (got a negative value)");
  const safety::OutputClaim claim(out, "--out", flags.overwrite, {model_path}, true);
  safety::refuse_other_format_name(out, "--out", safety::Format::kHdf5);
  const Model m = io::read_model(model_path);
  const Survey s = regular_survey(m, o);
  io::write_survey(out, s, &m);
  if (!flags.quiet)
    std::cout << "wrote " << out << ": " << s.nshots() << " shots, " << s.nrec() << " receivers, nt = " << s.nt
              << " at dt = " << s.dt << " s, " << o.frequency << " Hz Ricker\n";
  return 0;
}

}  // namespace starwave::commands
