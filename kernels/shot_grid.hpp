// kernels/shot_grid.hpp — one shot's padded grid and medium: extents, guard cells, the
// absorbing layers' widths, the compact CPML arrays' layout, the model region, and the medium
// (v²Δt² and the CPML coefficients) as raw pointers. Pure data: no StarPU, no I/O. Decided by
// the propagator (src/numerics/propagator.hpp, build_medium). One layout for 2-D and 3-D
// (docs/design.md §1): a 2-D grid is a 3-D one with a single row per plane and no guard rows in y.
//
// Grid layout: the padded grid (user's model + absorbing layers) has nz × ny × nx cells
// (ny = 1 in 2-D), stored z slowest and x fastest. A row (z, y) holds nx cells with `lead`
// guard columns on the left and at least `halo` on the right; `stride` (the row length) is
// a multiple of 64 bytes and `lead` makes column 0 start on a 64-byte boundary, so with
// 64-byte aligned allocations every row of the interior loop starts aligned. A plane z
// holds ny rows and `yhalo` guard rows before and after them (halo in 3-D, 0 in 2-D);
// `plane` is its length, and `halo` guard planes lie above and below the grid. Indices
// such as the points' nodes address the grid from cell (0, 0, 0):
// i = z·plane + y·stride + x (in 2-D, plane = stride).
//
// The CPML memory variables are compact (docs/design.md §1): ψ_z, ζ_z exist only in the top and
// bottom layers (whole planes in the grid's plane layout, `halo` zero guard planes on both
// sides of each layer); ψ_y, ζ_y (3-D) only in the front and back layers (every plane z,
// whole rows, zero guard rows on both sides of each layer); ψ_x, ζ_x only in the left and
// right layers (every row, zero guard columns on both sides of each layer, rows of
// `xstride`).
#pragma once

#include <cstddef>

#include "kernels/hd.hpp"

namespace starwave {

template <typename T>
struct ShotGrid {
  int dim = 2;                 // 2 or 3
  int nz = 0, ny = 1, nx = 0;  // padded grid (model + absorbing layers), guard cells excluded
  int halo = 0;                // stencil radius: guard planes above and below, ≥ guard columns per side
  int yhalo = 0;               // guard rows before and after each plane's rows (halo in 3-D, 0 in 2-D)
  int lead = 0;                // guard columns left of column 0 (one vector ≥ halo; aligns column 0)
  long stride = 0;             // row length in elements (≥ lead + nx + halo; multiple of kAlign)
  long plane = 0;              // plane length in elements: (ny + 2·yhalo) rows
  int pml_top = 0, pml_bottom = 0, pml_left = 0, pml_right = 0;  // CPML regions' widths (cells)
  int pml_front = 0, pml_back = 0;                               // y regions (3-D)
  int inset = 0;              // model cells at the inner edge of each CPML region (a = b = 0 there)
  bool free_surface = false;  // mirror about plane pml_top (which is then 0)
  T dz = 0, dy = 1, dx = 0;

  const T* vdt2 = nullptr;  // v²Δt², full grid allocation (guards included)
  const T* a_z = nullptr;   // CPML coefficients, length nz (planes), ny (rows) and nx (columns)
  const T* b_z = nullptr;
  const T* a_x = nullptr;
  const T* b_x = nullptr;
  const T* a_y = nullptr;
  const T* b_y = nullptr;

  /// Elements per 64 bytes: the unit of `stride`, `lead` and of every array offset.
  static constexpr int kAlign = int(64 / sizeof(T));
  SW_HD static constexpr long round_up(long n) { return (n + kAlign - 1) / kAlign * kAlign; }
  SW_HD bool three_d() const { return dim == 3; }
  /// Rows (z, y) of the grid, numbered z·ny + y.
  SW_HD int rows() const { return nz * ny; }
  /// Grid offset of row (z, y)'s column 0.
  SW_HD long row_offset(int z, int y) const { return long(z) * plane + long(y) * stride; }

  /// Sets the grid's extents and strides for a padded grid and a stencil radius; ny = 1
  /// and dim = 2 for a 2-D grid.
  SW_HD void set_grid(int nz_, int ny_, int nx_, int radius, int dim_) {
    dim = dim_;
    nz = nz_;
    ny = ny_;
    nx = nx_;
    halo = radius;
    yhalo = dim == 3 ? radius : 0;
    lead = int(round_up(radius));
    stride = round_up(long(lead) + nx + radius);
    plane = long(ny + 2 * yhalo) * stride;
  }

  SW_HD std::size_t grid_size() const { return std::size_t(nz + 2 * halo) * std::size_t(plane); }
  SW_HD long origin() const { return long(halo) * plane + long(yhalo) * stride + lead; }

