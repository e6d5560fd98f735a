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

template <typename T, typename Exec>
void save_slot(const ShotProblem<T>& p, const T* u_grid, int m, Exec& ex);
template <typename T, typename Exec>
void copy_grid(const T* from, T* to, std::size_t n, Exec& ex);

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
  if (p.store) save_slot(p, u, 0, ex);
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
    if (p.store) save_slot(p, u, m + 1, ex);
    if ((m + 1) % p.record_every == 0 && (m + 1) / p.record_every < nt) {
      const int n = (m + 1) / p.record_every;
      T* un = u;
      ex.sweep1d([=] SW_LAMBDA(int r) { record_body(un + o, ri, nrec, traces, nt, n, r); }, nrec);
    }
    if (!ex.ok()) return false;
  }
  if (p.final_state) {
    copy_grid(u, p.final_state, p.grid_size(), ex);
    copy_grid(up, p.final_state + p.grid_size(), p.grid_size(), ex);
  }
  return ex.ok();
}

// ---- the adjoint (kernels/stencil.hpp "the adjoint step"; kernels/cpu/adjoint.hpp) ----

/// Adjoint β pass, thread (z, x).
template <int Order, typename T>
SW_HD void adjoint_beta_body(const stencil::StepArgs<T>& a, int z, int x) {
  if (z >= a.nz || x >= a.nx) return;
  stencil::adjoint_beta_point<Order>(a, z, x);
}

/// Adjoint α pass, thread (z, x).
template <int Order, typename T>
SW_HD void adjoint_alpha_body(const stencil::StepArgs<T>& a, int z, int x) {
  if (z >= a.nz || x >= a.nx) return;
  stencil::adjoint_alpha_point<Order>(a, z, x);
}

/// Adjoint μ pass, thread (z, x).
template <int Order, typename T>
SW_HD void adjoint_u_body(const stencil::StepArgs<T>& a, int z, int x) {
  if (z >= a.nz || x >= a.nx) return;
  stencil::update_adjoint_point<Order>(a, z, x);
}

/// Free-surface fold of the adjoint's z-correction, thread (k, x), k = 1 … halo.
template <int Order, typename T>
SW_HD void adjoint_fold_body(const stencil::StepArgs<T>& a, int k, int x) {
  if (x >= a.nx) return;
  stencil::adjoint_fold_point<Order>(a, k, x);
}

/// Imaging at model cell (z, x) (model-region coordinates) of backward step m: u = u[m],
/// u_next = u[m+1], mu = μ[m+1] (pointers at grid cell (0, 0)); see cpu::adjoint.
template <int Order, typename T>
SW_HD void image_body(const ShotProblem<T>& p, const T* u, T* u_next, const T* mu, T* corr, T* illum, bool recreate,
                      int z, int x) {
  const int w = p.mx1() - p.mx0();
  if (z >= p.mz1() - p.mz0() || x >= w) return;
  const long i = long(z + p.mz0()) * p.stride + x + p.mx0(), k = long(z) * w + x;
  const T lap = stencil::d2<Order>(u + i, p.stride) / (p.dz * p.dz) + stencil::d2<Order>(u + i, 1) / (p.dx * p.dx);
  corr[k] += mu[i] * lap;
  illum[k] += u[i] * u[i];
  if (recreate) u_next[i] = T(2) * u[i] - u_next[i] + p.vdt2[p.origin() + i] * lap;
}

/// The source term of the imaging at step m (one thread).
template <typename T>
SW_HD void image_source_body(const ShotProblem<T>& p, T* u_next, const T* mu, T* corr, bool recreate, int m) {
  const long src = p.source_index;
  const long k = (src / p.stride - p.mz0()) * (p.mx1() - p.mx0()) + (src % p.stride - p.mx0());
  corr[k] += mu[src] * p.source[m];
  if (recreate) u_next[src] += p.vdt2[p.origin() + src] * p.source[m];
}

/// Illumination of the last state, model cell (z, x).
template <typename T>
SW_HD void illuminate_body(const ShotProblem<T>& p, const T* u, T* illum, int z, int x) {
  const int w = p.mx1() - p.mx0();
  if (z >= p.mz1() - p.mz0() || x >= w) return;
  const T v = u[long(z + p.mz0()) * p.stride + x + p.mx0()];
  illum[long(z) * w + x] += v * v;
}

/// Adjoint source of internal step m at receiver r: μ += v²Δt² residual.
template <typename T>
SW_HD void inject_residual_body(const ShotProblem<T>& p, const T* residual, T* mu, int m, int r) {
  const int n = m / p.record_every;
  const long i = p.receiver_index[r];
  mu[i] += p.vdt2[p.origin() + i] * residual[long(r) * p.nt + n];
}

