#include "src/model.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "src/error.hpp"

namespace starwave {

double Model::vmin() const { return *std::min_element(vp.begin(), vp.end()); }
double Model::vmax() const { return *std::max_element(vp.begin(), vp.end()); }

std::string Model::shape_text() const {
  return "(" + std::to_string(nz) + ", " + (three_d() ? std::to_string(ny) + ", " : std::string()) +
         std::to_string(nx) + ")";
}

void Model::validate(const std::string& where) const {
  if (dim != 2 && dim != 3) throw InputError(where + ": the model must be 2-D or 3-D");
  if (nz <= 0 || ny <= 0 || nx <= 0 || (!three_d() && ny != 1) || vp.size() != cells())
    throw InputError(where + ": the model grid is empty or inconsistent");
  const bool bad_y = three_d() && (!(dy > 0) || !std::isfinite(dy));
  if (!(dz > 0) || !(dx > 0) || !std::isfinite(dz) || !std::isfinite(dx) || bad_y)
    throw InputError(where + ": grid spacing must be positive and finite (got dz=" + std::to_string(dz) +
                     (three_d() ? ", dy=" + std::to_string(dy) : std::string()) + ", dx=" + std::to_string(dx) + ")");
  if (!std::isfinite(z0) || !std::isfinite(y0) || !std::isfinite(x0))
    throw InputError(where + ": origin must be finite");
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        const double v = at(z, y, x);
        if (!std::isfinite(v) || !(v > 0)) {
          std::ostringstream os;
          os << where << ": velocity at (z=" << z << (three_d() ? ", y=" + std::to_string(y) : std::string())
             << ", x=" << x << ") is " << v << "; every velocity must be finite and positive (m/s)";
          throw InputError(os.str());
        }
      }
}

}  // namespace starwave
