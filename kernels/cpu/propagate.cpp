// kernels/cpu/propagate.cpp — CPU loops for (1/v²)∂²u/∂t² − ∇²u = s δ with CPML
// (Pasalic & McGarry 2010); the per-point math lives in kernels/stencil.hpp.
//
// One sweep down the planes per step, row by row within a plane (2-D: one row a plane).
// Each row gets the interior update over its whole width (one long branch-free loop,
// 64-byte aligned: kernels/shot.hpp), then the layer corrections: over the full row in the
// top and bottom (and, in 3-D, front and back) layers, and over whole-vector side loops in
// the left and right layers, where the ψ_x update is fused in. Short, oddly sized loops
// cost more than the extra lanes, so nothing runs over exactly the 20 layer columns.
#include "kernels/cpu/levels.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/cpu/propagate.hpp"  // save_checkpoint
#include "kernels/cpu/simd.hpp"
#include "kernels/live_rows.hpp"
#include "kernels/orders.hpp"
#include "kernels/stencil.hpp"

namespace starwave::cpu::STARWAVE_CPU_LEVEL {
namespace {

using detail::d1d2x_vec;
using detail::d1x_vec;
using detail::d2x_vec;
using detail::FlushSubnormals;
using detail::interior_row;
using detail::Simd;
using stencil::StepArgs;

/// The correction of a z-layer (top, bottom) or y-layer (front, back) row (z, y), all
/// columns: `ps`, `ze` are the row's ψ and ζ, `s` the dimension's stride, c, h, a, b its
/// 1/h², 1/h and CPML coefficients.
template <int Order, typename T>
void row_correction(const StepArgs<T>& a, int z, int y, const T* __restrict ps, T* __restrict ze, long s, T c, T h,
                    T ac, T bc) {
  const long row = a.cell(z, y, 0);
  const T* __restrict u = a.u + row;
  T* __restrict out = a.u_prev_next + row;
  const T* __restrict v = a.vdt2 + row;
#pragma omp simd
  for (int x = 0; x < a.nx; ++x)
    out[x] += v[x] * stencil::layer_correction<Order>(u + x, s, c, ps + x, s, h, ze + x, ac, bc);
}

/// The side loop [x0, x1) of row z: the ψ_x update and the x-layer correction, fused. Row
/// z's correction is the only reader of row z's ψ_x, so each vector's correction follows
/// as soon as ψ_x of the vector right of it is updated, and ∂_x u and ∂²_x u share their
/// lane shifts. The loop covers whole vectors: at its model lanes a = b = 0 keeps ψ_x and
/// ζ_x zero, and a per-lane select drops the correction. `j` indexes column x0 of row z in
/// the compact ψ_x, ζ_x arrays, whose guard vectors either side of the loop stay zero.
/// With `sc` (J's model rows: the row's scatter, at column 0), also dn[x] += sc[x] · (the
/// corrected value − the value before) at every column of the loop, δu's share of u's
/// correction (`dn`: δu[m+1]'s row, at column 0).
template <int Order, typename T>
void x_side(const StepArgs<T>& a, int z, int y, int x0, int x1, long j, const T* __restrict sc = nullptr,
            T* __restrict dn = nullptr) {
  if (x0 >= x1) return;
  using S = Simd<T>;
  using V = typename S::vec;
  constexpr int W = S::W;
  constexpr auto J = std::make_integer_sequence<int, stencil::radius(Order)>{};
  const long row = a.cell(z, y, x0);
  const T* __restrict u = a.u + row;
  T* __restrict out = a.u_prev_next + row;
  const T* __restrict v = a.vdt2 + row;
  T* __restrict psx = a.cpml_x1 + j;
  T* __restrict zx = a.cpml_x2 + j;
  const T* __restrict ax = a.a_x + x0;
  const T* __restrict bx = a.b_x + x0;
  const T cx = a.inv_dx2, hx = a.inv_dx;
  const int n = x1 - x0;
  const int il = a.xl - x0, ir = a.xr - x0;  // lanes i < il or i ≥ ir are layer cells
  if (n % W == 0) {                          // whole vectors (not when a narrow model clamps the loop)
    typename S::mask lane;
    for (int k = 0; k < W; ++k) lane[k] = k;
    // ψ_x of the vector at i (stored), and ∂²_x u there for its correction.
    auto psi_at = [&](int i, V& d2) {
      V d1;
      d1d2x_vec<Order, T>(S::load(u + i - W), S::load(u + i), S::load(u + i + W), d1, d2, J);
      const V p = S::load(ax + i) * S::load(psx + i) + S::load(bx + i) * d1 * hx;
      S::store(psx + i, p);
      return p;
    };
    V d2c, d2r{};
    V pl = S::load(psx - W);  // zero guard
    V pc = psi_at(0, d2c);
    for (int i = 0; i < n; i += W) {
      const V pr = i + W < n ? psi_at(i + W, d2r) : S::load(psx + i + W);  // the right guard is zero
      const V dpsi = d1x_vec<Order, T>(pl, pc, pr, J) * hx;
      const V zeta = S::load(ax + i) * S::load(zx + i) + S::load(bx + i) * (d2c * cx + dpsi);
      S::store(zx + i, zeta);
      // Only layer lanes take the correction (adding v·0 elsewhere could turn a −0 into +0,
      // which the CUDA bodies, correcting layer cells only, would not).
      const typename S::mask at = lane + typename S::ivec(i);
      const V o = S::load(out + i);
      const V corrected =
          (at < typename S::ivec(il) || at >= typename S::ivec(ir)) ? o + S::load(v + i) * (dpsi + zeta) : o;
      S::store(out + i, corrected);
      if (sc) S::store(dn + x0 + i, S::load(dn + x0 + i) + S::load(sc + x0 + i) * (corrected - o));
      pl = pc;
      pc = pr;
      d2c = d2r;
    }
    return;
  }
#pragma omp simd
  for (int k = 0; k < n; ++k) psx[k] = stencil::psi_value<Order>(psx[k], ax[k], bx[k], u + k, 1, hx);
#pragma omp simd
  for (int k = 0; k < n; ++k) {
    const T c = stencil::layer_correction<Order>(u + k, 1, cx, psx + k, 1, hx, zx + k, ax[k], bx[k]);
    const T o = out[k];
    if (k < il || k >= ir) out[k] += v[k] * c;
    if (sc) dn[x0 + k] += sc[x0 + k] * (out[k] - o);
  }
}

/// ψ ← a ψ + b ∂u over row (z, y) (ψ_z or ψ_y: `s` the dimension's stride).
template <int Order, typename T>
void psi_row(const StepArgs<T>& a, int z, int y, T* __restrict p, long s, T h, T ac, T bc) {
  const T* __restrict u = a.u + a.cell(z, y, 0);
#pragma omp simd
  for (int x = 0; x < a.nx; ++x) p[x] = stencil::psi_value<Order>(p[x], ac, bc, u + x, s, h);
}

/// ψ_z pass over rows [y0, y1) of plane z, if it is a layer plane (ψ_x is updated with the
/// u pass: x_side).
template <int Order, typename T>
void psi_z_rows(const StepArgs<T>& a, int z, int y0, int y1) {
  if (!a.z_layer(z)) return;
  for (int y = y0; y < y1; ++y)
    psi_row<Order>(a, z, y, a.cpml_z1 + a.zi(z, y, 0), a.plane, a.inv_dz, a.a_z[z], a.b_z[z]);
}

/// ψ_y pass over the front and back rows among [y0, y1) of plane z (3-D).
template <int Order, typename T>
void psi_y_rows(const StepArgs<T>& a, int z, int y0, int y1) {
  if (!a.three_d()) return;
  for (int y = y0; y < y1; ++y)
    if (a.y_layer(y)) psi_row<Order>(a, z, y, a.cpml_y1 + a.yi(z, y, 0), a.stride, a.inv_dy, a.a_y[y], a.b_y[y]);
}

/// The layer corrections of row (z, y), after its interior update: z, y, then x; with `sc`,
/// `dn` (x_side) δu's share of the x corrections too.
template <int Order, typename T>
void corrections(const StepArgs<T>& a, int z, int y, const T* sc = nullptr, T* dn = nullptr) {
  if (a.z_layer(z)) {
    const long j = a.zi(z, y, 0);
    row_correction<Order>(a, z, y, a.cpml_z1 + j, a.cpml_z2 + j, a.plane, a.inv_dz2, a.inv_dz, a.a_z[z], a.b_z[z]);
  }
  if (a.three_d() && a.y_layer(y)) {
    const long j = a.yi(z, y, 0);
    row_correction<Order>(a, z, y, a.cpml_y1 + j, a.cpml_y2 + j, a.stride, a.inv_dy2, a.inv_dy, a.a_y[y], a.b_y[y]);
  }
  const long r = long(z) * a.ny + y;
  x_side<Order>(a, z, y, 0, a.xloop_left, a.xleft0 + r * a.xstride, sc, dn);
  x_side<Order>(a, z, y, a.xloop_right, a.nx, a.xright0 + r * a.xstride, sc, dn);
}

/// The u pass over row (z, y): the interior, then the z, y and x corrections.
template <int Order, typename T>
void u_row(const StepArgs<T>& a, int z, int y) {
  interior_row<Order>(a, z, y);
  corrections<Order>(a, z, y);
}

/// u[m+1] − 2u[m] + u[m−1] times the scatter, added to δu[m+1], over columns [x0, x1) of
/// row (z, y): `before` holds what u[m+1] held there before the update's part being added
/// (2u[m] − u[m−1], or the interior update), `un` u[m+1], `dn` δu[m+1], `sc` the scatter.
template <typename T>
void add_scatter(const T* __restrict un, const T* __restrict before, const T* __restrict sc, T* __restrict dn, int x0,
                 int x1) {
#pragma omp simd
  for (int x = x0; x < x1; ++x) dn[x] += sc[x] * (un[x] - before[x]);
}

/// The Born pass over row (z, y): u's (`a`) and δu's (`b`) updates, δu's with the secondary
/// source scatter · (u[m+1] − 2u[m] + u[m−1]) (`sc`: the row's scatter; `keep`: nx values of
/// scratch). A row in the model's planes and rows takes the interior of both fields in one
/// loop (the source's share there is v²Δt² ∇²u), then the x sides' corrections, whose share
/// is u's change over them; a layer row keeps 2u[m] − u[m−1] and adds u[m+1] minus it.
template <int Order, typename T>
void born_row(const StepArgs<T>& a, const StepArgs<T>& b, const T* __restrict sc, T* __restrict keep, int z, int y) {
  const long c = a.cell(z, y, 0);
  T* __restrict un = a.u_prev_next + c;
  T* __restrict dn = b.u_prev_next + c;
  const int nx = a.nx;
  if (a.z_layer(z) || (a.three_d() && a.y_layer(y))) {
    detail::interior_row<Order, true>(a, z, y, keep);  // keep = 2u[m] − u[m−1], as u's interior computes it
    corrections<Order>(a, z, y);
    u_row<Order>(b, z, y);
    add_scatter(un, keep, sc, dn, 0, nx);
    return;
  }
  detail::interior_row_born<Order>(a, b, sc, z, y);
  corrections<Order>(b, z, y);          // δu's x corrections first: u's do not read δu, and
  corrections<Order>(a, z, y, sc, dn);  // each then adds sc · (its change) to δu as it goes
}

/// One step's sweep over the rows `r` (live::Rows; the rows outside stay as they are):
/// tiles of rows in y (one tile of the one row in 2-D), each swept down the planes. The ψ_z
/// pass runs `halo` planes ahead of the u pass (plane z's u update reads ψ_z of planes
/// z ± halo), so both work on planes that are still in cache; ψ_y (read along y) runs `halo`
/// rows ahead of the tile's u pass, each row's once. psi_z(z, y0, y1), psi_y(z, ya, yb) and
/// row(z, y) are the passes of the `fields` fields stepped.
template <typename T, typename PsiZ, typename PsiY, typename Row>
void sweep(const ShotProblem<T>& p, const live::Rows& r, int fields, PsiZ&& psi_z, PsiY&& psi_y, Row&& row) {
  if (live::empty(r)) return;
  const int R = p.halo, tile = p.y_tile(fields);
  for (int y0 = r.y0; y0 < r.y1; y0 += tile) {
    const int y1 = std::min(r.y1, y0 + tile);
    const int ya = y0 == r.y0 ? y0 : std::min(r.y1, y0 + R), yb = std::min(r.y1, y1 + R);
    for (int z = r.z0; z < std::min(r.z0 + R, r.z1); ++z) psi_z(z, y0, y1);
    for (int z = r.z0; z < r.z1; ++z) {
      if (z + R < r.z1) psi_z(z + R, y0, y1);
      psi_y(z, ya, yb);
      for (int y = y0; y < y1; ++y) row(z, y);
    }
  }
}

/// The source at its nodes (distinct cells), then the free surface's mirror.
template <typename T>
void inject_and_mirror(const ShotProblem<T>& p, const StepArgs<T>& a, T source_value) {
  for (int j = 0; j < p.nsrc; ++j) {
    const long i = p.source_node[j];
    a.u_prev_next[i] += a.vdt2[i] * (p.source_weight[j] * source_value);
  }
  if (p.free_surface)
    for (int y = 0; y < p.ny; ++y)
      for (int x = 0; x < p.nx; ++x)
        stencil::mirror_free_surface(a.u_prev_next, p.plane, p.pml_top, p.halo, p.nz, p.row_offset(0, y) + x);
}

/// step() over the rows `r` alone.
template <int Order, typename T>
void step_rows(const ShotProblem<T>& p, const T* u, T* upn, T source_value, const live::Rows& r) {
  const StepArgs<T> a = stencil::make_step_args(p, u, upn);
  sweep(
      p, r, 1, [&](int z, int y0, int y1) { psi_z_rows<Order>(a, z, y0, y1); },
      [&](int z, int ya, int yb) { psi_y_rows<Order>(a, z, ya, yb); }, [&](int z, int y) { u_row<Order>(a, z, y); });
  inject_and_mirror(p, a, source_value);
}

}  // namespace

template <int Order, typename T>
void step(const ShotProblem<T>& p, const T* u, T* upn, T source_value) {
  step_rows<Order>(p, u, upn, source_value, live::all_rows(p));
}

template <int Order, typename T>
void born_step(const ShotProblem<T>& p, const T* u, T* upn, const ShotProblem<T>& d, const T* du, T* dupn,
               const T* scatter, T source_value, T* row, const live::Rows& rows) {
  const StepArgs<T> a = stencil::make_step_args(p, u, upn), b = stencil::make_step_args(d, du, dupn);
  const T* const s = scatter + p.origin();
  auto psi_z = [&](int z, int y0, int y1) {
    psi_z_rows<Order>(a, z, y0, y1);
    psi_z_rows<Order>(b, z, y0, y1);
  };
  auto psi_y = [&](int z, int ya, int yb) {
    psi_y_rows<Order>(a, z, ya, yb);
    psi_y_rows<Order>(b, z, ya, yb);
  };
  sweep(p, rows, 2, psi_z, psi_y, [&](int z, int y) { born_row<Order>(a, b, s + a.cell(z, y, 0), row, z, y); });
  inject_and_mirror(p, a, source_value);
  for (int j = 0; j < p.nsrc; ++j) {  // the source's share of u[m+1] − 2u[m] + u[m−1]
    const long i = p.source_node[j];
    b.u_prev_next[i] += s[i] * (a.vdt2[i] * (p.source_weight[j] * source_value));
  }
  inject_and_mirror(d, b, T(0));
}

template <int Order, typename T>
void forward_steps(const ShotProblem<T>& p, int lo, int hi) {
  const FlushSubnormals<T> ftz;
  // Each step before this call swapped the pair: after lo steps u[lo] is in u1 if lo is odd.
  T* u = lo % 2 == 1 ? p.u1() : p.u0();
  T* up = lo % 2 == 1 ? p.u0() : p.u1();
  const long o = p.origin();
  auto record = [&](int n) {
    for (int r = 0; r < p.nrec; ++r) p.traces[long(r) * p.nt + n] = p.sample(u + o, r);
  };
  const auto slot = [&](const T* field, int m) { save_slot(p, field, m); };
  if (lo == 0) {
    std::memset(p.work, 0, p.work_size() * sizeof(T));
    load_initial_state(p, u, up);
    record(0);
  }
  keep_start(p, u, up, lo, slot);
  // The rows whose state is not all +0 (from rest: the source's alone), and each step over
  // those within its reach (kernels/live_rows.hpp).
  live::Rows live = p.every_row                   ? live::all_rows(p)
                    : lo == 0 && !p.initial_state ? live::of_sources(p)
                                                  : live::of_state(p, u, up);
  for (int m = lo; m < hi; ++m) {
    const live::Rows rows = live::swept(p, live);
    if (p.swept_rows) *p.swept_rows += live::count(rows);
    step_rows<Order>(p, u, up, p.source[m], rows);
    std::swap(u, up);  // u now holds u[m+1]
    if (!live::whole(p, live)) live::widen(p, u, rows, live);
    keep_step(p, u, up, m + 1, slot);
    if ((m + 1) % p.record_every == 0) {
      const int n = (m + 1) / p.record_every;
      if (n < p.nt) record(n);
    }
  }
  keep_final(p, u, up, hi);
}

template <int Order, typename T>
void forward(const ShotProblem<T>& p) {
  forward_steps<Order, T>(p, 0, p.nsteps);
}

#define STARWAVE_INSTANTIATE(O, T)                                                                                     \
  template void forward<O, T>(const ShotProblem<T>&);                                                                  \
  template void forward_steps<O, T>(const ShotProblem<T>&, int, int);                                                  \
  template void step<O, T>(const ShotProblem<T>&, const T*, T*, T);                                                    \
  template void born_step<O, T>(const ShotProblem<T>&, const T*, T*, const ShotProblem<T>&, const T*, T*, const T*, T, \
                                T*, const live::Rows&);
STARWAVE_FOR_EACH_KERNEL(STARWAVE_INSTANTIATE)
#undef STARWAVE_INSTANTIATE

}  // namespace starwave::cpu::STARWAVE_CPU_LEVEL
