// tests/test_stencil.cpp — the finite-difference weights, the stability bound and the
// wavelet resampling.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/pack16.hpp"
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

/// Every finite 16-bit word decodes to a value that encodes back to the same word, at
/// several scales; NaN words decode to NaN, infinities to infinities.
template <typename T>
void expect_every_word_round_trips(int c) {
  for (int s : {0, 9, -17, 40}) {
    for (unsigned w = 0; w < 65536; ++w) {
      const auto h = std::uint16_t(w);
      const T x = pack16::decode<T>(h, s, c);
      const pack16::Format f = pack16::Format::of(c);
      const bool special = ((w >> f.frac) & unsigned(f.emax)) == unsigned(f.emax);
      if (special) {
        ASSERT_TRUE((w & ((1u << f.frac) - 1)) ? std::isnan(x) : std::isinf(x)) << w;
        continue;
      }
      if (std::isinf(x)) {  // only a value past T's range reads as infinite
        ASSERT_GT(std::abs(std::ldexp(pack16::decode<double>(h, 0, c), -s)), double(std::numeric_limits<T>::max()))
            << w;
        continue;
      }
      if (x == 0 && (w & 0x7fff) != 0) {  // only a value below T's normal range reads as zero
        ASSERT_LT(std::abs(std::ldexp(pack16::decode<double>(h, 0, c), -s)), double(std::numeric_limits<T>::min()))
            << w;
        continue;
      }
      ASSERT_EQ(pack16::encode(x, s, c), h)
          << "word " << w << " scale " << s << (sizeof(T) == 4 ? " float" : " double");
    }
  }
}

/// A float's bits and back.
std::uint32_t bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

TEST(Store16, EveryWordRoundTrips) {
  for (int c : {pack16::kHalf, pack16::kBfloat}) {
    expect_every_word_round_trips<float>(c);
    expect_every_word_round_trips<double>(c);
  }
}

