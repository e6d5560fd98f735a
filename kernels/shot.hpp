// kernels/shot.hpp — the description of one shot's propagation, as raw pointers, shared by
// the CPU and CUDA propagators, and the memory layout of its arrays. Pure data: no
// StarPU, no I/O. One layout for 2-D and 3-D (docs/design.md §1): a 2-D grid is a 3-D one with a
// single row per plane and no guard rows in y.
//
// A ShotProblem is its parts, each decided by one layer: the grid and medium (ShotGrid,
// kernels/shot_grid.hpp: the propagator), the points (ShotPoints, kernels/shot_points.hpp: the
// propagator), the store plan (StorePlan, kernels/shot_plan.hpp: the memory plan), the run's
// tuning (RunTuning, kernels/shot_plan.hpp: the runtime), what the adjoint sums (ImageSums,
// kernels/shot_plan.hpp: the workflow); with the time axis, the buffers
// each task attaches, and the layout of the arrays made of several parts (the store, the
// work arrays).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/hd.hpp"
#include "kernels/pack16.hpp"
#include "kernels/shot_grid.hpp"
#include "kernels/shot_plan.hpp"
#include "kernels/shot_points.hpp"

namespace starwave {

template <typename T>
struct ShotProblem : ShotGrid<T>, ShotPoints<T>, StorePlan, ImageSums, RunTuning {
  // What the parts below read of the grid and the points (dependent bases: named here once).
  using Grid = ShotGrid<T>;
  using Points = ShotPoints<T>;
  using Grid::dim, Grid::nz, Grid::ny, Grid::nx, Grid::halo, Grid::yhalo, Grid::stride, Grid::plane;
  using Grid::iz0, Grid::iz1, Grid::iy0, Grid::iy1, Grid::ix0, Grid::ix1;
  using Grid::kAlign, Grid::round_up, Grid::three_d, Grid::rows, Grid::row_offset, Grid::grid_size;
  using Grid::mz0, Grid::mz1, Grid::my0, Grid::my1, Grid::mx0, Grid::mx1;
  using Grid::zlayer_size, Grid::xlayer_size, Grid::ylayer_size;
  using Points::nodes_size, Points::nsrc, Points::nrec, Points::nent;
  using Points::rec_entries, Points::entry_node, Points::entry_receiver;
  using Points::rec_row, Points::rec_cell, Points::rec_first, Points::rec_order;
  using Points::source, Points::source_weight, Points::entry_weight, Points::source_node, Points::source_row;

  int nsteps = 0;        // internal time steps: computes u[1] … u[nsteps]
  int record_every = 1;  // k: trace sample n is u[n·k]
  int nt = 0;            // samples per trace

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

  /// Adds v²Δt² × sample n of `samples` (nrec × nt) at the receivers' entries, receiver by
  /// receiver, into grid allocation `f` at internal step m = n·record_every (other steps add
  /// nothing): the transpose of sampling, an adjoint's source.
  SW_HD void inject_traces(const T* samples, T* f, int m) const {
    if (m % record_every != 0 || m / record_every >= nt) return;
    const int n = m / record_every;
    T* fo = f + this->origin();
    const T* v = this->vdt2 + this->origin();
    for (int r = 0; r < nrec; ++r) {
      const T g = samples[long(r) * nt + n];
      for (long e = rec_entries[r]; e < rec_entries[r + 1]; ++e) {
        const long i = entry_node[e];
        fo[i] += v[i] * (entry_weight[e] * g);
      }
    }
  }

  T* work = nullptr;  // scratch of work_size() values: u, u_prev, the CPML memory variables cpml_z1, cpml_z2, cpml_x1,
                      // cpml_x2, cpml_y1, cpml_y2 (ψ, ζ forward; α, β adjoint), clocks

