// kernels/stencil.hpp — the single source of the finite-difference math, shared by the CPU
// loops (kernels/cpu) and the CUDA kernels (kernels/cuda).
//
// Equation (docs/design.md §2): (1/v²) ∂²u/∂t² − ∇²u = s(t) δ(x − x_s), constant density, 2-D
// or 3-D (one code: a 2-D grid has one row per plane, and no y terms).
// Leapfrog in time, centred differences of order 2, 4, 6, 8 in space:
//   u[n+1] = 2u[n] − u[n−1] + v²Δt² (L̃ u[n] + s[n] δ_h),   δ_h = 1/(Δz Δx) or 1/(Δz Δy Δx).
// In the absorbing layers L̃ is the CPML Laplacian for the second-order equation of
// Pasalic & McGarry (2010): with a stretched derivative ∂̃ = ∂ + ψ∗, per dimension d,
//   ψ_d[n] = a_d ψ_d[n−1] + b_d ∂_d u[n]
//   ζ_d[n] = a_d ζ_d[n−1] + b_d (∂²_d u[n] + ∂_d ψ_d[n])
//   L̃_d u = ∂²_d u + ∂_d ψ_d + ζ_d[n]
// so the ψ pass (a first derivative of u) runs before the u pass (which differentiates ψ).
//
// Assumptions every kernel relies on:
//  * arrays are z slowest, x fastest, with at least `radius(Order)` guard cells on every
//    side that stay zero (u, ψ), so no stencil ever needs a bounds test (kernels/shot.hpp);
//  * ψ and ζ are stored only in the absorbing layers, with zero guard cells where a layer
//    meets the interior standing for their zero values there (b = 0 outside the layers);
//  * the free surface is an antisymmetric mirror about the first model plane: u = 0 on
//    that plane and u(−k) = −u(k) in the guard planes above it.
#pragma once

#include "kernels/shot.hpp"

#include "kernels/divisor.hpp"
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
/// Nyquist wavenumber, |c0 + 2 Σ_j c_j (−1)^j|. Used by the stability bound of docs/design.md §2.
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

/// ∇²u (without the CPML terms) at the cell `u` points to, in one fixed order:
/// ∂²_z·cz + ∂²_x·cx in 2-D, (∂²_z·cz + ∂²_y·cy) + ∂²_x·cx in 3-D (`sy` = 0 in 2-D), with
/// the z line read through `uz` (stride `sz`): the cell's column, in the grid or a copy.
template <int Order, typename T>
SW_HD T laplacian_split(const T* uz, long sz, const T* u, long sy, T cz, T cy, T cx) {
  if (sy == 0) return d2<Order>(uz, sz) * cz + d2<Order>(u, 1) * cx;
  return d2<Order>(uz, sz) * cz + d2<Order>(u, sy) * cy + d2<Order>(u, 1) * cx;
}

/// laplacian_split() with the z line read from the grid.
template <int Order, typename T>
SW_HD T laplacian(const T* u, long sz, long sy, T cz, T cy, T cx) {
  return laplacian_split<Order>(u, sz, u, sy, cz, cy, cx);
}

/// ∇u·∇w at the cells `u` and `w` point to (same layout), centred first differences of the
/// order's accuracy, in laplacian_split()'s order: z·cz + x·cx in 2-D, (z·cz + y·cy) + x·cx in
/// 3-D (`sy` = 0 in 2-D), with cz = 1/dz² etc. — the inverse-scattering imaging condition's
/// spatial term (kernels/shot_plan.hpp, ImageSums::isic).
template <int Order, typename T>
SW_HD T gradient_dot(const T* u, const T* w, long sz, long sy, T cz, T cy, T cx) {
  const T z = d1<Order>(u, sz) * d1<Order>(w, sz) * cz;
  const T x = d1<Order>(u, 1) * d1<Order>(w, 1) * cx;
  if (sy == 0) return z + x;
  return (z + d1<Order>(u, sy) * d1<Order>(w, sy) * cy) + x;
}

/// The leapfrog step of one cell: u[n+1] = 2u − u[n−1] + v²Δt² ∇²u.
template <typename T>
SW_HD T leapfrog(T u, T u_prev, T vdt2, T lap) {
  return T(2) * u - u_prev + vdt2 * lap;
}

