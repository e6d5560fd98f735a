#include "src/synthetic/synth.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/base/error.hpp"
#include "src/memory/room.hpp"
#include "src/numerics/filters.hpp"
#include "src/numerics/propagator.hpp"
#include "src/safety/inputs.hpp"

namespace starwave {
namespace {

/// A model of one velocity: (nz, nx), or (nz, ny, nx) when ny > 0.
Model grid(int nz, int ny, int nx, double h, double v) {
  const bool three = ny > 0;
  if (nz < 2 || nx < 2 || nz > 100000 || nx > 100000 || (three && (ny < 2 || ny > 100000)))
    throw InputError(three ? "--nz/--ny/--nx: the model needs between 2 and 100000 cells per dimension"
                           : "--nz/--nx: the model needs between 2 and 100000 cells per dimension");
  if (!(h > 0)) throw InputError("--spacing: must be positive");
  const std::uint64_t cells = std::uint64_t(nz) * std::uint64_t(three ? ny : 1) * std::uint64_t(nx);
  memory::require_memory(cells, 2 * sizeof(double),
                         three ? "--nz × --ny × --nx = " + std::to_string(nz) + " × " + std::to_string(ny) + " × " +
                                     std::to_string(nx) + " cells"
                               : "--nz × --nx = " + std::to_string(nz) + " × " + std::to_string(nx) + " cells");
  Model m;
  m.dim = three ? 3 : 2;
  m.nz = nz;
  m.ny = three ? ny : 1;
  m.nx = nx;
  m.dz = m.dx = h;
  m.dy = three ? h : 0;
  m.vp.assign(m.cells(), v);
  return m;
}

/// Flat layers: 1500 m/s water then 2000 … 3500 m/s.
Model layered(int nz, int ny, int nx, double h) {
  Model m = grid(nz, ny, nx, h, 1500);
  const double tops[] = {0.2, 0.4, 0.6, 0.8};
  const double v[] = {2000, 2500, 3000, 3500};
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < nx; ++x) {
        double vz = 1500;
        for (int k = 0; k < 4; ++k)
          if (z >= int(tops[k] * nz)) vz = v[k];
        m.at(z, y, x) = vz;
      }
  return m;
}

/// A Marmousi-like section: water, gently folded sediments whose velocity grows with depth,
/// two normal faults that offset them, and a fast (salt-like) body. In 3-D the layers also
/// fold and dip along y, the fault planes strike obliquely, and the body is an ellipsoid.
Model marmousi_like(int nz, int ny, int nx, double h) {
  Model m = grid(nz, ny, nx, h, 1500);
  const bool three = m.three_d();
  const double depth = nz * h, width = nx * h, length = m.ny * h;
  const double water = 0.12 * depth;
  const int nlayers = 9;
  for (int y = 0; y < m.ny; ++y) {
    const double ym = y * h;
    for (int x = 0; x < nx; ++x) {
      const double xm = x * h;
      double f1 = 0.35 * width, f2 = 0.62 * width;  // fault traces at the sea floor
      if (three) {                                  // striking obliquely across y
        f1 += 0.15 * width * (ym / length - 0.5);
        f2 -= 0.10 * width * (ym / length - 0.5);
      }
      for (int z = 0; z < nz; ++z) {
        const double zm = z * h;
        // Two dipping normal faults: the hanging wall (right of each plane) drops.
        double shift = 0;
        if (xm > f1 + 0.5 * (zm - water)) shift += 0.06 * depth;
        if (xm > f2 + 0.35 * (zm - water)) shift += 0.05 * depth;
        double fold = 0.06 * depth * std::sin(2 * M_PI * xm / width * 1.3) + 0.08 * depth * xm / width;
        if (three) fold += 0.04 * depth * std::sin(2 * M_PI * ym / length * 0.9) + 0.05 * depth * ym / length;
        double v = 1500;
        if (zm >= water) {
          const double rel = (zm - water - fold + shift) / (depth - water);
          const int layer = std::clamp(int(std::floor(rel * nlayers)), 0, nlayers - 1);
          // Velocity grows with depth, with alternating contrasts.
          v = 1700 + 1900.0 * layer / (nlayers - 1) + ((layer % 2) ? 180 : -120);
          v = std::clamp(v, 1600.0, 3700.0);
        }
        // Fast body: an ellipse (ellipsoid) in the lower centre-right.
        const double ez = (zm - 0.72 * depth) / (0.12 * depth), ex = (xm - 0.70 * width) / (0.14 * width);
        double r2 = ez * ez + ex * ex;
        if (three) r2 += std::pow((ym - 0.55 * length) / (0.25 * length), 2);
        if (r2 < 1.0) v = 4200;
        m.at(z, y, x) = v;
      }
    }
  }
  return m;
}

/// An overthrust-like land model (after the SEG/EAGE overthrust's kind of geology): flat
/// young sediments over an erosional unconformity, with a sinuous low-velocity channel cut
/// into them; below, older strata stacked by three thrust faults that ramp up from a
/// décollement to the unconformity (each hanging wall is lifted as it rides up its ramp, so
/// strata repeat across the faults); then a fast, undulating basement. Lengths are fractions
/// of the model's depth or width (the faults dip 30°), so models of the same proportions hold
/// the same geology at any size. In 3-D the thrusts' strikes curve and their throws diminish
/// along y, and the channel meanders across y; a 2-D model is the plane y = 0 of the 3-D one
/// with the same nz, nx and spacing.
Model overthrust(int nz, int ny, int nx, double h) {
  Model m = grid(nz, ny, nx, h, 0);
  const double depth = nz * h, width = nx * h, length = m.ny * h;
  const double unconformity = 0.16 * depth, decollement = 0.70 * depth, bed = 0.055 * depth;
  const double reach = (decollement - unconformity) / std::tan(M_PI / 6);  // faults dip 30°
  struct Thrust {
    double foot, throw_, ramp;  // where the fault leaves the décollement, its uplift, the lift's length
  };
  const Thrust thrusts[] = {{0.22, 0.10, 0.10}, {0.47, 0.13, 0.12}, {0.70, 0.08, 0.09}};
  // Bed k's velocity: faster with depth, with a contrast between neighbours, and no two beds alike.
  auto strata = [](int k) { return 2350.0 + 300.0 * (k / 2) + (k % 2 ? 350.0 : 0.0); };
  for (int y = 0; y < m.ny; ++y) {
    const double t = m.three_d() ? y * h / length : 0;  // 0 at y = 0, towards 1 at the far end
    const double channel_x = width * (0.45 + 0.18 * std::sin(2 * M_PI * 1.2 * t + 0.5)), half = 0.05 * width;
    for (int x = 0; x < nx; ++x) {
      const double xm = x * h;
      const double basement = depth * (0.80 + 0.05 * std::sin(2 * M_PI * (0.8 * xm / width + 0.3 * t)));
      for (int z = 0; z < nz; ++z) {
        const double zm = z * h;
        double v;
        if (zm < unconformity) {  // young, flat sediments, slowly compacting
          v = 2200 + 500 * zm / unconformity;
          const double across = (xm - channel_x) / half, floor = 0.03 * depth + 0.06 * depth * (1 - across * across);
          if (std::abs(across) < 1 && zm >= 0.03 * depth && zm < floor) v = 1900;  // the channel's fill
        } else if (zm >= basement) {
          v = 5800;
        } else {
          double zeta = zm;  // the depth the rock had before thrusting
          for (const Thrust& f : thrusts) {
            const double foot = width * (f.foot + 0.07 * std::sin(M_PI * t * (1 + f.foot)));  // strikes curve
            const double past = std::max(0.0, xm - foot);
            const double fault = decollement - (decollement - unconformity) * past / reach;  // its plane's depth at x
            if (zm >= fault) continue;                                                       // the footwall
            const double uplift = depth * f.throw_ * (1 - 0.45 * t);                         // throws diminish along y
            zeta += uplift * std::min(1.0, past / (f.ramp * width));                         // lifted up the ramp
          }
          v = strata(std::max(0, int((zeta - unconformity) / bed)));
        }
        m.at(z, y, x) = v;
      }
    }
  }
  return m;
}

Model marmousi2(const std::string& file, int nz, int nx, double h) {
  // shared/data/README.md: raw little-endian float32, 1601 columns of 401 samples (z
  // fastest), km/s, 7.5 m spacing.
  const int NZ = 401, NX = 1601;
  const double H = 7.5;
  if (file.empty()) throw InputError("--file: the marmousi2 kind needs the raw Marmousi2 file (shared/data)");
  safety::require_input_file(file);
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file + ": cannot open");
  std::vector<float> raw(std::size_t(NZ) * NX);
  in.read(reinterpret_cast<char*>(raw.data()), std::streamsize(raw.size() * sizeof(float)));
  if (!in) throw InputError(file + ": shorter than the 1601 × 401 float32 values of Marmousi2");
  const double hh = h > 0 ? h : H;
  const int nzz = nz > 0 ? nz : int((NZ - 1) * H / hh) + 1;
  const int nxx = nx > 0 ? nx : int((NX - 1) * H / hh) + 1;
  Model m = grid(nzz, 0, nxx, hh, 0);
  for (int z = 0; z < nzz; ++z)
    for (int x = 0; x < nxx; ++x) {
      const int iz = std::min(NZ - 1, int(std::lround(z * hh / H)));
      const int ix = std::min(NX - 1, int(std::lround(x * hh / H)));
      m.at(z, x) = 1000.0 * raw[std::size_t(ix) * NZ + iz];
    }
  return m;
}

}  // namespace