/// Store slot copies, element k of slot m (u: pointer at grid cell (0, 0)).
template <typename T>
SW_HD void save_body(const ShotProblem<T>& p, const T* u, int m, long k) {
  p.store[long(m) * p.store_step_size() + k] = u[p.store_cell(k)];
}
template <typename T>
SW_HD void restore_body(const ShotProblem<T>& p, T* u, int m, long k) {
  u[p.store_cell(k)] = p.store[long(m) * p.store_step_size() + k];
}

template <typename T, typename Exec>
void save_slot(const ShotProblem<T>& p, const T* u_grid, int m, Exec& ex) {
  const T* u = u_grid + p.origin();
  ex.sweep1d([=] SW_LAMBDA(int k) { save_body(p, u, m, k); }, int(p.store_step_size()));
}
template <typename T, typename Exec>
void restore_slot(const ShotProblem<T>& p, T* u_grid, int m, Exec& ex) {
  T* u = u_grid + p.origin();
  ex.sweep1d([=] SW_LAMBDA(int k) { restore_body(p, u, m, k); }, int(p.store_step_size()));
}
template <typename T, typename Exec>
void copy_grid(const T* from, T* to, std::size_t n, Exec& ex) {
  ex.sweep1d([=] SW_LAMBDA(int i) { to[i] = from[i]; }, int(n));
}
template <typename T, typename Exec>
void mirror_grid(const ShotProblem<T>& p, T* u_grid, Exec& ex) {
  if (!p.free_surface) return;
  T* out = u_grid + p.origin();
  const long stride = p.stride;
  const int top = p.pml_top, halo = p.halo, nx = p.nx;
  ex.sweep1d([=] SW_LAMBDA(int t) { free_surface_body(out, stride, top, halo, nx, t); }, nx + 2 * halo);
}

/// One shot's adjoint as a sequence of launches, the same steps as cpu::adjoint(): `p`
/// as there (store and final state from run_shot, work of adjoint_work_size()); `corr`
/// and `illum` (model region, row-major) are added to.
template <int Order, typename T, typename Exec>
bool run_adjoint(const ShotProblem<T>& p, const T* residual, T* corr, T* illum, Exec& ex) {
  if (!ex.zero(p.work, p.adjoint_work_size())) return false;
  const std::size_t G = p.grid_size();
  T* mu_next = p.u0();
  T* mu = p.u1();
  T* u_next = p.work + p.work_size();
  T* u = u_next + G;
  copy_grid(p.final_state, u_next, G, ex);
  copy_grid(p.final_state + G, u, G, ex);
  const bool full = p.storage == ShotProblem<T>::kStoreFull;
  const long o = p.origin();
  const int N = p.nsteps, mh = p.mz1() - p.mz0(), mw = p.mx1() - p.mx0(), nrec = p.nrec;
  auto inject = [&](T* mu_grid, int m) {
    if (m % p.record_every != 0 || m / p.record_every >= p.nt) return;
    T* mo = mu_grid + o;
    ex.sweep1d([=] SW_LAMBDA(int r) { inject_residual_body(p, residual, mo, m, r); }, nrec);
  };
  inject(mu, N);
  mirror_grid(p, mu, ex);
  {
    const T* un = u_next + o;
    ex.sweep2d([=] SW_LAMBDA(int z, int x) { illuminate_body(p, un, illum, z, x); }, mh, mw);
  }
  for (int m = N - 1; m >= 0; --m) {
    if (full && m < N - 1) restore_slot(p, u, m, ex);
    const bool recreate = !full && m >= 1;
    {
      const T *uo = u + o, *muo = mu + o;
      T* uno = u_next + o;
      ex.sweep2d([=] SW_LAMBDA(int z, int x) { image_body<Order>(p, uo, uno, muo, corr, illum, recreate, z, x); }, mh,
                 mw);
      ex.sweep1d([=] SW_LAMBDA(int) { image_source_body(p, uno, muo, corr, recreate, m); }, 1);
    }
    if (recreate) {
      mirror_grid(p, u_next, ex);
      restore_slot(p, u_next, m - 1, ex);
      T* t = u;
      u = u_next;
      u_next = t;
    }
    const stencil::StepArgs<T> a = stencil::make_step_args(p, mu, mu_next);
    ex.sweep2d([=] SW_LAMBDA(int z, int x) { adjoint_beta_body<Order>(a, z, x); }, p.nz, p.nx);
    ex.sweep2d([=] SW_LAMBDA(int z, int x) { adjoint_alpha_body<Order>(a, z, x); }, p.nz, p.nx);
    ex.sweep2d([=] SW_LAMBDA(int z, int x) { adjoint_u_body<Order>(a, z, x); }, p.nz, p.nx);
    if (p.free_surface && a.z_rim(-1))
      ex.sweep2d([=] SW_LAMBDA(int k, int x) { adjoint_fold_body<Order>(a, k + 1, x); }, p.halo, p.nx);
    inject(mu_next, m);
    mirror_grid(p, mu_next, ex);
    T* t = mu;
    mu = mu_next;
    mu_next = t;
    if (!ex.ok()) return false;
  }
  return ex.ok();
}

}  // namespace starwave::cuda_bodies
