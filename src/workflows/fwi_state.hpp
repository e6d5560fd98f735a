// src/workflows/fwi_state.hpp — an inversion's restart state: what `fwi --state` saves after
// every iteration and `--resume` reads back, exactly, with the record of what made it
// (docs/design.md §5, resume rule).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "src/model/model.hpp"
#include "src/model/survey.hpp"
#include "src/numerics/propagator.hpp"
#include "src/optim/lbfgs.hpp"
#include "src/workflows/fwi_options.hpp"

namespace starwave::fwi_state {

/// What a restart needs, exactly.
struct State {
  std::vector<double> v, g;
  std::vector<double> precond;  // 1 / (illumination + 1% of its peak) at the band's start; 0 = fixed
  double misfit = 0;
  std::vector<double> history, history_band;
  optim::LbfgsState lbfgs;
  std::vector<double> adam_m, adam_v;  // Adam's moment estimates
  int optimizer = 0;                   // 0 L-BFGS, 1 Adam, 2 gradient descent
  int iteration = 0;                   // completed, all bands
  int band = 0, band_iteration = 0;    // the current band and the iterations done in it
  bool started = false;                // the band's first evaluation (Φ, g, P) is done
  bool band_over = false;              // its line search found no decrease
  // --estimate-source: the wavelets the band models with (1, or one a shot), estimated at its
  // start; empty: the survey's own.
  std::vector<std::vector<float>> wavelets;
  // --window: the band's time windows (Survey::windows), made at its start; empty: none.
  std::vector<float> windows;
};

/// One thing that determines an inversion's result (docs/design.md §5, resume rule): saved in the
/// state as the text attribute `made_with_KEY`, and compared with the run that resumes it.
struct Setting {
  std::string key;    // attribute name after made_with_
  std::string label;  // what the user knows it as
  std::string value;  // exact, as text
};

/// Where the observed traces come from when the survey does not hold them (streamed), and
/// each shot's checksum as it was checked then (FwiOptions::observed, observed_checksums).
struct ObservedSource {
  std::function<std::vector<float>(int shot)> observed;
  std::vector<std::uint64_t> checksums;
};

/// What determines this inversion's result (the inputs' values by checksum, the numerical
/// and inversion options), each as exact text: saved with every state.
std::vector<Setting> made_with(const Model& m, const Survey& s, const NumericalOptions& o, const FwiOptions& f);

/// The same for any method that iterates on a model and data (fwi, lsrtm): the numerical
/// options, then the method's own settings (`method`), then the model's and the data's
/// identity. Collective under MPI.
std::vector<Setting> made_with(const Model& m, const Survey& s, const NumericalOptions& o,
                               const std::vector<Setting>& method, const ObservedSource& data);

/// A double as the shortest text that reads back as the same double (a Setting's value).
std::string exact_text(double x);

/// Refuses a state made by another format or with anything other than `now` (InputError
/// naming the first difference); reads nothing else. `state_format`: the root's `format`
/// text the caller writes (fwi's when not given).
void check_made_with(const std::string& path, const std::vector<Setting>& now);
void check_made_with(const std::string& path, const std::vector<Setting>& now, const std::string& state_format);

/// Writes the state to `path` (atomically), with what made it.
void save(const std::string& path, const State& st, const std::vector<Setting>& made);

/// Reads a state back for a model of `n` cells.
State load(const std::string& path, std::size_t n);

}  // namespace starwave::fwi_state