Model synthesize(const SynthOptions& o) {
  Model m;
  if (o.ny < 0) throw InputError("--ny: must be 0 (a 2-D model) or the number of cells along y");
  const bool three = o.ny > 0;
  auto n = [&](int given, int two_d, int three_d) { return given ? given : three ? three_d : two_d; };
  if (o.spacing != 0 && !Model::spacing_ok(o.spacing)) {
    std::ostringstream os;
    os << "--spacing: must be 0 (the kind's default) or a grid spacing in metres between " << Model::kMinSpacing
       << " and " << Model::kMaxSpacing << " (got " << o.spacing << ")";
    throw InputError(os.str());
  }
  if (o.kind == "constant")
    m = grid(n(o.nz, 100, 60), o.ny, n(o.nx, 100, 60), o.spacing ? o.spacing : 10, o.velocity);
  else if (o.kind == "layered")
    m = layered(n(o.nz, 120, 60), o.ny, n(o.nx, 300, 80), o.spacing ? o.spacing : 10);
  else if (o.kind == "marmousi-like")
    m = marmousi_like(n(o.nz, 150, 60), o.ny, n(o.nx, 400, 100), o.spacing ? o.spacing : (three ? 20 : 10));
  else if (o.kind == "overthrust")
    m = overthrust(n(o.nz, 100, 60), o.ny, n(o.nx, 400, 100), o.spacing ? o.spacing : 25);
  else if (o.kind == "marmousi2" && three)
    throw InputError("--ny: the marmousi2 kind is a 2-D section (give no --ny)");
  else if (o.kind == "marmousi2")
    m = marmousi2(o.file, o.nz, o.nx, o.spacing);
  else
    throw InputError("--kind: unknown model kind '" + o.kind +
                     "' (constant, layered, marmousi-like, overthrust, marmousi2)");
  m.validate(o.kind == "constant" ? "--velocity" : o.kind == "marmousi2" ? o.file : "--kind " + o.kind);
  return m;
}