/// Interior update (no absorbing terms) at the cell `u` points to:
/// u[n+1] = 2u − u[n−1] + v²Δt² ∇²u, written over u[n−1] in `out`.
template <int Order, typename T>
SW_HD void interior_point(const T* u, T* out, T vdt2, long sz, long sy, T cz, T cy, T cx) {
  out[0] = leapfrog(u[0], out[0], vdt2, laplacian<Order>(u, sz, sy, cz, cy, cx));
}

/// interior_point() at R consecutive cells down a column (element stride `sz`, `u`, `out`
/// and `vdt2` at the first): the column's R + Order values are read once into a local
/// array (a GPU thread's registers) and each cell's z term taken from there — the same
/// operations on the same values as R calls of interior_point().
template <int Order, int R, typename T>
SW_HD void interior_column(const T* u, T* out, const T* vdt2, long sz, long sy, T cz, T cy, T cx) {
  constexpr int h = Order / 2;
  T line[R + 2 * h];
  SW_UNROLL
  for (int k = 0; k < R + 2 * h; ++k) line[k] = u[(k - h) * sz];
  SW_UNROLL
  for (int k = 0; k < R; ++k) {
    const T lap = laplacian_split<Order>(line + h + k, 1, u + k * sz, sy, cz, cy, cx);
    out[k * sz] = leapfrog(line[h + k], out[k * sz], vdt2[k * sz], lap);
  }
}

/// A grid's absorbing-layer cells — its CPML regions (kernels/shot_grid.hpp: each layer and
/// the model cells next to it) — or, widened(), the cells within reach of them, and their
/// numbering, for the CUDA launches that run over those cells only.
struct LayerBox {
  int nz, ny, nx;
  int zt, zb, yt, yb, xl,
      xr;  // layers: planes [0, zt) and [zb, nz), rows [0, yt) and [yb, ny), columns [0, xl), [xr, nx)

  /// The box with each layer that exists grown by `h` cells towards the interior (the
  /// adjoint's rim, StepArgs::z_rim()), clamped to the grid; divisors set.
  SW_HD LayerBox widened(int h) const {
    LayerBox w = *this;
    w.zt = zt > 0 ? (zt + h < nz ? zt + h : nz) : 0;
    w.zb = zb < nz ? (zb - h > w.zt ? zb - h : w.zt) : nz;
    w.yt = yt > 0 ? (yt + h < ny ? yt + h : ny) : 0;
    w.yb = yb < ny ? (yb - h > w.yt ? yb - h : w.yt) : ny;
    w.xl = xl > 0 ? (xl + h < nx ? xl + h : nx) : 0;
    w.xr = xr < nx ? (xr - h > w.xl ? xr - h : w.xl) : nx;
    w.set_divisors();
    return w;
  }
  SW_HD void set_divisors() {
    by_nx = Divisor(unsigned(nx));
    by_plane_cells = Divisor(unsigned(ny) * unsigned(nx));
    by_plane_layer = Divisor(unsigned(plane_layer_cells()));
    by_left = Divisor(unsigned(xl));
    by_right = Divisor(unsigned(nx - xr));
  }

  /// The absorbing-layer cells, numbered 0 … layer_cells() − 1: the top planes [0, zt) and
  /// the bottom planes [zb, nz) whole; then, plane by plane between them, the front rows
  /// [0, yt) and the back rows [yb, ny) whole, and the left columns [0, xl) and right
  /// columns [xr, nx) of each row between those. The memory-variable passes of the CUDA
  /// bodies run over these cells only.
  SW_HD long layer_cells() const {
    const long band_planes = long(zt) + (nz - zb), side_planes = zb > zt ? long(zb - zt) : 0L;
    return band_planes * ny * nx + side_planes * plane_layer_cells();
  }
  /// Layer cells of a plane between the z layers.
  SW_HD long plane_layer_cells() const {
    const long band_rows = long(yt) + (ny - yb), side_rows = yb > yt ? long(yb - yt) : 0L;
    return band_rows * nx + side_rows * (long(xl) + (nx - xr));
  }
  /// Divisors of layer_cell(), set by set_divisors(): nx, a plane's cells ny·nx, a
  /// plane's layer cells between the z layers, the left and right layers' widths.
  Divisor by_nx, by_plane_cells, by_plane_layer, by_left, by_right;

