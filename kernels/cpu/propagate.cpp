// kernels/cpu/propagate.cpp — CPU loops for (1/v²)∂²u/∂t² − ∇²u = s δ with CPML
// (Pasalic & McGarry 2010); the per-point math lives in kernels/stencil.hpp.
//
// The padded grid is split into 3 × 3 regions (top layer / model rows / bottom layer ×
// left layer / model columns / right layer). Each region is swept by a loop instantiated
// with compile-time flags saying which absorbing terms apply, so the interior loop carries
// no PML branch and vectorises.
#include "kernels/cpu/propagate.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "kernels/stencil.hpp"

namespace starwave::cpu {
namespace {

using stencil::StepArgs;

template <int Order, bool PmlZ, bool PmlX, typename T>
void sweep_psi(const StepArgs<T>& a, int z0, int z1, int x0, int x1) {
  for (int z = z0; z < z1; ++z)
#pragma omp simd
    for (int x = x0; x < x1; ++x) stencil::update_psi<Order, PmlZ, PmlX>(a, z, x, long(z) * a.stride + x);
}

template <int Order, bool PmlZ, bool PmlX, typename T>
void sweep_u(const StepArgs<T>& a, int z0, int z1, int x0, int x1) {
  for (int z = z0; z < z1; ++z) {
    const long row = long(z) * a.stride;
    if constexpr (!PmlZ && !PmlX) {
      // Restrict-qualified locals let the compiler vectorise the in-place update.
      const T* __restrict u = a.u + row;
      T* __restrict out = a.u_prev_next + row;
      const T* __restrict v = a.vdt2 + row;
      const long s = a.stride;
      const T cz = a.inv_dz2, cx = a.inv_dx2;
#pragma omp simd
      for (int x = x0; x < x1; ++x) {
        const T lap = stencil::d2<Order>(u + x, s) * cz + stencil::d2<Order>(u + x, 1) * cx;
        out[x] = T(2) * u[x] - out[x] + v[x] * lap;
      }
    } else {
#pragma omp simd
      for (int x = x0; x < x1; ++x) stencil::update_pml<Order, PmlZ, PmlX>(a, z, x, row + x);
    }
  }
}

}  // namespace

template <int Order, typename T>
void step(const ShotProblem<T>& p, const T* u, T* upn, T* pz, T* px, T* zz, T* zx, T source_value) {
  const StepArgs<T> a = stencil::make_step_args(p, u, upn, pz, px, zz, zx);
  const int zt = p.pml_top, zb = p.nz - p.pml_bottom;
  const int xl = p.pml_left, xr = p.nx - p.pml_right;

  // ψ pass: only where some absorbing term applies.
  sweep_psi<Order, true, true>(a, 0, zt, 0, xl);
  sweep_psi<Order, true, false>(a, 0, zt, xl, xr);
  sweep_psi<Order, true, true>(a, 0, zt, xr, p.nx);
  sweep_psi<Order, false, true>(a, zt, zb, 0, xl);
  sweep_psi<Order, false, true>(a, zt, zb, xr, p.nx);
  sweep_psi<Order, true, true>(a, zb, p.nz, 0, xl);
  sweep_psi<Order, true, false>(a, zb, p.nz, xl, xr);
  sweep_psi<Order, true, true>(a, zb, p.nz, xr, p.nx);

  // u pass.
  sweep_u<Order, true, true>(a, 0, zt, 0, xl);
  sweep_u<Order, true, false>(a, 0, zt, xl, xr);
  sweep_u<Order, true, true>(a, 0, zt, xr, p.nx);
  for (int z = zt; z < zb; ++z) {  // row by row keeps the three strips of a row in cache
    sweep_u<Order, false, true>(a, z, z + 1, 0, xl);
    sweep_u<Order, false, false>(a, z, z + 1, xl, xr);
    sweep_u<Order, false, true>(a, z, z + 1, xr, p.nx);
  }
  sweep_u<Order, true, true>(a, zb, p.nz, 0, xl);
  sweep_u<Order, true, false>(a, zb, p.nz, xl, xr);
  sweep_u<Order, true, true>(a, zb, p.nz, xr, p.nx);

  a.u_prev_next[p.source_index] += a.vdt2[p.source_index] * source_value;

  if (p.free_surface)
    for (int x = -p.halo; x < p.nx + p.halo; ++x)
      stencil::mirror_free_surface(a.u_prev_next, p.stride, p.pml_top, p.halo, x);
}

template <int Order, typename T>
void forward(const ShotProblem<T>& p) {
  const std::size_t g = p.grid_size();
  std::memset(p.work, 0, p.work_size() * sizeof(T));
  T* u = p.work;
  T* up = p.work + g;
  T* pz = p.work + 2 * g;
  T* px = p.work + 3 * g;
  T* zz = p.work + 4 * g;
  T* zx = p.work + 5 * g;
  const long o = p.origin();
  auto record = [&](int n) {
    for (int r = 0; r < p.nrec; ++r) p.traces[long(r) * p.nt + n] = u[o + p.receiver_index[r]];
  };
  record(0);
  for (int m = 0; m < p.nsteps; ++m) {
    step<Order>(p, u, up, pz, px, zz, zx, p.source[m]);
    std::swap(u, up);  // u now holds u[m+1]
    if ((m + 1) % p.record_every == 0) {
      const int n = (m + 1) / p.record_every;
      if (n < p.nt) record(n);
    }
  }
}

#define STARWAVE_INSTANTIATE(O, T)                    \
  template void forward<O, T>(const ShotProblem<T>&); \
  template void step<O, T>(const ShotProblem<T>&, const T*, T*, T*, T*, T*, T*, T);
STARWAVE_INSTANTIATE(2, float)
STARWAVE_INSTANTIATE(4, float)
STARWAVE_INSTANTIATE(6, float)
STARWAVE_INSTANTIATE(8, float)
STARWAVE_INSTANTIATE(2, double)
STARWAVE_INSTANTIATE(4, double)
STARWAVE_INSTANTIATE(6, double)
STARWAVE_INSTANTIATE(8, double)
#undef STARWAVE_INSTANTIATE

}  // namespace starwave::cpu
