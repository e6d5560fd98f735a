// kernels/cuda/launch.hpp — what the CUDA bodies share: block shapes, the step counter of
// replayed launches, the cell numberings of a launch's threads, the free surface's mirror.
// The bodies and the launch sequence: kernels/cuda/forward.hpp and kernels/cuda/bodies.hpp.
#pragma once

#include "kernels/stencil.hpp"
#include "kernels/store_cells.hpp"

namespace starwave::cuda_bodies {

/// Thread-block size of the launches, shared by the GPU and the emulation.
constexpr int kBlock1D = 256;

/// Steps per replayed chunk; a replay covers two chunks (an even number of steps, so the
/// wavefield buffers come back to where they started).
constexpr int kChunkSteps = 16;

/// The step a launch works on. Launched alone: `offset`. In a replayed chunk: clock[0] +
/// offset; the chunk's last launch (`next` set) then writes the next chunk's first step,
/// m + advance, to `next` (the other of ShotProblem::clocks(), read by the next chunk, so
/// no thread reads what another writes).
struct Step {
  const int* clock = nullptr;
  int* next = nullptr;
  int offset = 0;
  int advance = 0;
  SW_HD int m() const { return clock ? *clock + offset : offset; }
  /// Called by one thread of the chunk's last launch, after it has read m.
  SW_HD void move_on(int m) const {
    if (next) *next = m + advance;
  }
};

/// The trace sample recorded (forward) or injected (adjoint) at internal step m, or −1.
template <typename T>
SW_HD int sample_at(const ShotProblem<T>& p, int m) {
  return m % p.record_every == 0 && m / p.record_every < p.nt ? m / p.record_every : -1;
}

/// Model cell t as its cell (z, y, x) (the model region, z slowest, x fastest), with the
/// divisors set on the host (of()).
struct ModelCells {
  int z0 = 0, y0 = 0, x0 = 0, rows = 1;  // rows: the model's rows y
  Divisor by_width, by_rows;
  template <typename T>
  static ModelCells of(const ShotProblem<T>& p) {
    ModelCells c;
    c.z0 = p.mz0();
    c.y0 = p.my0();
    c.x0 = p.mx0();
    c.rows = p.my1() - p.my0();
    c.by_width = Divisor(unsigned(p.mx1() - p.mx0()));
    c.by_rows = Divisor(unsigned(c.rows));
    return c;
  }
  SW_HD void cell(long t, int& z, int& y, int& x) const {
    const unsigned r = by_width.div(unsigned(t));
    x = x0 + int(unsigned(t) - r * by_width.d);
    z = z0 + int(rows == 1 ? r : by_rows.div(r));
    y = y0 + int(rows == 1 ? 0 : by_rows.mod(r));
  }
};

/// Planes a thread of the interior runs (InteriorRuns) holds in registers at a time.
constexpr int kColumnWindow = 4;

/// Planes of an interior run: ShotProblem::column_planes, else kColumnWindow.
template <typename T>
SW_HD int interior_run(const ShotProblem<T>& p) {
  return p.column_planes > 0 ? p.column_planes : kColumnWindow;
}

/// The threads of a u launch's interior runs: the cells outside every absorbing layer, as
/// runs of `run` planes down a column (y, x), thread t → (x, y, run k) with x fastest so a
/// warp reads consecutive cells. A run is taken kColumnWindow planes at a time from
/// registers (stencil::interior_column), its last planes one by one.
struct InteriorRuns {
  int z0 = 0, z1 = 0, y0 = 0, x0 = 0, run = 1;
  unsigned rows = 1;  // the interior's rows y
  long threads = 0;
  Divisor by_width, by_rows;
  /// The cells outside `a`'s layers (StepArgs, or a LayerBox widened to the rim).
  static InteriorRuns of(const stencil::LayerBox& a, int run) {
    InteriorRuns r;
    const int nz = a.zb - a.zt, ny = a.yb - a.yt, nx = a.xr - a.xl;
    if (nz <= 0 || ny <= 0 || nx <= 0) return r;
    r.z0 = a.zt;
    r.z1 = a.zb;
    r.y0 = a.yt;
    r.x0 = a.xl;
    r.run = run < 1 ? 1 : run < nz ? run : nz;  // a run longer than the box is the box's depth
    r.rows = unsigned(ny);
    r.by_width = Divisor(unsigned(nx));
    r.by_rows = Divisor(unsigned(ny));
    r.threads = long(nx) * ny * ((nz + r.run - 1) / r.run);
    return r;
  }
  /// Thread t < threads: column (y, x), planes [z, zend).
  SW_HD void at(long t, int& z, int& zend, int& y, int& x) const {
    const unsigned q = by_width.div(unsigned(t));
    x = x0 + int(unsigned(t) - q * by_width.d);
    const unsigned k = rows == 1 ? q : by_rows.div(q);
    y = y0 + int(q - k * rows);
    z = z0 + int(k) * run;
    zend = z + run < z1 ? z + run : z1;
  }
};

/// The adjoint sources of entry cell `i` (grid offset, in grid row r) at trace sample n,
/// added to `out` in entry order: v²Δt² × (weight × residual) (the CPU kernel's
/// inject_residual).
template <typename T>
SW_HD T add_receiver_sources(const ShotProblem<T>& p, const T* residual, int n, long i, int r, T v, T out) {
  long lo = p.rec_row[r], hi = p.rec_row[r + 1];
  if (lo == hi) return out;
  const long end = hi;
  while (lo < hi) {  // the first receiver cell ≥ i in this row
    const long mid = (lo + hi) / 2;
    if (p.rec_cell[mid] < i)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == end || p.rec_cell[lo] != i) return out;
  for (long k = p.rec_first[lo]; k < p.rec_first[lo + 1]; ++k) {
    const long e = p.rec_order[k];
    out += v * (p.entry_weight[e] * residual[p.entry_receiver[e] * p.nt + n]);
  }
  return out;
}

/// Free surface, after the cell's last update of the step: u = 0 on plane `top`, and each
/// of the `halo` planes below writes its value, negated, to its mirror plane above (docs/design.md
/// §2; stencil::mirror_free_surface, cell by cell).
template <typename T>
SW_HD void mirror_cell(T* out, long plane, int z, int top, int halo) {
  const int k = z - top;
  if (k == 0)
    out[0] = T(0);
  else if (k > 0 && k <= halo)
    out[-2L * k * plane] = -out[0];
}

}  // namespace starwave::cuda_bodies
