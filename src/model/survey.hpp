// src/model/survey.hpp — sources, receivers, wavelets and (optionally) recorded data
// (docs/design.md §4: a survey is a data file without /data).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace starwave {

/// A point in m: [z, x] in 2-D (y = 0), [z, y, x] in 3-D (docs/design.md §4's order, so
/// `{z, x}` and `{z, y, x}` read as the file's rows do).
struct Position {
  double z = 0, y = 0, x = 0;
  Position() = default;
  Position(double z_, double x_) : z(z_), x(x_) {}
  Position(double z_, double y_, double x_) : z(z_), y(y_), x(x_) {}
  bool operator==(const Position& o) const { return z == o.z && y == o.y && x == o.x; }
};

struct Survey {
  int dim = 2;                                      // 2 or 3: positions [z, x] or [z, y, x]
  double dt = 0;                                    // s
  int64_t nt = 0;                                   // samples per trace
  std::vector<Position> sources;                    // one per shot
  std::vector<std::vector<float>> wavelets;         // 1 (shared) or one per shot, nt each
  std::vector<std::vector<double>> exact_wavelets;  // the same in double, for the propagation where given (a
                                                    // float64 call from Python: its sources as given), or empty
  std::vector<std::vector<Position>> receivers;     // 1 (shared) or one per shot
  std::vector<float> data;                          // recorded traces, nrec × nt per loaded shot, or empty
  std::vector<float> data_low;  // what float64 values given as `data` keep beyond it (Python's float64
                                // cotangents: data + data_low), `data`'s layout, or empty
  std::vector<int> data_shots;  // the shots `data` holds, ascending (empty: every shot)
  std::vector<int64_t> counts;  // /receiver/count: shot s records with its first counts[s]
                                // receivers, the rest is padding (empty: all of them)
  std::vector<float> weights;   // /receiver/weight: nshots × nrec or nrec trace weights ≥ 0
                                // multiplying the residual, 0 a dead trace (empty: 1)
  std::vector<float> windows;   // each trace's time window (nshots × nrec × 3: its first and
                                // last sample and its taper's length in samples,
                                // imaging::window_taper; empty: none); made by --window

  int nshots() const { return int(sources.size()); }
  int nrec() const { return receivers.empty() ? 0 : int(receivers[0].size()); }
  const std::vector<float>& wavelet(int shot) const { return wavelets.size() == 1 ? wavelets[0] : wavelets[shot]; }
  /// Shot `shot`'s wavelet as the propagation takes it: exact_wavelets' where given.
  std::vector<double> source_wavelet(int shot) const;
  const std::vector<Position>& receivers_of(int shot) const {
    return receivers.size() == 1 ? receivers[0] : receivers[shot];
  }

  /// The receivers shot `shot` records with (the first count(shot) of its receivers).
  int count(int shot) const { return counts.empty() ? nrec() : int(counts[std::size_t(shot)]); }
  /// Shot `shot`'s nrec trace weights: /receiver/weight's (1 without), 0 past its count.
  std::vector<float> trace_weights(int shot) const;
  /// Shot `shot`'s nrec × 3 window values (empty without windows).
  std::vector<float> trace_windows(int shot) const;

  /// Each of shot `shot`'s receivers' line in 3-D: a new line starts where y changes (an
  /// areal spread is written line by line); empty in 2-D.
  std::vector<int> receiver_lines(int shot) const;

  /// Shot `shot`'s recorded traces (nrec × nt), or nullptr when they are not loaded
  /// (under MPI a rank loads only the shots it owns).
  const float* observed(int shot) const;
  /// Shot `shot`'s remainders in data_low, or null.
  const float* observed_low(int shot) const;

  /// Throws InputError naming `where` when counts, sizes or values are inconsistent.
  void validate(const std::string& where) const;
};

/// Ricker wavelet of peak frequency f (Hz) delayed by `delay` s, sampled at n·dt.
std::vector<float> ricker(double f, double delay, double dt, int64_t nt);

}  // namespace starwave
