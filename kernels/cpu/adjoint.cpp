// kernels/cpu/adjoint.cpp — CPU loops of the adjoint step (kernels/stencil.hpp) and the
// backward sweep of a shot: adjoint wavefield, forward wavefield re-created from the store,
// and the imaging correlations.
#include "kernels/cpu/levels.hpp"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/cpu/image_rows.hpp"
#include "kernels/cpu/propagate.hpp"  // load_initial_state
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/store_slots.hpp"
#include "kernels/cpu/zfp_slot.hpp"
#include "kernels/live_rows.hpp"
#include "kernels/orders.hpp"
#include "kernels/stencil.hpp"

namespace starwave::cpu::STARWAVE_CPU_LEVEL {
namespace {

using detail::FlushSubnormals;
using detail::interior_row;
using detail::Simd;
using stencil::StepArgs;

/// β ← a β + b μ[n+1] over row (z, y) of a z- or y-layer (`q`: the row's β).
template <int Order, typename T>
void beta_row(const StepArgs<T>& a, int z, int y, T* __restrict q, T ac, T bc) {
  const T* __restrict mu = a.u + a.cell(z, y, 0);
#pragma omp simd
  for (int x = 0; x < a.nx; ++x) q[x] = ac * q[x] + bc * mu[x];
}

/// α ← a α − b ∂(M μ[n+1] + β) over row (z, y) of a z-layer (y_dim false: along z) or a
/// y-layer (y_dim true: along y), after the β pass of the rows it reads:
/// stencil::adjoint_alpha_point's operations, with its per-neighbour test (is plane/row
/// c ± j a layer one?) made once per row as weights of 1 or 0 (1·μ is μ, and 0·μ a zero,
/// which adds nothing: the same bits, in a loop that vectorises).
template <int Order, typename T>
void alpha_row(const StepArgs<T>& a, int z, int y, bool y_dim) {
  constexpr int R = stencil::radius(Order);
  const T* __restrict mu = a.u + a.cell(z, y, 0);
  const long j = y_dim ? a.yi(z, y, 0) : a.zi(z, y, 0);
  T* __restrict p = (y_dim ? a.cpml_y1 : a.cpml_z1) + j;
  const T* __restrict q = (y_dim ? a.cpml_y2 : a.cpml_z2) + j;
  const int c = y_dim ? y : z, n = y_dim ? a.ny : a.nz;
  const T az = y_dim ? a.a_y[y] : a.a_z[z], bz = y_dim ? a.b_y[y] : a.b_z[z], h = y_dim ? a.inv_dy : a.inv_dz;
  const long s = y_dim ? a.stride : a.plane;
  T wp[R], wm[R];  // M: whether planes (rows) c + k and c − k are layer ones
  for (int k = 1; k <= R; ++k) {
    const int up = c + k, dn = c - k;
    wp[k - 1] = up < n && (y_dim ? a.y_layer(up) : a.z_layer(up)) ? T(1) : T(0);
    wm[k - 1] = dn >= 0 && (y_dim ? a.y_layer(dn) : a.z_layer(dn)) ? T(1) : T(0);
  }
#pragma omp simd
  for (int x = 0; x < a.nx; ++x) {
    T dm = T(0);
    for (int k = 1; k <= R; ++k)
      dm += T(stencil::d1_coef<Order>(k)) * (wp[k - 1] * mu[x + k * s] - wm[k - 1] * mu[x - k * s]);
    const T d = dm + stencil::d1<Order>(q + x, s);
    p[x] = az * p[x] - bz * (d * h);
  }
}

/// The x part of the adjoint step over the side loop [x0, x1) of row z, all three passes
/// (β_x, α_x, then C_x added to the output): each reads only row z, so they run over the
/// loop's few vectors while those stay in L1, β_x first, then α_x and C_x together. `j`
/// indexes column x0 in the compact x-layer arrays, whose guard vectors either side of the
/// loop stay zero.
template <int Order, typename T>
void x_side_adjoint(const StepArgs<T>& a, int z, int y, int x0, int x1, long j) {
  using S = Simd<T>;
  using V = typename S::vec;
  constexpr int W = S::W;
  constexpr auto J = std::make_integer_sequence<int, stencil::radius(Order)>{};
  const long row = a.cell(z, y, x0);
  const T* __restrict mu = a.u + row;
  T* __restrict out = a.u_prev_next + row;
  const T* __restrict v = a.vdt2 + row;
  T* __restrict al = a.cpml_x1 + j;
  T* __restrict be = a.cpml_x2 + j;
  const T* __restrict ax = a.a_x + x0;
  const T* __restrict bx = a.b_x + x0;
  const T hx = a.inv_dx, hx2 = a.inv_dx2;
  const int n = x1 - x0;
  if (n <= 0) return;
  // Lanes k < rim_l or k ≥ rim_r are rim cells (StepArgs::x_rim).
  const int halo = a.layout.halo;
  const int rim_l = a.xl > 0 ? a.xl + halo - x0 : -(1 << 30), rim_r = a.xr < a.nx ? a.xr - halo - x0 : 1 << 30;
  if (n % W == 0) {  // whole vectors (not when a narrow model clamps the loop)
    typename S::mask lane;
    for (int k = 0; k < W; ++k) lane[k] = k;
    const int il = a.xl - x0, ir = a.xr - x0;  // lanes i < il or i ≥ ir are layer cells
    // M_x μ of the vector at i: μ on layer lanes, zero elsewhere (guard lanes hold zero).
    auto masked_mu = [&](int i) {
      const typename S::mask at = lane + typename S::ivec(i);
      return (at < typename S::ivec(il) || at >= typename S::ivec(ir)) ? S::load(mu + i) : V{};
    };
    for (int i = 0; i < n; i += W)
      S::store(be + i, S::load(ax + i) * S::load(be + i) + S::load(bx + i) * S::load(mu + i));
    // C_x goes to the rim lanes only, as in stencil::update_adjoint_point (beyond the rim it
    // is zero, and adding v·0 could turn a −0 into +0).
    auto add_c = [&](int i, V d2b, V al_l, V al_c, V al_r) {
      const V c = d2b * hx2 - detail::d1x_vec<Order, T>(al_l, al_c, al_r, J) * hx;
      const typename S::mask at = lane + typename S::ivec(i);
      const V o = S::load(out + i);
      S::store(out + i, (at < typename S::ivec(rim_l) || at >= typename S::ivec(rim_r)) ? o + S::load(v + i) * c : o);
    };
    // α of vector i, then C of vector i − W, which reads α of i − 2W … i: one pass, with ∂_x β
    // (for α) and ∂²_x β (for C) sharing their lane shifts, the vectors either side kept in
    // registers (the guard vectors of α and β are zero).
    V b_l = S::load(be - W), b_c = S::load(be), m_l = masked_mu(-W), m_c = masked_mu(0);
    V a_ll{}, a_l = S::load(al - W), d2_l{};
    for (int i = 0; i < n; i += W) {
      const V b_r = S::load(be + i + W), m_r = masked_mu(i + W);
      V d1b, d2b;
      detail::d1d2x_vec<Order, T>(b_l, b_c, b_r, d1b, d2b, J);
      const V d = detail::d1x_vec<Order, T>(m_l, m_c, m_r, J) + d1b;
      const V a_c = S::load(ax + i) * S::load(al + i) - S::load(bx + i) * (d * hx);
      S::store(al + i, a_c);
      if (i > 0) add_c(i - W, d2_l, a_ll, a_l, a_c);
      a_ll = a_l, a_l = a_c, d2_l = d2b;
      b_l = b_c, b_c = b_r, m_l = m_c, m_c = m_r;
    }
    add_c(n - W, d2_l, a_ll, a_l, S::load(al + n));
    return;
  }
#pragma omp simd
  for (int k = 0; k < n; ++k) be[k] = ax[k] * be[k] + bx[k] * mu[k];
#pragma omp simd
  for (int k = 0; k < n; ++k)
    al[k] =
        ax[k] * al[k] -
        bx[k] * ((stencil::d1_layers_only<Order>(mu + k, 1, x0 + k, a.nx, a.xl, a.xr) + stencil::d1<Order>(be + k, 1)) *
                 hx);
#pragma omp simd
  for (int k = 0; k < n; ++k)
    if (k < rim_l || k >= rim_r) out[k] += v[k] * stencil::adjoint_correction<Order>(al + k, be + k, 1, hx, hx2);
}

/// C of a z- or y-layer rim row (z, y) added to μ[n]: `p`, `q` the row's α and β, `s` the
/// dimension's stride.
template <int Order, typename T>
void rim_correction(const StepArgs<T>& a, int z, int y, const T* __restrict p, const T* __restrict q, long s, T h,
                    T h2) {
  const long row = a.cell(z, y, 0);
  T* __restrict out = a.u_prev_next + row;
  const T* __restrict v = a.vdt2 + row;
#pragma omp simd
  for (int x = 0; x < a.nx; ++x) out[x] += v[x] * stencil::adjoint_correction<Order>(p + x, q + x, s, h, h2);
}

/// The μ pass of row (z, y): the interior update, C_z in the z-layers and their rims, C_y
/// likewise (3-D), and the x part in the side loops (which cover the rims; beyond them α,
/// β and C_x are zero).
template <int Order, typename T>
void mu_row(const StepArgs<T>& a, int z, int y) {
  interior_row<Order>(a, z, y);
  if (a.z_rim(z)) {
    const long j = a.zi(z, y, 0);
    rim_correction<Order>(a, z, y, a.cpml_z1 + j, a.cpml_z2 + j, a.plane, a.inv_dz, a.inv_dz2);
  }
  if (a.three_d() && a.y_rim(y)) {
    const long j = a.yi(z, y, 0);
    rim_correction<Order>(a, z, y, a.cpml_y1 + j, a.cpml_y2 + j, a.stride, a.inv_dy, a.inv_dy2);
  }
  const long r = long(z) * a.ny + y;
  if (a.xloop_left > 0) x_side_adjoint<Order>(a, z, y, 0, a.xloop_left, a.xleft0 + r * a.xstride);
  if (a.xloop_right < a.nx) x_side_adjoint<Order>(a, z, y, a.xloop_right, a.nx, a.xright0 + r * a.xstride);
}

template <typename T>
void mirror(const ShotProblem<T>& p, T* u_grid) {
  if (!p.free_surface) return;
  for (int y = 0; y < p.ny; ++y)
    for (int x = 0; x < p.nx; ++x)
      stencil::mirror_free_surface(u_grid + p.origin(), p.plane, p.pml_top, p.halo, p.nz, p.row_offset(0, y) + x);
}

/// The share of step m's imaging outside the CPML interior (ShotProblem::layer_term): at every
/// stored cell there,
/// acc += μ[m+1] (u[m+1] − 2u[m] + u[m−1]), the forward field from store slots m + 1, m
/// and m − 1 (for m = 0, u[−1]: the initial state's, or zero); `acc` and `mu` are grid
/// allocations.
template <typename T>
void image_layers(const ShotProblem<T>& p, const T* mu, T* acc, int m, int* held) {
  const T* next = slot_for_reading(p, m + 1, held);
  const T* now = slot_for_reading(p, m, held);
  const T* prev = m >= 1 ? slot_for_reading(p, m - 1, held) : nullptr;
  const T* mo = mu + p.origin();
  T* ao = acc + p.origin();
  // u[−1] at step 0 from a state: its u_prev (kernels/shot_state.hpp), `b` + j the index of
  // column x0 + j of a run's row.
  const T* before = m == 0 && p.initial_state ? p.initial_state + p.state_field() : nullptr;
  auto run = [&](long g, long k, int from, int to, long b) {
    T* __restrict a = ao + g;
    const T* __restrict l = mo + g;
    if (before) {  // step 0 from a state: u[−1] from the grid, the slots as below
      for (int j = from; j < to; ++j) {
        T n1, n0;
        if (pack16::words16(p.compression)) {
          decode_slot(p, next, k + j, 1, &n1);
          decode_slot(p, now, k + j, 1, &n0);
        } else {
          n1 = next[k + j];
          n0 = now[k + j];
        }
        a[j] = ShotProblem<T>::layer_term(a[j], l[j], n1, n0, before[b + j]);
      }
      return;
    }
    if (pack16::words16(p.compression)) {  // the same terms, decoded a piece at a time
      constexpr int kPiece = 256;
      T n1[kPiece], n0[kPiece], p0[kPiece];
      for (int j0 = from; j0 < to; j0 += kPiece) {
        const int len = std::min(kPiece, to - j0);
        decode_slot(p, next, k + j0, len, n1);
        decode_slot(p, now, k + j0, len, n0);
        if (prev)
          decode_slot(p, prev, k + j0, len, p0);
        else
          std::fill(p0, p0 + len, T(0));
        for (int j = 0; j < len; ++j) a[j0 + j] = ShotProblem<T>::layer_term(a[j0 + j], l[j0 + j], n1[j], n0[j], p0[j]);
      }
      return;
    }
    const T* __restrict n1 = next + k;
    const T* __restrict n0 = now + k;
    if (prev) {
      const T* __restrict p0 = prev + k;
#pragma omp simd
      for (int j = from; j < to; ++j) a[j] = ShotProblem<T>::layer_term(a[j], l[j], n1[j], n0[j], p0[j]);
    } else {
#pragma omp simd
      for (int j = from; j < to; ++j) a[j] = ShotProblem<T>::layer_term(a[j], l[j], n1[j], n0[j], T(0));
    }
  };
  for_slot_runs(p, [&](long g, long k, long n, int z, int y, int x0) {
    if (z < 0 || z >= p.nz || y < 0 || y >= p.ny) return;                     // guard planes or rows
    const int lo = std::max(0, -x0), hi = int(std::min<long>(n, p.nx - x0));  // columns of the grid
    const long b = p.state_cell(z, y, 0) + x0;
    if (p.interior_row(z, y)) {  // its columns outside the interior
      run(g, k, lo, std::min(hi, p.ix0() - x0), b);
      run(g, k, std::max(lo, p.ix1() - x0), hi, b);
    } else {
      run(g, k, lo, hi, b);
    }
  });
}

/// Re-runs the forward over interval j of a checkpointed store (ShotProblem::checkpoint_every)
/// from checkpoint j (j = 0: from rest), writing store slots jL − 1 … min(N, (j+1)L) (from 0
/// for j = 0) into the ring, with `scratch` (work_size() values) for the forward's arrays.
template <int Order, typename T>
void rerun_interval(const ShotProblem<T>& p, T* scratch, int j) {
  ShotProblem<T> q = p;
  q.work = scratch;
  T* u = q.u0();
  T* up = q.u1();
  const int L = p.checkpoint_every, first = j == 0 ? 0 : j * L - 1, last = std::min(p.nsteps, (j + 1) * L);
  if (j == 0) {
    std::memset(scratch, 0, p.work_size() * sizeof(T));
    load_initial_state(q, u, up);
  } else {
    load_state(q, u, up, p.checkpoints + std::size_t(j - 1) * p.checkpoint_size());
  }
  save_slot(q, u, first);
  for (int m = first; m < last; ++m) {
    step<Order>(q, u, up, p.source[m]);
    std::swap(u, up);
    save_slot(q, u, m + 1);
  }
}

}  // namespace

template <typename T>
void save_slot(const ShotProblem<T>& p, const T* u, int m) {
  const T* uo = u + p.origin();
  T* slot = p.store + p.slot_offset(m);
  if (!pack16::words16(p.compression)) {  // the values as T, or gathered for ZFP
    T* values = pack16::zfp_rate(p.compression) > 0 ? p.zfp_values() : slot;
    for_slot_runs(
        p, [&](long g, long k, long n, int, int, int) { std::memcpy(values + k, uo + g, std::size_t(n) * sizeof(T)); });
    if (values != slot) zfp_encode_slot(p, values, slot);
    return;
  }
  // The slot's largest magnitude, its header; then every value in 16 bits at its scale.
  unsigned long long largest = 0;
  for_slot_runs(p, [&](long g, long, long n, int, int, int) {
    for (long j = 0; j < n; ++j) largest = std::max(largest, pack16::magnitude_bits(uo[g + j]));
  });
  using U = typename pack16::Layout<T>::U;
  const long count = p.store_step_size(), words_room = (p.slot_size() - ShotProblem<T>::kAlign) * long(sizeof(T)) / 2;
  std::memset(slot, 0, std::size_t(ShotProblem<T>::kAlign) * sizeof(T));  // the header, then the words' tail
  std::memset(ShotProblem<T>::slot_words(slot) + count, 0, std::size_t(words_room - count) * 2);
  slot[0] = pack16::from_bits<T>(U(largest));
  const int s = pack16::scale_exponent(slot[0]), c = p.compression;
  std::uint16_t* words = ShotProblem<T>::slot_words(slot);
  bool runs = false;
  if constexpr (std::is_same_v<T, float>) runs = pack16::runs_apply(slot[0], s, c);
  for_slot_runs(p, [&](long g, long k, long n, int, int, int) {
    if constexpr (std::is_same_v<T, float>) {
      if (runs) {
        pack16::encode_run(uo + g, words + k, n, s, c);
        return;
      }
    }
    for (long j = 0; j < n; ++j) words[k + j] = pack16::encode(uo[g + j], s, c);
  });
}

/// One adjoint step over the rows `r` of μ (live::Rows: μ[n] is μ[n+2] elsewhere, as the
/// step leaves rows at rest); `row_done(z, y)` runs for every row, after row (z, y) of μ[n]
/// is written if it is one of `r` (the imaging of the backward sweep rides along, while
/// μ[n+1], v²Δt² and the forward field of that row are in cache).
template <int Order, typename T, typename F>
void adjoint_sweep(const ShotProblem<T>& p, const T* mu, T* mu_prev_next, const live::Rows& r, F&& row_done) {
  const StepArgs<T> a = stencil::make_step_args(p, mu, mu_prev_next);
  const int R = p.halo, tile = p.y_tile(2);  // μ's planes and, in the model rows, u's
  // Tiles of rows in y (the one row in 2-D), each one sweep down the planes: β_z, then α_z
  // (reading β_z of planes z ± halo), then the μ rows (reading both of planes z ± halo):
  // each pass `halo` planes behind the one it reads. In y likewise: α_y reads β_y of rows
  // y ± halo and the μ rows read both, so β_y runs 2·halo rows ahead of the tile's μ rows
  // and α_y `halo` rows ahead, each row's once. Each pass stays within `r`.
  const auto in_r = [&](int z) { return z >= r.z0 && z < r.z1; };
  for (int y0 = 0; y0 < p.ny; y0 += tile) {
    const int y1 = std::min(p.ny, y0 + tile), ry0 = std::max(y0, r.y0), ry1 = std::min(y1, r.y1);
    const int ba = std::max(r.y0, y0 == 0 ? 0 : std::min(p.ny, y0 + 2 * R)), bb = std::min(r.y1, y1 + 2 * R);
    const int aa = std::max(r.y0, y0 == 0 ? 0 : std::min(p.ny, y0 + R)), ab = std::min(r.y1, y1 + R);
    for (int z = 0; z < p.nz + 2 * R; ++z) {
      if (z < p.nz && in_r(z) && a.z_layer(z))
        for (int y = ry0; y < ry1; ++y) beta_row<Order>(a, z, y, a.cpml_z2 + a.zi(z, y, 0), a.a_z[z], a.b_z[z]);
      if (z >= R && z - R < p.nz && in_r(z - R) && a.z_layer(z - R))
        for (int y = ry0; y < ry1; ++y) alpha_row<Order>(a, z - R, y, false);
      if (z < 2 * R) continue;
      const int zz = z - 2 * R;
      if (a.three_d() && in_r(zz)) {  // β_y, then α_y, of the plane's front and back rows
        for (int y = ba; y < bb; ++y)
          if (a.y_layer(y)) beta_row<Order>(a, zz, y, a.cpml_y2 + a.yi(zz, y, 0), a.a_y[y], a.b_y[y]);
        for (int y = aa; y < ab; ++y)
          if (a.y_layer(y)) alpha_row<Order>(a, zz, y, true);
      }
      for (int y = y0; y < y1; ++y) {
        if (in_r(zz) && y >= ry0 && y < ry1) mu_row<Order>(a, zz, y);
        row_done(zz, y);
      }
    }
  }
  if (p.free_surface && a.z_rim(-1))
    for (int k = 1; k <= R; ++k)
      for (int y = 0; y < p.ny; ++y)
        for (int x = 0; x < p.nx; ++x) stencil::adjoint_fold_point<Order>(a, k, y, x);
}

template <int Order, typename T>
void adjoint_step(const ShotProblem<T>& p, const T* mu, T* mu_prev_next) {
  adjoint_sweep<Order>(p, mu, mu_prev_next, live::all_rows(p), [](int, int) {});
}

/// f(k, i, z, y, x) for every model cell (z, y, x), in order: k its index in the model region
/// (row-major), i its offset in the padded grid.
template <typename T, typename F>
void for_model_cells(const ShotProblem<T>& p, F&& f) {
  const int z0 = p.mz0(), z1 = p.mz1(), y0 = p.my0(), y1 = p.my1(), x0 = p.mx0(), x1 = p.mx1();
  const int w = x1 - x0, hy = y1 - y0;
  const long o = p.origin();
  for (int z = z0; z < z1; ++z)
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) {
        const long k = (long(z - z0) * hy + (y - y0)) * w + (x - x0), i = o + p.row_offset(z, y) + x;
        f(k, i, z, y, x);
      }
}

