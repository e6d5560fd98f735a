// src/synthetic/synth.hpp — built-in models and acquisitions (`starwave synth`, `starwave survey`).
#pragma once

#include <string>

#include "src/model/model.hpp"
#include "src/model/survey.hpp"

namespace starwave {

struct SynthOptions {
  std::string kind = "marmousi-like";  // constant | layered | marmousi-like | overthrust | marmousi2
  int nz = 0, nx = 0;                  // 0 = the kind's default
  int ny = 0;                          // > 0: a 3-D model (nz, ny, nx); 0: 2-D
  double spacing = 0;                  // m; 0 = the kind's default
  double velocity = 2000;              // constant kind, m/s
  std::string file;                    // marmousi2: the raw float32 file (see shared/data)
};

/// Throws InputError for an unknown kind or bad sizes.
Model synthesize(const SynthOptions& o);

/// Gaussian smoothing of the model with standard deviation `sigma` metres (for initial
/// models of synthetic inversions). `keep_water`: the top rows that hold one velocity
/// everywhere (a water layer) are restored after smoothing, so the initial model has the
/// true sea floor's water, as a processed survey would.
/// Refuses (InputError naming `option`) a negative length or one longer than the model.
Model smoothed(const Model& m, double sigma, bool keep_water = false);
void check_smoothing_length(const Model& m, double length, const std::string& option);

struct SurveyOptions {
  int nshots = 8;              // along x
  int nshots_y = 1;            // along y (3-D: an areal grid of nshots × nshots_y shots)
  double source_depth = -1;    // m below the model top; <0 = second row
  double receiver_depth = -1;  // m; <0 = second row
  int receiver_every = 1;      // one receiver every n columns (and rows, in 3-D)
  double frequency = 10;       // Ricker peak, Hz
  double dt = 0;               // s; 0 = automatic
  double t_max = 0;            // s; 0 = automatic
};

/// A regular surface acquisition over the model with a Ricker wavelet: a line of shots and
/// receivers in 2-D, areal grids of them in 3-D.
Survey regular_survey(const Model& m, const SurveyOptions& o);

}  // namespace starwave
