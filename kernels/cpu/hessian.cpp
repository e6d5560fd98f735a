// kernels/cpu/hessian.cpp — one shot's second-order adjoint (kernels/cpu/hessian.hpp): the born
// step forward with every step of u and δu kept, then the two adjoint sweeps together, over the
// steps of the instruction-set level chosen (kernels/cpu/dispatch.cpp).
#include "kernels/cpu/hessian.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "kernels/cpu/adjoint.hpp"
#include "kernels/cpu/propagate.hpp"
#include "kernels/cpu/subnormals.hpp"
#include "kernels/orders.hpp"

namespace starwave::cpu {
namespace {

/// The dense fields of every step: field(k) holds step k, k = −1 … nsteps.
template <typename T>
struct Steps {
  T* base;
  std::size_t grid;
  T* at(int k) const { return base + std::size_t(k + 1) * grid; }
};

/// The forward half: u and δu stepped together from s₀ and δs₀, δf injected into δu
/// as the forward injects f into u; every step kept in `u` and `du`, δu's traces and end state.
template <int Order, typename T>
void forward_pair(const ShotProblem<T>& p, const ShotProblem<T>& d, const T* scatter, const T* in,
                  const HessianParts& at, T* out, T* row, const Steps<T>& us, const Steps<T>& dus) {
  const std::size_t G = p.grid_size();
  const long o = p.origin();
  T* u = p.u0();
  T* up = p.u1();
  T* du = d.u0();
  T* dup = d.u1();
  std::memset(p.work, 0, p.work_size() * sizeof(T));
  std::memset(d.work, 0, d.work_size() * sizeof(T));
  load_state(p, u, up, in + at.initial);
  load_state(d, du, dup, in + at.d_initial);
  T* traces = out + at.d_traces;
  const auto record = [&](int m) {
    if (m % p.record_every != 0 || m / p.record_every >= p.nt) return;
    for (int r = 0; r < p.nrec; ++r) traces[long(r) * p.nt + m / p.record_every] = d.sample(du + o, r);
  };
  const auto keep = [&](int m) {
    std::memcpy(us.at(m), u, G * sizeof(T));
    std::memcpy(dus.at(m), du, G * sizeof(T));
  };
  std::memcpy(us.at(-1), up, G * sizeof(T));
  std::memcpy(dus.at(-1), dup, G * sizeof(T));
  keep(0);
  record(0);
  const T* d_source = in + at.d_source;
  for (int m = 0; m < p.nsteps; ++m) {
    born_step<Order>(p, u, up, d, du, dup, scatter, p.source[m], row, live::all_rows(p));
    std::swap(u, up);
    std::swap(du, dup);
    for (int j = 0; j < p.nsrc; ++j) {  // δf, injected as step() injects f
      const long i = o + p.source_node[j];
      du[i] += p.vdt2[i] * (p.source_weight[j] * d_source[m]);
    }
    keep(m + 1);
    record(m + 1);
  }
  save_state(d, du, dup, out + at.d_end);
}

/// Adds step m's terms to the sums A and B (grid layout) at every cell.
template <typename T>
void image_step(const ShotProblem<T>& p, int m, const T* scatter, const T* mu_u, const T* mu_d, const Steps<T>& us,
                const Steps<T>& dus, T* a, T* b) {
  const T *u1 = us.at(m + 1), *u0 = us.at(m), *um = us.at(m - 1);
  const T *d1 = dus.at(m + 1), *d0 = dus.at(m), *dm = dus.at(m - 1);
  for (std::size_t i = 0; i < p.grid_size(); ++i) {
    const T du2 = (u1[i] - T(2) * u0[i]) + um[i], dd2 = (d1[i] - T(2) * d0[i]) + dm[i];
    a[i] += mu_u[i] * du2 + mu_d[i] * (dd2 - scatter[i] * du2);
    b[i] += mu_d[i] * du2;
  }
}

/// A and s·B over V, each layer cell's added to the model cell it copies (z slowest, x fastest).
template <typename T>
void fold_image(const ShotProblem<T>& p, const T* scatter, const T* a, const T* b, T* image) {
  const long cells = p.model_cells(), o = p.origin();
  const int ny = p.my1() - p.my0(), nx = p.mx1() - p.mx0();
  std::fill(image, image + 2 * cells, T(0));
  for (int z = 0; z < p.nz; ++z)
    for (int y = 0; y < p.ny; ++y)
      for (int x = 0; x < p.nx; ++x) {
        const long i = o + p.row_offset(z, y) + x;
        const long k = (long(std::clamp(z, p.mz0(), p.mz1() - 1) - p.mz0()) * ny +
                        (std::clamp(y, p.my0(), p.my1() - 1) - p.my0())) *
                           nx +
                       (std::clamp(x, p.mx0(), p.mx1() - 1) - p.mx0());
        image[k] += a[i] / p.vdt2[i];
        image[cells + k] += scatter[i] * b[i] / p.vdt2[i];
      }
}

}  // namespace

template <int Order, typename T>
void hessian(const ShotProblem<T>& p_in, const T* scatter, const T* in, T* out, T* work) {
  const detail::FlushSubnormals<T> ftz;
  const HessianParts at(p_in);
  const std::size_t G = p_in.grid_size();
  const int N = p_in.nsteps;
  ShotProblem<T> p = p_in, d = p_in;  // u and μ_u in p's work arrays, δu and μ_δ in d's
  p.work = work;
  d.work = work + p.work_size();
  T* row = d.work + d.work_size();
  T* a = row + p.stride;
  T* b = a + G;
  T* held = b + G;  // μ_δ[m+2], kept across its step
  const Steps<T> us{held + G, G}, dus{held + G + std::size_t(N + 2) * G, G};
  forward_pair<Order>(p, d, scatter, in, at, out, row, us, dus);

  std::memset(p.work, 0, p.work_size() * sizeof(T));
  std::memset(d.work, 0, d.work_size() * sizeof(T));
  std::memset(a, 0, 2 * G * sizeof(T));
  T *mu_d = d.u0(), *mu_d_next = d.u1(), *mu_u = p.u0(), *mu_u_next = p.u1();
  load_state(d, mu_d, mu_d_next, in + at.adjoint_start);  // μ_δ[N], μ_δ[N+1], α, β
  const T* cotangent = in + at.cotangent;
  d.inject_traces(cotangent, mu_d, N);
  if (N >= 1)
    for (std::size_t i = 0; i < G; ++i) mu_u[i] = scatter[i] * mu_d[i];  // μ_u[N]: D²u[N−1]'s u[N]
  T* source_gradient = out + at.source_gradient;
  const long o = p.origin();
  for (int m = N - 1; m >= 0; --m) {
    // Here mu_* = μ[m+1], mu_*_next = μ[m+2].
    image_step(p, m, scatter, mu_u, mu_d, us, dus, a, b);
    T acc = T(0);
    for (int j = 0; j < p.nsrc; ++j) acc += p.source_weight[j] * mu_u[o + p.source_node[j]];
    source_gradient[m] = acc;
    std::memcpy(held, mu_d_next, G * sizeof(T));
    adjoint_step<Order>(d, mu_d, mu_d_next);  // μ_δ[m]
    d.inject_traces(cotangent, mu_d_next, m);
    adjoint_step<Order>(p, mu_u, mu_u_next);  // μ_u[m], then u[m]'s share of the secondary sources
    const T first = m >= 1 ? T(1) : T(0), third = m + 2 <= N ? T(1) : T(0);
    for (std::size_t i = 0; i < G; ++i)
      mu_u_next[i] += scatter[i] * ((first * mu_d_next[i] - T(2) * mu_d[i]) + third * held[i]);
    std::swap(mu_d, mu_d_next);
    std::swap(mu_u, mu_u_next);
  }
  // u[−1]'s share (s μ_δ[1] / V): initial_cotangent_from reads u[−1]'s cotangent as −μ[1]/V.
  if (N >= 1)
    for (std::size_t i = 0; i < G; ++i) mu_u_next[i] -= scatter[i] * mu_d_next[i];
  save_state(p, mu_u, mu_u_next, out + at.adjoint_end);
  fold_image(p, scatter, a, b, out + at.image);
}

#define STARWAVE_INSTANTIATE(O, T) template void hessian<O, T>(const ShotProblem<T>&, const T*, const T*, T*, T*);
STARWAVE_FOR_EACH_KERNEL(STARWAVE_INSTANTIATE)
#undef STARWAVE_INSTANTIATE

}  // namespace starwave::cpu
