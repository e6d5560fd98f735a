// drivers/plot.cpp — `starwave plot --in file.h5 --out picture.png [--dataset D] [--shot N]`.
#include <iostream>

#include "drivers/commands.hpp"
#include "src/config.hpp"
#include "src/error.hpp"
#include "src/figures.hpp"
#include "src/io.hpp"

namespace starwave::commands {

int plot(int argc, char** argv) {
  std::string in, out, dataset;
  int shot = 0;
  double vmin = 0, vmax = 0;
  cli::CommonFlags flags;
  cli::po::options_description desc("starwave plot");
  desc.add_options()("in", cli::po::value<std::string>(&in)->required(), "HDF5 file (model or data)")(
      "out", cli::po::value<std::string>(&out)->required(), "output PNG")(
      "dataset", cli::po::value<std::string>(&dataset), "dataset to draw (default: /vp, else /data)")(
      "shot", cli::po::value<int>(&shot)->default_value(0), "shot index for /data")(
      "vmin", cli::po::value<double>(&vmin)->default_value(0), "colour scale minimum (models)")(
      "vmax", cli::po::value<double>(&vmax)->default_value(0), "colour scale maximum (models)");
  cli::add_common_flags(desc, flags);
  cli::po::variables_map vm;
  cli::parse("plot", argc, argv, desc, vm);
  io::check_output(out, flags.overwrite);
  bool gather = dataset == "/data";
  io::Array2D a;
  if (dataset.empty()) {
    try {
      a = io::read_slice(in, "/vp", 0);
    } catch (const InputError&) {
      a = io::read_slice(in, "/data", shot);
      gather = true;
    }
  } else {
    a = io::read_slice(in, dataset, shot);
  }
  figures::Image2D img{a.rows, a.cols, a.values};
  const bool velocity = dataset.empty() || dataset == "/vp";
  if (gather)
    figures::plot_gather(out, img);
  else if (velocity)
    figures::plot_model(out, img, vmin, vmax);
  else  // gradients, images, illumination: grey-scale about zero
    figures::plot_section(out, img);
  if (!flags.quiet) std::cout << "wrote " << out << "\n";
  return 0;
}

}  // namespace starwave::commands