  /// Cell (z, y, x) of layer cell number t < layer_cells().
  /// (32-bit arithmetic: build_medium refuses grids of 2³¹ cells or more.)
  SW_HD void layer_cell(long t, int& z, int& y, int& x) const {
    const unsigned c = unsigned(t), w = unsigned(nx), pw = unsigned(ny) * w, top = unsigned(zt) * pw,
                   bands = top + unsigned(nz - zb) * pw;
    if (c < bands) {
      const unsigned k = c < top ? c : c - top, in_plane = ny == 1 ? k : by_plane_cells.mod(k);
      z = int(ny == 1 ? by_nx.div(k) : by_plane_cells.div(k)) + (c < top ? 0 : zb);
      y = int(ny == 1 ? 0 : by_nx.div(in_plane));
      x = int(by_nx.mod(in_plane));
      return;
    }
    unsigned side = c - bands;
    z = zt;
    if (ny > 1) {  // 3-D: the plane between the z layers, then the front and back rows
      const unsigned front = unsigned(yt) * w, yband = front + unsigned(ny - yb) * w;
      const unsigned k = by_plane_layer.div(side);
      z += int(k);
      side -= k * by_plane_layer.d;
      if (side < yband) {
        y = int(side < front ? by_nx.div(side) : by_nx.div(side - front) + unsigned(yb));
        x = int(by_nx.mod(side));
        return;
      }
      side -= yband;
    }
    // The left columns of rows [yt, yb), then their right columns (2-D: of planes [zt, zb)).
    const unsigned rows = ny > 1 ? unsigned(yb - yt) : unsigned(zb - zt), left = rows * unsigned(xl);
    int r;
    if (side < left) {
      r = int(by_left.div(side));
      x = int(by_left.mod(side));
    } else {
      r = int(by_right.div(side - left));
      x = xr + int(by_right.mod(side - left));
    }
    if (ny > 1) {
      y = yt + r;
    } else {
      z += r;
      y = 0;
    }
  }
};

/// Everything one time step needs, as raw pointers: `u`, `u_prev_next` and `vdt2` address
/// grid cell (0, 0, 0), so cell (z, y, x) is [z·plane + y·stride + x]; the layer arrays
/// are the compact ones of kernels/shot.hpp, addressed through zi(), yi() and xi().
template <typename T>
struct StepArgs : LayerBox {
  const T* u;      // u[n]
  T* u_prev_next;  // in: u[n−1]; out: u[n+1] (updated in place)
  const T* vdt2;   // v² Δt²
  // The compact CPML memory variables, two per direction: the forward's ψ (1) and ζ (2),
  // the adjoint's α (1) and β (2) in the same arrays.
  T* cpml_z1;
  T* cpml_z2;
  T* cpml_x1;
  T* cpml_x2;
  T* cpml_y1;
  T* cpml_y2;
  const T* a_z;  // CPML coefficients per plane / column / row (length nz / nx / ny)
  const T* b_z;
  const T* a_x;
  const T* b_x;
  const T* a_y;
  const T* b_y;
  T inv_dz2, inv_dx2, inv_dz, inv_dx, inv_dy2, inv_dy;
  ShotProblem<T> layout;  // geometry only (its pointers are not used)
  long plane, stride, xstride, yplane;
  long ystep;                   // the y stride of the Laplacian: `stride` in 3-D, 0 in 2-D (no y term)
  int xloop_left, xloop_right;  // the CPU side loops: [0, xloop_left) and [xloop_right, nx)
  long xleft0, xright0;  // xi(0, 0, 0) and xi(0, 0, xloop_right): xi(z, y, x) = those + (z·ny + y)·xstride + x − x0
  // The layer-index functions of ShotProblem with their branches resolved once per step
  // (the CUDA threads call them per cell): planes z < z_split use the top array's offset,
  // rows y < y_split the front one's, columns x < x_split the left one's.
  int z_split, y_split, x_split;
  long z_top, z_bottom, y_front, y_back, x_left, x_right;

