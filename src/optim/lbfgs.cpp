// src/optim/lbfgs.cpp — see lbfgs.hpp.
#include "src/optim/lbfgs.hpp"

#include <algorithm>
#include <cstddef>

namespace starwave::optim {

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

std::vector<double> direction(const LbfgsState& st, const std::vector<double>& x, const std::vector<double>& g,
                              double lower, double upper, const Operator& h0) {
  std::vector<double> q = g;
  const std::size_t k = st.s.size();
  std::vector<double> alpha(k), rho(k);
  for (std::size_t i = k; i-- > 0;) {
    rho[i] = 1.0 / dot(st.y[i], st.s[i]);
    alpha[i] = rho[i] * dot(st.s[i], q);
    for (std::size_t j = 0; j < q.size(); ++j) q[j] -= alpha[i] * st.y[i][j];
  }
  double gamma = 1;
  if (k > 0) {
    std::vector<double> ky = st.y[k - 1];
    if (h0) h0(ky);
    const double yky = dot(st.y[k - 1], ky);
    if (yky > 0) gamma = dot(st.s[k - 1], st.y[k - 1]) / yky;
  }
  if (h0) h0(q);
  for (double& e : q) e *= gamma;
  for (std::size_t i = 0; i < k; ++i) {
    const double beta = rho[i] * dot(st.y[i], q);
    for (std::size_t j = 0; j < q.size(); ++j) q[j] += (alpha[i] - beta) * st.s[i][j];
  }
  for (std::size_t j = 0; j < q.size(); ++j) {
    q[j] = -q[j];
    if ((x[j] <= lower && q[j] < 0) || (x[j] >= upper && q[j] > 0)) q[j] = 0;  // active bound
  }
  return q;
}

std::vector<double> project_step(const std::vector<double>& x, const std::vector<double>& d, double alpha, double lower,
                                 double upper) {
  std::vector<double> out(x.size());
  for (std::size_t j = 0; j < x.size(); ++j) out[j] = std::clamp(x[j] + alpha * d[j], lower, upper);
  return out;
}

void update(LbfgsState& st, const std::vector<double>& x, const std::vector<double>& x_new,
            const std::vector<double>& g, const std::vector<double>& g_new) {
  std::vector<double> s(x.size()), y(x.size());
  for (std::size_t j = 0; j < x.size(); ++j) {
    s[j] = x_new[j] - x[j];
    y[j] = g_new[j] - g[j];
  }
  const double sy = dot(s, y);
  if (!(sy > 0)) return;
  st.s.push_back(std::move(s));
  st.y.push_back(std::move(y));
  if (int(st.s.size()) > st.memory) {
    st.s.erase(st.s.begin());
    st.y.erase(st.y.begin());
  }
}

}  // namespace starwave::optim
