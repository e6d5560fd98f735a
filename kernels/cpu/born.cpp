// kernels/cpu/born.cpp — the Born modelling of one shot (kernels/cpu/born.hpp), over the
// fused step of the instruction-set level chosen (kernels/cpu/propagate.hpp: born_step).
#include "kernels/cpu/born.hpp"

#include <cstring>
#include <utility>

#include "kernels/cpu/adjoint.hpp"
#include "kernels/cpu/propagate.hpp"
#include "kernels/cpu/subnormals.hpp"
#include "kernels/orders.hpp"

namespace starwave::cpu {
namespace {

template <typename T>
void record(const ShotProblem<T>& p, const T* u, int n) {
  if (!p.traces) return;
  for (int r = 0; r < p.nrec; ++r) p.traces[long(r) * p.nt + n] = p.sample(u + p.origin(), r);
}

}  // namespace

template <int Order, typename T>
void born_steps(const ShotProblem<T>& p, const ShotProblem<T>& d, const T* scatter, T* scratch, int lo, int hi) {
  const detail::FlushSubnormals<T> ftz;
  // Each step before this call swapped both pairs: after lo steps u[lo] is in u1 if lo is odd.
  T* u = lo % 2 == 1 ? p.u1() : p.u0();
  T* up = lo % 2 == 1 ? p.u0() : p.u1();
  T* du = lo % 2 == 1 ? d.u1() : d.u0();
  T* dup = lo % 2 == 1 ? d.u0() : d.u1();
  const auto slot = [&](const T* field, int m) { save_slot(p, field, m); };  // u kept as the forward keeps it
  if (lo == 0) {
    std::memset(p.work, 0, p.work_size() * sizeof(T));
    std::memset(d.work, 0, d.work_size() * sizeof(T));
    record(p, u, 0);
    record(d, du, 0);
  }
  keep_start(p, u, up, lo, slot);
  // The rows where either field's state is not all +0, and each step over those within its
  // reach (kernels/live_rows.hpp); δu's secondary source lies where u is not +0.
  live::Rows live = p.every_row ? live::all_rows(p) : lo == 0 ? live::of_sources(p) : live::of_state(p, u, up);
  if (lo > 0 && !p.every_row) live::merge(live, live::of_state(d, du, dup));
  for (int m = lo; m < hi; ++m) {
    const live::Rows rows = live::swept(p, live);
    if (p.swept_rows) *p.swept_rows += live::count(rows);
    born_step<Order>(p, u, up, d, du, dup, scatter, p.source[m], scratch, rows);
    std::swap(u, up);  // u, δu now hold u[m+1], δu[m+1]
    std::swap(du, dup);
    if (!live::whole(p, live)) {
      live::widen(p, u, rows, live);
      live::widen(d, du, rows, live);
    }
    keep_step(p, u, up, m + 1, slot);
    if ((m + 1) % p.record_every == 0 && (m + 1) / p.record_every < p.nt) {
      record(p, u, (m + 1) / p.record_every);
      record(d, du, (m + 1) / p.record_every);
    }
  }
  keep_final(p, u, up, hi);
}

template <int Order, typename T>
void born(const ShotProblem<T>& p, const ShotProblem<T>& d, const T* scatter, T* scratch) {
  born_steps<Order, T>(p, d, scatter, scratch, 0, p.nsteps);
}

#define STARWAVE_INSTANTIATE(O, T)                                                      \
  template void born<O, T>(const ShotProblem<T>&, const ShotProblem<T>&, const T*, T*); \
  template void born_steps<O, T>(const ShotProblem<T>&, const ShotProblem<T>&, const T*, T*, int, int);
STARWAVE_FOR_EACH_KERNEL(STARWAVE_INSTANTIATE)
#undef STARWAVE_INSTANTIATE

}  // namespace starwave::cpu
