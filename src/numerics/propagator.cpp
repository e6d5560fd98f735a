#include "src/numerics/propagator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>

#include "kernels/orders.hpp"
#include "kernels/stencil.hpp"
#include "src/base/error.hpp"

namespace starwave {

namespace {

void check_order(int order) {
  if (!supported_order(order)) throw InputError("--order: must be 2, 4, 6 or 8 (got " + std::to_string(order) + ")");
}

}  // namespace

void NumericalOptions::validate() const {
  check_order(order);
  for (int i = -1; i < 6; ++i) {
    const int w = i < 0 ? pml_width : pml_side(i);
    if (w < 0 || w > 1000)
      throw InputError("--pml-width: must be between 0 and 1000 cells (got " + std::to_string(w) + ")");
  }
  if (pml_inset < -1 || pml_inset > stencil::radius(order))
    throw InputError("--pml-inset: must be between 0 and the stencil's radius, " +
                     std::to_string(stencil::radius(order)) + " at order " + std::to_string(order) + " (got " +
                     std::to_string(pml_inset) + ")");
  if (internal_dt < 0 || !std::isfinite(internal_dt))
    throw InputError("--internal-dt: must be positive (or 0 for automatic)");
  if (pml_velocity < 0 || !std::isfinite(pml_velocity))
    throw InputError("--pml-velocity: must be positive m/s (or 0 for the model's fastest velocity)");
  if (pml_frequency < 0 || !std::isfinite(pml_frequency))
    throw InputError("--pml-frequency: must be positive Hz (or 0 for the wavelet's dominant frequency)");
  if (checkpoint_every < kCheckpointAuto)
    throw InputError("--checkpoint-every: must be a whole number of steps, 0 or more");
}

double stable_time_step(double vmax, double dz, double dx, int order, double dy) {
  check_order(order);
  const double lam = stencil::d2_nyquist_eigenvalue(order);
  const double sum = dy > 0 ? lam / (dz * dz) + lam / (dy * dy) + lam / (dx * dx) : lam / (dz * dz) + lam / (dx * dx);
  return 2.0 / (vmax * std::sqrt(sum));
}

void check_dimensions(const Model& m, const Survey& s) {
  if (m.dim == s.dim) return;
  throw InputError(std::string("--survey/--data: the positions are ") + (s.dim == 3 ? "3-D [z, y, x]" : "2-D [z, x]") +
                   " but the model (--model) " + m.shape_text() + " is " + (m.three_d() ? "3-D" : "2-D") +
                   ": a survey must have its model's dimension");
}

TimeStepping choose_time_step(const Model& m, const Survey& s, const NumericalOptions& o) {
  check_dimensions(m, s);
  // The layers' damping grows with their speed: far above the model's the layers reflect like
  // a wall, far below they do not damp at all.
  if (o.pml_velocity > 0 && !(o.pml_velocity >= 0.1 * m.vmin() && o.pml_velocity <= 10 * m.vmax()))
    throw InputError("--pml-velocity: " + number_text(o.pml_velocity) + " m/s is outside " +
                     number_text(0.1 * m.vmin()) + " … " + number_text(10 * m.vmax()) +
                     " m/s (a tenth of the model's slowest velocity to ten times its fastest): the absorbing "
                     "layers would not absorb");
  TimeStepping ts;
  ts.dt_stable = stable_time_step(m.vmax(), m.dz, m.dx, o.order, m.three_d() ? m.dy : 0);
  if (o.internal_dt > 0) {
    if (o.internal_dt > ts.dt_stable) {
      std::ostringstream os;
      os << "--internal-dt: " << o.internal_dt << " s is unstable for v_max = " << m.vmax() << " m/s, spacing " << m.dz
         << " × ";
      if (m.three_d()) os << m.dy << " × ";
      os << m.dx << " m and order " << o.order << " (the limit is " << ts.dt_stable << " s)";
      throw InputError(os.str());
    }
    const double ratio = s.dt / o.internal_dt;
    if (!(ratio <= kMaxStepsPerSample)) {
      std::ostringstream os;
      os << "--internal-dt: " << o.internal_dt << " s would take " << ratio << " steps per data sample (dt = " << s.dt
         << " s), more than " << kMaxStepsPerSample;
      throw InputError(os.str());
    }
    ts.k = int(std::lround(ratio));
    if (ts.k < 1 || std::abs(ratio - ts.k) > 1e-6 * ratio) {
      std::ostringstream os;
      os << "--internal-dt: " << o.internal_dt << " s must divide the data interval dt = " << s.dt << " s";
      throw InputError(os.str());
    }
  } else {
    // Internal steps per data sample. A dt that needs more than kMaxStepsPerSample is not a
    // sampling interval in seconds (e.g. 1e300, or milliseconds written as seconds).
    const double k = std::ceil(s.dt / (o.cfl_safety * ts.dt_stable) - 1e-9);
    if (!(k <= kMaxStepsPerSample)) {
      std::ostringstream os;
      os << "the data's dt = " << s.dt << " s would need " << k
         << " propagator steps per sample: the model's v_max = " << m.vmax() << " m/s at spacing " << m.dz << " × ";
      if (m.three_d()) os << m.dy << " × ";
      os << m.dx << " m allows steps of " << ts.dt_stable << " s (order " << o.order << "); more than "
         << kMaxStepsPerSample << " means dt is not the sampling interval in s, or the model is not in m/s and m";
      throw InputError(os.str());
    }
    ts.k = std::max(1, int(k));
  }
  // The other way round: a record so short that a wave at the model's fastest velocity
  // does not cross one cell is not seconds of data either (e.g. microseconds for
  // milliseconds): every trace would be modeled as silence, every gradient as zero.
  const double record = double(s.nt - 1) * s.dt, cell = std::min({m.dz, m.dx, m.three_d() ? m.dy : m.dx});
  if (!(record * m.vmax() >= cell)) {
    std::ostringstream os;
    os << "the data's record, (nt - 1) × dt = " << s.nt - 1 << " × " << s.dt << " s = " << record
       << " s, ends before a wave at the model's v_max = " << m.vmax() << " m/s crosses one cell (" << cell
       << " m): dt is not the sampling interval in s, or the model is not in m/s and m";
    throw InputError(os.str());
  }
  ts.dt = s.dt / ts.k;
  const double steps = double(s.nt - 1) * ts.k;
  if (!(steps <= double(INT32_MAX))) {
    std::ostringstream os;
    os << "the record of nt = " << s.nt << " samples would take " << steps
       << " propagator steps, more than 2^31: shorten the record (nt) or raise dt";
    throw InputError(os.str());
  }
  ts.nsteps = int(steps);
  // The layers' frequency is the band's: above the data's Nyquist it means nothing.
  if (o.pml_frequency > 0.5 / s.dt)
    throw InputError("--pml-frequency: " + number_text(o.pml_frequency) + " Hz is above the data's Nyquist frequency " +
                     number_text(0.5 / s.dt) + " Hz (dt = " + number_text(s.dt) +
                     " s): give the wavelet's dominant frequency, or 0 for it");
  return ts;
}

namespace {

/// |Σ w[n] e^{−iωn dt}|² at each frequency of `f`: the phase factor advanced by one rotation
/// a sample (one sincos a frequency, not a sample: this runs before every modeling job).
/// Eight frequencies go through the samples together, each with its own recurrence in the
/// same operations and order as alone (so the same bits), where one frequency alone would
/// wait on its own additions; the trailing zero samples add nothing and are skipped.
std::vector<double> powers(const std::vector<float>& w, double dt, const std::vector<double>& f) {
  std::size_t n = w.size();
  while (n > 0 && w[n - 1] == 0.0f) --n;
  constexpr std::size_t kLanes = 8;
  std::vector<double> out(f.size());
  for (std::size_t i0 = 0; i0 < f.size(); i0 += kLanes) {
    const std::size_t used = std::min(kLanes, f.size() - i0);
    double c[kLanes], s[kLanes], pr[kLanes], pi[kLanes], re[kLanes], im[kLanes];
    for (std::size_t k = 0; k < kLanes; ++k) {
      const double fk = f[i0 + std::min(k, used - 1)];  // spare lanes repeat the last frequency
      c[k] = std::cos(2 * M_PI * fk * dt);
      s[k] = -std::sin(2 * M_PI * fk * dt);
      pr[k] = 1;
      pi[k] = re[k] = im[k] = 0;
    }
    for (std::size_t j = 0; j < n; ++j) {
      const double x = w[j];
      for (std::size_t k = 0; k < kLanes; ++k) {
        re[k] += x * pr[k];
        im[k] += x * pi[k];
        const double t = pr[k] * c[k] - pi[k] * s[k];
        pi[k] = pr[k] * s[k] + pi[k] * c[k];
        pr[k] = t;
      }
    }
    for (std::size_t k = 0; k < used; ++k) out[i0 + k] = re[k] * re[k] + im[k] * im[k];
  }
  return out;
}

}  // namespace

double dominant_frequency(const std::vector<float>& w, double dt) {
  // 512 frequencies spaced evenly in log from the record's resolution, 1 / (nt dt), to
  // Nyquist, then 64 steps across the best one's neighbours. Evenly in log, not in Hz:
  // data sampled far finer than their wavelet (10 µs for a 10 Hz source) would put the
  // whole pulse below the first of 512 even bins (97.7 Hz), where only the float
  // rounding of the samples is heard. The first of equal powers wins.
  const double nyquist = 0.5 / dt;
  const double lowest = std::min(1.0 / (double(w.size()) * dt), nyquist / 512);
  const double ratio = std::pow(nyquist / lowest, 1.0 / 512);
  std::vector<double> coarse(512);
  for (int i = 0; i < 512; ++i) coarse[std::size_t(i)] = lowest * std::pow(ratio, i);
  const std::vector<double> coarse_power = powers(w, dt, coarse);
  double best = 0, best_f = nyquist / 8;
  int best_i = 0;
  for (int i = 0; i < 512; ++i)
    if (const double a = coarse_power[std::size_t(i)]; a > best) {
      best = a;
      best_f = coarse[std::size_t(i)];
      best_i = i;
    }
  if (best == 0) return best_f;  // a silent wavelet: no peak to refine
  std::vector<double> fine;
  for (int j = -32; j <= 32; ++j) {
    const double f = lowest * std::pow(ratio, best_i + j / 32.0);
    if (j != 0 && f < nyquist) fine.push_back(f);
  }
  const std::vector<double> fine_power = powers(w, dt, fine);
  for (std::size_t j = 0; j < fine.size(); ++j)
    if (fine_power[j] > best) {
      best = fine_power[j];
      best_f = fine[j];
    }
  return best_f;
}

template <typename T>
void Medium<T>::attach(ShotProblem<T>& p, const T* base) const {
  p.attach_medium(base);
}

namespace {

/// CPML damping for one layer cell at relative depth d ∈ (0, 1] into the layer
/// (Pasalic & McGarry 2010 with κ = 1): σ = σ_max d², α = α_max (1 − d),
/// a = exp(−(σ + α) Δt), b = σ/(σ + α) (a − 1); σ_max = −3 v ln R / (2 L).
void cpml_coefficients(double d, double vmax, double thickness, double reflection, double f, double dt, double& a,
                       double& b) {
  const double sigma = -3.0 * vmax * std::log(reflection) / (2.0 * thickness) * d * d;
  const double alpha = M_PI * f * (1.0 - d);
  a = std::exp(-(sigma + alpha) * dt);
  b = (sigma + alpha) > 0 ? sigma / (sigma + alpha) * (a - 1.0) : 0.0;
}

}  // namespace

template <typename T>
Medium<T> medium_layout(const Model& m, const NumericalOptions& o) {
  Medium<T> med;
  ShotProblem<T>& p = med.layout;
  const int w = o.pml_width;
  const int top = o.free_surface ? 0 : o.pml_side(0), bottom = o.pml_side(1);
  const int front = m.three_d() ? o.pml_side(2) : 0, back = m.three_d() ? o.pml_side(3) : 0;
  const int left = o.pml_side(4), right = o.pml_side(5);
  const double cells = double(m.nz + top + bottom) * (m.ny + front + back) * (m.nx + left + right);
  if (!(cells < 2147483648.0)) {
    std::ostringstream os;
    os << "the model " << m.shape_text() << " with its absorbing layers (--pml-width " << w << ") has " << cells
       << " cells, more than 2^31: this version propagates smaller grids only";
    throw InputError(os.str());
  }
  const int radius = stencil::radius(o.order);
  p.set_grid(m.nz + top + bottom, m.ny + front + back, m.nx + left + right, radius, m.dim);
  // Each CPML region reaches `inset` cells into the model (ShotGrid::inset): --pml-inset, the
  // stencil's radius by default, or less where a dimension with layers has under two radii of
  // model cells, so that the CPML interior keeps a cell in every dimension (no store block is
  // empty).
  int inset = o.pml_inset >= 0 ? std::min(o.pml_inset, radius) : radius;
  if (top > 0 || bottom > 0) inset = std::min(inset, (m.nz - 1) / 2);
  if (front > 0 || back > 0) inset = std::min(inset, (m.ny - 1) / 2);
  if (left > 0 || right > 0) inset = std::min(inset, (m.nx - 1) / 2);
  p.inset = inset;
  auto region = [&](int width) { return width > 0 ? width + inset : 0; };
  p.pml_top = region(top);
  p.pml_bottom = region(bottom);
  p.pml_front = region(front);
  p.pml_back = region(back);
  p.pml_left = region(left);
  p.pml_right = region(right);
  p.free_surface = o.free_surface;
  p.dz = T(m.dz);
  p.dy = m.three_d() ? T(m.dy) : T(1);
  p.dx = T(m.dx);
  med.model_top = p.mz0();
  med.model_front = p.my0();
  med.model_left = p.mx0();
  return med;
}

template <typename T>
Medium<T> build_medium(const Model& m, const NumericalOptions& o, const TimeStepping& ts, int nt,
                       double pml_frequency) {
  Medium<T> med = medium_layout<T>(m, o);
  ShotProblem<T>& p = med.layout;
  p.nsteps = ts.nsteps;
  p.record_every = ts.k;
  p.nt = nt;

  const std::size_t g = p.grid_size();
  med.buffer.assign(p.medium_size(), T(0));
  T* vdt2 = med.buffer.data() + p.origin();
  const double dt2 = ts.dt * ts.dt;
  for (int z = 0; z < p.nz; ++z) {
    const int mz = std::clamp(z - p.mz0(), 0, m.nz - 1);  // edge replication into the layers
    for (int y = 0; y < p.ny; ++y) {
      const int my = std::clamp(y - p.my0(), 0, m.ny - 1);
      for (int x = 0; x < p.nx; ++x) {
        const int mx = std::clamp(x - p.mx0(), 0, m.nx - 1);
        const double v = m.at(mz, my, mx);
        vdt2[p.row_offset(z, y) + x] = T(v * v * dt2);
      }
    }
  }
  T* a_z = med.buffer.data() + g;
  T* b_z = a_z + p.nz;
  T* a_x = b_z + p.nz;
  T* b_x = a_x + p.nx;
  T* a_y = b_x + p.nx;
  T* b_y = a_y + p.ny;
  const double vmax = o.pml_velocity > 0 ? o.pml_velocity : m.vmax();
  // lo, hi: the layers' widths; the CPML regions' first `inset` cells keep a = b = 0.
  auto fill = [&](T* a, T* b, int n, int lo, int hi, double h) {
    for (int i = 0; i < n; ++i) {
      double d = 0;
      int width = 0;  // of this cell's layer: its own thickness sets its σ_max
      if (i < lo)
        d = double(lo - i) / lo, width = lo;
      else if (i >= n - hi)
        d = double(i - (n - hi) + 1) / hi, width = hi;
      double ai = 0, bi = 0;
      if (d > 0) cpml_coefficients(d, vmax, width * h, o.pml_reflection, pml_frequency, ts.dt, ai, bi);
      a[i] = T(ai);
      b[i] = T(bi);
    }
  };
  fill(a_z, b_z, p.nz, p.mz0(), p.nz - p.mz1(), m.dz);
  fill(a_x, b_x, p.nx, p.mx0(), p.nx - p.mx1(), m.dx);
  if (m.three_d()) fill(a_y, b_y, p.ny, p.my0(), p.ny - p.my1(), m.dy);
  return med;
}

namespace {

/// Hicks' (2002) Kaiser window over ±r nodes: I0(b·√(1 − (d/r)²)) / I0(b).
double kaiser(double d, int r, double b) {
  const double q = d / r;
  return q * q >= 1 ? 0.0 : std::cyl_bessel_i(0.0, b * std::sqrt(1 - q * q)) / std::cyl_bessel_i(0.0, b);
}

/// The 1-D weights of coordinate f (in cells from model node 0; padded node k + shift) over
/// a padded grid of n nodes, ascending by node: one node of weight 1 when f is on a node,
/// else the Kaiser-windowed sinc over the 2·r nearest. With `fold`, nodes above plane
/// `top` (the free surface) fold onto their mirror images with the opposite sign (the
/// field is odd about the surface); nodes off the padded grid are dropped. Without
/// `values` only the nodes are right (the weights are 0: for counting).
std::vector<std::pair<int, double>> weights_1d(double f, int shift, int n, bool fold, int top, bool values) {
  constexpr int r = kHicksRadius;
  std::vector<std::pair<int, double>> w;
  auto add = [&](int k, double v) {
    if (fold && k < top) {
      k = 2 * top - k;
      v = -v;
    }
    if (k < 0 || k >= n) return;
    for (auto& e : w)
      if (e.first == k) {
        e.second += v;
        return;
      }
    w.emplace_back(k, v);
  };
  if (on_node(f)) {
    add(int(std::round(f)) + shift, 1.0);
  } else {
    const int lo = int(std::floor(f)) - r + 1;
    for (int k = lo; k < lo + 2 * r; ++k) {
      const double d = k - f;
      add(k + shift, values ? std::sin(M_PI * d) / (M_PI * d) * kaiser(d, r, kHicksBeta) : 0.0);
    }
  }
  std::sort(w.begin(), w.end());
  return w;
}

}  // namespace

int most_point_nodes(const Model& m, const Survey& s) {
  auto on = [&](const Position& p) {
    return on_node((p.z - m.z0) / m.dz) && on_node((p.x - m.x0) / m.dx) &&
           (!m.three_d() || on_node((p.y - m.y0) / m.dy));
  };
  bool all = std::all_of(s.sources.begin(), s.sources.end(), on);
  for (const auto& spread : s.receivers) all = all && std::all_of(spread.begin(), spread.end(), on);
  return all ? 1 : int(std::pow(2 * kHicksRadius, m.three_d() ? 3 : 2));
}

bool inside(const Model& m, const Position& pos) {
  const bool three = m.three_d();
  const double fz = (pos.z - m.z0) / m.dz, fy = three ? (pos.y - m.y0) / m.dy : 0.0, fx = (pos.x - m.x0) / m.dx;
  auto outside = [](double f, int n) { return !std::isfinite(f) || f < -kOnNode || f > n - 1 + kOnNode; };
  return !(outside(fz, m.nz) || outside(fx, m.nx) || (three && outside(fy, m.ny)));
}

void require_inside(const Model& m, const Position& pos, const std::string& what) {
  const bool three = m.three_d();
  if (!inside(m, pos)) {
    std::ostringstream os;
    os << what << " at (z=" << pos.z << " m, ";
    if (three) os << "y=" << pos.y << " m, ";
    os << "x=" << pos.x << " m)";
    auto range = [](const char* name, double o, int n, double h) {
      return std::string(name) + " " + number_text(o) + "…" + number_text(o + (n - 1) * h) + " m";
    };
    throw InputError(os.str() + " lies outside the model (" + range("z", m.z0, m.nz, m.dz) + ", " +
                     (three ? range("y", m.y0, m.ny, m.dy) + ", " : std::string()) + range("x", m.x0, m.nx, m.dx) +
                     ")");
  }
}

namespace {

/// point_nodes(), or without `values` only its nodes (the weights 0: for counting).
template <typename T>
PointNodes nodes_of(const Medium<T>& med, const Model& m, const Position& pos, const std::string& what, bool values) {
  const bool three = m.three_d();
  const double fz = (pos.z - m.z0) / m.dz, fy = three ? (pos.y - m.y0) / m.dy : 0.0, fx = (pos.x - m.x0) / m.dx;
  require_inside(m, pos, what);
  const ShotProblem<T>& l = med.layout;
  const auto wz = weights_1d(fz, med.model_top, l.nz, l.free_surface, l.pml_top, values);
  const auto wy =
      three ? weights_1d(fy, med.model_front, l.ny, false, 0, values) : std::vector<std::pair<int, double>>{{0, 1.0}};
  const auto wx = weights_1d(fx, med.model_left, l.nx, false, 0, values);
  PointNodes p;  // z, then y, then x: ascending grid offsets
  for (const auto& [z, a] : wz)
    for (const auto& [y, b] : wy)
      for (const auto& [x, c] : wx) {
        p.node.push_back(l.row_offset(z, y) + x);
        p.weight.push_back(a * b * c);
      }
  return p;
}

}  // namespace

template <typename T>
PointNodes point_nodes(const Medium<T>& med, const Model& m, const Position& pos, const std::string& what) {
  return nodes_of(med, m, pos, what, true);
}

namespace {

/// The weights of upsample(): f(m, j, sinc, window) for each resampled sample m < count and
/// input sample j < n it takes (ascending j for each m), a Lanczos-windowed sinc with a
/// half-width of 16 input samples; k = 1 takes the samples themselves.
template <typename F>
void for_each_resampling_weight(int k, int count, int n, F&& f) {
  if (k == 1) {
    for (int m = 0; m < count && m < n; ++m) f(m, m, 1.0, 1.0);
    return;
  }
  const int half = 16;
  for (int m = 0; m < count; ++m) {
    const double t = double(m) / k;  // in input samples
    const int c = int(std::floor(t));
    for (int j = c - half + 1; j <= c + half; ++j) {
      if (j < 0 || j >= n) continue;
      const double u = t - j;
      const double sinc = u == 0 ? 1.0 : std::sin(M_PI * u) / (M_PI * u);
      const double win = std::abs(u) >= half ? 0.0 : (u == 0 ? 1.0 : std::sin(M_PI * u / half) / (M_PI * u / half));
      f(m, j, sinc, win);
    }
  }
}

}  // namespace

std::vector<double> upsample(const std::vector<double>& w, int k, int count) {
  std::vector<double> out(std::size_t(count), 0.0);
  if (k == 1) {  // the samples themselves
    for (int m = 0; m < count && m < int(w.size()); ++m) out[std::size_t(m)] = w[std::size_t(m)];
    return out;
  }
  for_each_resampling_weight(k, count, int(w.size()), [&](int m, int j, double sinc, double win) {
    out[std::size_t(m)] += w[std::size_t(j)] * sinc * win;
  });
  return out;
}

std::vector<double> upsample_transpose(const std::vector<double>& g, int k, int n) {
  std::vector<double> out(std::size_t(n), 0.0);
  for_each_resampling_weight(k, int(g.size()), n, [&](int m, int j, double sinc, double win) {
    out[std::size_t(j)] += g[std::size_t(m)] * sinc * win;
  });
  return out;
}

template <typename T>
ShotInputs<T> shot_inputs(const Medium<T>& med, const Model& m, const Survey& s, const TimeStepping& ts, int shot) {
  ShotInputs<T> in;
  const std::vector<double> src = upsample(s.source_wavelet(shot), ts.k, ts.nsteps);
  const double delta_h = m.three_d() ? 1.0 / (m.dz * m.dy * m.dx) : 1.0 / (m.dz * m.dx);
  const PointNodes source = point_nodes(med, m, s.sources[std::size_t(shot)], "source " + std::to_string(shot));
  const auto& rec = s.receivers_of(shot);
  std::vector<PointNodes> receivers(rec.size());
  const std::size_t count = std::size_t(s.count(shot));
  for (std::size_t r = 0; r < count; ++r)  // padding past the count has no nodes (it records zeros)
    receivers[r] = point_nodes(med, m, rec[r], "receiver " + std::to_string(r) + " of shot " + std::to_string(shot));
  const ShotProblem<T>& l = med.layout;
  in.nsrc = int(source.node.size());
  in.nent = 0;
  for (const auto& r : receivers) in.nent += int(r.node.size());
  in.nodes.resize(ShotProblem<T>::nodes_size(in.nsrc, int(rec.size()), in.nent, l.rows()));
  fill_nodes(in.nodes.data(), source, receivers, l.rows(), [&](int r) { return l.row_offset(r / l.ny, r % l.ny); });
  in.signals.resize(src.size() + std::size_t(in.nsrc) + std::size_t(in.nent));
  for (std::size_t i = 0; i < src.size(); ++i) in.signals[i] = T(src[i] * delta_h);
  fill_weights(in.signals.data(), int(src.size()), source, receivers);
  return in;
}

template <typename T>
ShotInputs<T> point_counts(const Medium<T>& med, const Model& m, const Survey& s, int shot,
                           const ShotInputs<T>& built) {
  ShotInputs<T> c;
  if (!built.nodes.empty()) {
    c.nsrc = built.nsrc;
    c.nent = built.nent;
    return c;
  }
  c.nsrc = int(nodes_of(med, m, s.sources[std::size_t(shot)], "source", false).node.size());
  const auto& rec = s.receivers_of(shot);
  for (std::size_t r = 0; r < std::size_t(s.count(shot)); ++r)
    c.nent += int(nodes_of(med, m, rec[r], "receiver", false).node.size());
  return c;
}

#define STARWAVE_INSTANTIATE(T)                                                                                   \
  template struct Medium<T>;                                                                                      \
  template Medium<T> medium_layout<T>(const Model&, const NumericalOptions&);                                     \
  template Medium<T> build_medium<T>(const Model&, const NumericalOptions&, const TimeStepping&, int, double);    \
  template PointNodes point_nodes<T>(const Medium<T>&, const Model&, const Position&, const std::string&);        \
  template ShotInputs<T> shot_inputs<T>(const Medium<T>&, const Model&, const Survey&, const TimeStepping&, int); \
  template ShotInputs<T> point_counts<T>(const Medium<T>&, const Model&, const Survey&, int, const ShotInputs<T>&);
STARWAVE_INSTANTIATE(float)
STARWAVE_INSTANTIATE(double)
#undef STARWAVE_INSTANTIATE

template <typename T>
std::vector<T> born_scatter(const ShotProblem<T>& l, const Model& m, const std::vector<double>& dv, bool layers) {
  std::vector<T> s(l.grid_size(), T(0));
  const long o = l.origin();
  for (int z = 0; z < l.nz; ++z)
    for (int y = 0; y < l.ny; ++y)
      for (int x = 0; x < l.nx; ++x) {
        if (!layers && (z < l.mz0() || z >= l.mz1() || y < l.my0() || y >= l.my1() || x < l.mx0() || x >= l.mx1()))
          continue;  // a layer cell: no perturbation
        const std::size_t k =
            m.index(std::clamp(z, l.mz0(), l.mz1() - 1) - l.mz0(), std::clamp(y, l.my0(), l.my1() - 1) - l.my0(),
                    std::clamp(x, l.mx0(), l.mx1() - 1) - l.mx0());
        s[std::size_t(o + l.row_offset(z, y) + x)] = T(2 * dv[k] / m.vp[k]);
      }
  return s;
}

template std::vector<float> born_scatter(const ShotProblem<float>&, const Model&, const std::vector<double>&, bool);
template std::vector<double> born_scatter(const ShotProblem<double>&, const Model&, const std::vector<double>&, bool);

}  // namespace starwave
