// tests/test_stencil.cpp — the finite-difference weights, the stability bound and the
// wavelet resampling.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/stencil.hpp"
#include "src/numerics/propagator.hpp"

namespace starwave {
namespace {

template <int Order>
void check_exactness() {
  // A centred difference of order p is exact on polynomials of degree ≤ p + 1 (second
  // derivative) and ≤ p (first derivative).
  const int r = Order / 2;
  for (int degree = 0; degree <= Order + 1; ++degree) {
    std::vector<double> f(2 * r + 1);
    for (int j = -r; j <= r; ++j) f[std::size_t(j + r)] = std::pow(double(j), degree);
    const double d2 = stencil::d2<Order>(f.data() + r, 1);
    const double want2 = degree >= 2 && degree == 2 ? 2.0 : 0.0;  // at x = 0 only x² survives
    EXPECT_NEAR(d2, want2, 1e-12) << "order " << Order << " degree " << degree;
    if (degree <= Order) {
      const double d1 = stencil::d1<Order>(f.data() + r, 1);
      EXPECT_NEAR(d1, degree == 1 ? 1.0 : 0.0, 1e-12) << "order " << Order << " degree " << degree;
    }
  }
}

TEST(Stencil, WeightsAreExactOnPolynomials) {
  check_exactness<2>();
  check_exactness<4>();
  check_exactness<6>();
  check_exactness<8>();
}

TEST(Stencil, NyquistEigenvalues) {
  EXPECT_DOUBLE_EQ(stencil::d2_nyquist_eigenvalue<2>(), 4.0);
  EXPECT_NEAR(stencil::d2_nyquist_eigenvalue<4>(), 16.0 / 3.0, 1e-14);
  // Higher orders have larger spectral radius, so smaller stable steps.
  EXPECT_GT(stencil::d2_nyquist_eigenvalue<8>(), stencil::d2_nyquist_eigenvalue<6>());
}

TEST(Stencil, StableStepMatchesTheClassicalCflForOrder2) {
  // Order 2 in 2-D with equal spacing: Δt ≤ h / (v √2).
  EXPECT_NEAR(stable_time_step(2000, 10, 10, 2), 10 / (2000 * std::sqrt(2.0)), 1e-15);
}

TEST(Divisor, MultiplyAndShiftIsExactBelow2To31) {
  // Every divisor up to 4096, powers of two and their neighbours up to 2^31, and the
  // numerators where the quotient changes (k·d − 1, k·d) across the whole range.
  std::vector<unsigned> divisors;
  for (unsigned d = 1; d <= 4096; ++d) divisors.push_back(d);
  for (int b = 12; b <= 31; ++b)
    for (long long e : {-1LL, 0LL, 1LL, 3LL})
      if ((1LL << b) + e <= (1LL << 31)) divisors.push_back(unsigned((1LL << b) + e));
  divisors.push_back(600 * 250);
  divisors.push_back(1234567);
  const unsigned top = (1u << 31) - 1;  // the largest numerator allowed
  long long checked = 0, wrong = 0;
  for (unsigned d : divisors) {
    const Divisor q(d);
    auto check = [&](unsigned n) {
      ++checked;
      if (q.div(n) != n / d || q.mod(n) != n % d) ++wrong;
    };
    check(0);
    check(top);
    check(top - 1);
    const unsigned long long quotients = top / d;
    const unsigned long long step = quotients / 2000 + 1;  // ≈ 2000 quotient changes a divisor
    for (unsigned long long k = 1; k <= quotients; k += step) {
      check(unsigned(k * d - 1));
      check(unsigned(k * d));
    }
    for (unsigned n = 1; n < 5000 && n < top; n += 1) check(n);
  }
  EXPECT_EQ(wrong, 0) << "of " << checked;
  EXPECT_EQ(Divisor(0).div(12345), 0u);
}

TEST(Resampling, UpsampledWaveletKeepsOriginalSamplesAndIsSmooth) {
  const double dt = 2e-3;
  const std::vector<float> w = ricker(10, 0.15, dt, 200);
  const int k = 3;
  const std::vector<double> u = upsample(w, k, 199 * k);
  for (int n = 0; n < 199; ++n) EXPECT_NEAR(u[std::size_t(n * k)], w[std::size_t(n)], 1e-6);
  // In-between samples follow the continuous Ricker to band-limited accuracy.
  for (int m = 1; m < 199 * k; m += k) {
    const double t = m * dt / k - 0.15, a = M_PI * M_PI * 100 * t * t;
    EXPECT_NEAR(u[std::size_t(m)], (1 - 2 * a) * std::exp(-a), 2e-3);
  }
}

TEST(Spectrum, DominantFrequencyIsTheAmplitudePeak) {
  // The amplitude spectrum of a Ricker wavelet peaks at its peak frequency, found to 0.1 %,
  // also in data sampled far finer than the pulse (10 µs for 8 Hz); a windowed sinusoid
  // peaks at its own frequency.
  for (const double dt : {5e-4, 2e-3, 1e-5}) {
    for (double f : {8.0, 10.0, 25.0, 60.0}) {
      if (f >= 0.25 / dt) continue;
      const auto nt = long(std::lround(1.0 / dt)) + 1;  // 1 s: the whole pulse
      EXPECT_NEAR(dominant_frequency(ricker(f, 1.5 / f, dt, nt), dt), f, 1e-3 * f) << f << " Hz at dt " << dt;
    }
  }
  const double dt = 5e-4, bin = 0.5 / dt / 512;
  std::vector<float> w(3000);
  const double f0 = 97.3 * bin;
  for (std::size_t n = 0; n < w.size(); ++n)
    w[n] = float(std::sin(2 * M_PI * f0 * double(n) * dt) * std::pow(std::sin(M_PI * double(n) / double(w.size())), 2));
  EXPECT_NEAR(dominant_frequency(w, dt), f0, 1e-3 * f0);
  EXPECT_EQ(dominant_frequency(std::vector<float>(100, 0.0f), dt), 0.5 / dt / 8) << "a silent wavelet";
}

}  // namespace
}  // namespace starwave