  // Compact layer arrays of z and y. Each covers its layer, `halo` zero guard planes (rows)
  // on the outer side and 2·halo on the inner side: the adjoint's correction reaches
  // `halo` cells past a layer (its "rim") and reads `halo` further. When the model is
  // thinner than two stencil radii, the two layers of a dimension share one array spanning
  // the whole grid (`merged`), so every stencil reads one consistent array.
  SW_HD bool zmerged() const { return pml_top > 0 && pml_bottom > 0 && nz - pml_bottom - pml_top < 2 * halo; }
  SW_HD int top_rows() const { return zmerged() ? nz + 2 * halo : pml_top > 0 ? pml_top + 3 * halo : 0; }
  SW_HD int bottom_rows() const { return zmerged() || pml_bottom == 0 ? 0 : pml_bottom + 3 * halo; }
  SW_HD std::size_t zlayer_size() const { return std::size_t(top_rows() + bottom_rows()) * std::size_t(plane); }

  /// Index into ψ_z / ζ_z of cell (z, y, x), for a layer or rim plane (within `halo` of a
  /// layer) and the planes its stencil reads.
  SW_HD long zlayer_index(int z, int y, int x) const {
    const long in_plane = long(y + yhalo) * stride + lead + x;
    if (zmerged() || (pml_top > 0 && z < pml_top + halo)) return long(z + halo) * plane + in_plane;
    return long(top_rows() + z - (nz - pml_bottom) + 2 * halo) * plane + in_plane;
  }

  SW_HD bool ymerged() const { return pml_front > 0 && pml_back > 0 && ny - pml_back - pml_front < 2 * halo; }
  SW_HD int front_rows() const { return ymerged() ? ny + 2 * halo : pml_front > 0 ? pml_front + 3 * halo : 0; }
  SW_HD int back_rows() const { return ymerged() || pml_back == 0 ? 0 : pml_back + 3 * halo; }
  /// Length of one plane of ψ_y / ζ_y (every plane z has one; none in 2-D).
  SW_HD long yplane() const { return long(front_rows() + back_rows()) * stride; }
  SW_HD std::size_t ylayer_size() const { return std::size_t(nz) * std::size_t(yplane()); }

  /// Index into ψ_y / ζ_y of cell (z, y, x), for a layer or rim row and the rows its
  /// stencil reads.
  SW_HD long ylayer_index(int z, int y, int x) const {
    const long r =
        ymerged() || (pml_front > 0 && y < pml_front + halo) ? y + halo : front_rows() + y - (ny - pml_back) + 2 * halo;
    return long(z) * yplane() + r * stride + lead + x;
  }

  // The CPU loops sweep the side layers and their rims (`halo` columns past each layer) in
  // whole 64-byte vectors: columns [0, xloop_left()) and [xloop_right(), nx), the extra
  // lanes being model cells (one loop over all columns when the layers are merged). ψ_x,
  // ζ_x are stored for those columns ± one vector (≥ halo); model cells keep zeros there.
  SW_HD bool xmerged() const {
    if (pml_left == 0 && pml_right == 0) return false;
    const long l = pml_left > 0 ? round_up(pml_left + halo) : 0;
    const long r = pml_right > 0 ? nx - round_up(pml_right + halo) : nx;
    return r - l < 2 * halo;
  }
  SW_HD int xloop_left() const { return xmerged() ? nx : pml_left > 0 ? int(round_up(pml_left + halo)) : 0; }
  SW_HD int xloop_right() const { return xmerged() ? nx : pml_right > 0 ? int(nx - round_up(pml_right + halo)) : nx; }
  /// Guard columns on each side of a side-layer row of ψ_x, ζ_x: one vector (≥ halo), so
  /// the CPU loops can load whole neighbour vectors.
  SW_HD static constexpr int xguard() { return kAlign; }
  SW_HD long xstride() const {
    const int l = xloop_left(), r = nx - xloop_right();
    return round_up(long(l > r ? l : r) + 2 * xguard());
  }
  SW_HD int xlayers() const { return xmerged() ? 1 : (pml_left > 0) + (pml_right > 0); }
  SW_HD std::size_t xlayer_size() const {
    return std::size_t(xlayers()) * std::size_t(rows()) * std::size_t(xstride());
  }

  /// Index into ψ_x / ζ_x of cell (z, y, x), for a column swept by the side-layer loops or
  /// within `halo` of one.
  SW_HD long xlayer_index(int z, int y, int x) const {
    const long row = long(z) * ny + y;
    if (xmerged() || (pml_left > 0 && x < xloop_left() + halo)) return row * xstride() + xguard() + x;
    const long right = pml_left > 0 ? long(rows()) * xstride() : 0;
    return right + row * xstride() + xguard() + x - xloop_right();
  }

