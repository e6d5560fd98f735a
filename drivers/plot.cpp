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

/// What `starwave plot` was asked to draw.
struct PlotCommand {
  std::string in, out, dataset, at, title;
  int shot = 0, line = -1;
  double vmin = 0, vmax = 0;
  bool reflectivity = false;
  cli::CommonFlags flags;
  cli::po::variables_map vm;
  bool given(const char* option) const { return cli::given(vm, option); }
};

PlotCommand parse_command(int argc, char** argv) {
  PlotCommand c;
  cli::po::options_description desc("starwave plot");
  desc.add_options()("in", cli::po::value<std::string>(&c.in)->required(), "HDF5 file (model or data)")(
      "out", cli::po::value<std::string>(&c.out)->required(), "output PNG")(
      "dataset", cli::po::value<std::string>(&c.dataset), "dataset to draw (default: /vp, else /data)")(
      "shot", cli::po::value<int>(&c.shot)->default_value(0), "shot index for /data")(
      "line", cli::po::value<int>(&c.line),
      "3-D data: draw receiver line N alone (default: every line side by side, gaps between)")(
      "vmin", cli::po::value<double>(&c.vmin)->default_value(0), "colour scale minimum (models)")(
      "vmax", cli::po::value<double>(&c.vmax)->default_value(0), "colour scale maximum (models)")(
      "at", cli::po::value<std::string>(&c.at),
      "3-D arrays: the point z,y,x in m the three slices go through (default: the middle)")(
      "title", cli::po::value<std::string>(&c.title), "the picture's title (default: the file and what is drawn)")(
      "reflectivity", cli::po::bool_switch(&c.reflectivity),
      "a velocity model: draw its normal-incidence reflectivity (v[z+1] − v[z]) / (v[z+1] + v[z]), the "
      "picture an RTM or LSRTM image is compared with");
  cli::add_common_flags(desc, c.flags);
  cli::parse("plot", argc, argv, desc, c.vm);
  cli::require_nonnegative(c.vm, "vmin", "a velocity in m/s");
  cli::require_nonnegative(c.vm, "vmax", "a velocity in m/s");
  if (c.given("vmin") != c.given("vmax"))
    throw InputError("--vmin/--vmax: give both ends of the colour scale, or neither");
  if (c.given("vmin") && !(c.vmin < c.vmax)) throw InputError("--vmin/--vmax: the minimum must be below the maximum");
  if (c.given("shot") && c.shot < 0) throw InputError("--shot: must be a shot index, 0 or more");
  if (c.given("line") && c.line < 0) throw InputError("--line: must be a receiver line index, 0 or more");
  return c;
}

/// What is drawn: a gather (/data), a 2-D section, one layer of a 3-D dataset, or three
/// slices of a 3-D array.
struct Drawing {
  std::string name;               // the dataset
  bool gather = false;            // a shot's traces
  bool volume = false;            // a 3-D model, gradient or image: three slices
  figures::Field field;           // a model, gradient or image
  figures::Image2D img;           // a gather
  int layers = 1;                 // > 1: a 3-D dataset drawn one layer (--shot) at a time
  std::array<int, 3> c{0, 0, 0};  // the slices' cell
  bool velocity(const PlotCommand& cmd) const {
    return !gather && !cmd.reflectivity && (cmd.dataset.empty() || cmd.dataset == "/vp");
  }
};

/// The dataset named, else a model's /vp, else a data file's gather; read, with the options
/// that mean nothing for it refused.
Drawing read_drawing(const PlotCommand& cmd) {
  Drawing d;
  d.gather = cmd.dataset == "/data";
  if (cmd.dataset.empty()) {
    d.gather = !io::has_dataset(cmd.in, "/vp");
    if (d.gather && !io::has_dataset(cmd.in, "/data"))
      throw InputError(cmd.in + ": holds neither /vp nor /data; name the dataset to draw with --dataset");
  }
  d.name = !cmd.dataset.empty() ? cmd.dataset : d.gather ? "/data" : "/vp";
  d.volume = !d.gather && io::dataset_rank(cmd.in, d.name) == 3;
  if (d.volume) {
    cli::refuse_if_given(cmd.vm, "shot", false, "on a 3-D array (it picks a shot of /data; --at places the slices)");
    io::Volume v = io::read_volume(cmd.in, d.name);
    d.c = slice_point(v, cmd.at);
    d.field = {v.nz,         v.ny,        v.nx,        v.spacing[0], v.spacing[1],
               v.spacing[2], v.origin[0], v.origin[1], v.origin[2],  std::move(v.values)};
    return d;
  }
  cli::refuse_if_given(cmd.vm, "at", false, "on " + d.name + " (it places the slices of a 3-D array)");
  io::Array2D a = io::read_slice(cmd.in, d.name, cmd.shot);
  d.layers = a.layers;
  if (d.gather) {
    d.img = figures::Image2D{a.rows, a.cols, std::move(a.values)};
    return d;
  }
  // A section: its spacing and origin when the file gives them (else 1 m, 0).
  d.field = {a.rows, 1, a.cols, 1, 1, 1, 0, 0, 0, std::move(a.values)};
  if (d.layers == 1) {
    const io::Geometry g = io::read_geometry(cmd.in, d.name);
    d.field.dz = g.spacing[0];
    d.field.dx = g.spacing[2];
    d.field.z0 = g.origin[0];
    d.field.x0 = g.origin[2];
  }
  return d;
}

