// kernels/stencil.hpp — the single source of the finite-difference math, shared by the CPU
// loops (kernels/cpu) and the CUDA kernels (kernels/cuda).
//
// Equation (DESIGN §2): (1/v²) ∂²u/∂t² − ∇²u = s(t) δ(x − x_s), constant density, 2-D.
// Leapfrog in time, centred differences of order 2, 4, 6, 8 in space:
//   u[n+1] = 2u[n] − u[n−1] + v²Δt² (L̃ u[n] + s[n] δ_h),   δ_h = 1/(Δz Δx).
// In the absorbing layers L̃ is the CPML Laplacian for the second-order equation of
// Pasalic & McGarry (2010): with a stretched derivative ∂̃ = ∂ + ψ∗, per dimension d,
//   ψ_d[n] = a_d ψ_d[n−1] + b_d ∂_d u[n]
//   ζ_d[n] = a_d ζ_d[n−1] + b_d (∂²_d u[n] + ∂_d ψ_d[n])
//   L̃_d u = ∂²_d u + ∂_d ψ_d + ζ_d[n]
// so the ψ pass (a first derivative of u) runs before the u pass (which differentiates ψ).
//
// Assumptions every kernel relies on:
//  * arrays are row-major (x fastest) with `radius(Order)` guard cells on every side that
//    stay zero (u, ψ), so no stencil ever needs a bounds test;
//  * ψ and ζ are zero outside the absorbing layers (b = 0 there, and they are never
//    written there);
//  * the free surface is an antisymmetric mirror about the first model row: u = 0 on that
//    row and u(−k) = −u(k) in the guard rows above it.
#pragma once

#include "kernels/shot.hpp"

#include "kernels/hd.hpp"

