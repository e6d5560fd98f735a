// tests/helpers.hpp — small builders shared by the tests: models, surveys and a direct
// (StarPU-free) run of one shot through the CPU kernels.
#pragma once

#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cpu/propagate.hpp"
#include "kernels/orders.hpp"
#include "src/base/aligned.hpp"
#include "src/model/model.hpp"
#include "src/model/survey.hpp"
#include "src/numerics/propagator.hpp"

namespace starwave::test {

/// The share of its record a bit-equality test runs: under the sanitizers (the Sanitize
/// build, scripts/test's second pass) a quarter — the same code over every cell at each step,
/// the checkpoint rings still wrapping several times, the fields underflowing far from the
/// points — while the Release pass runs the whole records (docs/testing.md).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr double kRecordShare = 0.25;
inline constexpr bool kSanitized = true;  // repeated runs and sweeps shortened: each run is ~8× slower
#else
inline constexpr double kRecordShare = 1.0;
inline constexpr bool kSanitized = false;
#endif

inline Model constant_model(int nz, int nx, double h, double v) {
  Model m;
  m.nz = nz;
  m.nx = nx;
  m.dz = m.dx = h;
  m.vp.assign(std::size_t(nz) * nx, v);
  return m;
}

/// A 3-D model (nz, ny, nx) of one velocity.
inline Model constant_model_3d(int nz, int ny, int nx, double h, double v) {
  Model m;
  m.dim = 3;
  m.nz = nz;
  m.ny = ny;
  m.nx = nx;
  m.dz = m.dy = m.dx = h;
  m.vp.assign(m.cells(), v);
  return m;
}

/// One shot at `src` recorded at `rec` (2-D or 3-D positions: the survey takes src's
/// dimension from `three_d`), a Ricker wavelet of peak f delayed by 1.5/f.
inline Survey point_survey(Position src, std::vector<Position> rec, double f, double dt, double t_max,
                           bool three_d = false) {
  Survey s;
  s.dim = three_d ? 3 : 2;
  s.dt = dt;
  s.nt = int64_t(std::lround(t_max / dt)) + 1;
  s.sources = {src};
  s.receivers = {rec};
  s.wavelets = {ricker(f, 1.5 / f, dt, s.nt)};
  return s;
}

/// One shot's arrays on the host and the ShotProblem pointing into them.
template <typename T>
struct PreparedShot {
  TimeStepping ts;
  Medium<T> med;
  ShotInputs<T> in;
  aligned_vector<T> work;
  std::vector<T> traces;
  ShotProblem<T> p;
};

template <typename T>
std::unique_ptr<PreparedShot<T>> prepare_shot(const Model& m, const Survey& s, const NumericalOptions& o,
                                              int shot = 0) {
  auto ps = std::make_unique<PreparedShot<T>>();
  ps->ts = choose_time_step(m, s, o);
  ps->med = build_medium<T>(m, o, ps->ts, int(s.nt), dominant_frequency(s.wavelet(shot), s.dt));
  ps->in = shot_inputs(ps->med, m, s, ps->ts, shot);
  ShotProblem<T>& p = ps->p;
  p = ps->med.layout;
  ps->med.attach(p, ps->med.buffer.data());
  ps->work.resize(p.work_size());
  ps->traces.resize(std::size_t(s.nrec()) * s.nt);
  p.work = ps->work.data();
  p.traces = ps->traces.data();
  p.nrec = s.nrec();
  ps->in.apply(p);
  p.attach_signals(ps->in.signals.data());
  p.attach_nodes(ps->in.nodes.data());
  return ps;
}

/// Runs shot `shot` with the CPU kernel directly; returns nrec × nt traces in double.
template <typename T>
std::vector<double> run_shot(const Model& m, const Survey& s, const NumericalOptions& o, int shot = 0) {
  auto ps = prepare_shot<T>(m, s, o, shot);
  if (!with_order(o.order, [&](auto order) { cpu::forward<decltype(order)::value, T>(ps->p); }))
    throw std::invalid_argument("run_shot: no kernels for order " + std::to_string(o.order));
  return std::vector<double>(ps->traces.begin(), ps->traces.end());
}

inline double norm(const std::vector<double>& a) {
  double s = 0;
  for (double v : a) s += v * v;
  return std::sqrt(s);
}

inline double diff_norm(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s);
}

/// Bit equality of two arrays (so −0 and +0 differ, and so would two NaNs of other bits).
template <typename T>
bool same_bits(const T* a, const T* b, std::size_t n) {
  return n == 0 || std::memcmp(a, b, n * sizeof(T)) == 0;  // empty arrays' data() may be null
}
template <typename T, typename A, typename B>
bool same_bits(const std::vector<T, A>& a, const std::vector<T, B>& b) {
  return a.size() == b.size() && same_bits(a.data(), b.data(), a.size());
}

/// The first element where the bits of two arrays differ, for a failure message.
template <typename T>
std::string first_difference(const T* a, const T* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (std::memcmp(a + i, b + i, sizeof(T)) != 0)
      return "element " + std::to_string(i) + ": " + std::to_string(double(a[i])) + " vs " +
             std::to_string(double(b[i]));
  return "none";
}
template <typename T, typename A, typename B>
std::string first_difference(const std::vector<T, A>& a, const std::vector<T, B>& b) {
  if (a.size() != b.size()) return "sizes differ";
  return first_difference(a.data(), b.data(), a.size());
}

inline double max_abs(const std::vector<double>& a) {
  double m = 0;
  for (double v : a) m = std::max(m, std::abs(v));
  return m;
}

/// A shot over a split store (ShotProblem::split_store, intervals of p.checkpoint_every
/// steps): one buffer per interval, the forward run interval by interval, first to last,
/// then the adjoint last to first, each on its interval's buffer, through
/// forward(p, lo, hi) and adjoint(p, hi, lo). Returns the buffers; p is left as it was.
template <typename T, typename Forward, typename Adjoint>
std::vector<aligned_vector<T>> run_split_store(ShotProblem<T>& p, Forward&& forward, Adjoint&& adjoint) {
  const ShotProblem<T> was = p;
  p.split_store = true;
  std::vector<aligned_vector<T>> buffers(std::size_t(p.intervals()));
  for (auto& b : buffers) b.assign(p.store_size(), T(0));
  auto attach = [&](int j) {
    p.store_interval = j;
    p.store = buffers[std::size_t(j)].data();
  };
  for (int j = 0; j < p.intervals(); ++j) {
    attach(j);
    forward(p, p.interval_begin(j), p.interval_end(j));
  }
  for (int j = p.intervals() - 1; j >= 0; --j) {
    attach(j);
    adjoint(p, p.interval_end(j), p.interval_begin(j));
  }
  p = was;
  return buffers;
}

}  // namespace starwave::test
