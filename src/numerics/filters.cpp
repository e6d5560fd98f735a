// src/numerics/filters.cpp — see filters.hpp.
#include "src/numerics/filters.hpp"

#include <algorithm>
#include <cmath>

#include "src/base/error.hpp"

namespace starwave::filters {
namespace {

/// One second-order section of an analogue Butterworth low-pass with quality factor q,
/// mapped by the bilinear transform at the prewarped corner.
struct Biquad {
  double b0, b1, b2, a1, a2;
  double z1 = 0, z2 = 0;  // transposed direct form II state
  Biquad(double dt, double fc, double q) {
    const double k = std::tan(M_PI * fc * dt);  // prewarped ω_c·dt/2
    const double norm = 1 / (1 + k / q + k * k);
    b0 = k * k * norm;
    b1 = 2 * b0;
    b2 = b0;
    a1 = 2 * (k * k - 1) * norm;
    a2 = (1 - k / q + k * k) * norm;
  }
  double operator()(double x) {
    const double y = b0 * x + z1;
    z1 = b1 * x - a1 * y + z2;
    z2 = b2 * x - a2 * y;
    return y;
  }
};

}  // namespace

void lowpass(float* x, std::size_t n, double dt, double fc) {
  if (!(fc > 0) || !(fc < 0.5 / dt))
    throw InputError("low-pass corner " + std::to_string(fc) + " Hz is not between 0 and the Nyquist frequency " +
                     std::to_string(0.5 / dt) + " Hz");
  // The two poles pairs of a 4th-order Butterworth: Q = 1 / (2 cos(π/8)), 1 / (2 cos(3π/8)).
  Biquad s1(dt, fc, 1 / (2 * std::cos(M_PI / 8))), s2(dt, fc, 1 / (2 * std::cos(3 * M_PI / 8)));
  for (std::size_t i = 0; i < n; ++i) x[i] = float(s2(s1(double(x[i]))));
}

Survey lowpassed(const Survey& s, double fc) {
  Survey out = s;
  for (auto& w : out.wavelets) lowpass(w.data(), w.size(), s.dt, fc);
  const std::size_t nt = std::size_t(s.nt);
  for (std::size_t t = 0; t + nt <= out.data.size(); t += nt) lowpass(out.data.data() + t, nt, s.dt, fc);
  return out;
}

std::vector<double> gaussian(const std::vector<double>& f, int nz, int nx, double dz, double dx, double sigma,
                             Edge edge) {
  return gaussian(f, nz, 1, nx, dz, 0, dx, sigma, edge);
}

std::vector<double> gaussian(const std::vector<double>& f, int nz, int ny, int nx, double dz, double dy, double dx,
                             double sigma, Edge edge) {
  if (!(sigma > 0)) return f;
  std::vector<double> out = f;
  // One pass along a dimension of n samples, `count` lines, element i of line c at
  // base + c·stride + i·step.
  auto pass = [&](int n, int count, long step, long stride, double h, long base) {
    // Three standard deviations. Callers refuse a sigma longer than the grid (the
    // window then stays within 3n); the cap only keeps a huge one from overflowing.
    const int r = int(std::min(std::ceil(3 * sigma / h), 3.0 * n));
    std::vector<double> w(std::size_t(2 * r + 1));
    double sum = 0;
    for (int k = -r; k <= r; ++k) sum += w[std::size_t(k + r)] = std::exp(-0.5 * (k * h / sigma) * (k * h / sigma));
    for (double& x : w) x /= sum;
    std::vector<double> line(static_cast<std::size_t>(n));
    for (int c = 0; c < count; ++c) {
      for (int i = 0; i < n; ++i) line[std::size_t(i)] = out[std::size_t(base + c * stride + i * step)];
      for (int i = 0; i < n; ++i) {
        double acc = 0;
        for (int k = -r; k <= r; ++k) {
          int j = i + k;
          if (j < 0 || j >= n) {
            if (edge == Edge::kZero) continue;
            j = std::clamp(j, 0, n - 1);
          }
          acc += w[std::size_t(k + r)] * line[std::size_t(j)];
        }
        out[std::size_t(base + c * stride + i * step)] = acc;
      }
    }
  };
  const long plane = long(ny) * nx;
  pass(nx, nz * ny, 1, nx, dx, 0);
  if (ny > 1)
    for (int z = 0; z < nz; ++z) pass(ny, nx, nx, 1, dy, z * plane);
  pass(nz, int(plane), plane, 1, dz, 0);
  return out;
}

}  // namespace starwave::filters
