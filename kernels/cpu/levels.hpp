// kernels/cpu/levels.hpp — the CPU kernels are compiled once per instruction-set level
// (CMake's STARWAVE_CPU_LEVELS: on x86-64 the baseline every x86-64 CPU runs, AVX2 and
// AVX-512), each copy in its own namespace, and one is chosen when the process starts:
// the best this CPU runs, or the one STARWAVE_CPU_ISA names. A build made on a login node
// then runs on every compute node, at the speed of each. Every level computes the same
// bits (the same operations per point; the vector width only changes how many points go at
// once: tests/test_stencil.cpp checks it).
//
// Only kernels/cpu/*.cpp and the dispatcher include this; everything else calls the
// entry points of propagate.hpp and adjoint.hpp, which go to the chosen level.
#pragma once

#include <string>
#include <vector>

#include "kernels/live_rows.hpp"
#include "kernels/shot.hpp"

/// The entry points of one level, in namespace starwave::cpu::<level>.
#define STARWAVE_CPU_LEVEL_ENTRY_POINTS(level)                                                                    \
  namespace starwave::cpu::level {                                                                                \
  template <int Order, typename T>                                                                                \
  void forward(const ShotProblem<T>& p);                                                                          \
  template <int Order, typename T>                                                                                \
  void forward_steps(const ShotProblem<T>& p, int lo, int hi);                                                    \
  template <int Order, typename T>                                                                                \
  void step(const ShotProblem<T>& p, const T* u, T* u_prev_next, T source_value);                                 \
  template <int Order, typename T>                                                                                \
  void born_step(const ShotProblem<T>& p, const T* u, T* u_prev_next, const ShotProblem<T>& d, const T* du,       \
                 T* du_prev_next, const T* scatter, T source_value, T* row, const live::Rows& rows);              \
  template <int Order, typename T>                                                                                \
  void adjoint_step(const ShotProblem<T>& p, const T* mu, T* mu_prev_next);                                       \
  template <int Order, typename T>                                                                                \
  void adjoint(const ShotProblem<T>& p, const T* residual, T* correlation, T* illumination, T* source_adjoint);   \
  template <int Order, typename T>                                                                                \
  void adjoint_steps(const ShotProblem<T>& p, const T* residual, int hi, int lo, T* correlation, T* illumination, \
                     T* source_adjoint);                                                                          \
  template <typename T>                                                                                           \
  void save_slot(const ShotProblem<T>& p, const T* u, int m);                                                     \
  }

STARWAVE_CPU_LEVEL_ENTRY_POINTS(baseline)
STARWAVE_CPU_LEVEL_ENTRY_POINTS(avx2)
STARWAVE_CPU_LEVEL_ENTRY_POINTS(avx512)

namespace starwave::cpu {

enum class Level { kBaseline = 0, kAvx2 = 1, kAvx512 = 2 };

/// "baseline", "avx2", "avx512".
const char* level_name(Level l);
/// Whether this build holds the level's kernels, and whether this CPU can run them.
bool compiled(Level l);
bool supported(Level l);
/// The levels compiled in, lowest first.
std::vector<Level> compiled_levels();
/// The level the entry points use: the best compiled one this CPU runs, unless chosen.
Level level();
/// Chooses the level: "" when done, else why not (not compiled, not on this CPU).
std::string choose_level(Level l);
/// Chooses the level STARWAVE_CPU_ISA names, if it is set: "" when done (or unset), else
/// the message that says what is wrong with it.
std::string choose_level_from_environment();

}  // namespace starwave::cpu