  SW_HD bool three_d() const { return ystep != 0; }
  SW_HD long cell(int z, int y, int x) const { return long(z) * plane + long(y) * stride + x; }
  SW_HD long zi(int z, int y, int x) const { return cell(z, y, x) + (z < z_split ? z_top : z_bottom); }
  SW_HD long yi(int z, int y, int x) const {
    return long(z) * yplane + long(y) * stride + x + (y < y_split ? y_front : y_back);
  }
  SW_HD long xi(int z, int y, int x) const {
    return (long(z) * ny + y) * xstride + x + (x < x_split ? x_left : x_right);
  }
  SW_HD bool z_layer(int z) const { return z < zt || z >= zb; }
  SW_HD bool y_layer(int y) const { return y < yt || y >= yb; }
  SW_HD bool x_layer(int x) const { return x < xl || x >= xr; }
  /// A layer plane, row or column, or one within `halo` of a layer (where the adjoint's
  /// correction reaches).
  SW_HD bool z_rim(int z) const { return (zt > 0 && z < zt + layout.halo) || (zb < nz && z >= zb - layout.halo); }
  SW_HD bool y_rim(int y) const { return (yt > 0 && y < yt + layout.halo) || (yb < ny && y >= yb - layout.halo); }
  SW_HD bool x_rim(int x) const { return (xl > 0 && x < xl + layout.halo) || (xr < nx && x >= xr - layout.halo); }
};

/// ψ pass at cell (z, y, x) of an absorbing layer (nothing elsewhere).
template <int Order, typename T>
SW_HD void update_psi_point(const StepArgs<T>& a, int z, int y, int x) {
  const T* u = a.u + a.cell(z, y, x);
  if (a.z_layer(z)) {
    T* p = a.cpml_z1 + a.zi(z, y, x);
    *p = psi_value<Order>(*p, a.a_z[z], a.b_z[z], u, a.plane, a.inv_dz);
  }
  if (a.three_d() && a.y_layer(y)) {
    T* p = a.cpml_y1 + a.yi(z, y, x);
    *p = psi_value<Order>(*p, a.a_y[y], a.b_y[y], u, a.stride, a.inv_dy);
  }
  if (a.x_layer(x)) {
    T* p = a.cpml_x1 + a.xi(z, y, x);
    *p = psi_value<Order>(*p, a.a_x[x], a.b_x[x], u, 1, a.inv_dx);
  }
}

/// The u pass's layer terms at cell (z, y, x), after its interior update: each layer's
/// correction v²Δt² (∂_d ψ_d + ζ_d) where the cell lies in the layers of dimension d (z, y, x).
template <int Order, typename T>
SW_HD void add_layer_corrections(const StepArgs<T>& a, int z, int y, int x) {
  const long i = a.cell(z, y, x);
  const T* u = a.u + i;
  T* out = a.u_prev_next + i;
  const T v = a.vdt2[i];
  if (a.z_layer(z)) {
    const long j = a.zi(z, y, x);
    out[0] += v * layer_correction<Order>(u, a.plane, a.inv_dz2, a.cpml_z1 + j, a.plane, a.inv_dz, a.cpml_z2 + j,
                                          a.a_z[z], a.b_z[z]);
  }
  if (a.three_d() && a.y_layer(y)) {
    const long j = a.yi(z, y, x);
    out[0] += v * layer_correction<Order>(u, a.stride, a.inv_dy2, a.cpml_y1 + j, a.stride, a.inv_dy, a.cpml_y2 + j,
                                          a.a_y[y], a.b_y[y]);
  }
  if (a.x_layer(x)) {
    const long j = a.xi(z, y, x);
    out[0] +=
        v * layer_correction<Order>(u, 1, a.inv_dx2, a.cpml_x1 + j, 1, a.inv_dx, a.cpml_x2 + j, a.a_x[x], a.b_x[x]);
  }
}

/// The u pass at cell (z, y, x): the interior update, then the layers' corrections.
template <int Order, typename T>
SW_HD void update_point(const StepArgs<T>& a, int z, int y, int x) {
  const long i = a.cell(z, y, x);
  interior_point<Order>(a.u + i, a.u_prev_next + i, a.vdt2[i], a.plane, a.ystep, a.inv_dz2, a.inv_dy2, a.inv_dx2);
  add_layer_corrections<Order>(a, z, y, x);
}

// ---------------------------------------------------------------------------------------
// The adjoint step: the transpose of the forward step above, run backwards in time
// (discretise-then-optimise, docs/design.md §2). With λ the adjoint wavefield, the code carries
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