/// A field's place: an origin so far out that no axis can label it is refused (the picture's
/// transform would not be invertible), as a file's mistake.
void check_origin(const std::string& path, const Drawing& d) {
  const figures::Field& f = d.field;
  const double far[] = {f.z0, f.y0, f.x0, f.z0 + f.nz * f.dz, f.y0 + f.ny * f.dy, f.x0 + f.nx * f.dx};
  for (double o : far)
    if (!(std::fabs(o) <= Model::kMaxOrigin))
      throw InputError(path + ": " + d.name + "'s origin (" + number_text(f.z0) +
                       (d.volume ? ", " + number_text(f.y0) : "") + ", " + number_text(f.x0) +
                       ") m, its cells reaching beyond ±1e15 m: no picture can place them");
}

/// A model's velocities, refused as every command that reads a model refuses them.
void validate_velocity(const std::string& path, const Drawing& d) {
  Model m;
  m.dim = d.volume ? 3 : 2;
  m.nz = d.field.nz;
  m.ny = d.field.ny;
  m.nx = d.field.nx;
  m.dz = d.field.dz;
  m.dy = d.volume ? d.field.dy : 0;
  m.dx = d.field.dx;
  m.vp.assign(d.field.values.begin(), d.field.values.end());
  m.validate(path);
}

/// The model's normal-incidence reflectivity below each cell, (v[z+1] − v[z]) / (v[z+1] + v[z]);
/// 0 on the last plane.
void to_reflectivity(figures::Field& f) {
  const std::size_t plane = std::size_t(f.ny) * std::size_t(f.nx);
  std::vector<float> r(f.values.size(), 0.0f);
  for (std::size_t i = 0; i + plane < f.values.size(); ++i)
    r[i] = float((double(f.values[i + plane]) - f.values[i]) / (double(f.values[i + plane]) + f.values[i]));
  f.values = std::move(r);
}

/// A shot's traces: every receiver line side by side, or line --line alone.
void draw_gather(PlotCommand& cmd, Drawing& d, const std::string& file, double dt, std::vector<int> lines) {
  int first = 1;
  if (cmd.given("line")) {
    d.img = one_line(d.img, lines, cmd.line, first);
    lines.clear();
  }
  if (cmd.title.empty())
    cmd.title =
        file + ": shot " + std::to_string(cmd.shot) + (cmd.given("line") ? ", line " + std::to_string(cmd.line) : "");
  figures::plot_gather(cmd.out, d.img, dt, cmd.title, lines, 0.98, 0, first);
}

/// A model on its colour scale; gradients, images and illumination on a grey scale about
/// zero. A 3-D array as three slices through d.c.
void draw_field(PlotCommand& cmd, const Drawing& d, const std::string& file) {
  const figures::Field& f = d.field;
  if (cmd.title.empty()) cmd.title = file + ": " + d.name + (d.layers > 1 ? " [" + std::to_string(cmd.shot) + "]" : "");
  if (d.volume)
    cmd.title += " (slices through z = " + std::to_string(int(std::lround(f.z0 + d.c[0] * f.dz))) +
                 ", y = " + std::to_string(int(std::lround(f.y0 + d.c[1] * f.dy))) +
                 ", x = " + std::to_string(int(std::lround(f.x0 + d.c[2] * f.dx))) + " m)";
  if (d.velocity(cmd))
    figures::plot_model(cmd.out, f, cmd.title, cmd.vmin, cmd.vmax, d.c);
  else
    figures::plot_section(cmd.out, f, cmd.title,
                          cmd.reflectivity        ? "reflectivity"
                          : d.name == "/gradient" ? "gradient dJ/dv"
                          : d.name == "/vp"       ? "m/s"
                                                  : "amplitude",
                          0.98, d.c);
}

}  // namespace

int plot(int argc, char** argv) {
  PlotCommand cmd = parse_command(argc, argv);
  const safety::OutputClaim claim(cmd.out, "--out", cmd.flags.overwrite, {cmd.in}, true);
  safety::refuse_other_format_name(cmd.out, "--out", safety::Format::kPng);
  Drawing d = read_drawing(cmd);
  if (d.name == "/vp" && d.layers == 1) validate_velocity(cmd.in, d);
  if (!d.gather) check_origin(cmd.in, d);
  if (cmd.reflectivity) {
    if (d.name != "/vp" || d.layers != 1)
      throw InputError("--reflectivity: draws a velocity model's (/vp); " + cmd.in + ": " + d.name + " is not one");
    to_reflectivity(d.field);
    if (cmd.title.empty()) cmd.title = std::filesystem::path(cmd.in).filename().string() + ": reflectivity of /vp";
  }
  cli::refuse_if_given(
      cmd.vm, "vmin", d.velocity(cmd),
      "on " + (cmd.dataset.empty() ? std::string("/data") : cmd.dataset) + " (the colour scale of a velocity model)");
  cli::refuse_if_given(cmd.vm, "shot", d.gather || d.layers > 1,
                       "on a 2-D dataset (it picks a shot of /data or a slice of a 3-D dataset)");
  double dt = 0;
  std::vector<int> lines;
  if (d.gather) std::tie(dt, lines) = gather_geometry(cmd.in, cmd.shot);
  cli::refuse_if_given(cmd.vm, "line", !lines.empty(), "on " + d.name + " (it picks a receiver line of 3-D data)");
  const std::string file = std::filesystem::path(cmd.in).filename().string();
  if (d.gather)
    draw_gather(cmd, d, file, dt, lines);
  else
    draw_field(cmd, d, file);
  if (!cmd.flags.quiet) std::cout << "wrote " << cmd.out << "\n";
  return 0;
}

}  // namespace starwave::commands
