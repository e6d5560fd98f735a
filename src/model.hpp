// src/model.hpp — the velocity model on a regular grid (DESIGN §4: /vp, spacing, origin).
#pragma once

#include <string>
#include <vector>

namespace starwave {

struct Model {
  int nz = 0, nx = 0;
  double dz = 0, dx = 0;   // m
  double z0 = 0, x0 = 0;   // m, position of cell (0, 0)
  std::vector<double> vp;  // m/s, row-major (z, x)

  double at(int z, int x) const { return vp[std::size_t(z) * nx + x]; }
  double& at(int z, int x) { return vp[std::size_t(z) * nx + x]; }
  double vmin() const;
  double vmax() const;

  /// Throws InputError naming `where` when the grid or any velocity is unusable
  /// (empty grid, non-positive spacing, NaN/inf or non-positive velocity).
  void validate(const std::string& where) const;
};

}  // namespace starwave
