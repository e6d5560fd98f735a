// kernels/cpu/simd.hpp — pieces shared by the CPU forward and adjoint loops (internal to
// kernels/cpu): vectors of the level's width (kVectorBytes) through GCC's vector extension, lane shifts for
// x-derivatives, and the interior row update (the subnormal guard: subnormals.hpp).
#pragma once

#ifdef __AVX512F__
#include <immintrin.h>  // the __v16si, __v8di types of Simd::window
#endif

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/cpu/subnormals.hpp"
#include "kernels/stencil.hpp"

#ifndef STARWAVE_CPU_LEVEL
#error "kernels/cpu/simd.hpp is for the per-level kernel files (kernels/cpu/levels.hpp)"
#endif

namespace starwave::cpu::STARWAVE_CPU_LEVEL::detail {

using ::starwave::cpu::detail::FlushSubnormals;

/// The vector width of this level: 64 bytes with AVX-512, 32 with AVX2, 16 on the
/// baseline (SSE2); a wider vector of the extension than the level's registers is split
/// through memory. At least 4 lanes: the lane shifts reach `radius` ≤ 4 lanes (double on
/// the baseline takes two registers). Each lane does the same operations whatever the
/// width, so every level gives the same bits.
#ifndef STARWAVE_CPU_VECTOR_BYTES
#define STARWAVE_CPU_VECTOR_BYTES 64
#endif
constexpr int kVectorBytes = STARWAVE_CPU_VECTOR_BYTES;
static_assert(kVectorBytes == 16 || kVectorBytes == 32 || kVectorBytes == 64, "vectors of 16, 32 or 64 bytes");

using stencil::StepArgs;

/// SIMD vectors of kVectorBytes through GCC's vector extension. The vector loops load one vector
/// left and right of the cells they update: kernels/shot.hpp gives the grid `lead` ≥ one
/// vector of guard columns and the side-layer arrays one vector of guards on each side;
/// loads past column nx + halo reach padding or the next row's guards, and only feed
/// lanes beyond the grid, which are never stored.
template <typename T>
struct Simd {
  static constexpr int kBytes = kVectorBytes > int(4 * sizeof(T)) ? kVectorBytes : int(4 * sizeof(T));
  static constexpr int W = int(kBytes / sizeof(T));
  typedef T vec __attribute__((vector_size(kBytes)));
  using ivec = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  typedef ivec mask __attribute__((vector_size(kBytes)));
  static vec load(const T* p) {
    vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(T* p, vec v) { std::memcpy(p, &v, sizeof v); }
  /// The cells J columns right (at_right) or left (at_left) of the W cells in `c`, from
  /// the neighbouring vectors, by lane shifts instead of unaligned loads (0 ≤ J ≤ W).
  template <int J>
  static vec at_right(vec c, vec r) {
    return window<J>(c, r, std::make_integer_sequence<int, W>{});
  }
  template <int J>
  static vec at_left(vec l, vec c) {
    return window<W - J>(l, c, std::make_integer_sequence<int, W>{});
  }
  /// Lanes K … K+W−1 of the concatenation lo:hi. With AVX-512 one valignd (valignq), which
  /// takes the shift as an immediate: GCC's generic two-vector shuffle is a vpermt2ps with its
  /// index vector in a register (the same lanes, 5–9 % slower kernels on an AMD EPYC).
  template <int K, int... I>
  static vec window(vec lo, vec hi, std::integer_sequence<int, I...>) {
#ifdef __AVX512F__
    if constexpr (kBytes == 64) {
      if constexpr (sizeof(T) == 4)
        return (vec)__builtin_ia32_alignd512_mask((__v16si)hi, (__v16si)lo, K, (__v16si)hi, __mmask16(-1));
      else
        return (vec)__builtin_ia32_alignq512_mask((__v8di)hi, (__v8di)lo, K, (__v8di)hi, __mmask8(-1));
    }
#endif
    constexpr mask m = {ivec(K + I)...};
    return __builtin_shuffle(lo, hi, m);
  }
};

/// ∂²_x (without 1/h²) of the W cells in `c`, given the vectors left and right of them.
template <int Order, typename T, int... J>
typename Simd<T>::vec d2x_vec(typename Simd<T>::vec l, typename Simd<T>::vec c, typename Simd<T>::vec r,
                              std::integer_sequence<int, J...>) {
  using S = Simd<T>;
  typename S::vec acc = T(stencil::d2_coef<Order>(0)) * c;
  ((acc += T(stencil::d2_coef<Order>(J + 1)) * (S::template at_right<J + 1>(c, r) + S::template at_left<J + 1>(l, c))),
   ...);
  return acc;
}

/// ∂_x (without 1/h) of the W cells in `c`, given the vectors left and right of them.
template <int Order, typename T, int... J>
typename Simd<T>::vec d1x_vec(typename Simd<T>::vec l, typename Simd<T>::vec c, typename Simd<T>::vec r,
                              std::integer_sequence<int, J...>) {
  using S = Simd<T>;
  typename S::vec acc{};  // +0, as stencil::d1 starts
  ((acc += T(stencil::d1_coef<Order>(J + 1)) * (S::template at_right<J + 1>(c, r) - S::template at_left<J + 1>(l, c))),
   ...);
  return acc;
}

/// ∂_x and ∂²_x (without 1/h, 1/h²) of the W cells in `c`, sharing the lane shifts.
template <int Order, typename T, int... J>
void d1d2x_vec(typename Simd<T>::vec l, typename Simd<T>::vec c, typename Simd<T>::vec r, typename Simd<T>::vec& d1,
               typename Simd<T>::vec& d2, std::integer_sequence<int, J...>) {
  using S = Simd<T>;
  d2 = T(stencil::d2_coef<Order>(0)) * c;
  d1 = typename Simd<T>::vec{};  // +0, as stencil::d1 starts
  (
      [&] {
        const typename S::vec right = S::template at_right<J + 1>(c, r), left = S::template at_left<J + 1>(l, c);
        d2 += T(stencil::d2_coef<Order>(J + 1)) * (right + left);
        d1 += T(stencil::d1_coef<Order>(J + 1)) * (right - left);
      }(),
      ...);
}

/// ∇²u (with the 1/h² factors) of the W cells at `p`, planes `sz` and rows `sy` apart
/// (sy = 0: 2-D, no y term): stencil::laplacian's order. The one vector Laplacian of the
/// CPU loops.
template <int Order, typename T>
__attribute__((always_inline)) inline typename Simd<T>::vec laplacian_vec(const T* p, long sz, long sy, T cz, T cy,
                                                                          T cx) {
  using S = Simd<T>;
  constexpr int W = S::W, R = stencil::radius(Order);
  const typename S::vec c = S::load(p);
  typename S::vec dz = T(stencil::d2_coef<Order>(0)) * c;
  for (int j = 1; j <= R; ++j) dz += T(stencil::d2_coef<Order>(j)) * (S::load(p + j * sz) + S::load(p - j * sz));
  const typename S::vec dx = d2x_vec<Order, T>(S::load(p - W), c, S::load(p + W), std::make_integer_sequence<int, R>{});
  if (sy == 0) return dz * cz + dx * cx;
  typename S::vec dy = T(stencil::d2_coef<Order>(0)) * c;
  for (int j = 1; j <= R; ++j) dy += T(stencil::d2_coef<Order>(j)) * (S::load(p + j * sy) + S::load(p - j * sy));
  return dz * cz + dy * cy + dx * cx;
}

/// ∇u·∇w (stencil::gradient_dot: the same operations in the same order in each lane) at the W
/// cells `u` and `w` point to.
template <int Order, typename T>
__attribute__((always_inline)) inline typename Simd<T>::vec gradient_dot_vec(const T* u, const T* w, long sz, long sy,
                                                                             T cz, T cy, T cx) {
  using S = Simd<T>;
  using V = typename S::vec;
  constexpr int W = S::W, R = stencil::radius(Order);
  auto d1 = [](const T* f, long s) {
    V acc{};  // +0, as stencil::d1 starts
    for (int j = 1; j <= R; ++j) acc += T(stencil::d1_coef<Order>(j)) * (S::load(f + j * s) - S::load(f - j * s));
    return acc;
  };
  const auto seq = std::make_integer_sequence<int, R>{};
  const V z = d1(u, sz) * d1(w, sz) * cz;
  const V x = d1x_vec<Order, T>(S::load(u - W), S::load(u), S::load(u + W), seq) *
              d1x_vec<Order, T>(S::load(w - W), S::load(w), S::load(w + W), seq) * cx;
  if (sy == 0) return z + x;
  return (z + d1(u, sy) * d1(w, sy) * cy) + x;
}

/// Interior update of columns [0, nx) of row (z, y): the whole row, layer cells included
/// (their corrections follow). Whole vectors use lane shifts for ∂²_x; the tail is a plain
/// loop. With `Keep`, `keep` (nx values) also receives 2u[m] − u[m−1], the leapfrog's first
/// part as the update computes it (J's layer rows: born_row).
template <int Order, bool Keep = false, typename T>
void interior_row(const StepArgs<T>& a, int z, int y, T* __restrict keep = nullptr) {
  using S = Simd<T>;
  constexpr int W = S::W;
  const long row = a.cell(z, y, 0);
  const T* __restrict u = a.u + row;
  T* __restrict out = a.u_prev_next + row;
  const T* __restrict v = a.vdt2 + row;
  const long sz = a.plane, sy = a.ystep;
  const T cz = a.inv_dz2, cy = a.inv_dy2, cx = a.inv_dx2;
  int x = 0;
  auto vector_at = [&](int at, long syv) {
    const typename S::vec lap = laplacian_vec<Order>(u + at, sz, syv, cz, cy, cx);
    const typename S::vec first = T(2) * S::load(u + at) - S::load(out + at);
    if constexpr (Keep) S::store(keep + at, first);
    S::store(out + at, first + S::load(v + at) * lap);
  };
  if (sy == 0) {                                    // 2-D (the test is hoisted out of the loop)
    for (; x + W <= a.nx; x += W) vector_at(x, 0);  // the left neighbour of x = 0 lies in the `lead` guard columns
  } else {
    for (; x + W <= a.nx; x += W) vector_at(x, sy);
  }
  if constexpr (Keep)
    for (int i = x; i < a.nx; ++i) keep[i] = T(2) * u[i] - out[i];
#pragma omp simd
  for (int i = x; i < a.nx; ++i) stencil::interior_point<Order>(u + i, out + i, v[i], sz, sy, cz, cy, cx);
}

/// interior_row() of u (`a`) and of the scattered field δu (`b`, the same grid) together, δu's
/// update gaining sc · v²Δt² · ∇²u at each cell — the share of u[m+1] − 2u[m] + u[m−1] the
/// interior update makes (`sc`: the row's scatter). u's update is interior_row()'s, bit for bit.
template <int Order, typename T>
void interior_row_born(const StepArgs<T>& a, const StepArgs<T>& b, const T* __restrict sc, int z, int y) {
  using S = Simd<T>;
  constexpr int W = S::W;
  const long row = a.cell(z, y, 0);
  const T* __restrict u = a.u + row;
  T* __restrict out = a.u_prev_next + row;
  const T* __restrict du = b.u + row;
  T* __restrict dout = b.u_prev_next + row;
  const T* __restrict v = a.vdt2 + row;
  const long sz = a.plane, sy = a.ystep;
  const T cz = a.inv_dz2, cy = a.inv_dy2, cx = a.inv_dx2;
  int x = 0;
  auto vectors = [&](auto three_d) {  // 2-D's sy = 0 hoisted out of the loop
    const long syv = three_d ? sy : 0;
    for (; x + W <= a.nx; x += W) {
      const typename S::vec vv = S::load(v + x);
      const typename S::vec inc = vv * laplacian_vec<Order>(u + x, sz, syv, cz, cy, cx);
      S::store(out + x, T(2) * S::load(u + x) - S::load(out + x) + inc);
      const typename S::vec dinc = vv * laplacian_vec<Order>(du + x, sz, syv, cz, cy, cx);
      S::store(dout + x, T(2) * S::load(du + x) - S::load(dout + x) + dinc + S::load(sc + x) * inc);
    }
  };
  if (sy == 0)
    vectors(std::false_type{});
  else
    vectors(std::true_type{});
  for (int i = x; i < a.nx; ++i) {
    const T inc = v[i] * stencil::laplacian<Order>(u + i, sz, sy, cz, cy, cx);
    out[i] = T(2) * u[i] - out[i] + inc;
    const T dinc = v[i] * stencil::laplacian<Order>(du + i, sz, sy, cz, cy, cx);
    dout[i] = T(2) * du[i] - dout[i] + dinc + sc[i] * inc;
  }
}

}  // namespace starwave::cpu::STARWAVE_CPU_LEVEL::detail
