// kernels/cpu/dispatch.cpp — the entry points of propagate.hpp and adjoint.hpp, sent to
// the instruction-set level chosen once (kernels/cpu/levels.hpp). Compiled for the
// baseline, like everything outside the kernels.
#include <atomic>
#include <cstdlib>

#include "kernels/cpu/adjoint.hpp"
#include "kernels/cpu/levels.hpp"
#include "kernels/cpu/propagate.hpp"
#include "kernels/orders.hpp"

namespace starwave::cpu {
namespace {

#if defined(__x86_64__) && (defined(STARWAVE_CPU_LEVEL_AVX2) || defined(STARWAVE_CPU_LEVEL_AVX512))
bool cpu_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
}
bool cpu_has_avx512() {
  __builtin_cpu_init();
  return cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512cd");
}
#endif

Level best() {
  Level b = Level::kBaseline;
  for (Level l : compiled_levels())
    if (supported(l)) b = l;
  return b;
}

std::atomic<int>& chosen() {
  static std::atomic<int> l{int(best())};
  return l;
}

}  // namespace

const char* level_name(Level l) {
  switch (l) {
    case Level::kAvx2:
      return "avx2";
    case Level::kAvx512:
      return "avx512";
    default:
      return "baseline";
  }
}

bool compiled(Level l) {
  switch (l) {
#ifdef STARWAVE_CPU_LEVEL_AVX2
    case Level::kAvx2:
      return true;
#endif
#ifdef STARWAVE_CPU_LEVEL_AVX512
    case Level::kAvx512:
      return true;
#endif
    case Level::kBaseline:
      return true;
    default:
      return false;
  }
}

bool supported([[maybe_unused]] Level l) {
  switch (l) {
#if defined(__x86_64__) && (defined(STARWAVE_CPU_LEVEL_AVX2) || defined(STARWAVE_CPU_LEVEL_AVX512))
    case Level::kAvx2:
      return cpu_has_avx2();
    case Level::kAvx512:
      return cpu_has_avx512();
#endif
    case Level::kBaseline:
      return true;
    default:
      return false;
  }
}

std::vector<Level> compiled_levels() {
  std::vector<Level> out;
  for (Level l : {Level::kBaseline, Level::kAvx2, Level::kAvx512})
    if (compiled(l)) out.push_back(l);
  return out;
}

Level level() { return Level(chosen().load(std::memory_order_relaxed)); }

std::string choose_level(Level l) {
  if (!compiled(l)) return std::string("this build has no ") + level_name(l) + " kernels";
  if (!supported(l)) return std::string("this CPU cannot run the ") + level_name(l) + " kernels";
  chosen().store(int(l), std::memory_order_relaxed);
  return "";
}

std::string choose_level_from_environment() {
  const char* v = std::getenv("STARWAVE_CPU_ISA");
  if (!v || !*v) return "";
  std::string names;
  for (Level l : compiled_levels()) {
    names += std::string(names.empty() ? "" : ", ") + level_name(l);
    if (level_name(l) == std::string(v)) {
      const std::string why = choose_level(l);
      return why.empty() ? "" : "STARWAVE_CPU_ISA=" + std::string(v) + ": " + why;
    }
  }
  return "STARWAVE_CPU_ISA=" + std::string(v) + ": not one of the levels compiled in (" + names + ")";
}

// The entry points: one switch each, on the level chosen.
#ifdef STARWAVE_CPU_LEVEL_AVX2
#define STARWAVE_CASE_AVX2(...) \
  case Level::kAvx2:            \
    return avx2::__VA_ARGS__;
#else
#define STARWAVE_CASE_AVX2(...)
#endif
#ifdef STARWAVE_CPU_LEVEL_AVX512
#define STARWAVE_CASE_AVX512(...) \
  case Level::kAvx512:            \
    return avx512::__VA_ARGS__;
#else
#define STARWAVE_CASE_AVX512(...)
#endif
#define STARWAVE_DISPATCH(...)          \
  do {                                  \
    switch (level()) {                  \
      STARWAVE_CASE_AVX2(__VA_ARGS__)   \
      STARWAVE_CASE_AVX512(__VA_ARGS__) \
      default:                          \
        return baseline::__VA_ARGS__;   \
    }                                   \
  } while (false)

template <int Order, typename T>
void forward(const ShotProblem<T>& p) {
  STARWAVE_DISPATCH(template forward<Order, T>(p));
}
template <int Order, typename T>
void forward_steps(const ShotProblem<T>& p, int lo, int hi) {
  STARWAVE_DISPATCH(template forward_steps<Order, T>(p, lo, hi));
}
template <int Order, typename T>
void step(const ShotProblem<T>& p, const T* u, T* u_prev_next, T source_value) {
  STARWAVE_DISPATCH(template step<Order, T>(p, u, u_prev_next, source_value));
}
template <int Order, typename T>
void born_step(const ShotProblem<T>& p, const T* u, T* upn, const ShotProblem<T>& d, const T* du, T* dupn,
               const T* scatter, T source_value, T* row, const live::Rows& rows) {
  STARWAVE_DISPATCH(template born_step<Order, T>(p, u, upn, d, du, dupn, scatter, source_value, row, rows));
}
template <int Order, typename T>
void adjoint_step(const ShotProblem<T>& p, const T* mu, T* mu_prev_next) {
  STARWAVE_DISPATCH(template adjoint_step<Order, T>(p, mu, mu_prev_next));
}
template <int Order, typename T>
void adjoint(const ShotProblem<T>& p, const T* residual, T* correlation, T* illumination, T* source_adjoint) {
  STARWAVE_DISPATCH(template adjoint<Order, T>(p, residual, correlation, illumination, source_adjoint));
}
template <int Order, typename T>
void adjoint_steps(const ShotProblem<T>& p, const T* residual, int hi, int lo, T* correlation, T* illumination,
                   T* source_adjoint) {
  STARWAVE_DISPATCH(template adjoint_steps<Order, T>(p, residual, hi, lo, correlation, illumination, source_adjoint));
}
template <typename T>
void save_slot(const ShotProblem<T>& p, const T* u, int m) {
  STARWAVE_DISPATCH(template save_slot<T>(p, u, m));
}

#define STARWAVE_INSTANTIATE(O, T)                                                                                     \
  template void forward<O, T>(const ShotProblem<T>&);                                                                  \
  template void forward_steps<O, T>(const ShotProblem<T>&, int, int);                                                  \
  template void step<O, T>(const ShotProblem<T>&, const T*, T*, T);                                                    \
  template void born_step<O, T>(const ShotProblem<T>&, const T*, T*, const ShotProblem<T>&, const T*, T*, const T*, T, \
                                T*, const live::Rows&);                                                                \
  template void adjoint_step<O, T>(const ShotProblem<T>&, const T*, T*);                                               \
  template void adjoint<O, T>(const ShotProblem<T>&, const T*, T*, T*, T*);                                            \
  template void adjoint_steps<O, T>(const ShotProblem<T>&, const T*, int, int, T*, T*, T*);
template void save_slot<float>(const ShotProblem<float>&, const float*, int);
template void save_slot<double>(const ShotProblem<double>&, const double*, int);
STARWAVE_FOR_EACH_KERNEL(STARWAVE_INSTANTIATE)
#undef STARWAVE_INSTANTIATE

}  // namespace starwave::cpu