  // A CPML region (pml_top, …) is an absorbing layer and, when `inset` > 0, the `inset` model
  // cells next to it, whose a = b = 0 keep their memory variables at zero: their update is the
  // interior's plus the ∂ψ that their stencil reads from the layer (docs/design.md §2).
  // The model region: planes [mz0, mz1), rows [my0, my1), columns [mx0, mx1) of the padded grid.
  SW_HD int mz0() const { return pml_top > 0 ? pml_top - inset : 0; }
  SW_HD int mz1() const { return nz - (pml_bottom > 0 ? pml_bottom - inset : 0); }
  SW_HD int my0() const { return pml_front > 0 ? pml_front - inset : 0; }
  SW_HD int my1() const { return ny - (pml_back > 0 ? pml_back - inset : 0); }
  SW_HD int mx0() const { return pml_left > 0 ? pml_left - inset : 0; }
  SW_HD int mx1() const { return nx - (pml_right > 0 ? pml_right - inset : 0); }
  // The CPML interior, where the update is the interior's alone: the backward sweep re-creates
  // it and images it by μ·∇²u; every cell outside it is stored and imaged by its time difference.
  SW_HD int iz0() const { return pml_top; }
  SW_HD int iz1() const { return nz - pml_bottom; }
  SW_HD int iy0() const { return pml_front; }
  SW_HD int iy1() const { return ny - pml_back; }
  SW_HD int ix0() const { return pml_left; }
  SW_HD int ix1() const { return nx - pml_right; }
  SW_HD bool interior_row(int z, int y) const { return z >= iz0() && z < iz1() && y >= iy0() && y < iy1(); }
  SW_HD bool interior_point(int z, int y, int x) const { return interior_row(z, y) && x >= ix0() && x < ix1(); }
  SW_HD long model_cells() const { return long(mz1() - mz0()) * (my1() - my0()) * (mx1() - mx0()); }

  /// Cell (z, y, x) of grid offset i (from cell (0, 0, 0)), the inverse of row_offset(z, y) + x.
  SW_HD void cell_of(long i, int& z, int& y, int& x) const {
    const long shifted = i + origin();  // ≥ 0: from the allocation's first element
    const long zs = shifted / plane, ys = (shifted - zs * plane) / stride;
    z = int(zs) - halo;
    y = int(ys) - yhalo;
    x = int(shifted - zs * plane - ys * stride) - lead;
  }
  /// Whether cell (z, y, x) is an absorbing-layer cell: in the padded grid, outside the
  /// model region. Its velocity is the nearest model cell's (docs/design.md §2).
  SW_HD bool layer_point(int z, int y, int x) const {
    const bool grid = z >= 0 && z < nz && y >= 0 && y < ny && x >= 0 && x < nx;
    const bool model = z >= mz0() && z < mz1() && y >= my0() && y < my1() && x >= mx0() && x < mx1();
    return grid && !model;
  }

  /// The gradient's share of the cells outside the CPML interior (docs/design.md §2): such a
  /// cell c takes its velocity from model cell e(c) (itself, or the model's edge cell a layer
  /// cell copies), so ∂Φ/∂v_e gathers Σ_m μ[m+1] R[m] over c, R[m] being what v²Δt² multiplies
  /// in c's update (the CPML terms included). The backward sweep reads their forward field from
  /// the store, and R[m] is its second time difference over v²Δt²: layer_term() adds
  /// μ[m+1] (u[m+1] − 2u[m] + u[m−1]) to an accumulator `acc` at c each step (u[−1] = 0);
  /// edge_fold() sums the accumulators of the cells that set model cell (z, y, x)'s term,
  /// z slowest, x fastest: the layer cells that copy it when `copies`, and the cell itself
  /// when it lies outside the CPML interior; divided by the cell's v²Δt² (the same bits as
  /// theirs), into `out`. Returns false when there is none (out untouched, so the interior
  /// keeps its bits).
  SW_HD static T layer_term(T acc, T mu, T next, T now, T prev) { return acc + mu * ((next - T(2) * now) + prev); }
  SW_HD bool edge_fold(const T* acc, int z, int y, int x, bool copies, T& out) const {
    const bool self = !interior_point(z, y, x);
    const int z0 = copies && z == mz0() ? 0 : z, z1 = copies && z == mz1() - 1 ? nz : z + 1;
    const int y0 = copies && y == my0() ? 0 : y, y1 = copies && y == my1() - 1 ? ny : y + 1;
    const int x0 = copies && x == mx0() ? 0 : x, x1 = copies && x == mx1() - 1 ? nx : x + 1;
    if (!self && z1 - z0 == 1 && y1 - y0 == 1 && x1 - x0 == 1) return false;
    T sum = T(0);
    for (int k = z0; k < z1; ++k)
      for (int j = y0; j < y1; ++j)
        for (int i = x0; i < x1; ++i)
          if (self || k != z || j != y || i != x) sum += acc[row_offset(k, j) + i];
    out = sum / vdt2[origin() + row_offset(z, y) + x];
    return true;
  }
  /// The medium buffer: [v²Δt² grid | a_z (nz) | b_z (nz) | a_x (nx) | b_x (nx) | a_y (ny) | b_y (ny)].
  SW_HD std::size_t medium_size() const {
    return grid_size() + 2 * std::size_t(nz) + 2 * std::size_t(nx) + 2 * std::size_t(ny);
  }
  SW_HD void attach_medium(const T* base) {
    const std::size_t g = grid_size();
    vdt2 = base;
    a_z = base + g;
    b_z = a_z + nz;
    a_x = b_z + nz;
    b_x = a_x + nx;
    a_y = b_x + nx;
    b_y = a_y + ny;
  }
};

}  // namespace starwave
