// src/optim/lbfgs.hpp — limited-memory BFGS with bound constraints by projection, on host
// vectors. Pure: the caller evaluates f and ∇f (a gradient task graph) and owns the loop,
// so the whole state is plain data that a restart file can hold exactly.
#pragma once

#include <functional>
#include <vector>

namespace starwave::optim {

struct LbfgsState {
  std::vector<std::vector<double>> s, y;  // the last pairs, oldest first
  int memory = 5;
};

/// Applies a symmetric positive semi-definite operator in place (the preconditioner).
using Operator = std::function<void(std::vector<double>&)>;

/// The L-BFGS search direction −H ∇f (two-loop recursion; H₀ = γ K with K = `h0` and
/// γ = sᵀy / yᵀ K y, or K alone before any pair; an empty `h0` means the identity), with
/// the components that would push a variable at a bound further out set to zero.
std::vector<double> direction(const LbfgsState& st, const std::vector<double>& x, const std::vector<double>& g,
                              double lower, double upper, const Operator& h0 = {});

/// x + α d projected onto [lower, upper].
std::vector<double> project_step(const std::vector<double>& x, const std::vector<double>& d, double alpha, double lower,
                                 double upper);

/// Adds the pair (x_new − x, g_new − g) when its curvature sᵀy is positive (else skips it,
/// which keeps H positive definite), dropping the oldest beyond `memory`.
void update(LbfgsState& st, const std::vector<double>& x, const std::vector<double>& x_new,
            const std::vector<double>& g, const std::vector<double>& g_new);

double dot(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace starwave::optim
