// tests/wavelet_fixture.hpp — field-like source wavelets and how two wavelets compare
// (test_source.cpp, test_field.cpp).
#pragma once

#include <cmath>
#include <vector>

#include "kernels/misfit_trace.hpp"
#include "src/model/survey.hpp"

namespace starwave::test {

/// A field-like source: a Ricker of peak `f` rotated by `phase` radians, delayed `delay` s,
/// times `scale` (the rotation through the misfits' Hilbert transform, over the record).
inline std::vector<float> field_wavelet(double f, double phase, double delay, double scale, double dt, long nt) {
  const std::vector<float> r = ricker(f, 1.5 / f + delay, dt, nt);
  const long n = imaging::envelope_fft_length(nt);
  const std::vector<double> tw = imaging::fft_twiddles(n);
  std::vector<double> z(static_cast<std::size_t>(2 * n), 0.0);
  for (long t = 0; t < nt; ++t) z[std::size_t(2 * t)] = r[std::size_t(t)];
  imaging::hilbert(z.data(), n, tw.data());
  std::vector<float> w(r.size());
  for (long t = 0; t < nt; ++t)
    w[std::size_t(t)] = float(scale * (std::cos(phase) * r[std::size_t(t)] + std::sin(phase) * z[std::size_t(2 * t)]));
  return w;
}

/// The normalised correlation of two wavelets; `ratio` (when given) gets ‖a‖ / ‖b‖.
inline double correlation(const std::vector<float>& a, const std::vector<float>& b, double* ratio = nullptr) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  if (ratio) *ratio = std::sqrt(aa / bb);
  return ab / std::sqrt(aa * bb);
}

/// ‖a‖ / ‖b‖.
inline double norm_ratio(const std::vector<float>& a, const std::vector<float>& b) {
  double r = 0;
  correlation(a, b, &r);
  return r;
}

}  // namespace starwave::test
