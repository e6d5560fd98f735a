// kernels/cuda/march.hpp — the 3-D u and μ launches as tiles that march down z: a block owns
// a tile of kMarchY × kMarchX columns (y, x) and a chunk of planes; each thread keeps its
// column's z line in registers (a sliding window of Order + 1 values, one new value read a
// plane) and the block holds the current plane's tile, with the stencil's reach around it,
// in shared memory, so the y and x neighbours are read from there rather than once per
// cell through the cache. A march covers the cells outside the layers (the u launch) or
// outside the rim (the μ launch), so its cells carry the stencil and their finishing alone
// (sources, free surface, from the same functions as the 1-D launches); the layer or rim
// cells follow in a 1-D launch of their own, one a thread, whole: the CPU kernel's operations
// on the same values (docs/design.md §3).
//
// A marching body is written as phases between the block's barriers, so that the host's
// launch emulation (tests/cuda_emulation.hpp) runs it block by block, each phase over every
// thread of the block in turn, shared memory and barriers emulated:
//   begin(block, t, s)        thread t's state s (its column, the first 2h planes of its line);
//   planes(s)                 the planes of the block's chunk (the same for every thread);
//   load(s, t, tile, k)       plane k: the line's new value, thread t's share of the tile;
//   — barrier —
//   compute(s, t, tile, k)    plane k: the cell's update from the line and the tile;
//   — barrier —               (the next load overwrites the tile).
#pragma once

#include "kernels/cuda/launch.hpp"

