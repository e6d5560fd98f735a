// src/model/model.hpp — the velocity model on a regular grid (docs/design.md §4: /vp, spacing, origin),
// 2-D (nz, nx) or 3-D (nz, ny, nx); a 2-D model is a 3-D one with one row (ny = 1).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace starwave {

struct Model {
  int dim = 2;                    // 2 or 3
  int nz = 0, ny = 1, nx = 0;     // ny = 1 in 2-D
  double dz = 0, dy = 0, dx = 0;  // m (dy unused in 2-D)
  double z0 = 0, y0 = 0, x0 = 0;  // m, position of cell (0, 0, 0)
  std::vector<double> vp;         // m/s, z slowest, x fastest

  bool three_d() const { return dim == 3; }
  std::size_t cells() const { return std::size_t(nz) * std::size_t(ny) * std::size_t(nx); }
  std::size_t index(int z, int y, int x) const { return (std::size_t(z) * ny + y) * std::size_t(nx) + x; }
  double at(int z, int y, int x) const { return vp[index(z, y, x)]; }
  double& at(int z, int y, int x) { return vp[index(z, y, x)]; }
  /// Cell (z, x) of a 2-D model (row y = 0 of a 3-D one).
  double at(int z, int x) const { return vp[index(z, 0, x)]; }
  double& at(int z, int x) { return vp[index(z, 0, x)]; }
  double vmin() const;
  double vmax() const;
  /// The shape as text: "(nz, nx)" or "(nz, ny, nx)".
  std::string shape_text() const;

  /// Spacings are metres, 1 µm (a laboratory sample) to 1000 km: far outside, the kernels'
  /// 1/h² would overflow or vanish in float, and the stable time step with it.
  static constexpr double kMinSpacing = 1e-6, kMaxSpacing = 1e6;
  /// The farthest a model's origin may lie from 0 on any axis (m): far past any survey, near
  /// enough that its cells stay apart in double and on a picture's axes.
  static constexpr double kMaxOrigin = 1e15;
  static bool spacing_ok(double h) { return h >= kMinSpacing && h <= kMaxSpacing; }

  /// Throws InputError naming `where` when the grid or any velocity is unusable
  /// (empty grid, a spacing out of range, NaN/inf or non-positive velocity).
  void validate(const std::string& where) const;
};

}  // namespace starwave
