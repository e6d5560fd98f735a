// src/survey.hpp — sources, receivers, wavelets and (optionally) recorded data
// (DESIGN §4: a survey is a data file without /data).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace starwave {

using Position = std::array<double, 2>;  // [z, x] in m

struct Survey {
  double dt = 0;                                 // s
  int64_t nt = 0;                                // samples per trace
  std::vector<Position> sources;                 // one per shot
  std::vector<std::vector<float>> wavelets;      // 1 (shared) or one per shot, nt each
  std::vector<std::vector<Position>> receivers;  // 1 (shared) or one per shot
  std::vector<float> data;                       // recorded traces, nrec × nt per loaded shot, or empty
  std::vector<int> data_shots;                   // the shots `data` holds, ascending (empty: every shot)

  int nshots() const { return int(sources.size()); }
  int nrec() const { return receivers.empty() ? 0 : int(receivers[0].size()); }
  const std::vector<float>& wavelet(int shot) const { return wavelets.size() == 1 ? wavelets[0] : wavelets[shot]; }
  const std::vector<Position>& receivers_of(int shot) const {
    return receivers.size() == 1 ? receivers[0] : receivers[shot];
  }

  /// Shot `shot`'s recorded traces (nrec × nt), or nullptr when they are not loaded
  /// (under MPI a rank loads only the shots it owns).
  const float* observed(int shot) const;

  /// Throws InputError naming `where` when counts, sizes or values are inconsistent.
  void validate(const std::string& where) const;
};

/// Ricker wavelet of peak frequency f (Hz) delayed by `delay` s, sampled at n·dt.
std::vector<float> ricker(double f, double delay, double dt, int64_t nt);

}  // namespace starwave
