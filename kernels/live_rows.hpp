// kernels/live_rows.hpp — the rows of a shot's grid where its propagation state may be
// non-zero. A shot starts at rest and its waves reach the grid's far side only after many
// steps: until then most rows hold nothing but +0 in u, u_prev and the memory variables, and
// the step would write +0 there again. The CPU forward sweeps only the rows within reach
// of the live ones and leaves the others alone: the same bits, less work. Pure: no StarPU,
// no I/O.
//
// Why the same bits: a row's update reads the state within 2·halo rows of it (u[m] and ψ
// within halo, ψ from u[m] within halo), so a row farther than that from every live row has
// only +0 to read; every value a step computes there is then +0 (a sum with a +0 term is
// +0 in round-to-nearest, and u[m+1] = 2u[m] − u[m−1] + … starts from 2·(+0) − (+0)). The
// free surface's mirror planes may hold −0; each of their reads is paired with a grid row's.
// tests/test_live_rows.cpp checks the bits against steps over the whole grid.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/shot.hpp"
#include "kernels/shot_state.hpp"

namespace starwave::live {

/// Rows (z, y) of the grid, planes [z0, z1) × rows [y0, y1); empty when either is empty.
/// (Data alone, and the functions below `static`: each instruction-set level's kernels keep
/// their own copies, as kernels/cpu/propagate.hpp's.)
struct Rows {
  int z0 = 0, z1 = 0, y0 = 0, y1 = 0;
};

static inline bool empty(const Rows& r) { return r.z0 >= r.z1 || r.y0 >= r.y1; }
static inline bool holds(const Rows& r, int z, int y) { return z >= r.z0 && z < r.z1 && y >= r.y0 && y < r.y1; }
static inline void add(Rows& r, int z, int y) {
  if (empty(r)) {
    r = {z, z + 1, y, y + 1};
    return;
  }
  r.z0 = std::min(r.z0, z);
  r.z1 = std::max(r.z1, z + 1);
  r.y0 = std::min(r.y0, y);
  r.y1 = std::max(r.y1, y + 1);
}
/// `r` grown to hold `o` too.
static inline void merge(Rows& r, const Rows& o) {
  if (empty(o)) return;
  add(r, o.z0, o.y0);
  add(r, o.z1 - 1, o.y1 - 1);
}
template <typename T>
static Rows all_rows(const ShotProblem<T>& p) {
  return {0, p.nz, 0, p.ny};
}
static inline long long count(const Rows& r) { return empty(r) ? 0 : (long long)(r.z1 - r.z0) * (r.y1 - r.y0); }
template <typename T>
static bool whole(const ShotProblem<T>& p, const Rows& r) {
  return r.z0 <= 0 && r.z1 >= p.nz && r.y0 <= 0 && r.y1 >= p.ny;
}

/// The rows a step changes when `live` holds every row whose state is not all +0: those
/// within two stencil radii of them.
template <typename T>
static Rows swept(const ShotProblem<T>& p, const Rows& live) {
  if (empty(live)) return live;
  const int r = 2 * p.halo, ry = p.ny > 1 ? r : 0;
  return {std::max(0, live.z0 - r), std::min(p.nz, live.z1 + r), std::max(0, live.y0 - ry),
          std::min(p.ny, live.y1 + ry)};
}

/// Whether n values hold anything but +0 (a −0 counts: it is not what a step computes from
/// +0 alone).
template <typename T>
static bool any_bits(const T* v, int n) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "float or double");
  using Word = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  Word all = 0;
  for (int i = 0; i < n; ++i) {
    Word w;
    std::memcpy(&w, v + i, sizeof(T));
    all |= w;
  }
  return all != 0;
}

/// Whether n values hold anything but ±0 (a mirror plane's −0 is read only beside a grid
/// row's +0).
template <typename T>
static bool any_value(const T* v, int n) {
  for (int i = 0; i < n; ++i)
    if (v[i] != T(0)) return true;
  return false;
}

