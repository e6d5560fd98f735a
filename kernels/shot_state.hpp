// kernels/shot_state.hpp — a shot's propagation state as dense arrays over its padded grid.
// The engine keeps a state as a checkpoint does (ShotProblem::checkpoint_size(): u, u_prev,
// then the layer arrays in their compact layouts); a caller that starts a propagation from
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

/// Calls f(k, i, value, z, y, x) for each value the state `c` (checkpoint_size() values, laid
/// out for `layout`) holds, k the dense array, i the cell's index in it, `value` a reference
/// into `c`, (z, y, x) the cell: every cell for u and u_prev, the cells of the dimension's
/// layers for ψ and ζ.
template <typename T, typename F>
void for_each_value(const ShotProblem<T>& layout, T* c, F&& f) {
  ShotProblem<T> q = layout;
  q.work = c;  // a checkpoint's first values are laid out as the work arrays
  const stencil::StepArgs<T> a = stencil::make_step_args(q, q.u0(), q.u1());
  const int d = q.dim;
  const int kz = 0, ky = d == 3 ? 1 : -1, kx = d == 3 ? 2 : 1;  // the axes' place among ψ (and ζ)
  for (int z = 0; z < q.nz; ++z)
    for (int y = 0; y < q.ny; ++y)
      for (int x = 0; x < q.nx; ++x) {
        const std::size_t i =
            (std::size_t(z) * std::size_t(q.ny) + std::size_t(y)) * std::size_t(q.nx) + std::size_t(x);
        const long g = a.cell(z, y, x);
        f(0, i, const_cast<T&>(a.u[g]), z, y, x);
        f(1, i, a.u_prev_next[g], z, y, x);
        if (a.z_layer(z)) {
          f(2 + kz, i, a.cpml_z1[a.zi(z, y, x)], z, y, x);
          f(2 + d + kz, i, a.cpml_z2[a.zi(z, y, x)], z, y, x);
        }
        if (ky >= 0 && a.y_layer(y)) {
          f(2 + ky, i, a.cpml_y1[a.yi(z, y, x)], z, y, x);
          f(2 + d + ky, i, a.cpml_y2[a.yi(z, y, x)], z, y, x);
        }
        if (a.x_layer(x)) {
          f(2 + kx, i, a.cpml_x1[a.xi(z, y, x)], z, y, x);
          f(2 + d + kx, i, a.cpml_x2[a.xi(z, y, x)], z, y, x);
        }
      }
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
  const long o = layout.origin(), G = long(layout.grid_size());
  for (T* field : {c + o, c + G + o})
    for (int y = 0; y < layout.ny; ++y)
      for (int x = 0; x < layout.nx; ++x)
        stencil::mirror_free_surface(field, layout.plane, layout.pml_top, layout.halo, layout.nz,
                                     layout.row_offset(0, y) + x);
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