/// The source's terms of backward step m: f[m] into the correlation at the source nodes of the
/// model region (the layers' terms hold theirs), and, re-creating (`u_next`), into u[m−1].
template <typename T>
void add_source_terms(const ShotProblem<T>& p, int m, const T* mu, T* corr, T* u_next) {
  const long o = p.origin();
  for (int j = 0; j < p.nsrc; ++j) {
    int z, y, x;
    p.cell_of(p.source_node[j], z, y, x);
    if (!p.interior_point(z, y, x)) continue;
    const long i = o + p.source_node[j];
    corr[i] += mu[i] * (p.source_weight[j] * p.source[m]);
  }
  if (!u_next) return;
  const T* v = p.vdt2 + o;
  for (int j = 0; j < p.nsrc; ++j) {
    const long i = p.source_node[j];
    u_next[o + i] += v[i] * (p.source_weight[j] * p.source[m]);
  }
}

/// The rows where μ's state at the start of a backward piece ending at step `hi` (μ[hi],
/// μ[hi+1], α, β) is not all +0 — from the end: the receivers' — which each step grows as
/// the forward's (kernels/live_rows.hpp). The free surface's fold (adjoint_sweep) writes
/// planes 1 … halo of every row when the bottom layer's rim reaches the surface: such thin
/// grids sweep every row.
template <typename T>
live::Rows mu_live_rows(const ShotProblem<T>& p, const T* mu, const T* mu_next, int hi) {
  const bool folds = p.free_surface && stencil::make_step_args(p, mu, const_cast<T*>(mu_next)).z_rim(-1);
  if (p.every_row || folds) return live::all_rows(p);
  if (hi == p.nsteps && !p.adjoint_start) return live::of_receivers(p);
  return live::of_receivers(p, live::of_state(p, mu, mu_next));
}