void check_smoothing_length(const Model& m, double length, const std::string& option) {
  const double extent = std::max({(m.nz - 1) * m.dz, (m.nx - 1) * m.dx, (m.ny - 1) * m.dy});
  if (!(length >= 0)) throw InputError(option + ": must be 0 (none) or a smoothing length in m");
  if (length > extent)
    throw InputError(option + ": " + number_text(length) + " m is longer than the model itself (" +
                     number_text(extent) + " m)");
}

Model smoothed(const Model& m, double sigma, bool keep_water) {
  check_smoothing_length(m, sigma, "--smooth");
  Model out = m;
  out.vp = filters::gaussian(m.vp, m.nz, m.ny, m.nx, m.dz, m.dy, m.dx, sigma, filters::Edge::kReplicate);
  if (keep_water) {  // the top planes (rows in 2-D) of one velocity (the water layer) keep it
    const std::size_t nx = std::size_t(m.ny) * std::size_t(m.nx);
    for (std::size_t z = 0; z < std::size_t(m.nz); ++z) {
      const auto row = m.vp.begin() + long(z * nx);
      if (!std::all_of(row, row + long(nx), [&](double v) { return v == m.vp[0]; })) break;
      std::copy(row, row + long(nx), out.vp.begin() + long(z * nx));
    }
  }
  return out;
}

