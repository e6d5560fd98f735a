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

/// ψ pass, thread (z, x) of the padded grid; threads outside it or outside the layers idle.
template <int Order, typename T>
SW_HD void psi_body(const stencil::StepArgs<T>& a, int z, int x) {
  if (z >= a.nz || x >= a.nx) return;
  stencil::update_psi_point<Order>(a, z, x);
}

/// u pass, thread (z, x).
template <int Order, typename T>
SW_HD void u_body(const stencil::StepArgs<T>& a, int z, int x) {
  if (z >= a.nz || x >= a.nx) return;
  stencil::update_point<Order>(a, z, x);
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
  if (!ex.zero(p.work, p.work_size())) return false;
  T* u = p.u0();
  T* up = p.u1();
  const long o = p.origin();
  const long* ri = p.receiver_index;
  const int nrec = p.nrec, nt = p.nt;
  T* traces = p.traces;
  ex.sweep1d([=] SW_LAMBDA(int r) { record_body(u + o, ri, nrec, traces, nt, 0, r); }, nrec);
  for (int m = 0; m < p.nsteps; ++m) {
    const stencil::StepArgs<T> a = stencil::make_step_args(p, u, up);
    ex.sweep2d([=] SW_LAMBDA(int z, int x) { psi_body<Order>(a, z, x); }, p.nz, p.nx);
    ex.sweep2d([=] SW_LAMBDA(int z, int x) { u_body<Order>(a, z, x); }, p.nz, p.nx);
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
