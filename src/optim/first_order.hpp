// src/optim/first_order.hpp — the inversion's optimisers by name, and its first-order steps on
// mini-batches (Adam, plain gradient descent) beside L-BFGS (lbfgs.hpp). Pure functions on host
// vectors: the caller owns the loop, the gradients and the state a restart file holds.
#pragma once

#include <string>
#include <vector>

namespace starwave::optim {

/// Which optimiser an inversion runs: L-BFGS with a line search on every shot, or a fixed-rate
/// first-order step on mini-batches of shots. The numbers are those restart states record.
enum class Optimizer { kLbfgs = 0, kAdam = 1, kGd = 2 };

/// The command line's word for it: "lbfgs", "adam", "gd".
const char* optimizer_name(Optimizer o);
/// The optimiser a word names; false (nothing set) for any other word.
bool parse_optimizer(const std::string& word, Optimizer& out);

/// One Adam step (β₁ 0.9, β₂ 0.999; `t` ≥ 1 the step's number since the moments `m`, `v`
/// started) on `x` along the preconditioned gradient `h`: each cell moves by `rate` × m̂ / (√v̂ + ε)
/// (ε 10⁻⁸ of the largest √v̂), projected onto [lower, upper]; cells where `precond` is 0
/// stay.
void adam_step(std::vector<double>& x, std::vector<double>& m, std::vector<double>& v, const std::vector<double>& h,
               int t, double rate, const std::vector<double>& precond, double lower, double upper);

/// One gradient-descent step on `x` along `h`: the largest change is `rate`, projected onto
/// [lower, upper] (no step when `h` is zero).
void gd_step(std::vector<double>& x, const std::vector<double>& h, double rate, double lower, double upper);

}  // namespace starwave::optim
