// kernels/shot.hpp — the description of one shot's propagation, as raw pointers, shared by
// the CPU and CUDA propagators, and the memory layout of its arrays. Pure data: no
// StarPU, no I/O. One layout for 2-D and 3-D (docs/design.md §1): a 2-D grid is a 3-D one with a
// single row per plane and no guard rows in y.
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

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/hd.hpp"
#include "kernels/pack16.hpp"

namespace starwave {

template <typename T>
struct ShotProblem {
  int dim = 2;                 // 2 or 3
  int nz = 0, ny = 1, nx = 0;  // padded grid (model + absorbing layers), guard cells excluded
  int halo = 0;                // stencil radius: guard planes above and below, ≥ guard columns per side
  int yhalo = 0;               // guard rows before and after each plane's rows (halo in 3-D, 0 in 2-D)
  int lead = 0;                // guard columns left of column 0 (one vector ≥ halo; aligns column 0)
  long stride = 0;             // row length in elements (≥ lead + nx + halo; multiple of kAlign)
  long plane = 0;              // plane length in elements: (ny + 2·yhalo) rows
  int pml_top = 0, pml_bottom = 0, pml_left = 0, pml_right = 0;  // layer widths (cells)
  int pml_front = 0, pml_back = 0;                               // y layers (3-D)
  bool free_surface = false;                                     // mirror about plane pml_top (which is then 0)
  T dz = 0, dy = 1, dx = 0;
  // 3-D CPU sweeps run over tiles of this many rows in y, each down all the planes, so the
  // planes a stencil reads stay in the core's cache; 0: sized from tile_bytes (the bits are
  // the same whatever the tiles: only the order of independent cell updates changes).
  int tile_rows = 0;
  // The CUDA u and μ launches give each interior thread a column (y, x) and a run of this
  // many planes, swept downwards (kernels/cuda/launch.hpp, InteriorRuns); 0: the launches'
  // default (the bits are the same whatever the runs: each cell's operations are
  // unchanged, only which thread does them).
  int column_planes = 0;
  // > 0: the 3-D u and μ launches on a GPU as tiles marching down z (kernels/cuda/march.hpp),
  // a block taking this many planes; ≤ 0: the interior runs above and the layer cells one a
  // thread (the default: faster on the devices measured, docs/gpu.md). The same bits either way.
  int march_planes = 0;

  const T* vdt2 = nullptr;  // v²Δt², full grid allocation (guards included)
  const T* a_z = nullptr;   // CPML coefficients, length nz (planes), ny (rows) and nx (columns)
  const T* b_z = nullptr;
  const T* a_x = nullptr;
  const T* b_x = nullptr;
  const T* a_y = nullptr;
  const T* b_y = nullptr;

  int nsteps = 0;        // internal time steps: computes u[1] … u[nsteps]
  int record_every = 1;  // k: trace sample n is u[n·k]
  int nt = 0;            // samples per trace
  int nrec = 0;
  T* traces = nullptr;  // nrec × nt, row per receiver

  SW_HD bool three_d() const { return dim == 3; }
  /// Rows (z, y) of the grid, numbered z·ny + y.
  SW_HD int rows() const { return nz * ny; }
  /// Grid offset of row (z, y)'s column 0.
  SW_HD long row_offset(int z, int y) const { return long(z) * plane + long(y) * stride; }

