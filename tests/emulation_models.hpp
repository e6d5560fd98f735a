// tests/emulation_models.hpp — models and options the launch-emulation tests share.
#pragma once

#include <array>

#include "src/model/model.hpp"
#include "src/numerics/propagator.hpp"
#include "tests/helpers.hpp"

namespace starwave::test {

/// The options of a shot of order `Order` in T's precision, layers of `pml` cells.
template <typename T, int Order>
NumericalOptions options_for(int pml, bool free_surface) {
  NumericalOptions o;
  o.order = Order;
  o.pml_width = pml;
  o.free_surface = free_surface;
  o.precision = precision_of<T>();
  return o;
}

/// A model at 10 m whose velocity ramps from 1800 m/s by `g` (z, y, x) m/s a cell: nz × ny × nx
/// cells in 3-D, nz2 × nx2 in 2-D.
inline Model ramp_model(bool three, int nz, int ny, int nx, std::array<double, 3> g, int nz2, int nx2) {
  Model m = three ? constant_model_3d(nz, ny, nx, 10, 1800) : constant_model(nz2, nx2, 10, 1800);
  for (int z = 0; z < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x) m.at(z, y, x) = 1800 + g[0] * z + g[2] * x + g[1] * y;
  return m;
}

}  // namespace starwave::test
