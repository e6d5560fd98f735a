// drivers/plot.cpp — `starwave plot --in file.h5 --out picture.png [--dataset D] [--shot N]
// [--line N] [--at z,y,x]`: a model, a section, a gather (a 3-D shot's receiver lines side
// by side, or one of them), or three orthogonal slices of a 3-D array.
#include <array>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <tuple>

#include "drivers/commands.hpp"
#include "drivers/config.hpp"
#include "src/base/error.hpp"
#include "src/io/hdf5.hpp"
#include "src/plot/figures.hpp"
#include "src/safety/outputs.hpp"

namespace starwave::commands {
namespace {

/// The cell of `v` nearest to `at` ("z,y,x" in m; "" = the middle cell), or InputError.
std::array<int, 3> slice_point(const io::Volume& v, const std::string& at) {
  const int n[3] = {v.nz, v.ny, v.nx};
  std::array<int, 3> cell{v.nz / 2, v.ny / 2, v.nx / 2};
  if (at.empty()) return cell;
  const std::string message = "--at: give the slices' point as three values z,y,x in m (got '" + at + "')";
  const std::vector<double> m = cli::parse_numbers(at, message);
  cli::refuse_unless(m.size() == 3, message);
  const char* axis[3] = {"z", "y", "x"};
  for (std::size_t k = 0; k < 3; ++k) {
    const double c = std::round((m[k] - v.origin[k]) / v.spacing[k]);
    std::ostringstream value;
    value << std::setprecision(12) << m[k];
    if (!(c >= 0 && c <= n[k] - 1))
      throw InputError("--at: " + std::string(axis[k]) + " = " + value.str() + " m lies outside the array (" +
                       std::to_string(v.origin[k]) + "…" + std::to_string(v.origin[k] + (n[k] - 1) * v.spacing[k]) +
                       " m)");
    cell[k] = int(c);
  }
  return cell;
}

/// A data file's sample interval and each receiver's line in shot `shot` (3-D:
/// Survey::receiver_lines; empty in 2-D); dt 0 for a file with no survey.
std::pair<double, std::vector<int>> gather_geometry(const std::string& path, int shot) {
  if (!io::has_dataset(path, "/receiver/position")) return {0, {}};
  const Survey s = io::read_survey(path, false, [](int) { return false; });  // positions only
  return {s.dt, shot < s.nshots() ? s.receiver_lines(shot) : std::vector<int>{}};
}

/// The traces of receiver line `keep` alone (InputError when there is no such line), and
/// the number of the line's first receiver (from 1).
figures::Image2D one_line(const figures::Image2D& traces, const std::vector<int>& line, int keep, int& first) {
  figures::Image2D out{0, traces.cols, {}};
  for (int r = 0; r < traces.rows; ++r)
    if (line[std::size_t(r)] == keep) {
      if (out.rows == 0) first = r + 1;
      out.values.insert(out.values.end(), traces.values.begin() + long(r) * traces.cols,
                        traces.values.begin() + long(r + 1) * traces.cols);
      ++out.rows;
    }
  if (out.rows == 0)
    throw InputError("--line: the shot has receiver lines 0…" + std::to_string(line.empty() ? 0 : line.back()) +
                     " (got " + std::to_string(keep) + ")");
  return out;
}

}  // namespace

int plot(int argc, char** argv) {
  std::string in, out, dataset, at, title;
  int shot = 0, line = -1;
  double vmin = 0, vmax = 0;
  cli::CommonFlags flags;
  cli::po::options_description desc("starwave plot");
  desc.add_options()("in", cli::po::value<std::string>(&in)->required(), "HDF5 file (model or data)")(
      "out", cli::po::value<std::string>(&out)->required(), "output PNG")(
      "dataset", cli::po::value<std::string>(&dataset), "dataset to draw (default: /vp, else /data)")(
      "shot", cli::po::value<int>(&shot)->default_value(0), "shot index for /data")(
      "line", cli::po::value<int>(&line),
      "3-D data: draw receiver line N alone (default: every line side by side, gaps between)")(
      "vmin", cli::po::value<double>(&vmin)->default_value(0), "colour scale minimum (models)")(
      "vmax", cli::po::value<double>(&vmax)->default_value(0), "colour scale maximum (models)")(
      "at", cli::po::value<std::string>(&at),
      "3-D arrays: the point z,y,x in m the three slices go through (default: the middle)")(
      "title", cli::po::value<std::string>(&title), "the picture's title (default: the file and what is drawn)");
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
  if (cli::given(vm, "line") && line < 0) throw InputError("--line: must be a receiver line index, 0 or more");
  const safety::OutputClaim claim(out, "--out", flags.overwrite, {in}, true);
  safety::refuse_other_format_name(out, "--out", safety::Format::kPng);
  bool gather = dataset == "/data";
  if (dataset.empty()) {  // a model's /vp, else a data file's gather
    gather = !io::has_dataset(in, "/vp");
    if (gather && !io::has_dataset(in, "/data"))
      throw InputError(in + ": holds neither /vp nor /data; name the dataset to draw with --dataset");
  }
  const std::string name = !dataset.empty() ? dataset : gather ? "/data" : "/vp";
  const bool volume = !gather && io::dataset_rank(in, name) == 3;  // a 3-D model, gradient or image
  const std::string file = std::filesystem::path(in).filename().string();
  figures::Field field;  // a model, gradient or image
  figures::Image2D img;  // a gather
  int layers = 1;
  std::array<int, 3> c{0, 0, 0};
  if (volume) {
    cli::refuse_if_given(vm, "shot", false, "on a 3-D array (it picks a shot of /data; --at places the slices)");
    io::Volume v = io::read_volume(in, name);
    c = slice_point(v, at);
    field = {v.nz,         v.ny,        v.nx,        v.spacing[0], v.spacing[1],
             v.spacing[2], v.origin[0], v.origin[1], v.origin[2],  std::move(v.values)};
  } else {
    cli::refuse_if_given(vm, "at", false, "on " + name + " (it places the slices of a 3-D array)");
    io::Array2D a = io::read_slice(in, name, shot);
    layers = a.layers;
    if (gather) {
      img = figures::Image2D{a.rows, a.cols, std::move(a.values)};
    } else {  // a section: its spacing and origin when the file gives them (else 1 m, 0)
      field = {a.rows, 1, a.cols, 1, 1, 1, 0, 0, 0, std::move(a.values)};
      if (layers == 1) {
        const io::Geometry g = io::read_geometry(in, name);
        field.dz = g.spacing[0];
        field.dx = g.spacing[2];
        field.z0 = g.origin[0];
        field.x0 = g.origin[2];
      }
    }
  }
  if (name == "/vp" && layers == 1) {  // the velocities every command that reads a model refuses
    Model m;
    m.dim = volume ? 3 : 2;
    m.nz = field.nz;
    m.ny = field.ny;
    m.nx = field.nx;
    m.dz = field.dz;
    m.dy = volume ? field.dy : 0;
    m.dx = field.dx;
    m.vp.assign(field.values.begin(), field.values.end());
    m.validate(in);
  }
  const bool velocity = !gather && (dataset.empty() || dataset == "/vp");
  cli::refuse_if_given(
      vm, "vmin", velocity,
      "on " + (dataset.empty() ? std::string("/data") : dataset) + " (the colour scale of a velocity model)");
  cli::refuse_if_given(vm, "shot", gather || layers > 1,
                       "on a 2-D dataset (it picks a shot of /data or a slice of a 3-D dataset)");
  double dt = 0;
  std::vector<int> lines;
  if (gather) std::tie(dt, lines) = gather_geometry(in, shot);
  cli::refuse_if_given(vm, "line", !lines.empty(), "on " + name + " (it picks a receiver line of 3-D data)");
  if (gather) {
    int first = 1;
    if (cli::given(vm, "line")) {
      img = one_line(img, lines, line, first);
      lines.clear();
    }
    if (title.empty())
      title =
          file + ": shot " + std::to_string(shot) + (cli::given(vm, "line") ? ", line " + std::to_string(line) : "");
    figures::plot_gather(out, img, dt, title, lines, 0.98, 0, first);
  } else {
    if (title.empty()) title = file + ": " + name + (layers > 1 ? " [" + std::to_string(shot) + "]" : "");
    if (volume)
      title += " (slices through z = " + std::to_string(int(std::lround(field.z0 + c[0] * field.dz))) +
               ", y = " + std::to_string(int(std::lround(field.y0 + c[1] * field.dy))) +
               ", x = " + std::to_string(int(std::lround(field.x0 + c[2] * field.dx))) + " m)";
    if (velocity)
      figures::plot_model(out, field, title, vmin, vmax, c);
    else  // gradients, images, illumination: grey scale about zero
      figures::plot_section(out, field, title,
                            name == "/gradient" ? "gradient dJ/dv"
                            : name == "/vp"     ? "m/s"
                                                : "amplitude",
                            0.98, c);
  }
  if (!flags.quiet) std::cout << "wrote " << out << "\n";
  return 0;
}

}  // namespace starwave::commands