/// The rows where the re-created u[m] or u[m+1] may hold anything but +0 at the start of a
/// backward piece (u, u_next): the pair's grid rows, its store cells beyond them (guard planes,
/// rows, columns) and the source's; each step then adds the rows the re-creation and the
/// store's slot reach (adjoint_steps). The imaging of the others adds μ·∇²(+0) alone
/// (image_row_at_rest). Only the store's cells, the re-creation and the source write u's grid
/// rows (the free surface's mirror its guard planes, from grid rows), so the rows outside hold
/// +0 in both arrays (the same bits). The whole store, ISIC and every_row image every row.
template <typename T>
live::Rows u_live_rows(const ShotProblem<T>& p, const T* u, const T* u_next, bool full) {
  if (full || p.every_row || p.isic) return live::all_rows(p);
  return live::of_sources(
      p, of_store_cells(p, u, of_store_cells(p, u_next, live::of_field(p, u, live::of_field(p, u_next)))));
}

/// The backward sweep's start (step N): μ's arrays at rest (or from adjoint_start) with the
/// last residual injected, u[N] and u[N−1] from the final state, and the sums from the
/// caller's values.
template <typename T>
void start_backward(const ShotProblem<T>& p, const T* residual, T* u_next, T* u, T* mu, T* mu_next, T* corr, T* illum,
                    const T* correlation, const T* illumination) {
  const std::size_t G = p.grid_size();
  const int N = p.nsteps;
  std::memset(p.work, 0, p.adjoint_work_size() * sizeof(T));
  std::memcpy(u_next, p.final_state, G * sizeof(T));
  std::memcpy(u, p.final_state + G, G * sizeof(T));
  if (p.adjoint_start) load_state(p, mu, mu_next, p.adjoint_start);  // μ[N], μ[N+1], α, β
  p.inject_traces(residual, mu, N);                                  // μ[N] += v²Δt² g[N]
  mirror(p, mu);
  // The sums start from the caller's values, as the CUDA launches add to them step by step:
  // the same bits whatever they hold (a sum that ends at −0 stays −0).
  for_model_cells(p, [&](long k, long i, int z, int y, int x) {
    corr[i] = p.interior_point(z, y, x) ? correlation[k] : T(0);  // outside: layer_term sums
    illum[i] = illumination[k] + u_next[i] * u_next[i];
  });
}