  // The forward wavefield kept for the adjoint (docs/design.md §3), written by the forward when
  // `store` is set, every step (store_blocks(): what StorePlan::storage keeps), and the last two states.
  T* store = nullptr;        // store_size() values: slot m holds u[m] at slot_offset(m), m = 0 … nsteps
  T* final_state = nullptr;  // 2 × grid_size(): u[nsteps], then u[nsteps − 1]
  T* checkpoints = nullptr;  // checkpoints_size() values
  // A propagation that starts from a given state and hands on its last one (Python's initial and
  // final wavefields), each checkpoint_size() values in a checkpoint's layout (u, u_prev, the
  // layers' ψ, ζ: kernels/shot_state.hpp): `initial_state` holds u[0], u[−1] and the layers' ψ, ζ
  // to start from (null: at rest), `end_state` receives u[nsteps], u[nsteps − 1] and the
  // layers' ψ, ζ after the last step.
  const T* initial_state = nullptr;
  T* end_state = nullptr;
  // The adjoint of such a propagation (each optional; kernels/shot_state.hpp converts): the
  // backward sweep starts from `adjoint_start` (checkpoint_size() values: μ[N], μ[N+1] and the
  // layers' α, β, a cotangent of the end state) before the last sample's adjoint sources are
  // added, and leaves its last state (μ[0], μ[1], α, β) in `adjoint_end`, from which the
  // initial state's cotangent follows; `source_gradient` (nsteps values) receives
  // Σ_j w_j μ[m+1] at the source's nodes, ∂Φ/∂f[m] (the transpose of the injection). With an
  // initial state, the layers' imaging of step 0 reads its u[−1].
  const T* adjoint_start = nullptr;
  T* adjoint_end = nullptr;
  T* source_gradient = nullptr;

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
  /// The layer arrays of p.work (cpml_z1() … cpml_y2(), contiguous after u0() and u1()).
  SW_HD std::size_t layer_arrays_size() const { return 2 * zlayer_size() + 2 * xlayer_size() + 2 * ylayer_size(); }
  /// A kept state (a checkpoint, an initial or end state; kernels/shot_state.hpp lays it out):
  /// the values a propagation's state holds that need not be zero — u and u_prev at the
  /// grid's cells (state_field(): with a free surface, its mirror planes too), then ψ and ζ
  /// along each axis at the cells of that axis's CPML regions (state_region_cells()).
  SW_HD std::size_t checkpoint_size() const {
    return 2 * state_field() + 2 * (state_region_cells(0) + state_region_cells(1) + state_region_cells(2));
  }
  /// A state's planes of u: the grid's, after a free surface's `halo` mirror planes.
  SW_HD int state_guard_planes() const { return this->free_surface ? this->halo : 0; }
  SW_HD std::size_t state_field() const {
    return std::size_t(this->nz + state_guard_planes()) * std::size_t(this->ny) * std::size_t(this->nx);
  }
  /// Index of cell (z, y, x) of the grid or of a free surface's mirror planes in a state's u
  /// (in its u_prev: + state_field()); −1 at other guard cells, which a state holds as zero.
  SW_HD long state_cell(int z, int y, int x) const {
    if (z < -state_guard_planes() || z >= this->nz || y < 0 || y >= this->ny || x < 0 || x >= this->nx) return -1;
    return (long(z + state_guard_planes()) * this->ny + y) * this->nx + x;
  }
  /// Cells [0, lo) and [hi, n) of a dimension (all n where they meet): how many, and the k-th.
  SW_HD static int region_count(int lo, int hi, int n) { return lo >= hi ? n : lo + (n - hi); }
  SW_HD static int region_at(int k, int lo, int hi) { return lo >= hi || k < lo ? k : hi + (k - lo); }
  /// The cells of the CPML regions along axis 0 (z), 1 (y; 3-D) or 2 (x), where ψ and ζ of
  /// that axis live.
  SW_HD std::size_t state_region_cells(int axis) const {
    const std::size_t cz = std::size_t(this->nz), cy = std::size_t(this->ny), cx = std::size_t(this->nx);
    if (axis == 0) return std::size_t(region_count(this->pml_top, this->nz - this->pml_bottom, this->nz)) * cy * cx;
    if (axis == 1)
      return this->dim == 3 ? cz * std::size_t(region_count(this->pml_front, this->ny - this->pml_back, this->ny)) * cx
                            : 0;
    return cz * cy * std::size_t(region_count(this->pml_left, this->nx - this->pml_right, this->nx));
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
    const long tile = cache_bytes / (long(sizeof(T)) * stride * (2 * halo + 1)) - 2 * halo;
    return tile < 4 ? 4 : tile < ny ? int(tile) : ny;
  }

