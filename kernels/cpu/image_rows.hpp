// kernels/cpu/image_rows.hpp — the imaging of the CPU backward sweep's model rows (internal
// to kernels/cpu/adjoint.cpp): a row's correlation, illumination and the re-creation of the
// forward field, and the same row's imaging where that field is at rest.
#pragma once

#include <algorithm>

#include "kernels/cpu/simd.hpp"
#include "kernels/shot.hpp"
#include "kernels/stencil.hpp"

#ifndef STARWAVE_CPU_LEVEL
#error "kernels/cpu/image_rows.hpp is for the per-level kernel files (kernels/cpu/levels.hpp)"
#endif

namespace starwave::cpu::STARWAVE_CPU_LEVEL {
namespace {

using detail::Simd;

/// Imaging of model row (z, y) (padded-grid row) at backward step m: with u = u[m], u_next =
/// u[m+1] and mu = μ[m+1] (grid allocations), lap = L u[m]:
///   corr += μ[m+1] lap,  illum += u[m]²  (accumulators in the grid's layout), and when
///   `recreate`, u_next ← u[m−1] = 2u[m] − u[m+1] + v²Δt² lap  (the source term is added by
///   the caller), at the CPML interior's cells (ShotGrid::iz0()) alone; illum at every model
///   cell. Aligned whole vectors over the model columns; corr and u_next keep their values in
///   the lanes outside the interior, and illum's outside the model are never read. With p.isic, then
///   corr += ∇u[m]·∇μ[m+1] (as the CUDA image launch adds it: after μ·lap); with `receiver`
///   (the model region's Σμ², row-major), += μ[m+1]².
template <int Order, typename T>
void image_row(const ShotProblem<T>& p, int z, int y, const T* u, T* u_next, const T* mu, T* corr, T* illum,
               T* receiver, bool recreate) {
  using S = Simd<T>;
  using V = typename S::vec;
  constexpr int W = S::W;
  const long o = p.origin() + p.row_offset(z, y), s = p.plane, sy = p.three_d() ? p.stride : 0;
  const int x0 = p.mx0(), x1 = p.mx1();
  // Only the CPML interior's cells are imaged by μ·∇²u and re-created here (ShotGrid::iz0()).
  const int i0 = p.interior_row(z, y) ? p.ix0() : 0, i1 = p.interior_row(z, y) ? p.ix1() : 0;
  const T* __restrict uz = u + o;
  T* __restrict un = u_next + o;
  const T* __restrict lz = mu + o;
  const T* __restrict vz = p.vdt2 + o;
  T* __restrict cr = corr + o;
  T* __restrict il = illum + o;
  const T cz = T(1) / (p.dz * p.dz), cy = T(1) / (p.dy * p.dy), cx = T(1) / (p.dx * p.dx);
  const bool isic = p.isic;
  typename S::mask lane;
  for (int k = 0; k < W; ++k) lane[k] = k;
  for (int x = x0 / W * W; x < x1; x += W) {
    const typename S::mask at = lane + typename S::ivec(x);
    const auto inside = at >= typename S::ivec(i0) && at < typename S::ivec(i1);
    const V c = S::load(uz + x);
    const V lap = detail::laplacian_vec<Order>(uz + x, s, sy, cz, cy, cx);
    const V corr_old = S::load(cr + x);
    V corr_new = corr_old + S::load(lz + x) * lap;
    if (isic) corr_new += detail::gradient_dot_vec<Order>(uz + x, lz + x, s, sy, cz, cy, cx);
    S::store(cr + x, inside ? corr_new : corr_old);  // the other lanes hold layer_term sums
    S::store(il + x, S::load(il + x) + c * c);
    if (recreate) {
      const V old = S::load(un + x);
      const V next = T(2) * c - old + S::load(vz + x) * lap;
      S::store(un + x, inside ? next : old);
    }
  }
  if (receiver) {
    T* __restrict rr = receiver + (long(z - p.mz0()) * (p.my1() - p.my0()) + (y - p.my0())) * (x1 - x0);
    for (int x = x0; x < x1; ++x) rr[x - x0] += lz[x] * lz[x];
  }
}

/// ∇²u where u is +0 (a row of u at rest, its neighbours too), as image_row computes it.
template <int Order, typename T>
typename Simd<T>::vec laplacian_at_rest(const ShotProblem<T>& p) {
  constexpr int W = Simd<T>::W, R = stencil::radius(Order);
  constexpr long sy = 3 * W, sz = sy * (2 * R + 1);
  alignas(64) T zeros[sz * (2 * R + 1)] = {};
  const T cz = T(1) / (p.dz * p.dz), cy = T(1) / (p.dy * p.dy), cx = T(1) / (p.dx * p.dx);
  return detail::laplacian_vec<Order>(zeros + R * sz + R * sy + W, sz, p.three_d() ? sy : 0, cz, cy, cx);
}

/// image_row() of a model row where u[m] and u[m+1] are +0 within a stencil's reach of it
/// (`lap` = laplacian_at_rest): what it would add, and nothing else — corr += μ[m+1]·lap at
/// the CPML interior's cells (a −0 sum may turn +0), and the receivers' Σμ²; illum gains +0
/// (no change: it is never −0), and u[m−1] is +0 where u_next holds +0 already.
template <int Order, typename T>
void image_row_at_rest(const ShotProblem<T>& p, int z, int y, const T* mu, T* corr, T* receiver,
                       typename Simd<T>::vec lap) {
  using S = Simd<T>;
  constexpr int W = S::W;
  const long o = p.origin() + p.row_offset(z, y);
  const int x0 = p.mx0(), x1 = p.mx1();
  const T* __restrict lz = mu + o;
  if (p.interior_row(z, y)) {
    const int i0 = p.ix0(), i1 = p.ix1();
    T* __restrict cr = corr + o;
    typename S::mask lane;
    for (int k = 0; k < W; ++k) lane[k] = k;
    for (int x = std::max(x0, i0) / W * W; x < std::min(x1, i1); x += W) {
      const typename S::mask at = lane + typename S::ivec(x);
      const auto inside = at >= typename S::ivec(i0) && at < typename S::ivec(i1);
      const typename S::vec corr_old = S::load(cr + x);
      S::store(cr + x, inside ? corr_old + S::load(lz + x) * lap : corr_old);
    }
  }
  if (receiver) {
    T* __restrict rr = receiver + (long(z - p.mz0()) * (p.my1() - p.my0()) + (y - p.my0())) * (x1 - x0);
    for (int x = x0; x < x1; ++x) rr[x - x0] += lz[x] * lz[x];
  }
}

}  // namespace
}  // namespace starwave::cpu::STARWAVE_CPU_LEVEL