/// Calls f(array, offset, n) for each run of row (z, y)'s values in a kept state's arrays
/// (state::for_each_run's runs of that row, u_prev aside): u's row, then ψ and ζ of each
/// axis whose CPML regions hold the row.
template <typename T, typename F>
static void for_each_row_run(const ShotProblem<T>& p, int z, int y, F&& f) {
  using namespace state;
  f(kU, p.origin() + p.row_offset(z, y), p.nx);
  const int zt = p.pml_top, zb = p.nz - p.pml_bottom, yt = p.pml_front, yb = p.ny - p.pml_back;
  const int xl = p.pml_left, xr = p.nx - p.pml_right;
  if (zt >= zb || z < zt || z >= zb)
    for (int which : {0, 1}) f(kZ1 + which, p.zlayer_index(z, y, 0), p.nx);
  if (p.dim == 3 && (yt >= yb || y < yt || y >= yb))
    for (int which : {0, 1}) f(kY1 + which, p.ylayer_index(z, y, 0), p.nx);
  for (int which : {0, 1}) {
    if (xl >= xr) {
      f(kX1 + which, p.xlayer_index(z, y, 0), p.nx);
    } else {
      if (xl > 0) f(kX1 + which, p.xlayer_index(z, y, 0), xl);
      if (p.nx > xr) f(kX1 + which, p.xlayer_index(z, y, xr), p.nx - xr);
    }
  }
}

/// Whether row (z, y) of the state (`u`: a grid allocation, and p.work's layer arrays) holds
/// anything but +0.
template <typename T>
static bool row_live(const ShotProblem<T>& p, const T* u, int z, int y) {
  bool live = false;
  for_each_row_run(p, z, y, [&](int array, long offset, int n) {
    if (!live) live = any_bits(state::array_base(p, const_cast<T*>(u), static_cast<T*>(nullptr), array) + offset, n);
  });
  return live;
}

/// `r` grown to hold the row of node i (an offset from the grid's origin).
template <typename T>
static void add_node(Rows& r, const ShotProblem<T>& p, long i) {
  const long z = i / p.plane;
  add(r, int(z), int((i - z * p.plane) / p.stride));
}

/// `r` and the rows of the source's nodes (a step adds the source there).
template <typename T>
static Rows of_sources(const ShotProblem<T>& p, Rows r = {}) {
  for (int j = 0; j < p.nsrc; ++j) add_node(r, p, p.source_node[j]);
  return r;
}

/// `r` and the rows of the receivers' injection nodes (an adjoint step adds the residuals
/// there).
template <typename T>
static Rows of_receivers(const ShotProblem<T>& p, Rows r = {}) {
  if (p.nrec > 0)
    for (long e = p.rec_entries[0]; e < p.rec_entries[p.nrec]; ++e) add_node(r, p, p.entry_node[e]);
  return r;
}

/// The rows of a whole state (u, up: grid allocations; p.work's layer arrays) that hold
/// anything but +0, and the rows of the source's nodes (a step adds the source there).
template <typename T>
static Rows of_state(const ShotProblem<T>& p, const T* u, const T* up) {
  Rows r;
  state::for_each_run(p, [&](std::size_t, int array, long offset, int n, int, int z, int y, int) {
    if (holds(r, std::max(z, 0), y)) return;
    const T* v = state::array_base(p, const_cast<T*>(u), const_cast<T*>(up), array) + offset;
    if (z < 0 ? any_value(v, n) : any_bits(v, n)) add(r, std::max(z, 0), y);
  });
  return of_sources(p, r);
}

/// widen() for a field alone (a grid allocation, no layer arrays: the adjoint's re-created
/// forward field): `live` grown to hold every row of `swept` whose grid cells in `u` hold
/// anything but +0.
template <typename T>
static void widen_field(const ShotProblem<T>& p, const T* u, const Rows& swept, Rows& live) {
  for (int z = swept.z0; z < swept.z1; ++z)
    for (int y = swept.y0; y < swept.y1; ++y)
      if (!holds(live, z, y) && any_bits(u + p.origin() + p.row_offset(z, y), p.nx)) add(live, z, y);
}

/// `r` and the rows of a field `u` (widen_field's) whose grid cells hold anything but +0.
template <typename T>
static Rows of_field(const ShotProblem<T>& p, const T* u, Rows r = {}) {
  widen_field(p, u, all_rows(p), r);
  return r;
}

/// After a step that swept `swept` (⊇ live) and left u[m+1] in `u`: `live` grown to hold
/// every row of `swept` outside it that is no longer all +0. (u[m]'s rows were live.)
template <typename T>
static void widen(const ShotProblem<T>& p, const T* u, const Rows& swept, Rows& live) {
  const Rows before = live;
  for (int z = swept.z0; z < swept.z1; ++z) {
    const bool inside = z >= before.z0 && z < before.z1;
    for (int y = swept.y0; y < swept.y1; ++y) {
      if (inside && y == before.y0) y = before.y1;  // the rows live before
      if (y >= swept.y1) break;
      if (!holds(live, z, y) && row_live(p, u, z, y)) add(live, z, y);
    }
  }
}

}  // namespace starwave::live