  /// The one map of a store slot: up to six blocks of whole row pieces of the store's box
  /// — the padded grid, widened where needed to the `halo`-wide shell around the CPML
  /// interior (ShotGrid::iz0(): layers narrower than the stencil radius; the guard planes
  /// above a free surface); kStoreShell: the model region and that shell — stored in this
  /// order. kStoreBoundary and kStoreShell: the box less the CPML interior: the top and
  /// bottom slabs (whole planes of the box), the front and back slabs (3-D: the interior's
  /// planes, whole rows), the left and right slabs (the interior's planes and rows);
  /// kStoreFull: the whole box. The backward sweep re-creates the CPML interior from the
  /// shell and reads the forward field outside it for the gradient there (docs/design.md
  /// §2). Block i covers planes [z0, z1), rows [y0, y1), columns [x0, x0 + width), z
  /// slowest. store_cell() (one element, the CUDA threads) and the CPU's row copies
  /// (kernels/cpu/adjoint.cpp) both read it.
  struct StoreBlock {
    int z0, z1, y0, y1, x0, width;
    SW_HD long size() const { return long(z1 - z0) * (y1 - y0) * width; }
  };
  static constexpr int kMaxStoreBlocks = 6;
  SW_HD int store_blocks(StoreBlock* b) const {
    const int r = halo, ry = yhalo;
    // The box: kStoreShell, the CPML interior widened by the shell (which holds the model's
    // cells outside the interior: ShotGrid::inset ≤ halo); else the padded grid, widened where
    // the shell reaches past it.
    const bool shell = storage == kStoreShell;
    auto lo = [&](int i0, int w) { return shell || i0 - w < 0 ? i0 - w : 0; };
    auto hi = [&](int i1, int w, int n) { return shell || i1 + w > n ? i1 + w : n; };
    const int ez0 = lo(iz0(), r), ez1 = hi(iz1(), r, nz);
    const int ey0 = lo(iy0(), ry), ey1 = hi(iy1(), ry, ny);
    const int ex0 = lo(ix0(), r), ex1 = hi(ix1(), r, nx);
    if (storage == kStoreFull) {
      b[0] = {ez0, ez1, ey0, ey1, ex0, ex1 - ex0};
      return 1;
    }
    int n = 0;
    b[n++] = {ez0, iz0(), ey0, ey1, ex0, ex1 - ex0};
    b[n++] = {iz1(), ez1, ey0, ey1, ex0, ex1 - ex0};
    if (three_d()) {
      b[n++] = {iz0(), iz1(), ey0, iy0(), ex0, ex1 - ex0};
      b[n++] = {iz0(), iz1(), iy1(), ey1, ex0, ex1 - ex0};
    }
    b[n++] = {iz0(), iz1(), iy0(), iy1(), ex0, ix0() - ex0};
    b[n++] = {iz0(), iz1(), iy0(), iy1(), ix1(), ex1 - ix1()};
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

  /// Whether the store holds the layers' field, so that the gradient takes their share.
  SW_HD bool layer_share() const { return storage != kStoreShell; }

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
  /// A batch of n shots' scratch (kernels/cuda/forward.hpp, ShotBatch): shot b's work arrays
  /// at b × batch_stride(), then room for the n problems the batch's CUDA launches read.
  SW_HD long batch_stride() const { return round_up(long(work_size())); }
  SW_HD std::size_t batch_work_size(int n) const { return batch_size(n, batch_stride(), sizeof(ShotProblem)); }
  /// The same for a batch of adjoints (kernels/cuda/bodies.hpp, AdjointBatch): shot b's
  /// adjoint_work_size() arrays at b × adjoint_batch_stride(), then n entries of a problem
  /// and the pointers to its residual and images.
  SW_HD long adjoint_batch_stride() const { return round_up(long(adjoint_work_size())); }
  SW_HD std::size_t adjoint_batch_work_size(int n) const {
    return batch_size(n, adjoint_batch_stride(), kAdjointEntryBytes);
  }
  static constexpr std::size_t kAdjointEntryBytes = sizeof(ShotProblem) + 4 * sizeof(void*);
  SW_HD static std::size_t batch_size(int n, long stride, std::size_t entry_bytes) {
    const long entries = long((std::size_t(n) * entry_bytes + sizeof(T) - 1) / sizeof(T));
    return std::size_t(n) * std::size_t(stride) + std::size_t(round_up(entries));
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
};

/// One shot of a batch of adjoints: its problem (store and final state as the forward leaves
/// them; kernels/cuda/bodies.hpp, AdjointBatch) and what its backward steps read and add to.
template <typename T>
struct AdjointShot {
  ShotProblem<T> p;
  const T* residual;
  T* corr;
  T* illum;
};
static_assert(sizeof(AdjointShot<double>) <= ShotProblem<double>::kAdjointEntryBytes &&
                  sizeof(AdjointShot<float>) <= ShotProblem<float>::kAdjointEntryBytes,
              "ShotProblem::adjoint_batch_work_size() holds the batch's table");

}  // namespace starwave
