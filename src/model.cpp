#include "src/model.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "src/error.hpp"

namespace starwave {

double Model::vmin() const { return *std::min_element(vp.begin(), vp.end()); }
double Model::vmax() const { return *std::max_element(vp.begin(), vp.end()); }

void Model::validate(const std::string& where) const {
  if (nz <= 0 || nx <= 0 || vp.size() != std::size_t(nz) * std::size_t(nx))
    throw InputError(where + ": the model grid is empty or inconsistent");
  if (!(dz > 0) || !(dx > 0) || !std::isfinite(dz) || !std::isfinite(dx))
    throw InputError(where + ": grid spacing must be positive and finite (got dz=" + std::to_string(dz) +
                     ", dx=" + std::to_string(dx) + ")");
  if (!std::isfinite(z0) || !std::isfinite(x0)) throw InputError(where + ": origin must be finite");
  for (int z = 0; z < nz; ++z)
    for (int x = 0; x < nx; ++x) {
      const double v = at(z, x);
      if (!std::isfinite(v) || !(v > 0)) {
        std::ostringstream os;
        os << where << ": velocity at (z=" << z << ", x=" << x << ") is " << v
           << "; every velocity must be finite and positive (m/s)";
        throw InputError(os.str());
      }
    }
}

}  // namespace starwave
