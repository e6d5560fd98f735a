// kernels/cpu/born.cpp — the Born modelling of one shot (kernels/cpu/born.hpp), over the
// forward step of the instruction-set level chosen (kernels/cpu/propagate.hpp).
#include "kernels/cpu/born.hpp"

#include <cstring>
#include <utility>

#include "kernels/cpu/propagate.hpp"
#include "kernels/cpu/subnormals.hpp"
#include "kernels/orders.hpp"
#include "kernels/stencil.hpp"

namespace starwave::cpu {
namespace {

/// f(first, count, model) for each run of one row's cells that lie all in the model region
/// (`model`) or all in the layers: allocation offsets first … first + count − 1, rows in
/// order (contiguous loops, no test per cell).
template <typename T, typename F>
void for_runs(const ShotProblem<T>& p, F&& f) {
  const long o = p.origin();
  for (int z = 0; z < p.nz; ++z)
    for (int y = 0; y < p.ny; ++y) {
      const long row = o + p.row_offset(z, y);
      if (z < p.mz0() || z >= p.mz1() || y < p.my0() || y >= p.my1()) {
        f(row, long(p.nx), false);
        continue;
      }
      if (p.mx0() > 0) f(row, long(p.mx0()), false);
      f(row + p.mx0(), long(p.mx1() - p.mx0()), true);
      if (p.mx1() < p.nx) f(row + p.mx1(), long(p.nx - p.mx1()), false);
    }
}

/// The model cells' secondary source of step m into `sec` (scatter · v²Δt² · (L u + f)),
/// and the layer cells' 2u[m] − u[m−1] (the part of u[m+1] − 2u[m] + u[m−1] known before the
/// step), at each cell's offset.
template <int Order, typename T>
void before_step(const ShotProblem<T>& p, const T* u, const T* up, const T* scatter, int m, T* sec) {
  const long sy = p.three_d() ? p.stride : 0;
  const T cz = T(1) / (p.dz * p.dz), cy = T(1) / (p.dy * p.dy), cx = T(1) / (p.dx * p.dx);
  for_runs(p, [&](long first, long n, bool model) {
    if (model)
      for (long i = first; i < first + n; ++i)
        sec[i] = scatter[i] * p.vdt2[i] * stencil::laplacian<Order>(u + i, p.plane, sy, cz, cy, cx);
    else
      for (long i = first; i < first + n; ++i) sec[i] = T(2) * u[i] - up[i];
  });
  const long o = p.origin();
  for (int j = 0; j < p.nsrc; ++j) {  // f[m] at the source nodes of the model region
    const long i = o + p.source_node[j];
    int z, y, x;
    p.cell_of(p.source_node[j], z, y, x);
    if (!p.layer_point(z, y, x)) sec[i] += scatter[i] * p.vdt2[i] * (p.source_weight[j] * p.source[m]);
  }
}

/// δu[m+1] += the secondary source: `sec` at the model cells, scatter · (u[m+1] − sec) at
/// the layer cells; then the free surface's mirror of δu[m+1].
template <typename T>
void add_secondary(const ShotProblem<T>& d, const T* u_next, const T* scatter, const T* sec, T* du_next) {
  for_runs(d, [&](long first, long n, bool model) {
    if (model)
      for (long i = first; i < first + n; ++i) du_next[i] += sec[i];
    else
      for (long i = first; i < first + n; ++i) du_next[i] += scatter[i] * (u_next[i] - sec[i]);
  });
  if (d.free_surface)
    for (int y = 0; y < d.ny; ++y)
      for (int x = 0; x < d.nx; ++x)
        stencil::mirror_free_surface(du_next + d.origin(), d.plane, d.pml_top, d.halo, d.nz, d.row_offset(0, y) + x);
}

template <typename T>
void record(const ShotProblem<T>& p, const T* u, int n) {
  if (!p.traces) return;
  for (int r = 0; r < p.nrec; ++r) p.traces[long(r) * p.nt + n] = p.sample(u + p.origin(), r);
}

}  // namespace

template <int Order, typename T>
void born(const ShotProblem<T>& p, const ShotProblem<T>& d, const T* scatter, T* scratch) {
  const detail::FlushSubnormals<T> ftz;
  std::memset(p.work, 0, p.work_size() * sizeof(T));
  std::memset(d.work, 0, d.work_size() * sizeof(T));
  T *u = p.u0(), *up = p.u1(), *du = d.u0(), *dup = d.u1();
  record(p, u, 0);
  record(d, du, 0);
  for (int m = 0; m < p.nsteps; ++m) {
    before_step<Order>(p, u, up, scatter, m, scratch);
    step<Order>(p, u, up, p.source[m]);
    std::swap(u, up);  // u now holds u[m+1]
    step<Order>(d, du, dup, T(0));
    add_secondary(d, u, scatter, scratch, dup);
    std::swap(du, dup);
    if ((m + 1) % p.record_every == 0 && (m + 1) / p.record_every < p.nt) {
      record(p, u, (m + 1) / p.record_every);
      record(d, du, (m + 1) / p.record_every);
    }
  }
}

#define STARWAVE_INSTANTIATE(O, T) template void born<O, T>(const ShotProblem<T>&, const ShotProblem<T>&, const T*, T*);
STARWAVE_FOR_EACH_KERNEL(STARWAVE_INSTANTIATE)
#undef STARWAVE_INSTANTIATE

}  // namespace starwave::cpu
