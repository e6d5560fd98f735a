// bench/reference_case.hpp — docs/design.md §8's reference case, shared by the benchmarks:
// 600 × 250 cells at 4 m, v 1500 → 4000 m/s linear in depth, order 8, 25 Hz Ricker, shots
// at 8 m depth, a receiver on every column at 8 m.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "src/model/model.hpp"
#include "src/model/survey.hpp"
#include "src/numerics/propagator.hpp"

namespace starwave::bench {

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Whether `flag` is among the arguments; removes it, so the positional ones keep their places.
inline bool take_flag(int& argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], flag) == 0) {
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      return true;
    }
  return false;
}

inline Model reference_model() {
  Model m;
  m.nz = 600;
  m.nx = 250;
  m.dz = m.dx = 4;
  m.vp.resize(std::size_t(m.nz) * m.nx);
  for (int z = 0; z < m.nz; ++z)
    for (int x = 0; x < m.nx; ++x) m.at(z, x) = 1500 + 2500.0 * z / (m.nz - 1);
  return m;
}

/// The value after `option` among the arguments ("" when absent); removes both.
inline std::string take_option(int& argc, char** argv, const char* option) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], option) == 0) {
      std::string value = argv[i + 1];
      for (int j = i; j + 2 < argc; ++j) argv[j] = argv[j + 2];
      argc -= 2;
      return value;
    }
  return "";
}

/// `shots` sources 200 m apart from x = 80 m, `steps` + 1 samples at 0.9 × the stable step.
inline Survey reference_survey(const Model& m, int shots, int steps) {
  Survey s;
  s.dt = 0.9 * stable_time_step(m.vmax(), m.dz, m.dx, 8);
  s.nt = steps + 1;
  for (int i = 0; i < shots; ++i) s.sources.push_back({8.0, 4.0 * (20 + 50 * i)});
  s.receivers.emplace_back();
  for (int x = 0; x < m.nx; ++x) s.receivers[0].push_back({8.0, 4.0 * x});
  s.wavelets.push_back(ricker(25, 1.5 / 25, s.dt, s.nt));
  return s;
}

/// The reference survey with `shots` sources spread evenly over the surface (on grid
/// nodes), for runs of many shots.
inline Survey reference_survey_3d(const Model& m, int shots, int steps);
inline Survey spread_survey(const Model& m, int shots, int steps) {
  if (m.three_d()) return reference_survey_3d(m, shots, steps);  // spread along x already
  Survey s = reference_survey(m, 1, steps);
  s.sources.clear();
  for (int i = 0; i < shots; ++i)
    s.sources.push_back({8.0, m.dx * (10 + (shots > 1 ? ((m.nx - 21) * i) / (shots - 1) : (m.nx - 21) / 2))});
  return s;
}

/// docs/design.md §8's 3-D reference case: 160³ cells at 10 m, v 1500 → 4000 m/s linear in depth.
inline Model reference_model_3d() {
  Model m;
  m.dim = 3;
  m.nz = m.ny = m.nx = 160;
  m.dz = m.dy = m.dx = 10;
  m.vp.resize(m.cells());
  for (int z = 0; z < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x) m.at(z, y, x) = 1500 + 2500.0 * z / (m.nz - 1);
  return m;
}

/// `shots` sources along x at 20 m depth in the middle row, `steps` + 1 samples at 1 ms, a
/// 15 Hz Ricker, receivers on every 4th cell of the surface at 20 m.
inline Survey reference_survey_3d(const Model& m, int shots, int steps) {
  Survey s;
  s.dim = 3;
  s.dt = 1e-3;
  s.nt = steps + 1;
  for (int i = 0; i < shots; ++i) s.sources.push_back({20.0, 800.0, 400.0 + 800.0 * i / std::max(1, shots - 1)});
  s.receivers.emplace_back();
  for (int y = 0; y < m.ny; y += 4)
    for (int x = 0; x < m.nx; x += 4) s.receivers[0].push_back({20.0, m.dy * y, m.dx * x});
  s.wavelets.push_back(ricker(15, 1.5 / 15, s.dt, s.nt));
  return s;
}

/// The 2-D reference case, or (three_d) the 3-D one; and its survey of `shots` shots.
inline Model reference_model(bool three_d) { return three_d ? reference_model_3d() : reference_model(); }
inline Survey reference_survey_any(const Model& m, int shots, int steps) {
  return m.three_d() ? reference_survey_3d(m, shots, steps) : reference_survey(m, shots, steps);
}

}  // namespace starwave::bench
