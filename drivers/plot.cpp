// drivers/plot.cpp — `starwave plot --in file.h5 --out picture.png [--dataset D] [--shot N]`.
#include <iostream>

#include "drivers/commands.hpp"
#include "src/config.hpp"
#include "src/error.hpp"
#include "src/figures.hpp"
#include "src/files.hpp"
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
  cli::require_nonnegative(vm, "vmin", "a velocity in m/s");
  cli::require_nonnegative(vm, "vmax", "a velocity in m/s");
  if (cli::given(vm, "vmin") != cli::given(vm, "vmax"))
    throw InputError("--vmin/--vmax: give both ends of the colour scale, or neither");
  if (cli::given(vm, "vmin") && !(vmin < vmax))
    throw InputError("--vmin/--vmax: the minimum must be below the maximum");
  if (cli::given(vm, "shot") && shot < 0) throw InputError("--shot: must be a shot index, 0 or more");
  const files::OutputClaim claim(out, "--out", flags.overwrite, {in}, true);
  bool gather = dataset == "/data";
  io::Array2D a;
  if (dataset.empty()) {  // a model's /vp, else a data file's gather
    gather = !io::has_dataset(in, "/vp");
    if (gather && !io::has_dataset(in, "/data"))
      throw InputError(in + ": holds neither /vp nor /data; name the dataset to draw with --dataset");
    a = io::read_slice(in, gather ? "/data" : "/vp", shot);
  } else {
    a = io::read_slice(in, dataset, shot);
  }
  figures::Image2D img{a.rows, a.cols, a.values};
  const bool velocity = !gather && (dataset.empty() || dataset == "/vp");
  cli::refuse_if_given(
      vm, "vmin", velocity,
      "on " + (dataset.empty() ? std::string("/data") : dataset) + " (the colour scale of a velocity model)");
  cli::refuse_if_given(vm, "shot", gather || a.layers > 1,
                       "on a 2-D dataset (it picks a shot of /data or a slice of a 3-D dataset)");
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