namespace {

/// Refuses options no survey has (a count below 1, a negative dt or record, a Ricker --dt
/// does not sample).
void check_survey_options(const SurveyOptions& o) {
  if (o.nshots < 1) throw InputError("--nshots: must be at least 1");
  if (o.receiver_every < 1) throw InputError("--receiver-every: must be at least 1");
  if (!(o.frequency > 0)) throw InputError("--frequency: must be positive");
  if (o.dt < 0) throw InputError("--dt: must be a sampling interval in s, or 0 for automatic (got a negative value)");
  if (o.t_max < 0) throw InputError("--t-max: must be a record length in s, or 0 for automatic (got a negative value)");
  if (o.dt > 0 && !(o.frequency < 0.25 / o.dt))
    throw InputError("--frequency: a " + number_text(o.frequency) + " Hz Ricker is not sampled by --dt " +
                     number_text(o.dt) + " s (its Nyquist is " + number_text(0.5 / o.dt) +
                     " Hz; keep the peak below half of it)");
}

/// The shots spread evenly on grid columns (and lines along y in 3-D) at the source depth,
/// and one receiver every `receiver_every` cells at the receiver depth, into `s`.
void place_points(const Model& m, const SurveyOptions& o, Survey& s) {
  const double sd = o.source_depth >= 0 ? o.source_depth : m.dz;
  const double rd = o.receiver_depth >= 0 ? o.receiver_depth : m.dz;
  auto on_node = [&](double depth, const char* opt) {
    const double k = depth / m.dz;
    if (std::abs(k - std::round(k)) > 1e-6 || k > m.nz - 1)
      throw InputError(std::string(opt) + ": " + number_text(depth) + " m is not a grid row inside the model");
    return m.z0 + std::round(k) * m.dz;
  };
  const double zs = on_node(sd, "--source-depth"), zr = on_node(rd, "--receiver-depth");
  if (!m.three_d() && o.nshots_y != 1)
    throw InputError("--nshots-y: a 2-D model takes one line of shots (give no --nshots-y)");
  if (o.nshots_y < 1) throw InputError("--nshots-y: must be at least 1");
  // Evenly spread shots on grid columns: more shots than columns would repeat positions.
  if (o.nshots > m.nx)
    throw InputError("--nshots: " + std::to_string(o.nshots) + " shots along x do not fit the model's " +
                     std::to_string(m.nx) + " columns (one shot per column at most)");
  if (o.nshots_y > m.ny)
    throw InputError("--nshots-y: " + std::to_string(o.nshots_y) + " lines of shots do not fit the model's " +
                     std::to_string(m.ny) + " planes along y (one line per plane at most)");
  // n evenly spread cells of [0, count), the middle one when n is 1.
  auto spread = [](int i, int n, int count) {
    return n == 1 ? (count - 1) / 2 : int(std::lround(double(i) * (count - 1) / (n - 1)));
  };
  s.dim = m.dim;
  for (int j = 0; j < o.nshots_y; ++j)
    for (int i = 0; i < o.nshots; ++i) {
      const double x = m.x0 + spread(i, o.nshots, m.nx) * m.dx;
      if (m.three_d())
        s.sources.push_back({zs, m.y0 + spread(j, o.nshots_y, m.ny) * m.dy, x});
      else
        s.sources.push_back({zs, x});
    }
  s.receivers.emplace_back();
  for (int iy = 0; iy < m.ny; iy += o.receiver_every)  // an areal grid in 3-D, a line in 2-D
    for (int ix = 0; ix < m.nx; ix += o.receiver_every) {
      if (m.three_d())
        s.receivers[0].push_back({zr, m.y0 + iy * m.dy, m.x0 + ix * m.dx});
      else
        s.receivers[0].push_back({zr, m.x0 + ix * m.dx});
    }
}

/// The automatic dt: half the order-8 stability limit and fine enough for a `frequency` Hz
/// Ricker, rounded down to 0.1 ms; below 0.1 ms (fine grids, high frequencies) to one
/// significant digit. `why`: what chose it, for the messages.
double automatic_dt(const Model& m, double frequency, std::string& why) {
  const double stable = 0.5 * stable_time_step(m.vmax(), m.dz, m.dx, 8, m.three_d() ? m.dy : 0);
  const double limit = std::min(stable, 1.0 / (12 * frequency));
  why = limit < stable ? " (automatic: 12 samples per period of the " + number_text(frequency) + " Hz Ricker)"
                       : " (automatic: half the model's stability limit)";
  // k / 10^e, not k · 10^-e: the double nearest k steps (0.0013, not 0.0013000000000000002),
  // so SEG-Y's whole microseconds and a user's --dt 0.0013 give the same dt.
  const int e = limit >= 1e-4 ? 4 : -int(std::floor(std::log10(limit)));
  double per_second = 1;  // 10^e, exact for e ≤ 22 (beyond, a Ricker no record can hold: refused later)
  for (int i = 0; i < e; ++i) per_second *= 10;
  return e <= 22 ? std::floor(limit * per_second) / per_second
                 : std::floor(limit / std::pow(10.0, -e)) * std::pow(10.0, -e);
}

}  // namespace