/// Adjoint β pass at cell (z, y, x) of an absorbing layer: `a.u` holds μ[n+1].
template <int Order, typename T>
SW_HD void adjoint_beta_point(const StepArgs<T>& a, int z, int y, int x) {
  const T mu = a.u[a.cell(z, y, x)];
  if (a.z_layer(z)) {
    T* q = a.cpml_z2 + a.zi(z, y, x);
    *q = a.a_z[z] * *q + a.b_z[z] * mu;
  }
  if (a.three_d() && a.y_layer(y)) {
    T* q = a.cpml_y2 + a.yi(z, y, x);
    *q = a.a_y[y] * *q + a.b_y[y] * mu;
  }
  if (a.x_layer(x)) {
    T* q = a.cpml_x2 + a.xi(z, y, x);
    *q = a.a_x[x] * *q + a.b_x[x] * mu;
  }
}

/// Adjoint α pass at cell (z, y, x) of an absorbing layer, after the β pass of the same step.
template <int Order, typename T>
SW_HD void adjoint_alpha_point(const StepArgs<T>& a, int z, int y, int x) {
  const T* mu = a.u + a.cell(z, y, x);
  if (a.z_layer(z)) {
    const long j = a.zi(z, y, x);
    const T d = d1_layers_only<Order>(mu, a.plane, z, a.nz, a.zt, a.zb) + d1<Order>(a.cpml_z2 + j, a.plane);
    a.cpml_z1[j] = a.a_z[z] * a.cpml_z1[j] - a.b_z[z] * (d * a.inv_dz);
  }
  if (a.three_d() && a.y_layer(y)) {
    const long j = a.yi(z, y, x);
    const T d = d1_layers_only<Order>(mu, a.stride, y, a.ny, a.yt, a.yb) + d1<Order>(a.cpml_y2 + j, a.stride);
    a.cpml_y1[j] = a.a_y[y] * a.cpml_y1[j] - a.b_y[y] * (d * a.inv_dy);
  }
  if (a.x_layer(x)) {
    const long j = a.xi(z, y, x);
    const T d = d1_layers_only<Order>(mu, 1, x, a.nx, a.xl, a.xr) + d1<Order>(a.cpml_x2 + j, 1);
    a.cpml_x1[j] = a.a_x[x] * a.cpml_x1[j] - a.b_x[x] * (d * a.inv_dx);
  }
}

/// C_d at a cell of a layer or its rim: ∂²_d β_d − ∂_d α_d (β in ζ's array, α in ψ's).
template <int Order, typename T>
SW_HD T adjoint_correction(const T* alpha, const T* beta, long s, T inv_h, T inv_h2) {
  return d2<Order>(beta, s) * inv_h2 - d1<Order>(alpha, s) * inv_h;
}

/// The adjoint u pass's layer terms at cell (z, y, x), after its interior update: C_d
/// where the cell lies in a layer of dimension d or its rim.
template <int Order, typename T>
SW_HD void add_rim_corrections(const StepArgs<T>& a, int z, int y, int x) {
  const long i = a.cell(z, y, x);
  T* out = a.u_prev_next + i;
  const T v = a.vdt2[i];
  if (a.z_rim(z)) {
    const long j = a.zi(z, y, x);
    out[0] += v * adjoint_correction<Order>(a.cpml_z1 + j, a.cpml_z2 + j, a.plane, a.inv_dz, a.inv_dz2);
  }
  if (a.three_d() && a.y_rim(y)) {
    const long j = a.yi(z, y, x);
    out[0] += v * adjoint_correction<Order>(a.cpml_y1 + j, a.cpml_y2 + j, a.stride, a.inv_dy, a.inv_dy2);
  }
  if (a.x_rim(x)) {
    const long j = a.xi(z, y, x);
    out[0] += v * adjoint_correction<Order>(a.cpml_x1 + j, a.cpml_x2 + j, 1, a.inv_dx, a.inv_dx2);
  }
}

/// Adjoint u pass at cell (z, y, x): `a.u` holds μ[n+1], `a.u_prev_next` μ[n+2] → μ[n].
template <int Order, typename T>
SW_HD void update_adjoint_point(const StepArgs<T>& a, int z, int y, int x) {
  const long i = a.cell(z, y, x);
  interior_point<Order>(a.u + i, a.u_prev_next + i, a.vdt2[i], a.plane, a.ystep, a.inv_dz2, a.inv_dy2, a.inv_dx2);
  add_rim_corrections<Order>(a, z, y, x);
}

