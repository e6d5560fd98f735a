// kernels/shot.hpp — the description of one shot's propagation, as raw pointers, shared by
// the CPU and CUDA propagators, and the memory layout of its arrays. Pure data: no
// StarPU, no I/O.
//
// Grid layout: the padded grid (user's model + absorbing layers) has nz × nx cells, stored
// row-major (x fastest) with `halo` guard rows above and below, `lead` guard columns on the
// left and at least `halo` on the right. `stride` (the row length) is a multiple of 64
// bytes and `lead` makes column 0 start on a 64-byte boundary, so with 64-byte aligned
// allocations every row of the interior loop starts aligned. Indices such as
// `source_index` address the grid from cell (0, 0): i = z·stride + x.
//
// The CPML memory variables are compact (DESIGN §2): ψ_z, ζ_z exist only in the top and
// bottom layers (full rows, same columns as the grid, `halo` zero guard rows on both sides
// of each layer), ψ_x, ζ_x only in the left and right layers (all nz rows, zero guard
// columns on both sides of each layer, rows of `xstride`).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "kernels/hd.hpp"

namespace starwave {

template <typename T>
struct ShotProblem {
  int nz = 0, nx = 0;  // padded grid (model + absorbing layers), guard cells excluded
  int halo = 0;        // stencil radius: guard rows above and below, ≥ guard columns per side
  int lead = 0;        // guard columns left of column 0 (one vector ≥ halo; aligns column 0)
  long stride = 0;     // row length in elements (≥ lead + nx + halo; multiple of kAlign)
  int pml_top = 0, pml_bottom = 0, pml_left = 0, pml_right = 0;  // layer widths (cells)
  bool free_surface = false;                                     // mirror about row pml_top (which is then 0)
  T dz = 0, dx = 0;

  const T* vdt2 = nullptr;  // v²Δt², full grid allocation (guards included)
  const T* a_z = nullptr;   // CPML coefficients, length nz (rows) and nx (columns)
  const T* b_z = nullptr;
  const T* a_x = nullptr;
  const T* b_x = nullptr;

  int nsteps = 0;             // internal time steps: computes u[1] … u[nsteps]
  int record_every = 1;       // k: trace sample n is u[n·k]
  int nt = 0;                 // samples per trace
  const T* source = nullptr;  // s[m]·δ_h for m = 0 … nsteps−1 (already divided by Δz Δx)
  long source_index = 0;
  int nrec = 0;
  const long* receiver_index = nullptr;
  T* traces = nullptr;  // nrec × nt, row per receiver

  // The receivers as a gather, for the kernels that add every receiver's adjoint source
  // in the thread that updates its cell (in receiver order, without atomics; several
  // receivers may share a cell): the unique receiver cells ascending, those of padded row
  // z at rec_cell[rec_row[z] … rec_row[z+1]), the receivers of cell c at
  // rec_order[rec_first[c] … rec_first[c+1]). All of it lives in the shot's nodes buffer:
  //   [source index | receiver indices (nrec) | rec_row (nz + 1) | rec_cell (≤ nrec) |
  //    rec_first (≤ nrec + 1) | rec_order (nrec)]   (fill_nodes()).
  const long* rec_row = nullptr;
  const long* rec_cell = nullptr;
  const long* rec_first = nullptr;
  const long* rec_order = nullptr;

  /// Elements of the nodes buffer for `nrec` receivers on a padded grid of `nz` rows.
  SW_HD static std::size_t nodes_size(int nrec, int nz) { return 4 * std::size_t(nrec) + std::size_t(nz) + 3; }
  /// Points receiver_index and the gather into a nodes buffer (nrec and nz set first).
  SW_HD void attach_nodes(const long* nodes) {
    receiver_index = nodes + 1;
    rec_row = receiver_index + nrec;
    rec_cell = rec_row + nz + 1;
    rec_first = rec_cell + nrec;
    rec_order = rec_first + nrec + 1;
  }

  T* work = nullptr;  // scratch of work_size() values: u, u_prev, the CPML memory variables cpml_z1, cpml_z2, cpml_x1,
                      // cpml_x2 (ψ, ζ forward; α, β adjoint), clocks

  // The forward wavefield kept for the adjoint (DESIGN §3), written by the forward when
  // `store` is set: every step's values on the `halo`-wide ring around the model region
  // (kStoreBoundary: the adjoint re-creates the model region backwards from it), or on the
  // model region with that ring (kStoreFull); and the last two states.
  static constexpr int kStoreBoundary = 0, kStoreFull = 1;
  int storage = kStoreBoundary;
  T* store = nullptr;        // store_size() values: slot m holds u[m], m = 0 … nsteps
  T* final_state = nullptr;  // 2 × grid_size(): u[nsteps], then u[nsteps − 1]