  // The shot's points (docs/design.md §2): the source is injected at `nsrc` nodes with weights
  // (one node of weight 1 when it lies on a node; Hicks' windowed sinc otherwise), and
  // receiver r samples Σ_e w_e u[node_e] over its entries e, with the same kind of weights
  // (sampling is the transpose of injection). The integers live in the shot's nodes buffer:
  //   [source_node (nsrc) | source_row (rows + 1) | rec_entries (nrec + 1) |
  //    entry_node (nent) | entry_receiver (nent) | rec_row (rows + 1) | rec_cell (≤ nent) |
  //    rec_first (≤ nent + 1) | rec_order (nent)]   (fill_nodes()),
  // the weights in its signals buffer after the source samples:
  //   [source (nsteps) | source_weight (nsrc) | entry_weight (nent)]   (fill_weights()).
  int nsrc = 0;                          // source nodes: distinct, ascending
  int nent = 0;                          // receiver entries, receiver by receiver
  const T* source = nullptr;             // s[m]·δ_h for m = 0 … nsteps−1 (already divided by the cell volume)
  const T* source_weight = nullptr;      // nsrc
  const T* entry_weight = nullptr;       // nent
  const long* source_node = nullptr;     // nsrc grid offsets
  const long* source_row = nullptr;      // the source nodes of padded row r: [source_row[r], source_row[r+1])
  const long* rec_entries = nullptr;     // receiver r's entries: [rec_entries[r], rec_entries[r+1])
  const long* entry_node = nullptr;      // nent grid offsets
  const long* entry_receiver = nullptr;  // nent receivers
  // The entries as a gather, for the kernels that add every receiver's adjoint source in
  // the thread that updates its cell (in entry order, without atomics; entries of several
  // receivers may share a cell): the unique entry cells ascending, those of padded row
  // r = z·ny + y at rec_cell[rec_row[r] … rec_row[r+1]), the entries of cell c at
  // rec_order[rec_first[c] … rec_first[c+1]).
  const long* rec_row = nullptr;
  const long* rec_cell = nullptr;
  const long* rec_first = nullptr;
  const long* rec_order = nullptr;

  /// Elements of the nodes buffer for a shot's points on a padded grid of `rows` rows.
  SW_HD static std::size_t nodes_size(int nsrc, int nrec, int nent, int rows) {
    return std::size_t(nsrc) + 2 * std::size_t(rows) + std::size_t(nrec) + 5 * std::size_t(nent) + 4;
  }
  SW_HD std::size_t nodes_size() const { return nodes_size(nsrc, nrec, nent, rows()); }
  /// Elements of the signals buffer: the source samples, then the points' weights.
  SW_HD std::size_t signals_size() const { return std::size_t(nsteps) + std::size_t(nsrc) + std::size_t(nent); }
  /// Points the node arrays into a nodes buffer (nsrc, nrec, nent and the grid set first).
  SW_HD void attach_nodes(const long* nodes) {
    source_node = nodes;
    source_row = source_node + nsrc;
    rec_entries = source_row + rows() + 1;
    entry_node = rec_entries + nrec + 1;
    entry_receiver = entry_node + nent;
    rec_row = entry_receiver + nent;
    rec_cell = rec_row + rows() + 1;
    rec_first = rec_cell + nent;
    rec_order = rec_first + nent + 1;
  }
  /// Points the source samples and the weights into a signals buffer (nsteps, nsrc, nent set first).
  SW_HD void attach_signals(const T* signals) {
    source = signals;
    source_weight = source + nsteps;
    entry_weight = source_weight + nsrc;
  }
  /// The source node at grid offset i of padded row r (= z·ny + y): its number j < nsrc, or −1.
  SW_HD int source_at(long i, int r) const {
    for (long j = source_row[r]; j < source_row[r + 1]; ++j)
      if (source_node[j] == i) return int(j);
    return -1;
  }
  /// Receiver r's sample of field u (pointer at cell (0, 0, 0)): Σ_e w_e u[node_e] in entry
  /// order, the sum starting from the first term (0 for a receiver without entries).
  SW_HD T sample(const T* u, int r) const {
    const long e0 = rec_entries[r], e1 = rec_entries[r + 1];
    if (e0 == e1) return T(0);
    T acc = entry_weight[e0] * u[entry_node[e0]];
    for (long e = e0 + 1; e < e1; ++e) acc += entry_weight[e] * u[entry_node[e]];
    return acc;
  }

  T* work = nullptr;  // scratch of work_size() values: u, u_prev, the CPML memory variables cpml_z1, cpml_z2, cpml_x1,
                      // cpml_x2, cpml_y1, cpml_y2 (ψ, ζ forward; α, β adjoint), clocks