template <int Order, typename T>
void adjoint_steps(const ShotProblem<T>& p, const T* residual, int hi, int lo, T* correlation, T* illumination,
                   T* source_adjoint) {
  const FlushSubnormals<T> ftz;
  const std::size_t G = p.grid_size();
  const int N = p.nsteps;
  const bool full = p.storage == ShotProblem<T>::kStoreFull;
  // The steps before this call (N − hi of them) each swapped μ's pair, and re-created u
  // into its pair's other array (the whole store re-creates none).
  const bool odd = (N - hi) % 2 == 1, u_odd = odd && !full;
  T* mu_next = odd ? p.u1() : p.u0();  // μ[m+2]
  T* mu = odd ? p.u0() : p.u1();       // μ[m+1]
  T* const pair = p.work + p.work_size();
  T* u_next = u_odd ? pair + G : pair;  // u[m+1]
  T* u = u_odd ? pair : pair + G;       // u[m]
  T* corr = pair + 2 * G;               // the correlation and illumination, grid layout
  T* illum = corr + G;
  // Σμ² straight into the caller's second illumination array (row-major, added to in place).
  T* receiver = p.receiver_illumination ? illumination + p.model_cells() : nullptr;
  const long o = p.origin();

  if (hi == N) start_backward(p, residual, u_next, u, mu, mu_next, corr, illum, correlation, illumination);

  const int L = p.checkpoint_every, K = p.intervals();
  T* const at_source = source_adjoint ? source_adjoint : p.source_gradient;
  T* rerun = illum + G;        // a forward's arrays, with checkpoints
  int held[3] = {-1, -1, -1};  // a ZFP store's decoded slots (slot_for_reading)
  live::Rows live = mu_live_rows(p, mu, mu_next, hi);
  live::Rows ulive = u_live_rows(p, u, u_next, full);
  const auto lap_at_rest = laplacian_at_rest<Order>(p);
  for (int m = hi - 1; m >= lo; --m) {
    // Here u = u[m], u_next = u[m+1], mu = μ[m+1], mu_next = μ[m+2].
    if (p.reruns() && (m + 1) % L == 0 && m / L < K - 1) rerun_interval<Order>(p, rerun, m / L);  // its first step
    if (full && m < N - 1) restore_slot(p, u, m, held);
    const bool recreate = !full && m >= 1;  // u_next ← u[m−1] = 2u[m] − u[m+1] + v²Δt² (L u[m] + f[m])
    // μ[m] from μ[m+1], μ[m+2], and the imaging of step m row by row in the same sweep.
    const live::Rows rows = live::swept(p, live);
    if (p.swept_rows) *p.swept_rows += live::count(rows);
    const live::Rows urows = live::swept(p, ulive);  // u within a stencil's reach of them
    if (p.imaged_rows) *p.imaged_rows += live::count(urows);
    adjoint_sweep<Order>(p, mu, mu_next, rows, [&](int z, int y) {
      if (z < p.mz0() || z >= p.mz1() || y < p.my0() || y >= p.my1()) return;
      if (live::holds(urows, z, y))
        image_row<Order>(p, z, y, u, u_next, mu, corr, illum, receiver, recreate);
      else
        image_row_at_rest<Order>(p, z, y, mu, corr, receiver, lap_at_rest);
    });
    if (!live::whole(p, live)) live::widen(p, mu_next, rows, live);
    image_layers(p, mu, corr, m, held);
    add_source_terms(p, m, mu, corr, recreate ? u_next : nullptr);
    if (recreate) {
      mirror(p, u_next);
      const bool grow = !live::whole(p, ulive);
      restore_slot(p, u_next, m - 1, held, grow ? &ulive : nullptr);
      if (grow) live::widen_field(p, u_next, urows, ulive);
      std::swap(u, u_next);
    }
    if (at_source) {  // the transpose of the injection: Σ_j w_j μ[m+1] at node j
      T acc = p.nsrc > 0 ? p.source_weight[0] * mu[o + p.source_node[0]] : T(0);
      for (int j = 1; j < p.nsrc; ++j) acc += p.source_weight[j] * mu[o + p.source_node[j]];
      at_source[m] = acc;
    }
    p.inject_traces(residual, mu_next, m);
    mirror(p, mu_next);
    std::swap(mu, mu_next);
  }
  if (lo > 0) return;
  if (p.adjoint_end) save_state(p, mu, mu_next, p.adjoint_end);  // μ[0], μ[1], α, β
  for_model_cells(p, [&](long k, long i, int z, int y, int x) {
    if (p.interior_point(z, y, x)) correlation[k] = corr[i];  // else the caller's value, plus:
    illumination[k] = illum[i];
    T fold;
    if (p.edge_fold(corr + p.origin(), z, y, x, p.layer_share(), fold))
      correlation[k] += fold;  // the cells outside the interior that set this cell's term
  });
}

template <int Order, typename T>
void adjoint(const ShotProblem<T>& p, const T* residual, T* correlation, T* illumination, T* source_adjoint) {
  adjoint_steps<Order, T>(p, residual, p.nsteps, 0, correlation, illumination, source_adjoint);
}

#define STARWAVE_INSTANTIATE(O, T)                                                          \
  template void adjoint_step<O, T>(const ShotProblem<T>&, const T*, T*);                    \
  template void adjoint_steps<O, T>(const ShotProblem<T>&, const T*, int, int, T*, T*, T*); \
  template void adjoint<O, T>(const ShotProblem<T>&, const T*, T*, T*, T*);
STARWAVE_FOR_EACH_KERNEL(STARWAVE_INSTANTIATE)
#undef STARWAVE_INSTANTIATE
template void save_slot<float>(const ShotProblem<float>&, const float*, int);
template void save_slot<double>(const ShotProblem<double>&, const double*, int);

}  // namespace starwave::cpu::STARWAVE_CPU_LEVEL