TEST(Store16, RoundsToNearestEvenAsTheCompilerAndTheBitTrickDo) {
  // IEEE half against the compiler's _Float16 conversions (float and double, straight to
  // half); bfloat16 against the add-0x7fff-plus-parity trick on a float's bits. Random
  // magnitudes over half's whole range and past it, exact ties, subnormals.
  std::mt19937_64 g(11);
  std::uniform_real_distribution<double> mant(-2, 2);
  std::uniform_int_distribution<int> expo(-30, 18);
  auto half_bits = [](_Float16 h) {
    std::uint16_t u;
    std::memcpy(&u, &h, 2);
    return u;
  };
  std::vector<double> xs{0.0, -0.0, 65504, 65519.99, 65520, -65520, 1e9, std::ldexp(1.0, -24), std::ldexp(1.0, -25),
                         std::ldexp(3.0, -26), std::ldexp(1.0, -14) * (1 - std::ldexp(1.0, -12)),
                         // subnormal floats and doubles (bfloat16 keeps the floats' largest bits)
                         double(std::numeric_limits<float>::denorm_min()),
                         3.0 * std::numeric_limits<float>::denorm_min(), -1e-40, 7e-39,
                         std::numeric_limits<double>::denorm_min()};
  for (int k = 0; k < 200000; ++k) xs.push_back(std::ldexp(mant(g), expo(g)));
  for (int k = 0; k < 2000; ++k) {  // ties: halfway between two halves (exact in float)
    const double a = pack16::decode<double>(std::uint16_t(g() % 0x7bff), 0, pack16::kHalf);
    const double b = pack16::decode<double>(std::uint16_t(pack16::encode(a, 0, pack16::kHalf) + 1), 0, pack16::kHalf);
    xs.push_back((a + b) / 2);
  }
  for (double x : xs) {
    const float xf = float(x);
    ASSERT_EQ(pack16::encode(xf, 0, pack16::kHalf), half_bits(_Float16(xf))) << "float " << xf;
    ASSERT_EQ(pack16::encode(x, 0, pack16::kHalf), half_bits(_Float16(x))) << "double " << x;
    const std::uint32_t b = bits(xf);
    const auto trick = std::uint16_t((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
    if (std::isfinite(xf) && std::abs(xf) < 3e38f) {
      ASSERT_EQ(pack16::encode(xf, 0, pack16::kBfloat), trick) << xf;
    }
  }
  // A scale is a power of two: encode(x, s) = encode(x · 2^s, 0) while both are in range.
  for (int k = 0; k < 10000; ++k) {
    const double x = std::ldexp(mant(g), expo(g) - 40);
    ASSERT_EQ(pack16::encode(x, 40, pack16::kHalf), pack16::encode(std::ldexp(x, 40), 0, pack16::kHalf)) << x;
    ASSERT_EQ(
        pack16::decode<double>(pack16::encode(x, 40, pack16::kHalf), 40, pack16::kHalf),
        std::ldexp(pack16::decode<double>(pack16::encode(std::ldexp(x, 40), 0, pack16::kHalf), 0, pack16::kHalf), -40))
        << x;
  }
}

TEST(Store16, RunsOfFloatsGiveTheWordByWordBits) {
  // The CPU kernels' vectorised runs against encode()/decode(): every word a slot can hold
  // (magnitude below 2^15) at every scale the runs take, and random floats of every
  // magnitude up to a slot's largest, normal as the kernels keep them.
  std::mt19937_64 g(5);
  std::uniform_real_distribution<double> mant(1, 2);
  for (int c : {pack16::kHalf, pack16::kBfloat}) {
    std::vector<std::uint16_t> words;
    for (unsigned w = 0; w < 65536; ++w)
      if (std::abs(pack16::decode<double>(std::uint16_t(w), 0, c)) < 32768) words.push_back(std::uint16_t(w));
    std::vector<float> out(words.size());
    for (int s : {-100, -17, 0, 9, 40, 100}) {
      ASSERT_EQ(pack16::runs_apply(1.0f, s, c), c == pack16::kHalf || s >= 0) << s;
      if (!pack16::runs_apply(1.0f, s, c)) continue;
      pack16::decode_run(words.data(), out.data(), long(words.size()), s, c);
      for (std::size_t j = 0; j < words.size(); ++j)
        ASSERT_EQ(bits(out[j]), bits(pack16::decode<float>(words[j], s, c))) << "word " << words[j] << " scale " << s;
    }
    for (double largest : {1e-20, 3e-5, 0.7, 1.0, 900.0, 2e4, 1e25}) {
      const int s = pack16::scale_exponent(float(largest));
      if (!pack16::runs_apply(float(largest), s, c)) continue;
      std::vector<float> x;
      for (int k = 0; k < 50000; ++k) {
        const float v = float(largest * std::ldexp(mant(g) / 2, -int(g() % 60)) * (k % 2 ? -1 : 1));
        if (std::fpclassify(v) == FP_NORMAL || v == 0) x.push_back(v);
      }
      x.push_back(float(largest));
      std::vector<std::uint16_t> got(x.size());
      pack16::encode_run(x.data(), got.data(), long(x.size()), s, c);
      for (std::size_t j = 0; j < x.size(); ++j)
        ASSERT_EQ(got[j], pack16::encode(x[j], s, c)) << x[j] << " in a slot of largest " << largest;
    }
  }
}

TEST(Store16, ScaleLiftsTheLargestMagnitudeJustBelow2To15) {
  for (double largest : {1e-30, 3e-7, 0.75, 1.0, 1.5, 16383.0, 16384.0, 40000.0, 1e30}) {
    const int s = pack16::scale_exponent(largest);
    EXPECT_GE(std::ldexp(largest, s), 16384.0) << largest;
    EXPECT_LT(std::ldexp(largest, s), 32768.0) << largest;
    EXPECT_EQ(pack16::scale_exponent(float(largest)), pack16::scale_exponent(double(float(largest)))) << largest;
  }
  EXPECT_EQ(pack16::scale_exponent(0.0), 0);
  EXPECT_EQ(pack16::scale_exponent(std::numeric_limits<float>::infinity()), 0);
  EXPECT_EQ(pack16::scale_exponent(std::numeric_limits<double>::quiet_NaN()), 0);
  EXPECT_EQ(pack16::scale_exponent(std::numeric_limits<float>::denorm_min()), 0);
  // The largest magnitude as ordered bits: the maximum of |x| over signs, NaN above infinity.
  EXPECT_EQ(pack16::magnitude_bits(-2.5f), pack16::magnitude_bits(2.5f));
  EXPECT_LT(pack16::magnitude_bits(2.5f), pack16::magnitude_bits(-2.75f));
  EXPECT_LT(pack16::magnitude_bits(std::numeric_limits<double>::infinity()),
            pack16::magnitude_bits(std::numeric_limits<double>::quiet_NaN()));
}

TEST(Resampling, UpsampledWaveletKeepsOriginalSamplesAndIsSmooth) {
  const double dt = 2e-3;
  const std::vector<float> w = ricker(10, 0.15, dt, 200);
  const int k = 3;
  const std::vector<double> u = upsample(std::vector<double>(w.begin(), w.end()), k, 199 * k);
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

// The search as plainly written: one frequency at a time through every sample. The engine's
// (eight frequencies together, trailing zeros skipped) must give the same bits: the CPML
// profile, and so every trace, depends on them.
double dominant_frequency_one_at_a_time(const std::vector<float>& w, double dt) {
  auto power = [&](double f) {
    const double c = std::cos(2 * M_PI * f * dt), s = -std::sin(2 * M_PI * f * dt);
    double pr = 1, pi = 0, re = 0, im = 0;
    for (const float x : w) {
      re += x * pr;
      im += x * pi;
      const double t = pr * c - pi * s;
      pi = pr * s + pi * c;
      pr = t;
    }
    return re * re + im * im;
  };
  const double nyquist = 0.5 / dt;
  const double lowest = std::min(1.0 / (double(w.size()) * dt), nyquist / 512);
  const double ratio = std::pow(nyquist / lowest, 1.0 / 512);
  double best = 0, best_f = nyquist / 8;
  int best_i = 0;
  for (int i = 0; i < 512; ++i)
    if (const double f = lowest * std::pow(ratio, i), a = power(f); a > best) {
      best = a;
      best_f = f;
      best_i = i;
    }
  if (best == 0) return best_f;
  for (int j = -32; j <= 32; ++j) {
    const double f = lowest * std::pow(ratio, best_i + j / 32.0);
    if (j == 0 || f >= nyquist) continue;
    if (const double a = power(f); a > best) {
      best = a;
      best_f = f;
    }
  }
  return best_f;
}

TEST(Spectrum, DominantFrequencyHasTheBitsOfTheOneAtATimeSearch) {
  std::vector<std::pair<std::string, std::vector<float>>> cases;
  for (const double f : {4.0, 15.0, 37.0}) cases.push_back({"Ricker", ricker(f, 1.2 / f, 5e-4, 2001)});
  std::vector<float> late(1500, 0.0f), noise(777), spike(64, 0.0f), tail(300);
  for (std::size_t n = 1000; n < late.size(); ++n) late[n] = float(std::sin(0.05 * double(n)));
  std::uint32_t state = 12345;
  for (float& x : noise) x = float((state = state * 1664525u + 1013904223u) >> 8) / float(1 << 24) - 0.5f;
  spike[3] = -1.0f;
  for (std::size_t n = 0; n < tail.size(); ++n) tail[n] = n < 200 ? float(std::cos(0.3 * double(n))) : -0.0f;
  // Alternating signs: the peak at Nyquist, so the refinement's list is 63 long (its last
  // group of eight one short).
  std::vector<float> nyquist(1500, 0.0f);
  for (std::size_t n = 0; n < 1200; ++n) nyquist[n] = n % 2 ? -1.0f : 1.0f;
  cases.push_back({"Nyquist", nyquist});
  cases.push_back({"late pulse", late});
  cases.push_back({"noise", noise});
  cases.push_back({"spike", spike});
  cases.push_back({"negative-zero tail", tail});
  for (const auto& [name, w] : cases)
    for (const double dt : {5e-4, 1e-3, 2e-5}) {
      const double f = dominant_frequency(w, dt), one = dominant_frequency_one_at_a_time(w, dt);
      EXPECT_EQ(std::memcmp(&f, &one, sizeof f), 0) << name << " at dt " << dt << ": " << f << " Hz against " << one;
    }
}

}  // namespace
}  // namespace starwave