  // The forward wavefield kept for the adjoint (docs/design.md §3), written by the forward when
  // `store` is set, every step (store_blocks()): kStoreBoundary, the field outside the model
  // region (the adjoint re-creates the region backwards from its shell, and takes the
  // layers' share of the gradient from the rest); kStoreFull, the whole field; kStoreShell,
  // the shell alone (the gradient then holds the layers' velocity fixed: not exact at the
  // model's edges); and the last two states.
  static constexpr int kStoreBoundary = 0, kStoreFull = 1, kStoreShell = 2;
  int storage = kStoreBoundary;
  T* store = nullptr;  // store_size() values: slot m holds u[m] at slot_offset(m), m = 0 … nsteps
  // With compression (pack16::kHalf, kBfloat) a slot is its largest magnitude (one T, in a
  // 64-byte header), then its store_step_size() values as 16-bit words (slot_words()),
  // zeros to the next 64 bytes; with ZFP (pack16::zfp_rate) a 64-byte header of zeros, then
  // each store block's ZFP stream (zfp_block_bytes()); kNone: the values as T.
  int compression = pack16::kNone;
  T* final_state = nullptr;  // 2 × grid_size(): u[nsteps], then u[nsteps − 1]

  // Checkpointing (docs/design.md §3): with checkpoint_every = L > 0 the store is a ring of
  // L + 2 slots, and the forward keeps its whole state (u, u_prev, the CPML memory
  // variables) after step jL − 1 for j = 1 … intervals() − 1 in `checkpoints`. The backward
  // sweep runs interval j (steps [jL, min(N, (j+1)L)), last first) on slots jL − 1 …
  // min(N, (j+1)L): the forward leaves the last interval's in the ring; each earlier one is
  // re-run from checkpoint j (j = 0: from rest). The same operations in the same order as
  // with every slot kept: the same bits, for at most one more forward run.
  int checkpoint_every = 0;
  T* checkpoints = nullptr;  // checkpoints_size() values
  // A split store (docs/design.md §3): with split_store and checkpoint_every = L, every slot
  // is kept, in intervals() buffers of store_slots() slots, one StarPU handle each (which
  // StarPU may move out of core): interval j's buffer holds slots jL − 1 … min(N, (j+1)L)
  // (from 0 for j = 0), every slot the backward sweep over steps [jL, (j+1)L) reads, so a
  // slot at an interval's edge is kept twice. `store` then points at the buffer of interval
  // `store_interval`, and the forward and adjoint run that interval alone
  // (interval_begin(), interval_end()); no checkpoints, no re-runs.
  bool split_store = false;
  int store_interval = 0;
  SW_HD int store_slots() const {
    return checkpoint_every > 0 && checkpoint_every + 2 < nsteps + 1 ? checkpoint_every + 2 : nsteps + 1;
  }
  SW_HD int intervals() const { return checkpoint_every > 0 ? (nsteps + checkpoint_every - 1) / checkpoint_every : 1; }
  /// The first step of interval j, and the step after its last.
  SW_HD int interval_begin(int j) const { return j * checkpoint_every; }
  SW_HD int interval_end(int j) const {
    return checkpoint_every > 0 && (j + 1) * checkpoint_every < nsteps ? (j + 1) * checkpoint_every : nsteps;
  }
  /// Whether the backward sweep re-runs the forward from checkpoints (a ring, not split).
  SW_HD bool reruns() const { return !split_store && intervals() > 1; }
  /// A checkpoint: u, u_prev, then the layer arrays (cpml_z1() … cpml_y2(), contiguous).
  SW_HD std::size_t checkpoint_size() const {
    return 2 * grid_size() + 2 * zlayer_size() + 2 * xlayer_size() + 2 * ylayer_size();
  }
  SW_HD std::size_t checkpoints_size() const { return reruns() ? std::size_t(intervals() - 1) * checkpoint_size() : 0; }
  /// Whether the forward keeps its state after step m (m = jL − 1, 1 ≤ j < intervals()).
  SW_HD bool checkpoint_after(int m) const {
    return reruns() && (m + 1) % checkpoint_every == 0 && (m + 1) / checkpoint_every < intervals();
  }
  /// The slot at offset 0 of the store buffer: slot jL − 1 of a split store's interval j
  /// (j > 0), else 0.
  SW_HD int store_base() const { return split_store && store_interval > 0 ? store_interval * checkpoint_every - 1 : 0; }
  /// Offset of slot m (0 ≤ m ≤ nsteps; in a split store, one of its buffer's) in the store.
  SW_HD long slot_offset(int m) const { return long((m - store_base()) % store_slots()) * slot_size(); }
  /// Values of T a store slot takes (store_step_size(), or its 16-bit words and header).
  SW_HD long slot_size() const {
    const long n = store_step_size();
    if (pack16::zfp_rate(compression) > 0)
      return kAlign + round_up((zfp_slot_bytes() + long(sizeof(T)) - 1) / long(sizeof(T)));
    return compression == pack16::kNone ? n : kAlign + round_up((2 * n + long(sizeof(T)) - 1) / long(sizeof(T)));
  }
  /// A compressed slot's 16-bit words (slot: the store at slot_offset(m)).
  SW_HD static std::uint16_t* slot_words(T* slot) { return reinterpret_cast<std::uint16_t*>(slot + kAlign); }
  SW_HD static const std::uint16_t* slot_words(const T* slot) {
    return reinterpret_cast<const std::uint16_t*>(slot + kAlign);
  }

