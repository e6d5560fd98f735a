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
//  * arrays are row-major (x fastest) with at least `radius(Order)` guard cells on every
//    side that stay zero (u, ψ), so no stencil ever needs a bounds test (kernels/shot.hpp);
//  * ψ and ζ are stored only in the absorbing layers, with zero guard cells where a layer
//    meets the interior standing for their zero values there (b = 0 outside the layers);
//  * the free surface is an antisymmetric mirror about the first model row: u = 0 on that
//    row and u(−k) = −u(k) in the guard rows above it.
#pragma once

#include "kernels/shot.hpp"

#include "kernels/hd.hpp"
#include "kernels/orders.hpp"

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

/// Runtime version of the above, for an order known only at run time (NaN for an order
/// without kernels: never another order's value).
inline double d2_nyquist_eigenvalue(int order) {
  double value = __builtin_nan("");
  with_order(order, [&](auto o) { value = d2_nyquist_eigenvalue<decltype(o)::value>(); });
  return value;
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

/// One dimension's CPML correction at a layer cell, after the ψ pass of the same step.
/// With L_d = ∂²_d u + ∂_d ψ_d and ζ_d ← a ζ_d + b L_d, the layer's L̃_d = L_d + ζ_d is the
/// interior's ∂²_d u plus the returned ∂_d ψ_d + ζ_d (ζ_d is updated in place).
/// `u` and `psi` point at the cell; `s`, `sp` are their element strides along d.
template <int Order, typename T>
SW_HD T layer_correction(const T* u, long s, T inv_h2, const T* psi, long sp, T inv_h, T* zeta, T a, T b) {
  const T dpsi = d1<Order>(psi, sp) * inv_h;
  const T z = a * zeta[0] + b * (d2<Order>(u, s) * inv_h2 + dpsi);
  zeta[0] = z;
  return dpsi + z;
}

/// The ψ update at a layer cell: ψ_d ← a ψ_d + b ∂_d u[n].
template <int Order, typename T>
SW_HD T psi_value(T psi, T a, T b, const T* u, long s, T inv_h) {
  return a * psi + b * d1<Order>(u, s) * inv_h;
}

/// Interior update (no absorbing terms) at the cell `u` points to:
/// u[n+1] = 2u − u[n−1] + v²Δt² ∇²u, written over u[n−1] in `out`.
template <int Order, typename T>
SW_HD void interior_point(const T* u, T* out, T vdt2, long s, T inv_dz2, T inv_dx2) {
  const T lap = d2<Order>(u, s) * inv_dz2 + d2<Order>(u, 1) * inv_dx2;
  out[0] = T(2) * u[0] - out[0] + vdt2 * lap;
}

/// Everything one time step needs, as raw pointers: `u`, `u_prev_next` and `vdt2` address
/// grid cell (0, 0), so cell (z, x) is [z·stride + x]; the layer arrays are the compact
/// ones of kernels/shot.hpp, addressed through zi() and xi().
template <typename T>
struct StepArgs {
  const T* u;      // u[n]
  T* u_prev_next;  // in: u[n−1]; out: u[n+1] (updated in place)
  const T* vdt2;   // v² Δt²
  // The compact CPML memory variables, two per direction: the forward's ψ (1) and ζ (2),
  // the adjoint's α (1) and β (2) in the same arrays.
  T* cpml_z1;
  T* cpml_z2;
  T* cpml_x1;
  T* cpml_x2;
  const T* a_z;  // CPML coefficients per row / column (length nz / nx)
  const T* b_z;
  const T* a_x;
  const T* b_x;
  T inv_dz2, inv_dx2, inv_dz, inv_dx;
  ShotProblem<T> layout;  // geometry only (its pointers are not used)
  long stride, xstride;
  int nz, nx;
  int zt, zb, xl, xr;           // layers: rows [0, zt) and [zb, nz), columns [0, xl) and [xr, nx)
  int xloop_left, xloop_right;  // the CPU side loops: [0, xloop_left) and [xloop_right, nx)
  long xleft0, xright0;         // xi(0, 0) and xi(0, xloop_right): xi(z, x) = those + z·xstride + x − x0
  // ShotProblem::zlayer_index / xlayer_index with their branches resolved once per step
  // (the CUDA threads call them per cell): rows z < z_split use the top array's offset,
  // columns x < x_split the left one's.
  int z_split, x_split;
  long z_top, z_bottom, x_left, x_right;

  SW_HD long zi(int z, int x) const { return long(z) * stride + x + (z < z_split ? z_top : z_bottom); }
  SW_HD long xi(int z, int x) const { return long(z) * xstride + x + (x < x_split ? x_left : x_right); }
  SW_HD bool z_layer(int z) const { return z < zt || z >= zb; }
  SW_HD bool x_layer(int x) const { return x < xl || x >= xr; }
  /// A layer row or column, or one within `halo` of a layer (where the adjoint's
  /// correction reaches).
  SW_HD bool z_rim(int z) const { return (zt > 0 && z < zt + layout.halo) || (zb < nz && z >= zb - layout.halo); }
  SW_HD bool x_rim(int x) const { return (xl > 0 && x < xl + layout.halo) || (xr < nx && x >= xr - layout.halo); }

  /// The absorbing-layer cells, numbered 0 … layer_cells() − 1: the top rows [0, zt) and
  /// the bottom rows [zb, nz) over every column, then the left columns [0, xl) and the
  /// right columns [xr, nx) of the rows between. The memory-variable passes of the CUDA
  /// bodies run over these cells only.
  SW_HD long layer_cells() const {
    const long band_rows = long(zt) + (nz - zb), side_rows = zb > zt ? long(zb - zt) : 0L;
    return band_rows * nx + side_rows * (long(xl) + (nx - xr));
  }
  /// Cell (z, x) of layer cell number t < layer_cells().
  /// (32-bit arithmetic: a 2-D grid's layers hold far fewer than 2³¹ cells.)
  SW_HD void layer_cell(long t, int& z, int& x) const {
    const unsigned c = unsigned(t), w = unsigned(nx), top = unsigned(zt) * w, bands = top + unsigned(nz - zb) * w;
    if (c < bands) {
      const unsigned k = c < top ? c : c - top;
      z = int(k / w) + (c < top ? 0 : zb);
      x = int(k % w);
      return;
    }
    const unsigned side = c - bands, left = unsigned(zb - zt) * unsigned(xl);
    if (side < left) {
      z = zt + int(side / unsigned(xl));
      x = int(side % unsigned(xl));
    } else {
      const unsigned r = unsigned(nx - xr);
      z = zt + int((side - left) / r);
      x = xr + int((side - left) % r);
    }
  }
};

/// ψ pass at cell (z, x) of an absorbing layer (nothing elsewhere).
template <int Order, typename T>
SW_HD void update_psi_point(const StepArgs<T>& a, int z, int x) {
  const T* u = a.u + long(z) * a.stride + x;
  if (a.z_layer(z)) {
    T* p = a.cpml_z1 + a.zi(z, x);
    *p = psi_value<Order>(*p, a.a_z[z], a.b_z[z], u, a.stride, a.inv_dz);
  }
  if (a.x_layer(x)) {
    T* p = a.cpml_x1 + a.xi(z, x);
    *p = psi_value<Order>(*p, a.a_x[x], a.b_x[x], u, 1, a.inv_dx);
  }
}

/// The u pass at cell (z, x): the interior update, then each layer's correction
/// v²Δt² (∂_d ψ_d + ζ_d) where the cell lies in the layers of dimension d.
template <int Order, typename T>
SW_HD void update_point(const StepArgs<T>& a, int z, int x) {
  const long i = long(z) * a.stride + x;
  const T* u = a.u + i;
  T* out = a.u_prev_next + i;
  const T v = a.vdt2[i];
  interior_point<Order>(u, out, v, a.stride, a.inv_dz2, a.inv_dx2);
  if (a.z_layer(z)) {
    const long j = a.zi(z, x);
    out[0] += v * layer_correction<Order>(u, a.stride, a.inv_dz2, a.cpml_z1 + j, a.stride, a.inv_dz, a.cpml_z2 + j,
                                          a.a_z[z], a.b_z[z]);
  }
  if (a.x_layer(x)) {
    const long j = a.xi(z, x);
    out[0] +=
        v * layer_correction<Order>(u, 1, a.inv_dx2, a.cpml_x1 + j, 1, a.inv_dx, a.cpml_x2 + j, a.a_x[x], a.b_x[x]);
  }
}

// ---------------------------------------------------------------------------------------
// The adjoint step: the transpose of the forward step above, run backwards in time
// (discretise-then-optimise, DESIGN §2). With λ the adjoint wavefield, the code carries
// μ = v²Δt² λ, for which the interior update is the forward's own:
//   μ[n] = 2μ[n+1] − μ[n+2] + v²Δt² (∇²μ[n+1] + Σ_d C_d + g[n])
// (g: the adjoint source, e.g. the residual at the receivers). Transposing the CPML
// recursions gives, per dimension d, two memory variables that live in the layers (stored
// in the ψ_d, ζ_d arrays):
//   β_d ← a_d β_d + b_d μ[n+1]                        (transpose of the ζ recursion)
//   α_d ← a_d α_d − b_d ∂_d (M_d μ[n+1] + β_d)       (transpose of the ψ recursion)
//   C_d = ∂²_d β_d − ∂_d α_d
// M_d masks μ to the layer cells (the forward corrects only those), ∂_d is antisymmetric
// and ∂²_d symmetric on the zero-padded arrays. C_d is non-zero in the layers and up to
// `halo` cells past them (the rim): the transpose of a gather is a scatter.
// ---------------------------------------------------------------------------------------

/// ∂f (without 1/h) with f taken as zero outside cells [0, n) ∖ [lo, hi) — the layer cells
/// of a dimension; `c` is the cell's coordinate along it.
template <int Order, typename T>
SW_HD T d1_layers_only(const T* f, long s, int c, int n, int lo, int hi) {
  T acc = T(0);
  SW_UNROLL
  for (int j = 1; j <= Order / 2; ++j) {
    const int p = c + j, q = c - j;
    const T fp = (p < n && (p < lo || p >= hi)) ? f[j * s] : T(0);
    const T fq = (q >= 0 && (q < lo || q >= hi)) ? f[-j * s] : T(0);
    acc += T(d1_coef<Order>(j)) * (fp - fq);
  }
  return acc;
}

/// Adjoint β pass at cell (z, x) of an absorbing layer: `a.u` holds μ[n+1].
template <int Order, typename T>
SW_HD void adjoint_beta_point(const StepArgs<T>& a, int z, int x) {
  const T mu = a.u[long(z) * a.stride + x];
  if (a.z_layer(z)) {
    T* q = a.cpml_z2 + a.zi(z, x);
    *q = a.a_z[z] * *q + a.b_z[z] * mu;
  }
  if (a.x_layer(x)) {
    T* q = a.cpml_x2 + a.xi(z, x);
    *q = a.a_x[x] * *q + a.b_x[x] * mu;
  }
}

/// Adjoint α pass at cell (z, x) of an absorbing layer, after the β pass of the same step.
template <int Order, typename T>
SW_HD void adjoint_alpha_point(const StepArgs<T>& a, int z, int x) {
  const T* mu = a.u + long(z) * a.stride + x;
  if (a.z_layer(z)) {
    const long j = a.zi(z, x);
    const T d = d1_layers_only<Order>(mu, a.stride, z, a.nz, a.zt, a.zb) + d1<Order>(a.cpml_z2 + j, a.stride);
    a.cpml_z1[j] = a.a_z[z] * a.cpml_z1[j] - a.b_z[z] * (d * a.inv_dz);
  }
  if (a.x_layer(x)) {
    const long j = a.xi(z, x);
    const T d = d1_layers_only<Order>(mu, 1, x, a.nx, a.xl, a.xr) + d1<Order>(a.cpml_x2 + j, 1);
    a.cpml_x1[j] = a.a_x[x] * a.cpml_x1[j] - a.b_x[x] * (d * a.inv_dx);
  }
}

/// C_d at a cell of a layer or its rim: ∂²_d β_d − ∂_d α_d (β in ζ's array, α in ψ's).
template <int Order, typename T>
SW_HD T adjoint_correction(const T* alpha, const T* beta, long s, T inv_h, T inv_h2) {
  return d2<Order>(beta, s) * inv_h2 - d1<Order>(alpha, s) * inv_h;
}

/// Adjoint u pass at cell (z, x): `a.u` holds μ[n+1], `a.u_prev_next` μ[n+2] → μ[n].
template <int Order, typename T>
SW_HD void update_adjoint_point(const StepArgs<T>& a, int z, int x) {
  const long i = long(z) * a.stride + x;
  T* out = a.u_prev_next + i;
  const T v = a.vdt2[i];
  interior_point<Order>(a.u + i, out, v, a.stride, a.inv_dz2, a.inv_dx2);
  if (a.z_rim(z)) {
    const long j = a.zi(z, x);
    out[0] += v * adjoint_correction<Order>(a.cpml_z1 + j, a.cpml_z2 + j, a.stride, a.inv_dz, a.inv_dz2);
  }
  if (a.x_rim(x)) {
    const long j = a.xi(z, x);
    out[0] += v * adjoint_correction<Order>(a.cpml_x1 + j, a.cpml_x2 + j, 1, a.inv_dx, a.inv_dx2);
  }
}

/// Free surface, row k = 1 … halo, after the μ pass: the forward's ψ_z and ζ_z passes read
/// u in the mirrored rows above the surface (u(−k) = −u(k)), so in the transpose the
/// z-correction that falls on row −k folds back onto row k with the opposite sign. It is
/// non-zero only where the bottom layer's rim reaches above the surface (a model thinner
/// than about two stencil radii).
template <int Order, typename T>
SW_HD void adjoint_fold_point(const StepArgs<T>& a, int k, int x) {
  if (!a.layout.free_surface || k >= a.nz || !a.z_rim(-k)) return;
  const long j = a.zi(-k, x), i = long(k) * a.stride + x;
  a.u_prev_next[i] -=
      a.vdt2[i] * adjoint_correction<Order>(a.cpml_z1 + j, a.cpml_z2 + j, a.stride, a.inv_dz, a.inv_dz2);
}

/// StepArgs for one step of shot `p`: `u` holds u[n], `upn` holds u[n−1] and receives
/// u[n+1] (both full allocations, guards included); the layer arrays come from p.work.
template <typename T>
SW_HD StepArgs<T> make_step_args(const ShotProblem<T>& p, const T* u, T* upn) {
  const long o = p.origin();
  StepArgs<T> a;
  a.u = u + o;
  a.u_prev_next = upn + o;
  a.vdt2 = p.vdt2 + o;
  a.cpml_z1 = p.cpml_z1();
  a.cpml_z2 = p.cpml_z2();
  a.cpml_x1 = p.cpml_x1();
  a.cpml_x2 = p.cpml_x2();
  a.a_z = p.a_z;
  a.b_z = p.b_z;
  a.a_x = p.a_x;
  a.b_x = p.b_x;
  a.inv_dz2 = T(1) / (p.dz * p.dz);
  a.inv_dx2 = T(1) / (p.dx * p.dx);
  a.inv_dz = T(1) / p.dz;
  a.inv_dx = T(1) / p.dx;
  a.layout = p;
  a.stride = p.stride;
  a.xstride = p.xstride();
  a.nz = p.nz;
  a.nx = p.nx;
  a.zt = p.pml_top;
  a.zb = p.nz - p.pml_bottom;
  a.xl = p.pml_left;
  a.xr = p.nx - p.pml_right;
  a.xloop_left = p.xloop_left();
  a.xloop_right = p.xloop_right();
  a.xleft0 = p.xlayer_index(0, 0);
  a.xright0 = p.xlayer_index(0, a.xloop_right);
  const int big = 1 << 30;
  a.z_split = p.zmerged() ? big : p.pml_top > 0 ? p.pml_top + p.halo : -big;
  a.z_top = p.zlayer_index(0, 0);
  a.z_bottom = p.zlayer_index(p.nz - 1, 0) - long(p.nz - 1) * p.stride;
  a.x_split = p.xmerged() ? big : p.pml_left > 0 ? p.xloop_left() + p.halo : -big;
  a.x_left = p.xlayer_index(0, 0);
  a.x_right = p.xlayer_index(0, p.nx - 1) - (p.nx - 1);
  return a;
}

/// Antisymmetric mirror of the free surface at one column x ∈ [0, nx) of the updated
/// field (pointer at cell (0, 0)): u = 0 on row `top`, and the `halo` rows above hold −u
/// of the rows below (DESIGN §2), for the rows below that lie in the grid (< nz; past it
/// the guard rows are zero, and so stay their mirrors). The guard columns stay zero.
template <typename T>
SW_HD void mirror_free_surface(T* u, long stride, int top, int halo, int nz, int x) {
  T* row0 = u + long(top) * stride;
  row0[x] = T(0);
  for (int k = 1; k <= halo && top + k < nz; ++k) row0[-k * stride + x] = -row0[k * stride + x];
}

}  // namespace starwave::stencil
