// drivers/segy.cpp — `starwave import --in shots.sgy --out data.h5 (--wavelet w.h5 |
// --ricker F0 [--delay S]) [--dim 2|3]`, `starwave import --velocity --in vp.sgy --out
// vp.h5 [--spacing DZ,DX] [--scale S]` and `starwave export --in file.h5 --out file.sgy
// [--dataset D]` (docs/design.md §4's SEG-Y mapping, src/io/segy.hpp).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "drivers/commands.hpp"
#include "drivers/config.hpp"
#include "src/base/error.hpp"
#include "src/io/hdf5.hpp"
#include "src/io/segy.hpp"
#include "src/numerics/propagator.hpp"
#include "src/safety/outputs.hpp"

namespace starwave::commands {
namespace {

/// "12.5" → {12.5} (every axis), "10,12.5" → {10, 12.5}; InputError naming --spacing.
std::vector<double> parse_spacing(const std::string& text) {
  std::ostringstream message;
  message << "--spacing: '" << text << "' is not one spacing in m, or dz,dx or dz,dy,dx, each between "
          << Model::kMinSpacing << " and " << Model::kMaxSpacing;
  const std::vector<double> out = cli::parse_numbers(text, message.str());
  cli::refuse_unless(out.size() <= 3 && std::all_of(out.begin(), out.end(), Model::spacing_ok), message.str());
  return out;
}

/// `import --velocity`: a velocity model stored one trace per column, to a model file.
int import_velocity(const std::string& in, const std::string& out, const std::string& spacing_text, double scale,
                    const cli::CommonFlags& flags) {
  const std::vector<double> spacing = spacing_text.empty() ? std::vector<double>{} : parse_spacing(spacing_text);
  const safety::OutputClaim claim(out, "--out", flags.overwrite, {in}, true);
  safety::refuse_other_format_name(out, "--out", safety::Format::kHdf5);
  Model m = segy::read_field(in, spacing);
  for (double& v : m.vp) v *= scale;
  m.validate(in);
  auto text = [](double v) {
    std::ostringstream os;
    os << v;
    return os.str();
  };
  if (m.vmax() < 100)
    throw InputError(in + ": velocities " + text(m.vmin()) + "…" + text(m.vmax()) +
                     (scale != 1 ? " after --scale " + text(scale) : std::string()) +
                     ": not m/s (km/s? give --scale 1000; ft/s: --scale 0.3048)");
  io::write_model(out, m);
  if (!flags.quiet)
    std::cout << "wrote " << out << ": /vp " << m.shape_text() << ", spacing dz = " << text(m.dz)
              << (m.three_d() ? ", dy = " + text(m.dy) : std::string()) << ", dx = " << text(m.dx) << " m ("
              << (spacing.empty() ? std::string("from the headers: dz from the sample interval as mm, dx") +
                                        (m.three_d() ? " and dy from CDP_X and CDP_Y" : " from CDP_X")
                                  : std::string("--spacing"))
              << "), origin x = " << text(m.x0) << (m.three_d() ? ", y = " + text(m.y0) : std::string())
              << " m, velocities " << text(m.vmin()) << "…" << text(m.vmax()) << " m/s\n";
  return 0;
}

/// What `import` was asked: its options, checked against one another.
struct ImportCommand {
  std::string in, out, wavelet, model_path, spacing_text;
  double ricker_f = 0, delay = -1, scale = 1;
  bool velocity = false, delay_given = false;
  int dim = 0;
  cli::CommonFlags flags;
};

ImportCommand parse_import(int argc, char** argv) {
  ImportCommand c;
  cli::po::options_description desc("starwave import");
  desc.add_options()("in", cli::po::value<std::string>(&c.in)->required(),
                     "SEG-Y shot records (one FieldRecord a shot), or with --velocity a velocity model")(
      "out", cli::po::value<std::string>(&c.out)->required(), "output data file (HDF5)")(
      "wavelet", cli::po::value<std::string>(&c.wavelet),
      "the source wavelet: /source/wavelet of this survey or data file (HDF5), of the records' dt and nt")(
      "ricker", cli::po::value<double>(&c.ricker_f), "the source wavelet: a Ricker of this peak frequency, Hz")(
      "delay", cli::po::value<double>(&c.delay), "--ricker: its delay, s (default 1.5 / F0)")(
      "model", cli::po::value<std::string>(&c.model_path),
      "the velocity model (HDF5) the data are for: positions take its dimension, and the data file records its "
      "spacing and origin as `model` does")(
      "dim", cli::po::value<int>(&c.dim)->default_value(0),
      "2 or 3: the positions' dimension, without --model (default: 2 when every y is the same, else 3)")(
      "velocity", cli::po::bool_switch(&c.velocity),
      "the file holds a velocity model, one trace per column (samples down z), not shot records: written as a "
      "model file's /vp")(
      "spacing", cli::po::value<std::string>(&c.spacing_text),
      "--velocity: the grid's spacing in m, dz,dx (2-D), dz,dy,dx (3-D) or one value for all (default: from the "
      "headers, dz from the sample interval as mm, dx and dy from CDP_X and CDP_Y)")(
      "scale", cli::po::value<double>(&c.scale)->default_value(1),
      "--velocity: multiply the values by this to make m/s (1000 for km/s, 0.3048 for ft/s)");
  cli::add_common_flags(desc, c.flags);
  cli::po::variables_map vm;
  cli::parse("import", argc, argv, desc, vm);
  c.delay_given = vm.count("delay") > 0;
  for (const char* o : {"spacing", "scale"})
    cli::refuse_if_given(vm, o, c.velocity, "without --velocity (it reads a velocity model's grid)");
  if (c.velocity) {
    for (const char* o : {"wavelet", "ricker", "delay", "model", "dim"})
      cli::refuse_if_given(vm, o, false, "with --velocity (it is for shot records)");
    if (!(c.scale > 0 && std::isfinite(c.scale))) throw InputError("--scale: must be a positive number");
    return c;
  }
  if (vm.count("wavelet") == vm.count("ricker"))
    throw InputError("give the source wavelet with one of --wavelet FILE or --ricker F0");
  if (c.delay_given && !vm.count("ricker")) throw InputError("--delay: only with --ricker");
  if (vm.count("ricker") && !(c.ricker_f > 0 && std::isfinite(c.ricker_f)))
    throw InputError("--ricker: the peak frequency must be a positive number of Hz");
  if (c.delay_given && !(c.delay >= 0 && std::isfinite(c.delay)))
    throw InputError("--delay: must be a non-negative number of seconds");
  if (c.dim != 0 && c.dim != 2 && c.dim != 3) throw InputError("--dim: must be 2 or 3");
  if (c.dim != 0 && !c.model_path.empty()) throw InputError("--dim: not with --model (the model's dimension is used)");
  return c;
}

/// The records' source wavelet: --wavelet's file (of the records' nt and dt, one wavelet or
/// one per shot) or a Ricker of --ricker's peak frequency.
void attach_wavelet(const ImportCommand& c, Survey& s) {
  if (!c.wavelet.empty()) {
    Survey w;
    try {
      w = io::read_survey(c.wavelet, false, [](int) { return false; });
    } catch (const InputError& e) {
      throw InputError(std::string("--wavelet: ") + e.what());
    }
    // SEG-Y holds dt in whole µs: a dt within rounding of the records' is theirs.
    if (w.nt != s.nt || !(std::abs(w.dt - s.dt) <= 1e-9 * s.dt))
      throw InputError("--wavelet: " + c.wavelet + " has nt = " + std::to_string(w.nt) + ", dt = " + number_text(w.dt) +
                       " s; the records have nt = " + std::to_string(s.nt) + ", dt = " + number_text(s.dt) + " s");
    if (w.wavelets.size() != 1 && int(w.wavelets.size()) != s.nshots())
      throw InputError("--wavelet: " + c.wavelet + " has " + std::to_string(w.wavelets.size()) + " wavelets for " +
                       std::to_string(s.nshots()) + " shots");
    s.wavelets = w.wavelets;
    return;
  }
  // The same limits as survey's --frequency, and a pulse inside the record.
  if (!(c.ricker_f < 0.25 / s.dt))
    throw InputError("--ricker: a " + number_text(c.ricker_f) + " Hz Ricker is not sampled by " + c.in + "'s dt " +
                     number_text(s.dt) + " s (its Nyquist is " + number_text(0.5 / s.dt) +
                     " Hz; keep the peak below half of it)");
  const double t0 = c.delay_given ? c.delay : 1.5 / c.ricker_f, length = (s.nt - 1) * s.dt;
  if (!(t0 < length))
    throw InputError(std::string(c.delay_given ? "--delay: the pulse's peak at " + number_text(t0) + " s"
                                               : "--ricker: the pulse's peak at its default delay 1.5 / F0 = " +
                                                     number_text(t0) + " s (give --delay)") +
                     " lies past the end of " + c.in + "'s records (" + number_text(length) + " s)");
  s.wavelets.push_back(ricker(c.ricker_f, t0, s.dt, s.nt));
}

/// The records must lie in the model they are for (shots counted in file order, from 0). A dead
/// trace's receiver outside it (field files often give dead channels 0 or junk coordinates)
/// is placed at its shot's source: weighted 0, its place changes nothing. Returns how many.
int place_records_inside(const Model& model, Survey& s, const std::string& in) {
  int moved = 0;
  for (int shot = 0; shot < s.nshots(); ++shot) {
    const std::string record = in + ": shot record " + std::to_string(shot) + " (in file order, from 0)";
    const Position& src = s.sources[std::size_t(shot)];
    require_inside(model, src, record + ", the source");
    const std::vector<float> w = s.trace_weights(shot);  // every receiver, the padding's 0 too
    for (int r = 0; r < s.nrec(); ++r) {
      const Position p = s.receivers_of(shot)[std::size_t(r)];
      if (w[std::size_t(r)] == 0 && !inside(model, p)) {
        if (s.receivers.size() == 1 && s.nshots() > 1) s.receivers.assign(std::size_t(s.nshots()), s.receivers[0]);
        s.receivers[s.receivers.size() == 1 ? 0 : std::size_t(shot)][std::size_t(r)] = src;
        moved += r < s.count(shot);  // a trace of the file, not padding
        continue;
      }
      require_inside(model, p, record + ", trace " + std::to_string(r + 1) + "'s receiver");
    }
  }
  return moved;
}

/// `import` of shot records: positions from the headers, the wavelet given, to a data file.
int import_shots(ImportCommand& c) {
  std::vector<std::string> inputs{c.in};
  if (!c.wavelet.empty()) inputs.push_back(c.wavelet);
  if (!c.model_path.empty()) inputs.push_back(c.model_path);
  const safety::OutputClaim claim(c.out, "--out", c.flags.overwrite, inputs, true);
  safety::refuse_other_format_name(c.out, "--out", safety::Format::kHdf5);
  std::unique_ptr<Model> model;
  if (!c.model_path.empty()) {
    model = std::make_unique<Model>(io::read_model(c.model_path));
    c.dim = model->dim;
  }
  Survey s = segy::read_shots(c.in, c.dim);  // dim 0: 2-D when every point shares one y
  attach_wavelet(c, s);
  s.validate(c.in);
  const int moved = model ? place_records_inside(*model, s, c.in) : 0;
  io::DataWriter writer(c.out, s, model.get());
  for (int shot = 0; shot < s.nshots(); ++shot) writer.write_shot(shot, s.observed(shot));
  writer.commit();
  if (!c.flags.quiet)
    std::cout << "wrote " << c.out << ": " << s.nshots() << " shots × " << s.nrec() << " receivers × " << s.nt
              << " samples at dt = " << s.dt << " s, " << s.dim << "-D positions"
              << (moved > 0 ? "; " + std::to_string(moved) +
                                  " dead traces outside the model placed at their shots' "
                                  "sources"
                            : std::string())
              << "\n";
  return 0;
}

}  // namespace

int import_segy(int argc, char** argv) {
  ImportCommand c = parse_import(argc, argv);
  if (c.velocity) return import_velocity(c.in, c.out, c.spacing_text, c.scale, c.flags);
  return import_shots(c);
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
  const safety::OutputClaim claim(out, "--out", flags.overwrite, {in}, true);
  safety::refuse_other_format_name(out, "--out", safety::Format::kSegy);
  if (dataset.empty()) {
    for (const char* d : {"/data", "/vp", "/image", "/gradient"})
      if (io::has_dataset(in, d)) {
        dataset = d;
        break;
      }
    if (dataset.empty())
      throw InputError(in + ": holds none of /data, /vp, /image, /gradient; name the dataset with --dataset");
  }
  if (!io::has_dataset(in, dataset)) throw InputError(in + ": missing dataset " + dataset);
  if (dataset == "/data") {
    const Survey s = io::read_survey(in, true);
    segy::write_shots(out, s);
    long traces = 0;  // a ragged survey's records hold their own counts
    for (int shot = 0; shot < s.nshots(); ++shot) traces += s.count(shot);
    if (!flags.quiet && traces == long(s.nshots()) * s.nrec())
      std::cout << "wrote " << out << ": " << s.nshots() << " shot records × " << s.nrec() << " traces × " << s.nt
                << " samples\n";
    else if (!flags.quiet)
      std::cout << "wrote " << out << ": " << s.nshots() << " shot records, " << traces << " traces in all (up to "
                << s.nrec() << " a record) × " << s.nt << " samples\n";
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
  g.vp.assign(v.values.begin(), v.values.end());
  if (dataset == "/vp") g.validate(in);  // what every command that reads a model refuses
  segy::write_field(out, g, g.vp);
  if (!flags.quiet)
    std::cout << "wrote " << out << ": " << dataset << " as " << g.ny * g.nx << " traces × " << g.nz
              << " samples (dz = " << g.dz << " m in the sample interval field, as mm)\n";
  return 0;
}

}  // namespace starwave::commands