/// Free surface, plane k = 1 … halo, after the μ pass: the forward's ψ_z and ζ_z passes
/// read u in the mirrored planes above the surface (u(−k) = −u(k)), so in the transpose the
/// z-correction that falls on plane −k folds back onto plane k with the opposite sign. It
/// is non-zero only where the bottom layer's rim reaches above the surface (a model
/// thinner than about two stencil radii).
template <int Order, typename T>
SW_HD void adjoint_fold_point(const StepArgs<T>& a, int k, int y, int x) {
  if (!a.layout.free_surface || k >= a.nz || !a.z_rim(-k)) return;
  const long j = a.zi(-k, y, x), i = a.cell(k, y, x);
  a.u_prev_next[i] -= a.vdt2[i] * adjoint_correction<Order>(a.cpml_z1 + j, a.cpml_z2 + j, a.plane, a.inv_dz, a.inv_dz2);
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
  a.cpml_y1 = p.cpml_y1();
  a.cpml_y2 = p.cpml_y2();
  a.a_z = p.a_z;
  a.b_z = p.b_z;
  a.a_x = p.a_x;
  a.b_x = p.b_x;
  a.a_y = p.a_y;
  a.b_y = p.b_y;
  a.inv_dz2 = T(1) / (p.dz * p.dz);
  a.inv_dx2 = T(1) / (p.dx * p.dx);
  a.inv_dz = T(1) / p.dz;
  a.inv_dx = T(1) / p.dx;
  a.inv_dy2 = T(1) / (p.dy * p.dy);
  a.inv_dy = T(1) / p.dy;
  a.layout = p;
  a.plane = p.plane;
  a.stride = p.stride;
  a.xstride = p.xstride();
  a.yplane = p.yplane();
  a.ystep = p.three_d() ? p.stride : 0;
  a.nz = p.nz;
  a.ny = p.ny;
  a.nx = p.nx;
  a.zt = p.pml_top;
  a.zb = p.nz - p.pml_bottom;
  a.yt = p.pml_front;
  a.yb = p.ny - p.pml_back;
  a.xl = p.pml_left;
  a.xr = p.nx - p.pml_right;
  a.xloop_left = p.xloop_left();
  a.xloop_right = p.xloop_right();
  a.xleft0 = p.xlayer_index(0, 0, 0);
  a.xright0 = p.xlayer_index(0, 0, a.xloop_right);
  const int big = 1 << 30;
  a.z_split = p.zmerged() ? big : p.pml_top > 0 ? p.pml_top + p.halo : -big;
  a.z_top = p.zlayer_index(0, 0, 0);
  a.z_bottom = p.zlayer_index(p.nz - 1, 0, 0) - long(p.nz - 1) * p.plane;
  a.y_split = p.ymerged() ? big : p.pml_front > 0 ? p.pml_front + p.halo : -big;
  a.y_front = p.three_d() ? p.ylayer_index(0, 0, 0) : 0;
  a.y_back = p.three_d() ? p.ylayer_index(0, p.ny - 1, 0) - long(p.ny - 1) * p.stride : 0;
  a.x_split = p.xmerged() ? big : p.pml_left > 0 ? p.xloop_left() + p.halo : -big;
  a.x_left = p.xlayer_index(0, 0, 0);
  a.x_right = p.xlayer_index(0, 0, p.nx - 1) - (p.nx - 1);
  a.set_divisors();
  return a;
}

/// Antisymmetric mirror of the free surface at one column (grid offset `col` = y·stride + x
/// of plane 0) of the updated field (pointer at cell (0, 0, 0)): u = 0 on plane `top`, and
/// the `halo` planes above hold −u of the planes below (docs/design.md §2), for the planes below
/// that lie in the grid (< nz; past it the guard planes are zero, and so stay their
/// mirrors). The guard rows and columns stay zero.
template <typename T>
SW_HD void mirror_free_surface(T* u, long plane, int top, int halo, int nz, long col) {
  T* row0 = u + long(top) * plane;
  row0[col] = T(0);
  for (int k = 1; k <= halo && top + k < nz; ++k) row0[-k * plane + col] = -row0[k * plane + col];
}

}  // namespace starwave::stencil
