// kernels/cpu/born.cpp — the Born modelling of one shot (kernels/cpu/born.hpp), over the
// fused step of the instruction-set level chosen (kernels/cpu/propagate.hpp: born_step).
#include "kernels/cpu/born.hpp"

#include <cstring>
#include <utility>

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
void born(const ShotProblem<T>& p, const ShotProblem<T>& d, const T* scatter, T* scratch) {
  const detail::FlushSubnormals<T> ftz;
  std::memset(p.work, 0, p.work_size() * sizeof(T));
  std::memset(d.work, 0, d.work_size() * sizeof(T));
  T *u = p.u0(), *up = p.u1(), *du = d.u0(), *dup = d.u1();
  record(p, u, 0);
  record(d, du, 0);
  for (int m = 0; m < p.nsteps; ++m) {
    born_step<Order>(p, u, up, d, du, dup, scatter, p.source[m], scratch);
    std::swap(u, up);  // u, δu now hold u[m+1], δu[m+1]
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
