// kernels/imaging.hpp — the per-element math of the misfit, image and reduce tasks
// (DESIGN §3), shared by their CPU loops and CUDA kernels. Pure: no StarPU, no I/O.
#pragma once

#include "kernels/hd.hpp"

namespace starwave::imaging {

/// What the image task makes of a shot's raw correlation.
enum Mode : int {
  kGradient = 0,  // ∂J/∂v = 2/v × correlation (kernels/cpu/adjoint.hpp)
  kRtm = 1,       // v² × correlation: −∂J/∂m for m = 1/v² (the Born scattering potential),
                  // for the residual d_obs − d_syn: where the velocity should increase
};

/// Adjoint source at one trace sample: the residual d_syn − d_obs (gradient), or for RTM
/// the data less what the migration model predicts, d_obs − d_syn: the direct wave (and
/// whatever the smooth model explains) is removed by modeling rather than by a mute.
template <typename T>
SW_HD T adjoint_source(T synthetic, float observed, int mode) {
  return mode == kRtm ? T(observed) - synthetic : synthetic - T(observed);
}

/// Element k of a shot's contribution [image or gradient (n) | illumination (n)].
template <typename T>
SW_HD void contribution_point(const T* correlation, const T* illumination, const T* velocity, T* out, long n, int mode,
                              long k) {
  out[k] = mode == kRtm ? velocity[k] * velocity[k] * correlation[k] : T(2) * correlation[k] / velocity[k];
  out[n + k] = illumination[k];
}

}  // namespace starwave::imaging
