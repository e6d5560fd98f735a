// src/optim/first_order.cpp — see first_order.hpp.
#include "src/optim/first_order.hpp"

#include <algorithm>
#include <cmath>

namespace starwave::optim {

const char* optimizer_name(Optimizer o) {
  return o == Optimizer::kAdam ? "adam" : o == Optimizer::kGd ? "gd" : "lbfgs";
}

bool parse_optimizer(const std::string& word, Optimizer& out) {
  for (const Optimizer o : {Optimizer::kLbfgs, Optimizer::kAdam, Optimizer::kGd})
    if (word == optimizer_name(o)) {
      out = o;
      return true;
    }
  return false;
}

void adam_step(std::vector<double>& x, std::vector<double>& m, std::vector<double>& v, const std::vector<double>& h,
               int t, double rate, const std::vector<double>& precond, double lower, double upper) {
  const double b1 = 0.9, b2 = 0.999, c1 = 1 - std::pow(b1, t), c2 = 1 - std::pow(b2, t);
  double vmax_hat = 0;
  for (std::size_t i = 0; i < h.size(); ++i) {
    m[i] = b1 * m[i] + (1 - b1) * h[i];
    v[i] = b2 * v[i] + (1 - b2) * h[i] * h[i];
    vmax_hat = std::max(vmax_hat, std::sqrt(v[i] / c2));
  }
  const double eps = 1e-8 * vmax_hat + 1e-300;
  for (std::size_t i = 0; i < h.size(); ++i)
    if (precond[i] != 0)  // fixed cells (--fix-top) stay
      x[i] = std::clamp(x[i] - rate * (m[i] / c1) / (std::sqrt(v[i] / c2) + eps), lower, upper);
}

void gd_step(std::vector<double>& x, const std::vector<double>& h, double rate, double lower, double upper) {
  double hmax = 0;
  for (double e : h) hmax = std::max(hmax, std::abs(e));
  if (hmax > 0)
    for (std::size_t i = 0; i < h.size(); ++i) x[i] = std::clamp(x[i] - rate * h[i] / hmax, lower, upper);
}

}  // namespace starwave::optim