  /// Elements per 64 bytes: the unit of `stride`, `lead` and of every array offset.
  static constexpr int kAlign = int(64 / sizeof(T));
  SW_HD static constexpr long round_up(long n) { return (n + kAlign - 1) / kAlign * kAlign; }

  /// Sets nz, nx, halo, lead and stride for a padded grid and a stencil radius.
  SW_HD void set_grid(int nz_, int nx_, int radius) {
    nz = nz_;
    nx = nx_;
    halo = radius;
    lead = int(round_up(radius));
    stride = round_up(long(lead) + nx + radius);
  }

  SW_HD std::size_t grid_size() const { return std::size_t(nz + 2 * halo) * std::size_t(stride); }
  SW_HD long origin() const { return long(halo) * stride + lead; }

  // Compact layer arrays. Each covers its layer, `halo` zero guard rows on the outer side
  // and 2·halo on the inner side: the adjoint's correction reaches `halo` cells past a
  // layer (its "rim") and reads `halo` further. When the model is thinner than two stencil
  // radii, the two layers of a dimension share one array spanning the whole grid
  // (`merged`), so every stencil reads one consistent array.
  SW_HD bool zmerged() const { return pml_top > 0 && pml_bottom > 0 && nz - pml_bottom - pml_top < 2 * halo; }
  SW_HD int top_rows() const { return zmerged() ? nz + 2 * halo : pml_top > 0 ? pml_top + 3 * halo : 0; }
  SW_HD int bottom_rows() const { return zmerged() || pml_bottom == 0 ? 0 : pml_bottom + 3 * halo; }
  SW_HD std::size_t zlayer_size() const { return std::size_t(top_rows() + bottom_rows()) * std::size_t(stride); }

