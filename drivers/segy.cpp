// drivers/segy.cpp — `starwave import --in shots.sgy --out data.h5 (--wavelet w.h5 |
// --ricker F0 [--delay S]) [--dim 2|3]` and `starwave export --in file.h5 --out file.sgy
// [--dataset D]` (DESIGN §4's SEG-Y mapping, src/segy.hpp).
#include <cmath>
#include <iostream>
#include <memory>

#include "drivers/commands.hpp"
#include "src/config.hpp"
#include "src/error.hpp"
#include "src/files.hpp"
#include "src/io.hpp"
#include "src/segy.hpp"

namespace starwave::commands {

int import_segy(int argc, char** argv) {
  std::string in, out, wavelet, model_path;
  double ricker_f = 0, delay = -1;
  int dim = 0;
  cli::CommonFlags flags;
  cli::po::options_description desc("starwave import");
  desc.add_options()("in", cli::po::value<std::string>(&in)->required(), "SEG-Y shot records (one FieldRecord a shot)")(
      "out", cli::po::value<std::string>(&out)->required(), "output data file (HDF5)")(
      "wavelet", cli::po::value<std::string>(&wavelet),
      "the source wavelet: /source/wavelet of this survey or data file (HDF5), of the records' dt and nt")(
      "ricker", cli::po::value<double>(&ricker_f), "the source wavelet: a Ricker of this peak frequency, Hz")(
      "delay", cli::po::value<double>(&delay), "--ricker: its delay, s (default 1.5 / F0)")(
      "model", cli::po::value<std::string>(&model_path),
      "the velocity model (HDF5) the data are for: positions take its dimension, and the data file records its "
      "spacing and origin as `model` does")(
      "dim", cli::po::value<int>(&dim)->default_value(0),
      "2 or 3: the positions' dimension, without --model (default: 2 when every y is the same, else 3)");
  cli::add_common_flags(desc, flags);
  cli::po::variables_map vm;
  cli::parse("import", argc, argv, desc, vm);
  if (vm.count("wavelet") == vm.count("ricker"))
    throw InputError("give the source wavelet with one of --wavelet FILE or --ricker F0");
  if (vm.count("delay") && !vm.count("ricker")) throw InputError("--delay: only with --ricker");
  if (vm.count("ricker") && !(ricker_f > 0 && std::isfinite(ricker_f)))
    throw InputError("--ricker: the peak frequency must be a positive number of Hz");
  if (vm.count("delay") && !(delay >= 0 && std::isfinite(delay)))
    throw InputError("--delay: must be a non-negative number of seconds");
  if (dim != 0 && dim != 2 && dim != 3) throw InputError("--dim: must be 2 or 3");
  if (dim != 0 && !model_path.empty()) throw InputError("--dim: not with --model (the model's dimension is used)");
  std::vector<std::string> inputs{in};
  if (!wavelet.empty()) inputs.push_back(wavelet);
  if (!model_path.empty()) inputs.push_back(model_path);
  const files::OutputClaim claim(out, "--out", flags.overwrite, inputs, true);
  std::unique_ptr<Model> model;
  if (!model_path.empty()) {
    model = std::make_unique<Model>(io::read_model(model_path));
    dim = model->dim;
  }

  Survey s = segy::read_shots(in, dim);  // dim 0: 2-D when every point shares one y
  if (!wavelet.empty()) {
    Survey w;
    try {
      w = io::read_survey(wavelet, false, [](int) { return false; });
    } catch (const InputError& e) {
      throw InputError(std::string("--wavelet: ") + e.what());
    }
    if (w.nt != s.nt || w.dt != s.dt)
      throw InputError("--wavelet: " + wavelet + " has nt = " + std::to_string(w.nt) +
                       ", dt = " + std::to_string(w.dt) + " s; the records have nt = " + std::to_string(s.nt) +
                       ", dt = " + std::to_string(s.dt) + " s");
    if (w.wavelets.size() != 1 && int(w.wavelets.size()) != s.nshots())
      throw InputError("--wavelet: " + wavelet + " has " + std::to_string(w.wavelets.size()) + " wavelets for " +
                       std::to_string(s.nshots()) + " shots");
    s.wavelets = w.wavelets;
  } else {
    s.wavelets.push_back(ricker(ricker_f, vm.count("delay") ? delay : 1.5 / ricker_f, s.dt, s.nt));
  }
  s.validate(in);
  io::DataWriter writer(out, s, model.get());
  for (int shot = 0; shot < s.nshots(); ++shot) writer.write_shot(shot, s.observed(shot));
  writer.commit();
  if (!flags.quiet)
    std::cout << "wrote " << out << ": " << s.nshots() << " shots × " << s.nrec() << " receivers × " << s.nt
              << " samples at dt = " << s.dt << " s, " << s.dim << "-D positions\n";
  return 0;
}

int export_segy(int argc, char** argv) {
  std::string in, out, dataset;
  cli::CommonFlags flags;
  cli::po::options_description desc("starwave export");
  desc.add_options()("in", cli::po::value<std::string>(&in)->required(),
                     "data file (its shot records), or a model, image or gradient file (HDF5)")(
      "out", cli::po::value<std::string>(&out)->required(), "output SEG-Y file")(
      "dataset", cli::po::value<std::string>(&dataset),
      "the dataset to write: /data (shot records) or a field such as /vp, /image, /gradient (default: /data, "
      "else /vp, else the file's only one of /image, /gradient)");
  cli::add_common_flags(desc, flags);
  cli::po::variables_map vm;
  cli::parse("export", argc, argv, desc, vm);
  const files::OutputClaim claim(out, "--out", flags.overwrite, {in}, true);
  if (dataset.empty()) {
    for (const char* d : {"/data", "/vp", "/image", "/gradient"})
      if (io::has_dataset(in, d)) {
        dataset = d;
        break;
      }
    if (dataset.empty())
      throw InputError(in + ": holds none of /data, /vp, /image, /gradient; name the dataset with --dataset");
  }
  if (dataset == "/data") {
    const Survey s = io::read_survey(in, true);
    segy::write_shots(out, s);
    if (!flags.quiet)
      std::cout << "wrote " << out << ": " << s.nshots() << " shot records × " << s.nrec() << " traces × " << s.nt
                << " samples\n";
    return 0;
  }
  const io::Volume v = io::read_field(in, dataset);
  Model g;
  g.dim = io::dataset_rank(in, dataset);
  g.nz = v.nz;
  g.ny = v.ny;
  g.nx = v.nx;
  g.dz = v.spacing[0];
  g.dy = g.dim == 3 ? v.spacing[1] : 0;
  g.dx = v.spacing[2];
  g.z0 = v.origin[0];
  g.y0 = g.dim == 3 ? v.origin[1] : 0;
  g.x0 = v.origin[2];
  if (!(g.dz > 0 && g.dx > 0 && (g.dim == 2 || g.dy > 0)))
    throw InputError(in + ": " + dataset + "'s spacing attribute must be positive");
  segy::write_field(out, g, std::vector<double>(v.values.begin(), v.values.end()));
  if (!flags.quiet)
    std::cout << "wrote " << out << ": " << dataset << " as " << g.ny * g.nx << " traces × " << g.nz
              << " samples (dz = " << g.dz << " m in the sample interval field, as mm)\n";
  return 0;
}

}  // namespace starwave::commands