namespace starwave::cuda_bodies {

/// Columns of a marching block along x (a warp's width: a warp reads a row's consecutive
/// cells) and rows along y; its threads, one a column.
constexpr int kMarchX = 32;
constexpr int kMarchY = 16;
constexpr int kMarchThreads = kMarchX * kMarchY;

/// Whether the u and μ launches of shot `p` march (3-D, ShotProblem::march_planes > 0: the
/// planes a block takes down z; each chunk reads Order extra planes of its columns, and a
/// 3-D grid's chunks are what gives the GPU's SMs enough blocks).
template <typename T>
SW_HD bool marches(const ShotProblem<T>& p) {
  return p.three_d() && p.march_planes > 0;
}

/// The blocks of a marching launch over a box of cells [z0, z0 + nz) × [y0, y0 + ny) ×
/// [x0, x0 + nx) of a grid of `grid_ny` rows and `grid_nx` columns (whose guard cells lie
/// around them): block b → tile column tx (fastest), tile row ty, chunk c of `planes` planes.
struct MarchGrid {
  int z0 = 0, y0 = 0, x0 = 0, nz = 0, ny = 0, nx = 0, grid_ny = 0, grid_nx = 0, planes = 1, tiles_x = 0, tiles_y = 0;
  long blocks = 0;
  /// The whole grid of nz × ny × nx cells.
  static MarchGrid of(int nz, int ny, int nx, int planes) { return box(0, 0, 0, nz, ny, nx, ny, nx, planes); }
  /// The cells outside `a`'s layers (a LayerBox: the u launch's, or the μ launch's rim).
  static MarchGrid inside(const stencil::LayerBox& a, int planes) {
    return box(a.zt, a.yt, a.xl, a.zb - a.zt, a.yb - a.yt, a.xr - a.xl, a.ny, a.nx, planes);
  }
  static MarchGrid box(int z0, int y0, int x0, int nz, int ny, int nx, int grid_ny, int grid_nx, int planes) {
    MarchGrid g;
    if (nz <= 0 || ny <= 0 || nx <= 0) return g;
    g.z0 = z0;
    g.y0 = y0;
    g.x0 = x0;
    g.nz = nz;
    g.ny = ny;
    g.nx = nx;
    g.grid_ny = grid_ny;
    g.grid_nx = grid_nx;
    g.planes = planes < 1 ? 1 : planes < nz ? planes : nz;
    g.tiles_x = (nx + kMarchX - 1) / kMarchX;
    g.tiles_y = (ny + kMarchY - 1) / kMarchY;
    g.blocks = long(g.tiles_x) * g.tiles_y * ((nz + g.planes - 1) / g.planes);
    return g;
  }
  /// Block b's first plane z, its end zend, and its tile's first row y and column x (grid
  /// coordinates).
  SW_HD void block(long b, int& z, int& zend, int& y, int& x) const {
    const long r = b / tiles_x;
    x = x0 + int(b - r * tiles_x) * kMarchX;
    const long c = r / tiles_y;
    y = y0 + int(r - c * tiles_y) * kMarchY;
    z = z0 + int(c) * planes;
    zend = z + planes < z0 + nz ? z + planes : z0 + nz;
  }
  /// Whether cell (y, x) of a tile lies in the box.
  SW_HD bool holds(int y, int x) const { return y < y0 + ny && x < x0 + nx; }
};

/// The interior update of one step at every cell of a box (MarchGrid), marching (see the top
/// of this file), each cell then finished by `finish(m, z, y, x)` (step m, after the cell's
/// interior update, in the thread that made it). `u` is read only; `out` holds the previous field and
/// receives the new one at each cell (stencil::interior_point). With `Leapfrog` false, nothing
/// is written: finish(m, z, y, x, lap, u, prev, v) takes the cell's Laplacian of u, its value,
/// `out`'s and v²Δt² (the adjoint's imaging, which re-creates the forward field backwards).
template <int Order, typename T, typename Finish, bool Leapfrog = true>
struct March {
  static constexpr int h = Order / 2;
  static constexpr int kWidth = kMarchX + Order;            // a tile row, with the reach on both sides
  static constexpr int kTile = (kMarchY + Order) * kWidth;  // values in shared memory
  static constexpr int kThreads = kMarchThreads;
  // Blocks an SM should hold at once: two in float (64 registers a thread, none spilled),
  // one in double (whose order-8 window would spill at 64).
  static constexpr int kMinBlocks = sizeof(T) == 4 ? 2 : 1;
  using Value = T;
  /// Threads that load one value of the tile's rim a plane: the h rows above and below
  /// its kMarchX columns, then the h columns left and right of its kMarchY rows.
  static constexpr int kRimThreads = 2 * h * (kMarchX + kMarchY);
  static_assert(kRimThreads <= kThreads, "a thread loads at most one rim value a plane");
  /// One thread's registers: its column's z line (planes z − h … z + h of the current plane
  /// z), what it has fetched for the plane after (its line's next value, the previous
  /// field and v²Δt² at its cell, its rim value; the centre of a column past the grid's
  /// edge whose value a neighbour needs), the current plane's previous field and v²Δt²,
  /// and where it reads.
  struct Thread {
    T line[Order + 1];
    T next_line, next_prev, next_v, rim, centre;
    T prev, v;
    long column, rim_cell;                    // offsets within a plane: its column (y, x), its rim value's cell
    int z, zend, y, x, m, centre_at, rim_at;  // rim_at, centre_at: tile positions (−1: none)
    bool active;                              // the column lies in the grid
  };

  MarchGrid g;
  const T* u;
  T* out;
  const T* vdt2;
  long plane, stride;
  T cz, cy, cx;  // 1/h² per dimension
  Step step;     // the launch's step: block 0's thread 0 moves a replayed chunk's clock on
  Finish finish;

  /// Whether tile position (ry, rx) of the tile at (y0, x0) holds a cell that is read: in
  /// the grid or its guard cells.
  SW_HD bool in_reach(int y0, int x0, int ry, int rx) const {
    return y0 - h + ry < g.grid_ny + h && x0 - h + rx < g.grid_nx + h;
  }

  /// The loads for plane z, issued a plane ahead so that they are in flight while the
  /// block computes the plane before.
  SW_HD void fetch(Thread& s, int z) const {
    const long pz = long(z) * plane;
    if (s.active) {
      s.next_line = u[pz + h * plane + s.column];
      s.next_prev = out[pz + s.column];
      s.next_v = vdt2[pz + s.column];
    } else if (s.centre_at >= 0) {
      s.centre = u[pz + s.column];
    }
    if (s.rim_at >= 0) s.rim = u[pz + s.rim_cell];
  }

