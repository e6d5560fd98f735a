#include "src/model/model.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <sstream>

#include "src/base/error.hpp"

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
  if (!spacing_ok(dz) || !spacing_ok(dx) || (three_d() && !spacing_ok(dy))) {
    std::ostringstream os;
    os << where << ": grid spacing must be positive, in metres, between " << kMinSpacing << " and " << kMaxSpacing
       << " (got dz=" << dz;
    if (three_d()) os << ", dy=" << dy;
    os << ", dx=" << dx << ")";
    throw InputError(os.str());
  }
  if (!(std::fabs(z0) <= kMaxOrigin && std::fabs(y0) <= kMaxOrigin && std::fabs(x0) <= kMaxOrigin))
    throw InputError(where + ": origin must be finite and within ±1e15 m of 0");
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        // Model files hold 32-bit floats and the kernels compute in them (or in double):
        // a velocity that float would turn into Inf or 0 is refused, not written or run.
        const double v = at(z, y, x);
        if (!std::isfinite(v) || !(v >= double(FLT_MIN)) || !(v <= double(FLT_MAX))) {
          std::ostringstream os;
          os << where << ": velocity at (z=" << z << (three_d() ? ", y=" + std::to_string(y) : std::string())
             << ", x=" << x << ") is " << v
             << "; every velocity must be finite and positive (m/s), within a 32-bit float's range (" << FLT_MIN
             << " to " << FLT_MAX << ")";
          throw InputError(os.str());
        }
      }
}

}  // namespace starwave
