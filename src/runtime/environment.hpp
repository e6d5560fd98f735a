// src/runtime/environment.hpp — the StarPU variables a run is given, checked before StarPU
// reads them (StarPU aborts on a value it cannot parse, after a run had claimed its output).
#pragma once

namespace starwave {

/// Refuses, in one line naming the variable, the environment StarPU would abort on: a
/// number variable that is not a whole number ≥ 0, a worker binding list without one
/// number, a scheduler it does not have. (Its home: starpu_home::prepare.)
void check_starpu_environment();

}  // namespace starwave
