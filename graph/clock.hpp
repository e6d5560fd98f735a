// graph/clock.hpp — the run's clock, in seconds: the machine's, or in a StarPU-SimGrid build
// (STARWAVE_SIMGRID, docs/cluster.md) the simulated machine's, so that a simulated run reports
// the time it would take.
#pragma once

#include <chrono>

#ifdef STARWAVE_SIMGRID
#include <starpu.h>
#endif

namespace starwave::graph {

/// Whether this is a StarPU-SimGrid build: its tasks take their modelled time and compute
/// nothing, so what a run reads back from them is replaced by zeros (never the contents of
/// buffers no kernel wrote).
#ifdef STARWAVE_SIMGRID
constexpr bool kSimulated = true;
#else
constexpr bool kSimulated = false;
#endif

inline double clock_seconds() {
#ifdef STARWAVE_SIMGRID
  return starpu_timing_now() * 1e-6;
#else
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
#endif
}

}  // namespace starwave::graph
