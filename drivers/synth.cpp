// drivers/synth.cpp — `starwave synth --kind K --out model.h5`.
#include <iostream>

#include "drivers/commands.hpp"
#include "drivers/config.hpp"
#include "src/io/hdf5.hpp"
#include "src/safety/outputs.hpp"
#include "src/synthetic/synth.hpp"

namespace starwave::commands {

int synth(int argc, char** argv) {
  SynthOptions o;
  std::string out;
  double smooth = 0;
  bool keep_water = false;
  cli::CommonFlags flags;
  cli::po::options_description desc("starwave synth");
  desc.add_options()("kind", cli::po::value<std::string>(&o.kind)->default_value(o.kind),
                     "constant, layered, marmousi-like, overthrust or marmousi2")(
      "out", cli::po::value<std::string>(&out)->required(), "output model file (HDF5)")(
      "nz", cli::po::value<int>(&o.nz)->default_value(0), "rows (0 = the kind's default)")(
      "nx", cli::po::value<int>(&o.nx)->default_value(0), "columns (0 = the kind's default)")(
      "ny", cli::po::value<int>(&o.ny)->default_value(0), "cells along y: a 3-D model (nz, ny, nx) (0 = 2-D)")(
      "spacing", cli::po::value<double>(&o.spacing)->default_value(0), "grid spacing in m (0 = default)")(
      "velocity", cli::po::value<double>(&o.velocity)->default_value(2000), "velocity of the constant kind (m/s)")(
      "file", cli::po::value<std::string>(&o.file), "marmousi2: the raw Marmousi2 float32 file")(
      "smooth", cli::po::value<double>(&smooth)->default_value(0), "Gaussian smoothing length in m (0 = none)")(
      "keep-water", cli::po::bool_switch(&keep_water),
      "with --smooth: the top rows of one velocity (the water layer) stay unsmoothed");
  cli::add_common_flags(desc, flags);
  cli::po::variables_map vm;
  cli::parse("synth", argc, argv, desc, vm);
  cli::refuse_if_given(vm, "keep-water", smooth > 0,
                       "without --smooth (it keeps the water layer out of the smoothing)");
  cli::refuse_if_given(vm, "velocity", o.kind == "constant",
                       "for --kind " + o.kind + " (only the constant kind takes it)");
  cli::refuse_if_given(vm, "file", o.kind == "marmousi2", "for --kind " + o.kind + " (only marmousi2 reads a file)");
  const safety::OutputClaim claim(out, "--out", flags.overwrite, {o.file}, true);
  safety::refuse_other_format_name(out, "--out", safety::Format::kHdf5);
  const Model m = smoothed(synthesize(o), smooth, keep_water);
  io::write_model(out, m);
  if (!flags.quiet)
    std::cout << "wrote " << out << ": " << o.kind << " model " << m.nz << " × "
              << (m.three_d() ? std::to_string(m.ny) + " × " : std::string()) << m.nx << " cells at " << m.dz << " m, "
              << m.vmin() << "–" << m.vmax() << " m/s\n";
  return 0;
}

}  // namespace starwave::commands