namespace starwave::stencil {

/// Half-width of the centred stencil of the given order of accuracy.
SW_HD constexpr int radius(int order) { return order / 2; }

/// Centred second-derivative weights: d²f/dx² ≈ (c_0 f_0 + Σ_j c_j (f_j + f_−j)) / h²;
/// `d2_coef<Order>(j)` is c_j, j = 0 … Order/2 (Fornberg's weights).
template <int Order>
SW_HD constexpr double d2_coef(int j) {
  static_assert(Order == 2 || Order == 4 || Order == 6 || Order == 8, "order 2, 4, 6 or 8");
  if (Order == 2) return j == 0 ? -2.0 : 1.0;
  if (Order == 4) return j == 0 ? -5.0 / 2.0 : j == 1 ? 4.0 / 3.0 : -1.0 / 12.0;
  if (Order == 6) return j == 0 ? -49.0 / 18.0 : j == 1 ? 3.0 / 2.0 : j == 2 ? -3.0 / 20.0 : 1.0 / 90.0;
  return j == 0 ? -205.0 / 72.0 : j == 1 ? 8.0 / 5.0 : j == 2 ? -1.0 / 5.0 : j == 3 ? 8.0 / 315.0 : -1.0 / 560.0;
}

/// Centred first-derivative weights: df/dx ≈ Σ_j d_j (f_j − f_−j) / h; j = 1 … Order/2.
template <int Order>
SW_HD constexpr double d1_coef(int j) {
  static_assert(Order == 2 || Order == 4 || Order == 6 || Order == 8, "order 2, 4, 6 or 8");
  if (Order == 2) return 1.0 / 2.0;
  if (Order == 4) return j == 1 ? 2.0 / 3.0 : -1.0 / 12.0;
  if (Order == 6) return j == 1 ? 3.0 / 4.0 : j == 2 ? -3.0 / 20.0 : 1.0 / 60.0;
  return j == 1 ? 4.0 / 5.0 : j == 2 ? -1.0 / 5.0 : j == 3 ? 4.0 / 105.0 : -1.0 / 280.0;
}

/// Largest eigenvalue (times h²) of the 1-D second-difference operator: its symbol at the
/// Nyquist wavenumber, |c0 + 2 Σ_j c_j (−1)^j|. Used by the stability bound of DESIGN §2.
template <int Order>
constexpr double d2_nyquist_eigenvalue() {
  double s = d2_coef<Order>(0);
  for (int j = 1; j <= radius(Order); ++j) s += 2.0 * d2_coef<Order>(j) * ((j % 2 == 1) ? -1.0 : 1.0);
  return s < 0 ? -s : s;
}

/// Runtime version of the above, for an order known only at run time.
inline double d2_nyquist_eigenvalue(int order) {
  switch (order) {
    case 2:
      return d2_nyquist_eigenvalue<2>();
    case 4:
      return d2_nyquist_eigenvalue<4>();
    case 6:
      return d2_nyquist_eigenvalue<6>();
    default:
      return d2_nyquist_eigenvalue<8>();
  }
}

/// ∂²f along a dimension with element stride `s`, without the 1/h² factor.
template <int Order, typename T>
SW_HD T d2(const T* f, long s) {
  T acc = T(d2_coef<Order>(0)) * f[0];
  SW_UNROLL
  for (int j = 1; j <= Order / 2; ++j) acc += T(d2_coef<Order>(j)) * (f[j * s] + f[-j * s]);
  return acc;
}

/// ∂f along a dimension with element stride `s`, without the 1/h factor.
template <int Order, typename T>
SW_HD T d1(const T* f, long s) {
  T acc = T(0);
  SW_UNROLL
  for (int j = 1; j <= Order / 2; ++j) acc += T(d1_coef<Order>(j)) * (f[j * s] - f[-j * s]);
  return acc;
}

/// Everything a per-point update needs, as raw pointers into padded arrays.
/// All grids share `stride` (row length including guard cells); pointers address the
/// first non-guard cell, so index i = z*stride + x with 0 ≤ z < nz, 0 ≤ x < nx.
template <typename T>
struct StepArgs {
  const T* u;      // u[n]
  T* u_prev_next;  // in: u[n−1]; out: u[n+1] (updated in place)
  const T* vdt2;   // v² Δt² on the padded grid
  T* psi_z;        // CPML memory variables (zero outside the layers)
  T* psi_x;
  T* zeta_z;
  T* zeta_x;
  const T* a_z;  // CPML coefficients per row / column (length nz / nx)
  const T* b_z;
  const T* a_x;
  const T* b_x;
  T inv_dz2, inv_dx2, inv_dz, inv_dx;
  long stride;
  int nz, nx;
};

/// Interior update (no absorbing terms): u[n+1] = 2u − u[n−1] + v²Δt² ∇²u.
template <int Order, typename T>
SW_HD void update_interior(const StepArgs<T>& a, long i) {
  const T lap = d2<Order>(a.u + i, a.stride) * a.inv_dz2 + d2<Order>(a.u + i, 1) * a.inv_dx2;
  a.u_prev_next[i] = T(2) * a.u[i] - a.u_prev_next[i] + a.vdt2[i] * lap;
}

/// ψ pass at one point of the absorbing layer: ψ_d[n] = a_d ψ_d[n−1] + b_d ∂_d u[n].
template <int Order, bool PmlZ, bool PmlX, typename T>
SW_HD void update_psi(const StepArgs<T>& a, int z, int x, long i) {
  if (PmlZ) a.psi_z[i] = a.a_z[z] * a.psi_z[i] + a.b_z[z] * d1<Order>(a.u + i, a.stride) * a.inv_dz;
  if (PmlX) a.psi_x[i] = a.a_x[x] * a.psi_x[i] + a.b_x[x] * d1<Order>(a.u + i, 1) * a.inv_dx;
}

/// u pass at one point of the absorbing layer (after the ψ pass of the same step).
template <int Order, bool PmlZ, bool PmlX, typename T>
SW_HD void update_pml(const StepArgs<T>& a, int z, int x, long i) {
  T lz = d2<Order>(a.u + i, a.stride) * a.inv_dz2;
  T lx = d2<Order>(a.u + i, 1) * a.inv_dx2;
  if (PmlZ) {
    lz += d1<Order>(a.psi_z + i, a.stride) * a.inv_dz;
    const T zeta = a.a_z[z] * a.zeta_z[i] + a.b_z[z] * lz;
    a.zeta_z[i] = zeta;
    lz += zeta;
  }
  if (PmlX) {
    lx += d1<Order>(a.psi_x + i, 1) * a.inv_dx;
    const T zeta = a.a_x[x] * a.zeta_x[i] + a.b_x[x] * lx;
    a.zeta_x[i] = zeta;
    lx += zeta;
  }
  a.u_prev_next[i] = T(2) * a.u[i] - a.u_prev_next[i] + a.vdt2[i] * (lz + lx);
}

/// The same per-point update with the region decided at run time (for GPU threads).
template <int Order, typename T>
SW_HD void update_point(const StepArgs<T>& a, bool pz, bool px, int z, int x) {
  const long i = long(z) * a.stride + x;
  if (!pz && !px)
    update_interior<Order>(a, i);
  else if (pz && px)
    update_pml<Order, true, true>(a, z, x, i);
  else if (pz)
    update_pml<Order, true, false>(a, z, x, i);
  else
    update_pml<Order, false, true>(a, z, x, i);
}

template <int Order, typename T>
SW_HD void update_psi_point(const StepArgs<T>& a, bool pz, bool px, int z, int x) {
  const long i = long(z) * a.stride + x;
  if (pz && px)
    update_psi<Order, true, true>(a, z, x, i);
  else if (pz)
    update_psi<Order, true, false>(a, z, x, i);
  else if (px)
    update_psi<Order, false, true>(a, z, x, i);
}

/// StepArgs for one step of shot `p`, with the six arrays given as allocations (guard
/// cells included).
template <typename T>
SW_HD StepArgs<T> make_step_args(const ShotProblem<T>& p, const T* u, T* upn, T* pz, T* px, T* zz, T* zx) {
  const long o = p.origin();
  StepArgs<T> a;
  a.u = u + o;
  a.u_prev_next = upn + o;
  a.vdt2 = p.vdt2 + o;
  a.psi_z = pz + o;
  a.psi_x = px + o;
  a.zeta_z = zz + o;
  a.zeta_x = zx + o;
  a.a_z = p.a_z;
  a.b_z = p.b_z;
  a.a_x = p.a_x;
  a.b_x = p.b_x;
  a.inv_dz2 = T(1) / (p.dz * p.dz);
  a.inv_dx2 = T(1) / (p.dx * p.dx);
  a.inv_dz = T(1) / p.dz;
  a.inv_dx = T(1) / p.dx;
  a.stride = p.stride;
  a.nz = p.nz;
  a.nx = p.nx;
  return a;
}

/// Antisymmetric mirror of the free surface at one column x ∈ [−halo, nx+halo) of the
/// updated field (pointer at the first non-guard cell): u = 0 on row `top`, and the
/// `halo` guard rows above hold −u of the rows below (DESIGN §2).
template <typename T>
SW_HD void mirror_free_surface(T* u, long stride, int top, int halo, int x) {
  T* row0 = u + long(top) * stride;
  row0[x] = T(0);
  for (int k = 1; k <= halo; ++k) row0[-k * stride + x] = -row0[k * stride + x];
}

}  // namespace starwave::stencil