  /// Elements per 64 bytes: the unit of `stride`, `lead` and of every array offset.
  static constexpr int kAlign = int(64 / sizeof(T));
  SW_HD static constexpr long round_up(long n) { return (n + kAlign - 1) / kAlign * kAlign; }

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

  /// Rows of a 3-D CPU sweep tile: `tile_rows`, else as many as keep the (2·halo + 1)
  /// planes a row's stencil reads of each of `fields` fields, over the tile and halo rows
  /// either side, within 320 KiB (a part of a core's L2); every row in 2-D (one). On the
  /// 3-D reference case (200 padded cells a row, order 8, float) that is 32 rows for the
  /// forward (one field; tiles of 16–32 rows ran 10–12 % faster than none, 57 rows no
  /// faster) and 12 for the adjoint (μ and u: about 7 % faster than 32 rows).
  SW_HD int y_tile(int fields = 1) const {
    if (tile_rows > 0) return tile_rows < ny ? tile_rows : ny;
    if (dim != 3) return ny;
    const long cache_bytes = 320 * 1024 / fields;
    const long rows = cache_bytes / (long(sizeof(T)) * stride * (2 * halo + 1)) - 2 * halo;
    return rows < 4 ? 4 : rows < ny ? int(rows) : ny;
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

  // The model region: planes [mz0, mz1), rows [my0, my1), columns [mx0, mx1) of the padded grid.
  SW_HD int mz0() const { return pml_top; }
  SW_HD int mz1() const { return nz - pml_bottom; }
  SW_HD int my0() const { return pml_front; }
  SW_HD int my1() const { return ny - pml_back; }
  SW_HD int mx0() const { return pml_left; }
  SW_HD int mx1() const { return nx - pml_right; }
  SW_HD long model_cells() const { return long(mz1() - mz0()) * (my1() - my0()) * (mx1() - mx0()); }

  /// The one map of a store slot: up to six blocks of whole row pieces of the store's box
  /// — the padded grid, widened where needed to the `halo`-wide shell around the model
  /// region (layers narrower than the stencil radius; the guard planes above a free
  /// surface) — stored in this order. kStoreBoundary: the box less the model region, i.e.
  /// the absorbing layers and the shell: the top and bottom slabs (whole planes of the
  /// box), the front and back slabs (3-D: the model's planes, whole rows), the left and
  /// right slabs (the model's planes and rows); kStoreFull: the whole box. The backward
  /// sweep re-creates the model region from the shell and reads the layers' forward field
  /// for the gradient there (docs/design.md §2). Block i covers planes [z0, z1), rows
  /// [y0, y1), columns [x0, x0 + width), z slowest. store_cell() (one element, the CUDA
  /// threads) and the CPU's row copies (kernels/cpu/adjoint.cpp) both read it.
  struct StoreBlock {
    int z0, z1, y0, y1, x0, width;
    SW_HD long size() const { return long(z1 - z0) * (y1 - y0) * width; }
  };
  static constexpr int kMaxStoreBlocks = 6;
  SW_HD int store_blocks(StoreBlock* b) const {
    const int r = halo, ry = yhalo;
    if (storage == kStoreShell) {  // the shell's six slabs, each the model's extent across
      const int w = mx1() - mx0();
      int n = 0;
      b[n++] = {mz0() - r, mz0(), my0(), my1(), mx0(), w};
      b[n++] = {mz1(), mz1() + r, my0(), my1(), mx0(), w};
      if (three_d()) {
        b[n++] = {mz0(), mz1(), my0() - ry, my0(), mx0(), w};
        b[n++] = {mz0(), mz1(), my1(), my1() + ry, mx0(), w};
      }
      b[n++] = {mz0(), mz1(), my0(), my1(), mx0() - r, r};
      b[n++] = {mz0(), mz1(), my0(), my1(), mx1(), r};
      return n;
    }
    const int ez0 = mz0() - r < 0 ? mz0() - r : 0, ez1 = mz1() + r > nz ? mz1() + r : nz;
    const int ey0 = my0() - ry < 0 ? my0() - ry : 0, ey1 = my1() + ry > ny ? my1() + ry : ny;
    const int ex0 = mx0() - r < 0 ? mx0() - r : 0, ex1 = mx1() + r > nx ? mx1() + r : nx;
    if (storage == kStoreFull) {
      b[0] = {ez0, ez1, ey0, ey1, ex0, ex1 - ex0};
      return 1;
    }
    int n = 0;
    b[n++] = {ez0, mz0(), ey0, ey1, ex0, ex1 - ex0};
    b[n++] = {mz1(), ez1, ey0, ey1, ex0, ex1 - ex0};
    if (three_d()) {
      b[n++] = {mz0(), mz1(), ey0, my0(), ex0, ex1 - ex0};
      b[n++] = {mz0(), mz1(), my1(), ey1, ex0, ex1 - ex0};
    }
    b[n++] = {mz0(), mz1(), my0(), my1(), ex0, mx0() - ex0};
    b[n++] = {mz0(), mz1(), my0(), my1(), mx1(), ex1 - mx1()};
    return n;
  }

  /// Bytes of a store block's ZFP stream at the store's rate: the block as an array of its
  /// extents longer than one (x fastest; d of them, one at least), in ZFP blocks of 4^d values
  /// of rate · 4^d bits each, the stream padded to a 64-bit word (ZFP's fixed-rate mode).
  SW_HD long zfp_block_bytes(const StoreBlock& b) const {
    const int extent[3] = {b.width, b.y1 - b.y0, b.z1 - b.z0};
    long blocks = 1;
    int d = 0;
    for (int e : extent)
      if (e > 1) blocks *= (e + 3) / 4, ++d;
    const long bits = blocks * (long(pack16::zfp_rate(compression)) << (2 * (d > 0 ? d : 1)));
    return (bits + 63) / 64 * 8;
  }
  SW_HD long zfp_slot_bytes() const {
    StoreBlock b[kMaxStoreBlocks];
    long bytes = 0;
    for (int i = 0, n = store_blocks(b); i < n; ++i) bytes += zfp_block_bytes(b[i]);
    return bytes;
  }
  /// Values stored per step: the sum of the slot's blocks.
  SW_HD long store_step_size() const {
    StoreBlock b[kMaxStoreBlocks];
    const int n = store_blocks(b);
    long size = 0;
    for (int i = 0; i < n; ++i) size += b[i].size();
    return size;
  }
  SW_HD std::size_t store_size() const { return std::size_t(store_slots()) * std::size_t(slot_size()); }

  /// Cell (z, y, x) of element k of a store slot (32-bit arithmetic within the slot:
  /// build_medium refuses grids of 2³¹ cells or more).
  SW_HD void store_point(long k, int& z, int& y, int& x) const {
    StoreBlock b[kMaxStoreBlocks];
    const int n = store_blocks(b);
    unsigned c = unsigned(k);
    int i = 0;
    for (; i + 1 < n; ++i) {  // the block that holds element k
      const unsigned size = unsigned(b[i].size());
      if (c < size) break;
      c -= size;
    }
    const unsigned width = unsigned(b[i].width), row = c / width, ys = unsigned(b[i].y1 - b[i].y0);
    z = b[i].z0 + int(ys == 1 ? row : row / ys);
    y = b[i].y0 + int(ys == 1 ? 0 : row % ys);
    x = b[i].x0 + int(c % width);
  }
  /// Grid offset (from cell (0, 0, 0)) of element k of a store slot.
  SW_HD long store_cell(long k) const {
    int z, y, x;
    store_point(k, z, y, x);
    return row_offset(z, y) + x;
  }
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

  /// Whether the store holds the layers' field, so that the gradient takes their share.
  SW_HD bool layer_share() const { return storage != kStoreShell; }
  /// The gradient's share of the layers (docs/design.md §2): layer cell c takes its velocity
  /// from the model's edge cell e(c), so ∂Φ/∂v_e gathers Σ_m μ[m+1] R[m] over c as well,
  /// R[m] being what v²Δt² multiplies in c's update (the CPML terms included). The backward
  /// sweep reads the forward field of the layers from the store, and R[m] is its second
  /// time difference over v²Δt²: layer_term() adds μ[m+1] (u[m+1] − 2u[m] + u[m−1]) to an
  /// accumulator `acc` at c each step (u[−1] = 0); edge_fold() sums the accumulators of the
  /// cells that copy model cell (z, y, x), z slowest, x fastest, and divides by the cell's
  /// v²Δt² (the same bits as theirs), into `out`. Returns false for a cell no layer copies
  /// (out untouched, so the interior keeps its bits).
  SW_HD static T layer_term(T acc, T mu, T next, T now, T prev) { return acc + mu * ((next - T(2) * now) + prev); }
  SW_HD bool edge_fold(const T* acc, int z, int y, int x, T& out) const {
    const int z0 = z == mz0() ? 0 : z, z1 = z == mz1() - 1 ? nz : z + 1;
    const int y0 = y == my0() ? 0 : y, y1 = y == my1() - 1 ? ny : y + 1;
    const int x0 = x == mx0() ? 0 : x, x1 = x == mx1() - 1 ? nx : x + 1;
    if (z1 - z0 == 1 && y1 - y0 == 1 && x1 - x0 == 1) return false;
    T sum = T(0);
    for (int k = z0; k < z1; ++k)
      for (int j = y0; j < y1; ++j)
        for (int i = x0; i < x1; ++i)
          if (k != z || j != y || i != x) sum += acc[row_offset(k, j) + i];
    out = sum / vdt2[origin() + row_offset(z, y) + x];
    return true;
  }

  /// The adjoint's scratch: the forward's arrays (for the adjoint wavefield and its layer
  /// variables), two grids for the re-created forward wavefield and two for the imaging
  /// sums (kept in the grid's aligned layout while they accumulate; the first holds the
  /// layers' accumulators of layer_term() at their cells); with checkpoints, a forward's
  /// arrays after them for the re-runs.
  /// With a ZFP store, last, the three slots an adjoint step reads, decoded (zfp_window()).
  SW_HD std::size_t adjoint_work_size() const {
    return work_size() + 4 * grid_size() + (reruns() ? work_size() : 0) + 3 * zfp_values_size();
  }
  SW_HD T* zfp_window() const { return work + adjoint_work_size() - 3 * zfp_values_size(); }

  /// The scratch arrays, in this order inside `work`; with a ZFP store, last, one slot's
  /// values as the forward gathers them for ZFP (zfp_values()).
  SW_HD std::size_t work_size() const {
    return 2 * grid_size() + 2 * zlayer_size() + 2 * xlayer_size() + 2 * ylayer_size() + kAlign + zfp_values_size();
  }
  SW_HD std::size_t zfp_values_size() const {
    return pack16::zfp_rate(compression) > 0 ? std::size_t(round_up(store_step_size())) : 0;
  }
  SW_HD T* zfp_values() const { return work + work_size() - zfp_values_size(); }
  SW_HD T* u0() const { return work; }
  SW_HD T* u1() const { return work + grid_size(); }
  SW_HD T* cpml_z1() const { return work + 2 * grid_size(); }
  SW_HD T* cpml_z2() const { return cpml_z1() + zlayer_size(); }
  SW_HD T* cpml_x1() const { return cpml_z2() + zlayer_size(); }
  SW_HD T* cpml_x2() const { return cpml_x1() + xlayer_size(); }
  SW_HD T* cpml_y1() const { return cpml_x2() + xlayer_size(); }
  SW_HD T* cpml_y2() const { return cpml_y1() + ylayer_size(); }
  /// Two step counters (64 bytes set aside at the end of the forward's arrays) for the
  /// CUDA launches replayed as a graph (kernels/cuda/bodies.hpp, Step).
  SW_HD int* clocks() const { return reinterpret_cast<int*>(cpml_y2() + ylayer_size()); }
  /// Two running maxima of store slots' magnitudes (pack16::magnitude_bits(), slots m and
  /// m + 1 by m's parity) for the CUDA launches of a compressed store, after the clocks.
  SW_HD unsigned long long* store_max() const { return reinterpret_cast<unsigned long long*>(clocks() + 4); }

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

/// A point as weighted nodes (grid offsets from cell (0, 0, 0)), built by the propagator.
struct PointNodes {
  std::vector<long> node;
  std::vector<double> weight;
};

/// Fills a nodes buffer of ShotProblem::nodes_size() elements from the source's nodes
/// (distinct, ascending) and each receiver's (distinct), on a padded grid whose row
/// r = z·ny + y starts at offset row_start(r), ascending in r. Returns nent.
template <typename RowStart>
long fill_nodes(long* nodes, const PointNodes& source, const std::vector<PointNodes>& receivers, int rows,
                RowStart&& row_start) {
  const long nsrc = long(source.node.size()), nrec = long(receivers.size());
  long nent = 0;
  for (const auto& r : receivers) nent += long(r.node.size());
  long* src = nodes;
  long* src_row = src + nsrc;
  long* entries = src_row + rows + 1;
  long* ent_node = entries + nrec + 1;
  long* ent_rec = ent_node + nent;
  long* row = ent_rec + nent;
  long* cell = row + rows + 1;
  long* first = cell + nent;
  long* order = first + nent + 1;
  for (long j = 0; j < nsrc; ++j) src[j] = source.node[std::size_t(j)];
  for (int r = 0; r < rows; ++r) src_row[r] = std::lower_bound(src, src + nsrc, row_start(r)) - src;
  src_row[rows] = nsrc;
  long e = 0;
  for (long r = 0; r < nrec; ++r) {
    entries[r] = e;
    for (long n : receivers[std::size_t(r)].node) {
      ent_node[e] = n;
      ent_rec[e++] = r;
    }
  }
  entries[nrec] = e;
  std::vector<long> by_cell(static_cast<std::size_t>(nent));
  for (long k = 0; k < nent; ++k) by_cell[std::size_t(k)] = k;
  std::stable_sort(by_cell.begin(), by_cell.end(), [&](long a, long b) { return ent_node[a] < ent_node[b]; });
  long ncell = 0;
  for (long k = 0; k < nent; ++k) {
    const long en = by_cell[std::size_t(k)];
    if (k == 0 || ent_node[en] != cell[ncell - 1]) {
      cell[ncell] = ent_node[en];
      first[ncell] = k;
      ++ncell;
    }
    order[k] = en;
  }
  first[ncell] = nent;
  for (long c = ncell + 1; c <= nent; ++c) first[c] = nent;  // unused tail
  for (long c = ncell; c < nent; ++c) cell[c] = -1;
  for (int r = 0; r < rows; ++r) row[r] = std::lower_bound(cell, cell + ncell, row_start(r)) - cell;
  row[rows] = ncell;
  return nent;
}

/// Writes the points' weights, in precision T, after the source samples of a signals buffer.
template <typename T>
void fill_weights(T* signals, int nsteps, const PointNodes& source, const std::vector<PointNodes>& receivers) {
  T* w = signals + nsteps;
  for (double v : source.weight) *w++ = T(v);
  for (const auto& r : receivers)
    for (double v : r.weight) *w++ = T(v);
}

}  // namespace starwave
