// kernels/cpu/adjoint.cpp — CPU loops of the adjoint step (kernels/stencil.hpp) and the
// backward sweep of a shot: adjoint wavefield, forward wavefield re-created from the store,
// and the imaging correlations.
#include "kernels/cpu/adjoint.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "kernels/cpu/simd.hpp"
#include "kernels/stencil.hpp"

namespace starwave::cpu {
namespace {

using detail::FlushSubnormals;
using detail::interior_row;
using stencil::StepArgs;

/// Calls f(x0, x1, j) for the side loops of row z: columns [x0, x1) and the index j of
/// column x0 in the compact x-layer arrays.
template <typename T, typename F>
void for_side_loops(const StepArgs<T>& a, int z, F&& f) {
  if (a.xloop_left > 0) f(0, a.xloop_left, a.xleft0 + long(z) * a.xstride);
  if (a.xloop_right < a.nx) f(a.xloop_right, a.nx, a.xright0 + long(z) * a.xstride);
}

/// β ← a β + b μ[n+1] in the layers (the side loops' model lanes have a = b = 0).
template <int Order, typename T>
void beta_row(const StepArgs<T>& a, int z) {
  const T* __restrict mu = a.u + long(z) * a.stride;
  if (a.z_layer(z)) {
    T* __restrict q = a.zeta_z + a.zi(z, 0);
    const T az = a.a_z[z], bz = a.b_z[z];
#pragma omp simd
    for (int x = 0; x < a.nx; ++x) q[x] = az * q[x] + bz * mu[x];
  }
  for_side_loops(a, z, [&](int x0, int x1, long j) {
    T* __restrict q = a.zeta_x + j - x0;
#pragma omp simd
    for (int x = x0; x < x1; ++x) q[x] = a.a_x[x] * q[x] + a.b_x[x] * mu[x];
  });
}

/// α ← a α − b ∂(M μ[n+1] + β) in the layers, after the β pass of the rows it reads.
template <int Order, typename T>
void alpha_row(const StepArgs<T>& a, int z) {
  const T* __restrict mu = a.u + long(z) * a.stride;
  if (a.z_layer(z)) {
    const long j = a.zi(z, 0);
    T* __restrict p = a.psi_z + j;
    const T* __restrict q = a.zeta_z + j;
    const T az = a.a_z[z], bz = a.b_z[z] * a.inv_dz;
    const long s = a.stride;
#pragma omp simd
    for (int x = 0; x < a.nx; ++x)
      p[x] = az * p[x] -
             bz * (stencil::d1_layers_only<Order>(mu + x, s, z, a.nz, a.zt, a.zb) + stencil::d1<Order>(q + x, s));
  }
  for_side_loops(a, z, [&](int x0, int x1, long j) {
    T* __restrict p = a.psi_x + j - x0;
    const T* __restrict q = a.zeta_x + j - x0;
#pragma omp simd
    for (int x = x0; x < x1; ++x)
      p[x] = a.a_x[x] * p[x] -
             a.b_x[x] * a.inv_dx *
                 (stencil::d1_layers_only<Order>(mu + x, 1, x, a.nx, a.xl, a.xr) + stencil::d1<Order>(q + x, 1));
  });
}

/// The u pass of row z: the interior update, then C_d in the layers and their rims (the
/// side loops cover the rims; beyond them α, β are zero and so is C_x).
template <int Order, typename T>
void mu_row(const StepArgs<T>& a, int z) {
  interior_row<Order>(a, z);
  const long row = long(z) * a.stride;
  T* __restrict out = a.u_prev_next + row;
  const T* __restrict v = a.vdt2 + row;
  if (a.z_rim(z)) {
    const long j = a.zi(z, 0);
    const T* __restrict p = a.psi_z + j;
    const T* __restrict q = a.zeta_z + j;
    const long s = a.stride;
#pragma omp simd
    for (int x = 0; x < a.nx; ++x)
      out[x] += v[x] * stencil::adjoint_correction<Order>(p + x, q + x, s, a.inv_dz, a.inv_dz2);
  }
  for_side_loops(a, z, [&](int x0, int x1, long j) {
    const T* __restrict p = a.psi_x + j - x0;
    const T* __restrict q = a.zeta_x + j - x0;
#pragma omp simd
    for (int x = x0; x < x1; ++x)
      out[x] += v[x] * stencil::adjoint_correction<Order>(p + x, q + x, 1, a.inv_dx, a.inv_dx2);
  });
}

template <typename T>
void mirror(const ShotProblem<T>& p, T* u_grid) {
  if (!p.free_surface) return;
  for (int x = -p.halo; x < p.nx + p.halo; ++x)
    stencil::mirror_free_surface(u_grid + p.origin(), p.stride, p.pml_top, p.halo, x);
}

template <typename T>
void restore_slot(const ShotProblem<T>& p, T* u, int m) {
  T* uo = u + p.origin();
  const long n = p.store_step_size();
  const T* slot = p.store + std::size_t(m) * std::size_t(n);
  for (long k = 0; k < n; ++k) uo[p.store_cell(k)] = slot[k];
}

/// Adds v²Δt² × the adjoint source of internal step m at the receivers (μ grid allocation).
template <typename T>
void inject_residual(const ShotProblem<T>& p, const T* residual, T* mu, int m) {
  if (m % p.record_every != 0 || m / p.record_every >= p.nt) return;
  const int n = m / p.record_every;
  T* mo = mu + p.origin();
  const T* v = p.vdt2 + p.origin();
  for (int r = 0; r < p.nrec; ++r) {
    const long i = p.receiver_index[r];
    mo[i] += v[i] * residual[long(r) * p.nt + n];
  }
}

}  // namespace

template <typename T>
void save_slot(const ShotProblem<T>& p, const T* u, int m) {
  const T* uo = u + p.origin();
  const long n = p.store_step_size();
  T* slot = p.store + std::size_t(m) * std::size_t(n);
  for (long k = 0; k < n; ++k) slot[k] = uo[p.store_cell(k)];
}

template <int Order, typename T>
void adjoint_step(const ShotProblem<T>& p, const T* mu, T* mu_prev_next) {
  const StepArgs<T> a = stencil::make_step_args(p, mu, mu_prev_next);
  const int R = p.halo;
  // β then α (α of row z reads β_z of rows z ± halo), then the μ rows: one sweep, each
  // pass `halo` rows behind the one it reads.
  for (int z = 0; z < p.nz + 2 * R; ++z) {
    if (z < p.nz) beta_row<Order>(a, z);
    if (z >= R && z - R < p.nz) alpha_row<Order>(a, z - R);
    if (z >= 2 * R) mu_row<Order>(a, z - 2 * R);
  }
}

template <int Order, typename T>
void adjoint(const ShotProblem<T>& p, const T* residual, T* correlation, T* illumination, T* source_adjoint) {
  const FlushSubnormals ftz;
  std::memset(p.work, 0, p.adjoint_work_size() * sizeof(T));
  const std::size_t G = p.grid_size();
  T* mu_next = p.u0();                 // μ[m+2]
  T* mu = p.u1();                      // μ[m+1]
  T* u_next = p.work + p.work_size();  // u[m+1]
  T* u = u_next + G;                   // u[m]
  std::memcpy(u_next, p.final_state, G * sizeof(T));
  std::memcpy(u, p.final_state + G, G * sizeof(T));
  const bool full = p.storage == ShotProblem<T>::kStoreFull;
  const int N = p.nsteps, z0 = p.mz0(), z1 = p.mz1(), x0 = p.mx0(), x1 = p.mx1(), w = x1 - x0;
  const long o = p.origin(), s = p.stride;
  const T cz = T(1) / (p.dz * p.dz), cx = T(1) / (p.dx * p.dx);
  const T* v = p.vdt2 + o;
  const long src = p.source_index;
  const long src_model = (src / s - z0) * w + (src % s - x0);

  inject_residual(p, residual, mu, N);  // μ[N] = v²Δt² g[N]
  mirror(p, mu);
  for (int z = z0; z < z1; ++z)
    for (int x = x0; x < x1; ++x)
      illumination[long(z - z0) * w + (x - x0)] += u_next[o + z * s + x] * u_next[o + z * s + x];

  for (int m = N - 1; m >= 0; --m) {
    // Here u = u[m], u_next = u[m+1], mu = μ[m+1], mu_next = μ[m+2].
    if (full && m < N - 1) restore_slot(p, u, m);
    const bool recreate = !full && m >= 1;  // u_next ← u[m−1] = 2u[m] − u[m+1] + v²Δt² (L u[m] + f[m])
    for (int z = z0; z < z1; ++z) {
      const T* __restrict uz = u + o + z * s;
      T* __restrict un = u_next + o + z * s;
      const T* __restrict lz = mu + o + z * s;
      const T* __restrict vz = v + z * s;
      T* __restrict cr = correlation + long(z - z0) * w - x0;
      T* __restrict il = illumination + long(z - z0) * w - x0;
#pragma omp simd
      for (int x = x0; x < x1; ++x) {
        const T lap = stencil::d2<Order>(uz + x, s) * cz + stencil::d2<Order>(uz + x, 1) * cx;
        cr[x] += lz[x] * lap;
        il[x] += uz[x] * uz[x];
        if (recreate) un[x] = T(2) * uz[x] - un[x] + vz[x] * lap;
      }
    }
    correlation[src_model] += mu[o + src] * p.source[m];
    if (recreate) {
      u_next[o + src] += v[src] * p.source[m];
      mirror(p, u_next);
      restore_slot(p, u_next, m - 1);
      std::swap(u, u_next);
    }
    if (source_adjoint) source_adjoint[m] = mu[o + src];
    adjoint_step<Order>(p, mu, mu_next);  // mu_next ← μ[m]
    inject_residual(p, residual, mu_next, m);
    mirror(p, mu_next);
    std::swap(mu, mu_next);
  }
}

#define STARWAVE_INSTANTIATE(O, T)                                       \
  template void adjoint_step<O, T>(const ShotProblem<T>&, const T*, T*); \
  template void adjoint<O, T>(const ShotProblem<T>&, const T*, T*, T*, T*);
STARWAVE_INSTANTIATE(2, float)
STARWAVE_INSTANTIATE(4, float)
STARWAVE_INSTANTIATE(6, float)
STARWAVE_INSTANTIATE(8, float)
STARWAVE_INSTANTIATE(2, double)
STARWAVE_INSTANTIATE(4, double)
STARWAVE_INSTANTIATE(6, double)
STARWAVE_INSTANTIATE(8, double)
#undef STARWAVE_INSTANTIATE
template void save_slot<float>(const ShotProblem<float>&, const float*, int);
template void save_slot<double>(const ShotProblem<double>&, const double*, int);

}  // namespace starwave::cpu