Survey regular_survey(const Model& m, const SurveyOptions& o) {
  check_survey_options(o);
  memory::require_memory(std::uint64_t(o.nshots), 64, "--nshots " + std::to_string(o.nshots));
  Survey s;
  place_points(m, o, s);
  std::string why_dt;  // what chose an automatic dt, for the messages below
  s.dt = o.dt > 0 ? o.dt : automatic_dt(m, o.frequency, why_dt);
  const double t_max = o.t_max > 0 ? o.t_max : std::max(0.5, 2.2 * (m.nz - 1) * m.dz / m.vmin());
  const double samples = std::floor(t_max / s.dt + 0.5) + 1;
  const std::string record =
      (o.t_max > 0 ? "--t-max " + number_text(t_max) + " s"
                   : "the automatic record length (2.2 × the model's depth / its slowest velocity) " +
                         number_text(t_max) + " s") +
      " at dt = " + number_text(s.dt) + " s" + why_dt;
  if (!(samples >= 2))
    throw InputError(record + " is one sample per trace; a record needs at least 2 (a longer --t-max)");
  if (!(samples < 1.8e19))
    throw InputError(record + " is " + number_text(samples) + " samples per trace, more than any machine can hold");
  memory::require_memory(std::uint64_t(samples), sizeof(float),
                         record + " (" + number_text(samples) + " samples per trace)");
  s.nt = int64_t(samples);
  const double peak = 1.5 / o.frequency, end = double(s.nt - 1) * s.dt;
  if (peak > end)
    throw InputError("--frequency: a " + number_text(o.frequency) + " Hz Ricker peaks at " + number_text(peak) +
                     " s (1.5 / its frequency), after the record's end at " + number_text(end) +
                     " s: a higher --frequency or a longer --t-max");
  s.wavelets.push_back(ricker(o.frequency, 1.5 / o.frequency, s.dt, s.nt));
  s.validate("survey");
  return s;
}

}  // namespace starwave