  /// Index into ψ_z / ζ_z of cell (z, x), for a layer or rim row (within `halo` of a layer)
  /// and the rows its stencil reads.
  SW_HD long zlayer_index(int z, int x) const {
    if (zmerged() || (pml_top > 0 && z < pml_top + halo)) return long(z + halo) * stride + lead + x;
    return long(top_rows() + z - (nz - pml_bottom) + 2 * halo) * stride + lead + x;
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
  SW_HD std::size_t xlayer_size() const { return std::size_t(xlayers()) * std::size_t(nz) * std::size_t(xstride()); }

  /// Index into ψ_x / ζ_x of cell (z, x), for a column swept by the side-layer loops or
  /// within `halo` of one.
  SW_HD long xlayer_index(int z, int x) const {
    if (xmerged() || (pml_left > 0 && x < xloop_left() + halo)) return long(z) * xstride() + xguard() + x;
    const long right = pml_left > 0 ? long(nz) * xstride() : 0;
    return right + long(z) * xstride() + xguard() + x - xloop_right();
  }

  // The model region: rows [mz0, mz1), columns [mx0, mx1) of the padded grid.
  SW_HD int mz0() const { return pml_top; }
  SW_HD int mz1() const { return nz - pml_bottom; }
  SW_HD int mx0() const { return pml_left; }
  SW_HD int mx1() const { return nx - pml_right; }

  /// Values stored per step: the ring's four strips (top, bottom: halo × model width;
  /// left, right: model height × halo) or the whole window (model region + ring).
  SW_HD long store_step_size() const {
    const long h = mz1() - mz0(), w = mx1() - mx0();
    return storage == kStoreFull ? (h + 2 * halo) * (w + 2 * halo) : 2L * halo * (h + w);
  }
  SW_HD std::size_t store_size() const { return std::size_t(nsteps + 1) * std::size_t(store_step_size()); }

  /// The one map of a store slot: up to four blocks of whole row pieces, stored in this
  /// order — kStoreBoundary: the ring's top strip, bottom strip (halo rows × model width),
  /// left strip, right strip (model rows × halo); kStoreFull: the window (model region and
  /// ring). Block i covers rows [z0, z1), columns [x0, x0 + width). store_cell() (one
  /// element, the CUDA threads) and the CPU's row copies (kernels/cpu/adjoint.cpp) both
  /// read it.
  struct StoreBlock {
    int z0, z1, x0, width;
  };
  SW_HD int store_blocks(StoreBlock* b) const {
    const int r = halo, w = mx1() - mx0();
    if (storage == kStoreFull) {
      b[0] = {mz0() - r, mz1() + r, mx0() - r, w + 2 * r};
      return 1;
    }
    b[0] = {mz0() - r, mz0(), mx0(), w};
    b[1] = {mz1(), mz1() + r, mx0(), w};
    b[2] = {mz0(), mz1(), mx0() - r, r};
    b[3] = {mz0(), mz1(), mx1(), r};
    return 4;
  }

  /// Grid offset (from cell (0, 0)) of element k of a store slot (32-bit arithmetic within
  /// the slot: a 2-D slot holds far fewer than 2³¹ values).
  SW_HD long store_cell(long k) const {
    StoreBlock b[4];
    const int n = store_blocks(b);
    unsigned c = unsigned(k);
    int i = 0;
    for (; i + 1 < n; ++i) {  // the block that holds element k
      const unsigned size = unsigned(b[i].z1 - b[i].z0) * unsigned(b[i].width);
      if (c < size) break;
      c -= size;
    }
    const unsigned width = unsigned(b[i].width);
    return long(b[i].z0 + int(c / width)) * stride + b[i].x0 + int(c % width);
  }

  /// The adjoint's scratch: the forward's arrays (for the adjoint wavefield and its layer
  /// variables), two grids for the re-created forward wavefield and two for the imaging
  /// sums (kept in the grid's aligned layout while they accumulate).
  SW_HD std::size_t adjoint_work_size() const { return work_size() + 4 * grid_size(); }

  /// The scratch arrays, in this order inside `work`.
  SW_HD std::size_t work_size() const { return 2 * grid_size() + 2 * zlayer_size() + 2 * xlayer_size() + kAlign; }
  SW_HD T* u0() const { return work; }
  SW_HD T* u1() const { return work + grid_size(); }
  SW_HD T* cpml_z1() const { return work + 2 * grid_size(); }
  SW_HD T* cpml_z2() const { return cpml_z1() + zlayer_size(); }
  SW_HD T* cpml_x1() const { return cpml_z2() + zlayer_size(); }
  SW_HD T* cpml_x2() const { return cpml_x1() + xlayer_size(); }
  /// Two step counters (64 bytes set aside at the end of the forward's arrays) for the
  /// CUDA launches replayed as a graph (kernels/cuda/bodies.hpp, Step).
  SW_HD int* clocks() const { return reinterpret_cast<int*>(cpml_x2() + xlayer_size()); }

  /// The medium buffer: [v²Δt² grid | a_z (nz) | b_z (nz) | a_x (nx) | b_x (nx)].
  SW_HD std::size_t medium_size() const { return grid_size() + 2 * std::size_t(nz) + 2 * std::size_t(nx); }
  SW_HD void attach_medium(const T* base) {
    const std::size_t g = grid_size();
    vdt2 = base;
    a_z = base + g;
    b_z = a_z + nz;
    a_x = b_z + nz;
    b_x = a_x + nx;
  }
};

/// Fills a nodes buffer of ShotProblem::nodes_size(nrec, nz) elements from the source node
/// and the receiver nodes (grid offsets z·stride + x of a padded grid of nz rows).
inline void fill_nodes(long* nodes, long source_index, const long* receiver_index, int nrec, int nz, long stride) {
  nodes[0] = source_index;
  long* ri = nodes + 1;
  for (int r = 0; r < nrec; ++r) ri[r] = receiver_index[r];
  long* row = ri + nrec;
  long* cell = row + nz + 1;
  long* first = cell + nrec;
  long* order = first + nrec + 1;
  std::vector<long> by_cell(static_cast<std::size_t>(nrec));
  for (int r = 0; r < nrec; ++r) by_cell[std::size_t(r)] = r;
  std::stable_sort(by_cell.begin(), by_cell.end(), [&](long a, long b) { return ri[a] < ri[b]; });
  long ncell = 0;
  for (int k = 0; k < nrec; ++k) {
    const long r = by_cell[std::size_t(k)];
    if (k == 0 || ri[r] != cell[ncell - 1]) {
      cell[ncell] = ri[r];
      first[ncell] = k;
      ++ncell;
    }
    order[k] = r;
  }
  first[ncell] = nrec;
  for (long c = ncell + 1; c <= nrec; ++c) first[c] = nrec;  // unused tail
  for (long c = ncell; c < nrec; ++c) cell[c] = -1;
  for (int z = 0; z <= nz; ++z) row[z] = std::lower_bound(cell, cell + ncell, long(z) * stride) - cell;
}

}  // namespace starwave
