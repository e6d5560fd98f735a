// kernels/misfit_image.hpp — the per-element math of the misfit, image and reduce tasks
// (docs/design.md §3), shared by their CPU loops and CUDA kernels. Pure: no StarPU, no I/O.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/hd.hpp"

namespace starwave::imaging {

/// What the misfit task takes as the adjoint source, and what the image task makes of a
/// shot's raw correlation.
enum class Mode : int {
  kGradient = 0,     // residual d_syn − d_obs; ∂Φ/∂v = 2/v × correlation (kernels/cpu/adjoint.hpp)
  kRtm = 1,          // residual d_obs − d_ref, d_ref the data modeled in a reference model
                     // (the migration model or a smoothed copy: what it predicts, the direct
                     // wave, is removed); image v² × correlation: −∂Φ/∂m for m = 1/v² (the
                     // Born scattering potential), where the velocity should increase
  kRtmObserved = 2,  // the observed data themselves as the adjoint source; image as kRtm
  kAdjoint = 3,      // the observed data are the adjoint source, a caller's ∂L/∂d: the result
                     // Jᵀ(∂L/∂d) = ∂L/∂v, 2/v × correlation as kGradient (a vector-Jacobian product)
};

/// Adjoint source at one trace sample, by mode (above).
template <typename T>
SW_HD T adjoint_source(T synthetic, float observed, Mode mode) {
  return mode == Mode::kGradient ? synthetic - T(observed) : mode == Mode::kRtm ? T(observed) - synthetic : T(observed);
}

/// Element k of a shot's contribution [image or gradient (n) | illumination (sums × n)]
/// (`sums`: ShotProblem::illumination_sums()).
template <typename T>
SW_HD void contribution_point(const T* correlation, const T* illumination, const T* velocity, T* out, long n, Mode mode,
                              long k, int sums = 1) {
  out[k] = mode == Mode::kGradient || mode == Mode::kAdjoint ? T(2) * correlation[k] / velocity[k]
                                                             : velocity[k] * velocity[k] * correlation[k];
  for (int j = 0; j < sums; ++j) out[(1 + j) * n + k] = illumination[j * n + k];
}

// The misfit's order of summation, fixed so that a CPU and a CUDA worker give the same bits
// (docs/design.md §3): element i of a shot's n residual samples belongs to lane i mod kMisfitLanes;
// each lane sums the squares of its elements in ascending i (in double); the lanes are
// summed in blocks of kMisfitThreads by a halving tree (v[t] += v[t + h], h = 128 … 1), and
// the kMisfitBlocks block sums by the same tree. On a GPU a lane is a thread and a block a
// thread block, so the whole device shares the reduction.
constexpr int kMisfitThreads = 256;
constexpr int kMisfitBlocks = 64;
constexpr long kMisfitLanes = long(kMisfitThreads) * kMisfitBlocks;

/// A time window's taper at sample t (docs/design.md §2, "Data selection"): `win` = the first
/// and last sample of the window and its taper's length L in samples; 1 inside the window,
/// (1 − x)²(1 + 2x) at x = the distance outside it / L (1 → 0, flat at both ends), 0 past L.
/// A polynomial in double: the same bits on every processor.
SW_HD double window_taper(const float* win, long t) {
  const double first = double(win[0]), last = double(win[1]), length = double(win[2]), at = double(t);
  const double outside = at < first ? first - at : at > last ? at - last : 0.0;
  if (outside == 0) return 1.0;
  if (!(outside < length)) return 0.0;
  const double x = outside / length, u = 1.0 - x;
  return u * u * (1.0 + 2.0 * x);
}

/// Trace weights (kernels of the misfit): sample i of a shot's nrec × nt traces belongs to
/// trace i / nt, whose weight w (0: a dead trace, or a receiver past the shot's count)
/// makes the residual w · adjoint_source and the misfit ½ Σ w · adjoint_source². A null
/// `weight` is 1 everywhere; a weight of 1 gives the unweighted bits. `window` (nrec × 3
/// floats, null for none): each trace's time window (window_taper), which every misfit
/// applies to both traces before comparing them (the L2: ½ Σ w (W s − W o)²).
struct TraceWeights {
  const float* weight = nullptr;
  long nt = 1;
  const float* window = nullptr;
  const float* low = nullptr;  // the observed samples' remainders (observed + low: a float64 cotangent), or null
  SW_HD float at(long i) const { return weight ? weight[i / nt] : 1.0f; }
  /// W(t) of trace r (1 without windows).
  SW_HD double taper(long r, long t) const { return window ? window_taper(window + 3 * r, t) : 1.0; }
};

/// x as a sample of T, a float's subnormal flushed to a zero of its sign, as the CUDA build's
/// conversion does (-ftz=true): the same bits on both.
template <typename T>
SW_HD T sample_value(double x) {
  const T y = T(x);
  if (sizeof(T) == 4 && y != T(0) && y > -T(1.17549435e-38f) && y < T(1.17549435e-38f)) return y < T(0) ? -T(0) : T(0);
  return y;
}

/// Sample i's weighted residual into residual[i]; returns its term of Σ w · adjoint_source²
/// (windowed: w W² · adjoint_source, w W² · adjoint_source²).
template <typename T>
SW_HD double weighted_residual(const T* synthetic, const float* observed, T* residual, long i, Mode mode,
                               TraceWeights w) {
  T r = adjoint_source(synthetic[i], observed[i], mode);
  if (w.low) r = mode == Mode::kGradient ? r - T(w.low[i]) : r + T(w.low[i]);
  const float wi = w.at(i);
  if (!w.window) {
    residual[i] = T(wi) * r;
    return double(wi) * double(r) * double(r);
  }
  const double taper = w.taper(i / w.nt, i % w.nt), ww = double(wi) * taper * taper;
  residual[i] = sample_value<T>(ww * double(r));
  return ww * double(r) * double(r);
}

/// Lane `lane`'s sum of weighted squared residuals; writes the residual of its elements.
template <typename T>
SW_HD double misfit_lane(const T* synthetic, const float* observed, T* residual, long n, Mode mode, long lane,
                         TraceWeights w = {}) {
  double sum = 0;
  for (long i = lane; i < n; i += kMisfitLanes) sum += weighted_residual(synthetic, observed, residual, i, mode, w);
  return sum;
}

/// The halving tree over v[0 … count) (count a power of two), in place; returns the sum.
inline double halving_sum(double* v, int count) {
  for (int h = count / 2; h > 0; h /= 2)
    for (int t = 0; t < h; ++t) v[t] += v[t + h];
  return v[0];
}

/// J_s = ½ Σ w · adjoint_source² of one shot, in the fixed order above, on the host; writes
/// the residual.
template <typename T>
double misfit_fixed_order(const T* synthetic, const float* observed, T* residual, long n, Mode mode,
                          TraceWeights w = {}) {
  static_assert((kMisfitThreads & (kMisfitThreads - 1)) == 0 && (kMisfitBlocks & (kMisfitBlocks - 1)) == 0,
                "the trees halve");
  std::vector<double> lanes(std::size_t(kMisfitLanes), 0.0);
  long lane = 0;
  for (long i = 0; i < n; ++i) {  // lane by lane in ascending i: the order of misfit_lane, read sequentially
    lanes[lane] += weighted_residual(synthetic, observed, residual, i, mode, w);
    if (++lane == kMisfitLanes) lane = 0;
  }
  double blocks[kMisfitBlocks];
  for (int b = 0; b < kMisfitBlocks; ++b)
    blocks[b] = halving_sum(lanes.data() + long(b) * kMisfitThreads, kMisfitThreads);
  return 0.5 * halving_sum(blocks, kMisfitBlocks);
}

}  // namespace starwave::imaging
