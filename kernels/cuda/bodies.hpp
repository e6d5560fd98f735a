// kernels/cuda/bodies.hpp — what each CUDA thread does, and the order of launches for one
// shot, written once for two executors: the real GPU (kernels/cuda/propagate.cu) and the
// host launch-emulation shim of the tests (tests/cuda_emulation.hpp), which loops over
// blocks and threads standing in for blockIdx/threadIdx (DESIGN §7). Every body is a thin
// index mapping around the per-point functions of kernels/stencil.hpp.
#pragma once

#include "kernels/stencil.hpp"

namespace starwave::cuda_bodies {

/// Thread-block shape of the 2-D sweeps, shared by the GPU and the emulation.
constexpr int kBlockX = 32;
constexpr int kBlockZ = 8;
constexpr int kBlock1D = 128;

/// Where the absorbing layers are: rows [0, zt) and [zb, nz), columns [0, xl) and [xr, nx).
struct Regions {
  int zt, zb, xl, xr;
};

template <typename T>
SW_HD Regions regions_of(const ShotProblem<T>& p) {
  return Regions{p.pml_top, p.nz - p.pml_bottom, p.pml_left, p.nx - p.pml_right};
}

/// ψ pass, thread (z, x) of the padded grid; threads outside it or outside the layers idle.
template <int Order, typename T>
SW_HD void psi_body(const stencil::StepArgs<T>& a, Regions r, int z, int x) {
  if (z >= a.nz || x >= a.nx) return;
  const bool pz = z < r.zt || z >= r.zb;
  const bool px = x < r.xl || x >= r.xr;
  if (pz || px) stencil::update_psi_point<Order>(a, pz, px, z, x);
}

/// u pass, thread (z, x).
template <int Order, typename T>
SW_HD void u_body(const stencil::StepArgs<T>& a, Regions r, int z, int x) {
  if (z >= a.nz || x >= a.nx) return;
  stencil::update_point<Order>(a, z < r.zt || z >= r.zb, x < r.xl || x >= r.xr, z, x);
}

/// Source injection (one thread): u[n+1] += v²Δt² s[m] δ_h at the source node.
template <typename T>
SW_HD void inject_body(const stencil::StepArgs<T>& a, long index, const T* source, int m) {
  a.u_prev_next[index] += a.vdt2[index] * source[m];
}

/// Free-surface mirror, thread t covers column t − halo.
template <typename T>
SW_HD void free_surface_body(T* u, long stride, int top, int halo, int nx, int t) {
  const int x = t - halo;
  if (x < nx + halo) stencil::mirror_free_surface(u, stride, top, halo, x);
}

/// Receiver sampling, thread r: traces[r, n] = u[receiver r].
template <typename T>
SW_HD void record_body(const T* u_origin, const long* receiver_index, int nrec, T* traces, int nt, int n, int r) {
  if (r < nrec) traces[long(r) * nt + n] = u_origin[receiver_index[r]];
}

/// One shot as a sequence of launches. `Exec` provides zero(ptr, count), sweep2d(body,
/// nz, nx), sweep1d(body, n) and ok(); bodies are callables of (z, x) or (t).
template <int Order, typename T, typename Exec>
bool run_shot(const ShotProblem<T>& p, Exec& ex) {
  const std::size_t g = p.grid_size();
  if (!ex.zero(p.work, p.work_size())) return false;
  T* u = p.work;
  T* up = p.work + g;
  T* pz = p.work + 2 * g;
  T* px = p.work + 3 * g;
  T* zz = p.work + 4 * g;
  T* zx = p.work + 5 * g;
  const Regions reg = regions_of(p);
  const long o = p.origin();
  const long* ri = p.receiver_index;
  const int nrec = p.nrec, nt = p.nt;
  T* traces = p.traces;
  ex.sweep1d([=] SW_LAMBDA(int r) { record_body(u + o, ri, nrec, traces, nt, 0, r); }, nrec);
  for (int m = 0; m < p.nsteps; ++m) {
    const stencil::StepArgs<T> a = stencil::make_step_args(p, u, up, pz, px, zz, zx);
    ex.sweep2d([=] SW_LAMBDA(int z, int x) { psi_body<Order>(a, reg, z, x); }, p.nz, p.nx);
    ex.sweep2d([=] SW_LAMBDA(int z, int x) { u_body<Order>(a, reg, z, x); }, p.nz, p.nx);
    const long si = p.source_index;
    const T* src = p.source;
    ex.sweep1d([=] SW_LAMBDA(int) { inject_body(a, si, src, m); }, 1);
    if (p.free_surface) {
      T* out = a.u_prev_next;
      const long stride = p.stride;
      const int top = p.pml_top, halo = p.halo, nx = p.nx;
      ex.sweep1d([=] SW_LAMBDA(int t) { free_surface_body(out, stride, top, halo, nx, t); }, nx + 2 * halo);
    }
    T* tmp = u;  // u now holds u[m+1]
    u = up;
    up = tmp;
    if ((m + 1) % p.record_every == 0 && (m + 1) / p.record_every < nt) {
      const int n = (m + 1) / p.record_every;
      T* un = u;
      ex.sweep1d([=] SW_LAMBDA(int r) { record_body(un + o, ri, nrec, traces, nt, n, r); }, nrec);
    }
    if (!ex.ok()) return false;
  }
  return ex.ok();
}

}  // namespace starwave::cuda_bodies
