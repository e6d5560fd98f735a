// kernels/pack16.hpp — the 16-bit store (--store-compression fp16|bf16, docs/design.md §3):
// a store slot's values, each times 2^s (s fixed per slot from its largest magnitude, so
// that it lands in [2^14, 2^15)), rounded to IEEE half or to bfloat16, to nearest, ties to
// even. Encoding and decoding use integer arithmetic alone, so a CPU, a GPU and the launch
// emulation give the same bits whatever their subnormal modes; a decoded value below T's
// normal range reads as zero.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/hd.hpp"

namespace starwave::pack16 {

/// ShotProblem::compression: the store keeps T (kNone), IEEE half or bfloat16, or ZFP's
/// blocks at a fixed rate of 16, 12 or 8 bits a value (kernels/cpu/zfp_slot.hpp: CPU only).
constexpr int kNone = 0, kHalf = 1, kBfloat = 2, kZfp16 = 3, kZfp12 = 4, kZfp8 = 5;
/// Whether a store keeps 16-bit words of this file's encoding.
SW_HD constexpr bool words16(int compression) { return compression == kHalf || compression == kBfloat; }
/// ZFP's rate in bits a value (0: not a ZFP store).
SW_HD constexpr int zfp_rate(int compression) {
  return compression == kZfp16 ? 16 : compression == kZfp12 ? 12 : compression == kZfp8 ? 8 : 0;
}

template <typename T>
struct Layout;
template <>
struct Layout<float> {
  using U = std::uint32_t;
  static constexpr int frac = 23, bias = 127, emax = 255;
};
template <>
struct Layout<double> {
  using U = std::uint64_t;
  static constexpr int frac = 52, bias = 1023, emax = 2047;
};

template <typename T>
SW_HD typename Layout<T>::U bits_of(T x) {
  typename Layout<T>::U u;
  memcpy(&u, &x, sizeof x);
  return u;
}
template <typename T>
SW_HD T from_bits(typename Layout<T>::U u) {
  T x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/// |x|'s bits: for finite values, ordered as |x| is (NaN above infinity).
template <typename T>
SW_HD unsigned long long magnitude_bits(T x) {
  using U = typename Layout<T>::U;
  return (unsigned long long)(bits_of(x) & ~(U(1) << (8 * sizeof(T) - 1)));
}

/// The 16-bit format's fraction bits, exponent bias and all-ones exponent.
struct Format {
  int frac, bias, emax;
  SW_HD static Format of(int compression) { return compression == kHalf ? Format{10, 15, 31} : Format{7, 127, 255}; }
};

/// The slot's scale exponent s from its largest magnitude (T, the bits of magnitude_bits()):
/// largest × 2^s in [2^14, 2^15); 0 when it is zero, subnormal, infinite or NaN.
template <typename T>
SW_HD int scale_exponent(T largest) {
  using L = Layout<T>;
  const int e = int((bits_of(largest) >> L::frac) & typename L::U(L::emax));
  if (e == 0 || e == L::emax) return 0;
  return 14 - (e - L::bias);
}

/// The index of m's highest set bit (m > 0).
template <typename U>
SW_HD int top_bit(U m) {
#if defined(__CUDA_ARCH__)
  return sizeof(U) == 8 ? 63 - __clzll((long long)m) : 31 - __clz(int(m));
#else
  return sizeof(U) == 8 ? 63 - __builtin_clzll((unsigned long long)m) : 31 - __builtin_clz(unsigned(m));
#endif
}

/// x × 2^s in the 16-bit format, rounded to nearest, ties to even (±infinity past its range).
template <typename T>
SW_HD std::uint16_t encode(T x, int s, int compression) {
  using L = Layout<T>;
  using U = typename L::U;
  constexpr int width = int(8 * sizeof(U));
  const Format f = Format::of(compression);
  const U b = bits_of(x);
  const unsigned sign = unsigned(b >> (width - 1)) << 15;
  const int E = int((b >> L::frac) & U(L::emax));
  const U frac = b & ((U(1) << L::frac) - 1);
  const bool sub = E == 0;
  const U m = sub ? frac : frac | (U(1) << L::frac);    // |x| × 2^s = m × 2^e,
  const int e = (sub ? 1 : E) - L::bias - L::frac + s;  // m's highest bit `top`
  const int top = sub ? top_bit(frac | 1) : L::frac;
  const int qmin = 1 - f.bias - f.frac;                             // the format's smallest quantum, 2^qmin
  const int q = top + e - f.frac > qmin ? top + e - f.frac : qmin;  // its quantum at this magnitude
  const int shift = q - e;
  const int sh = shift < 1 ? 1 : shift > width - 1 ? width - 1 : shift;
  U r = m >> sh;
  const U rest = m & ((U(1) << sh) - 1), half = U(1) << (sh - 1);
  r += U(rest > half) | (U(rest == half) & (r & 1));
  if (shift < 1) r = m << (shift > -width ? -shift : 0);  // fewer bits than the format (a subnormal x)
  const unsigned long long out = ((unsigned long long)(q - qmin) << f.frac) + (unsigned long long)r;
  const unsigned inf = unsigned(f.emax) << f.frac;
  unsigned word = out >= inf ? inf : unsigned(out);
  word = m == 0 ? 0u : word;
  word = E == L::emax ? inf | (frac ? 1u << (f.frac - 1) : 0u) : word;
  return std::uint16_t(sign | word);
}

/// The value of 16-bit word h (encode()'s format) × 2^−s, exactly, as T (zero below T's
/// normal range).
template <typename T>
SW_HD T decode(std::uint16_t h, int s, int compression) {
  using L = Layout<T>;
  using U = typename L::U;
  const Format f = Format::of(compression);
  const U sign = U(h >> 15) << (8 * sizeof(T) - 1);
  const int E = (h >> f.frac) & f.emax;
  const unsigned frac = h & ((1u << f.frac) - 1);
  const bool normal = E > 0;
  const unsigned r = normal ? frac | (1u << f.frac) : frac;  // h = r × 2^q
  const int q = (normal ? E : 1) - f.bias - f.frac;
  const int top = normal ? f.frac : top_bit(frac | 1);
  const int e = top + q - s + L::bias;  // T's biased exponent
  const int ec = e < 1 ? 1 : e > L::emax - 1 ? L::emax - 1 : e;
  U out = sign | (U(ec) << L::frac) | ((U(r) ^ (U(1) << top)) << (L::frac - top));
  const U inf = sign | (U(L::emax) << L::frac);
  out = e >= L::emax ? inf : out;
  out = (r == 0 || e < 1) ? sign : out;
  out = E == f.emax ? inf | (frac ? U(1) << (L::frac - 1) : U(0)) : out;
  return from_bits<T>(out);
}

// ---- runs of float values on the host (the CPU kernels) -----------------------------------
// The same bits as encode() and decode() on the values a float store holds (no subnormals:
// the kernels flush them), by operations that vectorise: a power-of-two scale is exact; a
// float's conversion to half is the IEEE rounding of its bits, or, below half's normal range,
// of an add to 0.5f (whose unit is half's smallest subnormal); to bfloat16, the rounding of
// its top 16 bits. A half word's value is its significand converted to float times a power
// of two; a bfloat16 word's, its bits with the exponent lowered by s. They hold for the
// scales runs_apply() accepts (every such product a normal float); any other slot, and
// T = double, take the word-by-word functions above.

/// 2^e as a float (−126 ≤ e ≤ 127).
SW_HD float pow2f(int e) { return from_bits<float>(std::uint32_t(e + 127) << 23); }

/// Whether a slot of largest magnitude `largest` (finite) and scale s takes the run paths.
SW_HD bool runs_apply(float largest, int s, int compression) {
  const bool finite = largest == largest && !(largest > 3.4e38f);
  return finite && s <= 100 && s >= (compression == kHalf ? -100 : 0);
}

/// words[j] = encode(x[j], s, compression), j < n, for a slot where runs_apply().
SW_HD void encode_run(const float* __restrict x, std::uint16_t* __restrict words, long n, int s, int compression) {
  const float scale = pow2f(s);
  if (compression == kBfloat) {
    for (long j = 0; j < n; ++j) {
      const std::uint32_t b = bits_of(x[j] * scale);
      words[j] = std::uint16_t((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
    }
    return;
  }
  for (long j = 0; j < n; ++j) {
    const std::uint32_t b = bits_of(x[j] * scale), a = b & 0x7fffffffu, sign = (b >> 16) & 0x8000u;
    const std::uint32_t normal = (a - (112u << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;  // |y| ≥ 2^-14
    const std::uint32_t tiny = bits_of(from_bits<float>(a) + 0.5f) - bits_of(0.5f);     // |y| < 2^-14
    words[j] = std::uint16_t(sign | (a < (113u << 23) ? tiny : normal));
  }
}

/// out[j] = decode<float>(words[j], s, compression), j < n, for a slot where runs_apply().
SW_HD void decode_run(const std::uint16_t* __restrict words, float* __restrict out, long n, int s, int compression) {
  if (compression == kBfloat) {
    for (long j = 0; j < n; ++j) {
      const std::int32_t h = words[j], E = (h >> 7) & 255;
      const std::uint32_t sign = std::uint32_t(h >> 15) << 31;
      out[j] = from_bits<float>(E - s >= 1 ? (std::uint32_t(h) << 16) - (std::uint32_t(s) << 23) : sign);
    }
    return;
  }
  const float unit = pow2f(-24 - s);  // the smallest subnormal's value
  for (long j = 0; j < n; ++j) {
    const std::int32_t h = words[j], E = (h >> 10) & 31, f = h & 1023;
    const std::int32_t m = E > 0 ? f | 1024 : f;                    // h = m · 2^(max(E, 1) − 25)
    const float v = float(m) * (E > 1 ? pow2f(E - 25 - s) : unit);  // exact, normal or zero
    out[j] = from_bits<float>(bits_of(v) | (std::uint32_t(h >> 15) << 31));
  }
}

}  // namespace starwave::pack16