  SW_HD void begin(long b, int t, Thread& s) const {
    int y0, x0;
    g.block(b, s.z, s.zend, y0, x0);
    const int ty = t / kMarchX, tx = t % kMarchX;
    s.y = y0 + ty;
    s.x = x0 + tx;
    s.column = long(s.y) * stride + s.x;
    s.active = g.holds(s.y, s.x);
    s.centre_at = !s.active && in_reach(y0, x0, ty + h, tx + h) ? (ty + h) * kWidth + tx + h : -1;
    int ry = -1, rx = -1;
    if (t < 2 * h * kMarchX) {
      const int r = t / kMarchX;
      ry = r < h ? r : kMarchY + r;
      rx = h + t % kMarchX;
    } else if (t < kRimThreads) {
      const int r = (t - 2 * h * kMarchX) / (2 * h), c = (t - 2 * h * kMarchX) % (2 * h);
      ry = h + r;
      rx = c < h ? c : kMarchX + c;
    }
    s.rim_at = ry >= 0 && in_reach(y0, x0, ry, rx) ? ry * kWidth + rx : -1;
    s.rim_cell = long(y0 - h + ry) * stride + (x0 - h + rx);
    s.m = step.m();
    if (b == 0 && t == 0) step.move_on(s.m);
    if (s.active) {
      SW_UNROLL
      for (int k = 0; k < 2 * h; ++k) s.line[k] = u[long(s.z + k - h) * plane + s.column];
    }
    fetch(s, s.z);
  }
  SW_HD int planes(const Thread& s) const { return s.zend - s.z; }

  /// Plane s.z + k: thread t's share of the tile (its centre from its line, or fetched past
  /// the grid's edge; its rim value: not the tile's corners, the grid's guard cells standing
  /// in for the cells past its edges), its fetched values taken, the next plane's fetched.
  SW_HD void load(Thread& s, int t, T* tile, int k) const {
    const int centre = (t / kMarchX + h) * kWidth + t % kMarchX + h;
    if (s.active) {
      tile[centre] = s.line[h];
      s.line[2 * h] = s.next_line;
      s.prev = s.next_prev;
      s.v = s.next_v;
    } else if (s.centre_at >= 0) {
      tile[centre] = s.centre;
    }
    if (s.rim_at >= 0) tile[s.rim_at] = s.rim;
    if (k + 1 < s.zend - s.z) fetch(s, s.z + k + 1);
  }

  /// Plane s.z + k: the cell's interior update (the z terms from the line, the y and x terms
  /// from the tile), its finishing; then the line moves down one plane.
  SW_HD void compute(Thread& s, int t, const T* tile, int k) const {
    if (s.active) {
      const int z = s.z + k;
      const T* c = tile + (t / kMarchX + h) * kWidth + t % kMarchX + h;
      const T lap = stencil::laplacian_split<Order>(s.line + h, 1, c, kWidth, cz, cy, cx);
      if constexpr (Leapfrog) {
        out[long(z) * plane + s.column] = stencil::leapfrog(s.line[h], s.prev, s.v, lap);
        finish(s.m, z, s.y, s.x);
      } else {
        finish(s.m, z, s.y, s.x, lap, s.line[h], s.prev, s.v);
      }
    }
    SW_UNROLL
    for (int j = 0; j < 2 * h; ++j) s.line[j] = s.line[j + 1];
  }
};

/// A March over the cells outside `box`'s layers of step `a` at `step`, blocks of `planes` planes.
template <int Order, typename T, typename Finish>
March<Order, T, Finish> march_inside(const stencil::StepArgs<T>& a, const stencil::LayerBox& box, int planes, Step step,
                                     Finish finish) {
  return March<Order, T, Finish>{MarchGrid::inside(box, planes),
                                 a.u,
                                 a.u_prev_next,
                                 a.vdt2,
                                 a.plane,
                                 a.stride,
                                 a.inv_dz2,
                                 a.inv_dy2,
                                 a.inv_dx2,
                                 step,
                                 finish};
}

}  // namespace starwave::cuda_bodies
