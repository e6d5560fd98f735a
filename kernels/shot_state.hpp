// kernels/shot_state.hpp — a shot's propagation state as dense arrays over its padded grid.
// The engine keeps a state as a checkpoint does (ShotProblem::checkpoint_size(): u, u_prev at
// the grid's cells, ψ and ζ at their CPML regions' cells: for_each_run()); a caller that starts a propagation from
// given wavefields, or takes its last ones (Python's wavefield_0 … and final wavefields),
// sees 2 + 2·dim arrays, each over the grid's cells (the model and its absorbing layers, no
// guard cells; z slowest, x fastest): u, the u before it, ψ along z, (y,) x, then ζ along z,
// (y,) x — a memory variable zero outside the layers of its dimension. Pure: no StarPU, no I/O.
#pragma once

#include <cstddef>

#include "kernels/shot.hpp"
#include "kernels/stencil.hpp"

namespace starwave::state {

/// Arrays of a dense state: 2 + 2·dim.
template <typename T>
int components(const ShotProblem<T>& p) {
  return 2 + 2 * p.dim;
}

/// Values of one dense array: the grid's cells.
template <typename T>
std::size_t cells(const ShotProblem<T>& p) {
  return std::size_t(p.nz) * std::size_t(p.ny) * std::size_t(p.nx);
}

// ---- a kept state's layout (ShotProblem::checkpoint_size()) ----
// u, then u_prev, each plane by plane (z from −g, g = state_guard_planes(): a free surface's
// mirror planes), row by row, over the grid's nx columns; then ψ_z and ζ_z over the planes of
// the z regions (top, then bottom; ShotProblem::region_at), each plane's rows and columns;
// (3-D) ψ_y and ζ_y over every plane, the rows of the y regions (front, then back), their
// columns; ψ_x and ζ_x over every plane and row, the columns of the x regions (left, then
// right). Everything else of a state is zero: guard cells (but a free surface's mirror
// planes), and a memory variable outside its axis's regions (b = 0 there: docs/design.md §2).

/// The arrays a state's values come from: u, u_prev (grid allocations), and p.work's layer
/// arrays cpml_z1, cpml_z2, cpml_y1, cpml_y2, cpml_x1, cpml_x2.
enum StateArray { kU = 0, kUPrev, kZ1, kZ2, kY1, kY2, kX1, kX2 };

/// Runs of a state's layout in order: f(k, array, offset, n, component, z, y, x) for each
/// run of n values at state index k, taken from `array` (StateArray) at `offset` (u and
/// u_prev: from the allocation's start; the layer arrays: from their own start) onwards,
/// which are the dense arrays' (component: to_dense()) cells (z, y, x) … (z, y, x + n − 1)
/// (z < 0: a mirror plane, in no dense array).
template <typename T, typename F>
void for_each_run(const ShotProblem<T>& p, F&& f) {
  const long o = p.origin();
  const int g = p.state_guard_planes(), d = p.dim;
  const int zt = p.pml_top, zb = p.nz - p.pml_bottom, yt = p.pml_front, yb = p.ny - p.pml_back;
  const int xl = p.pml_left, xr = p.nx - p.pml_right;
  const int ky = d == 3 ? 1 : -1, kx = d == 3 ? 2 : 1;  // the axes' place among ψ (and ζ)
  std::size_t k = 0;
  auto run = [&](int array, long offset, int n, int component, int z, int y, int x) {
    if (n <= 0) return;
    f(k, array, offset, n, component, z, y, x);
    k += std::size_t(n);
  };
  for (int field : {kU, kUPrev})
    for (int z = -g; z < p.nz; ++z)
      for (int y = 0; y < p.ny; ++y) run(field, o + p.row_offset(z, y), p.nx, field, z, y, 0);
  const int zr = ShotProblem<T>::region_count(zt, zb, p.nz);
  for (int which : {0, 1})
    for (int r = 0; r < zr; ++r) {
      const int z = ShotProblem<T>::region_at(r, zt, zb);
      for (int y = 0; y < p.ny; ++y) run(kZ1 + which, p.zlayer_index(z, y, 0), p.nx, 2 + which * d, z, y, 0);
    }
  if (ky >= 0) {
    const int yr = ShotProblem<T>::region_count(yt, yb, p.ny);
    for (int which : {0, 1})
      for (int z = 0; z < p.nz; ++z)
        for (int r = 0; r < yr; ++r) {
          const int y = ShotProblem<T>::region_at(r, yt, yb);
          run(kY1 + which, p.ylayer_index(z, y, 0), p.nx, 2 + ky + which * d, z, y, 0);
        }
  }
  for (int which : {0, 1})
    for (int z = 0; z < p.nz; ++z)
      for (int y = 0; y < p.ny; ++y) {
        const int c = 2 + kx + which * d;
        if (xl >= xr) {  // the regions meet: one run over the row (ShotGrid::xmerged())
          run(kX1 + which, p.xlayer_index(z, y, 0), p.nx, c, z, y, 0);
        } else {
          run(kX1 + which, p.xlayer_index(z, y, 0), xl, c, z, y, 0);
          run(kX1 + which, p.xlayer_index(z, y, xr), p.nx - xr, c, z, y, xr);
        }
      }
}

/// Where state index k < checkpoint_size() comes from: its array (StateArray) and offset
/// there, as for_each_run() lays them out, one index at a time (the GPU's copies).
template <typename T>
SW_HD void locate(const ShotProblem<T>& p, std::size_t k, int& array, long& offset) {
  const std::size_t nx = std::size_t(p.nx), ny = std::size_t(p.ny), plane = ny * nx, F = p.state_field();
  if (k < 2 * F) {
    array = k < F ? kU : kUPrev;
    const std::size_t r = k < F ? k : k - F;
    const int z = int(r / plane) - p.state_guard_planes(), y = int(r % plane / nx), x = int(r % nx);
    offset = p.origin() + p.row_offset(z, y) + x;
    return;
  }
  k -= 2 * F;
  const std::size_t Z = p.state_region_cells(0);
  if (k < 2 * Z) {
    array = k < Z ? kZ1 : kZ2;
    const std::size_t r = k < Z ? k : k - Z;
    const int z = ShotProblem<T>::region_at(int(r / plane), p.pml_top, p.nz - p.pml_bottom);
    offset = p.zlayer_index(z, int(r % plane / nx), int(r % nx));
    return;
  }
  k -= 2 * Z;
  const std::size_t Y = p.state_region_cells(1);
  if (k < 2 * Y) {
    array = k < Y ? kY1 : kY2;
    const int yt = p.pml_front, yb = p.ny - p.pml_back;
    const std::size_t r = k < Y ? k : k - Y, rows = std::size_t(ShotProblem<T>::region_count(yt, yb, p.ny));
    const int y = ShotProblem<T>::region_at(int(r / nx % rows), yt, yb);
    offset = p.ylayer_index(int(r / (rows * nx)), y, int(r % nx));
    return;
  }
  k -= 2 * Y;
  const int xl = p.pml_left, xr = p.nx - p.pml_right;
  const std::size_t X = p.state_region_cells(2), cols = std::size_t(ShotProblem<T>::region_count(xl, xr, p.nx));
  array = k < X ? kX1 : kX2;
  const std::size_t r = k < X ? k : k - X, row = r / cols;
  offset = p.xlayer_index(int(row / ny), int(row % ny), ShotProblem<T>::region_at(int(r % cols), xl, xr));
}

/// The array StateArray `array` names: u, u_prev (grid allocations) or one of p.work's
/// layer arrays (state_value(): the one value state index k stands for).
template <typename T>
SW_HD T* array_base(const ShotProblem<T>& p, T* u, T* up, int array) {
  switch (array) {
    case kU:
      return u;
    case kUPrev:
      return up;
    case kZ1:
      return p.cpml_z1();
    case kZ2:
      return p.cpml_z2();
    case kY1:
      return p.cpml_y1();
    case kY2:
      return p.cpml_y2();
    case kX1:
      return p.cpml_x1();
    default:
      return p.cpml_x2();
  }
}

/// The value state index k < checkpoint_size() stands for, in u, up (grid allocations) or
/// p.work's layer arrays.
template <typename T>
SW_HD T& state_value(const ShotProblem<T>& p, T* u, T* up, std::size_t k) {
  int array;
  long offset;
  locate(p, k, array, offset);
  return array_base(p, u, up, array)[offset];
}

/// Calls f(k, i, value, z, y, x) for each value the state `c` (checkpoint_size() values)
/// holds at a cell, k the dense array, i the cell's index in it, `value` a reference into
/// `c`, (z, y, x) the cell: every cell for u and u_prev, the cells of the dimension's CPML
/// regions for ψ and ζ (not a free surface's mirror planes).
template <typename T, typename F>
void for_each_value(const ShotProblem<T>& layout, T* c, F&& f) {
  const std::size_t ny = std::size_t(layout.ny), nx = std::size_t(layout.nx);
  for_each_run(layout, [&](std::size_t k, int, long, int n, int component, int z, int y, int x) {
    if (z < 0) return;
    const std::size_t i = (std::size_t(z) * ny + std::size_t(y)) * nx + std::size_t(x);
    for (int j = 0; j < n; ++j) f(component, i + std::size_t(j), c[k + std::size_t(j)], z, y, x + j);
  });
}

/// The dense arrays (components() × cells() values, zeroed first) of state `c`.
template <typename T, typename D>
void to_dense(const ShotProblem<T>& layout, const T* c, D* dense) {
  const std::size_t n = cells(layout);
  for (std::size_t j = 0; j < std::size_t(components(layout)) * n; ++j) dense[j] = D(0);
  for_each_value(layout, const_cast<T*>(c),
                 [&](int k, std::size_t i, T& v, int, int, int) { dense[std::size_t(k) * n + i] = D(v); });
}

/// State `c` (checkpoint_size() values, zeroed first) from dense arrays; a memory variable's
/// values outside its dimension's layers are not read. The guard cells stay zero, but for a
/// free surface's planes above it, which take the mirror of u and u_prev as every step leaves
/// them (so that a state handed on and given back continues the propagation bit for bit).
template <typename T, typename D>
void from_dense(const ShotProblem<T>& layout, const D* dense, T* c) {
  for (std::size_t j = 0; j < layout.checkpoint_size(); ++j) c[j] = T(0);
  const std::size_t n = cells(layout);
  for_each_value(layout, c, [&](int k, std::size_t i, T& v, int, int, int) { v = T(dense[std::size_t(k) * n + i]); });
  if (!layout.free_surface) return;
  // u and u_prev laid out as planes of ny·nx (state_field()), from the mirror planes' first.
  const long g = layout.state_guard_planes(), cols = long(layout.ny) * long(layout.nx);
  for (T* field : {c + g * cols, c + long(layout.state_field()) + g * cols})
    for (long col = 0; col < cols; ++col)
      stencil::mirror_free_surface(field, cols, layout.pml_top, layout.halo, layout.nz, col);
}

// ---- the adjoint through states (ShotProblem::adjoint_start, adjoint_end) ----
// The backward sweep carries μ = v²Δt² λ and, in the layers, α = b·(the cotangent of ψ after
// its update) and β = b·(that of ζ) (kernels/stencil.hpp, the adjoint step). A final state's
// cotangent (g_u, g_uprev, g_ψ, g_ζ) therefore starts it as μ[N] = V g_u, μ[N+1] = −V g_uprev,
// α = (b/a) g_ψ, β = (b/a) g_ζ (the first step's updates then make b times the cotangents
// after the last forward step), and its end gives the initial state's: μ[0]/V, −μ[1]/V,
// (a/b) α, (a/b) β. In the layers b < 0 and 0 < a < 1 (kernels' CPML: σ > 0 at every layer
// cell), so both ratios are finite. At the model cells of a CPML region (ShotGrid::inset)
// a = b = 0: their ψ and ζ are zero after every step and read by nothing before it, so
// their cotangents are zero both ways (b_over_a() is 0 there). The medium (vdt2, a, b) must
// be attached to `p`.

/// b/a of dense array k's axis (k ≥ 2: ψ and ζ along z, (y,) x) at cell (z, y, x); 0 where
/// b = 0.
template <typename T>
double b_over_a(const ShotProblem<T>& p, int k, int z, int y, int x) {
  const int d = (k - 2) % p.dim, axis = p.dim == 3 ? d : 2 * d;  // 0 z, 1 y, 2 x
  const T a = axis == 0 ? p.a_z[z] : axis == 1 ? p.a_y[y] : p.a_x[x];
  const T b = axis == 0 ? p.b_z[z] : axis == 1 ? p.b_y[y] : p.b_x[x];
  return b == T(0) ? 0.0 : double(b) / double(a);
}

/// ShotProblem::adjoint_start (checkpoint_size() values) for a cotangent `g` of the end state
/// (dense arrays, to_dense()'s layout).
template <typename T, typename D>
void adjoint_start_from(const ShotProblem<T>& p, const D* g, T* start) {
  for (std::size_t j = 0; j < p.checkpoint_size(); ++j) start[j] = T(0);
  const std::size_t n = cells(p);
  const long o = p.origin();
  for_each_value(p, start, [&](int k, std::size_t i, T& v, int z, int y, int x) {
    const double gi = double(g[std::size_t(k) * n + i]);
    const double V = double(p.vdt2[o + p.row_offset(z, y) + x]);
    v = T(k == 0 ? V * gi : k == 1 ? -V * gi : b_over_a(p, k, z, y, x) * gi);
  });
}

/// The initial state's cotangent (dense arrays, zero where the state holds nothing) from
/// ShotProblem::adjoint_end.
template <typename T, typename D>
void initial_cotangent_from(const ShotProblem<T>& p, const T* end, D* g) {
  const std::size_t n = cells(p);
  for (std::size_t j = 0; j < std::size_t(components(p)) * n; ++j) g[j] = D(0);
  const long o = p.origin();
  for_each_value(p, const_cast<T*>(end), [&](int k, std::size_t i, T& v, int z, int y, int x) {
    const double V = double(p.vdt2[o + p.row_offset(z, y) + x]);
    g[std::size_t(k) * n + i] = D(k == 0                           ? double(v) / V
                                  : k == 1                         ? -double(v) / V
                                  : b_over_a(p, k, z, y, x) == 0.0 ? 0.0
                                                                   : double(v) / b_over_a(p, k, z, y, x));
  });
}

}  // namespace starwave::state
