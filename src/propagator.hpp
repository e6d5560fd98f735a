// src/propagator.hpp — turns a model, a survey and the numerical options into what the
// kernels need (DESIGN §2): the padded grid with its CPML coefficients, the internal time
// step, per-shot source samples and node indices.
#pragma once

#include <string>
#include <vector>

#include "kernels/shot.hpp"
#include "src/aligned.hpp"
#include "src/model.hpp"
#include "src/survey.hpp"

namespace starwave {

struct NumericalOptions {
  int order = 8;              // 2, 4, 6, 8
  int pml_width = 20;         // cells
  bool free_surface = false;  // no layer on top; u = 0 on the first model row
  bool double_precision = false;
  double internal_dt = 0;  // s; 0 = choose from the stability bound
  double pml_reflection = 1e-3;
  double cfl_safety = 0.9;    // automatic step = safety × stability bound (at most)
  bool full_storage = false;  // gradient/RTM: keep every step's wavefield, not the boundary

  /// Throws InputError on values out of range, naming the option.
  void validate() const;
};

/// The internal time step: the data are sampled every `k` internal steps.
struct TimeStepping {
  double dt_stable = 0;  // DESIGN §2 bound
  double dt = 0;         // internal step (data dt / k)
  int k = 1;
  int nsteps = 0;  // (nt − 1)·k
};

/// More internal steps per data sample than this means dt is not a sampling interval in
/// seconds (a data file's dt of 1e300, or milliseconds taken for seconds): refused.
inline constexpr double kMaxStepsPerSample = 10000;

/// Chooses k (or checks an explicit internal step) and refuses a survey of another
/// dimension than the model, unstable steps, a k above kMaxStepsPerSample and records of
/// more than 2^31 steps.
TimeStepping choose_time_step(const Model& m, const Survey& s, const NumericalOptions& o);

/// Largest stable step for a velocity, spacing and order (DESIGN §2); dy > 0 for a 3-D grid.
double stable_time_step(double vmax, double dz, double dx, int order, double dy = 0);

/// Refuses a survey whose positions have another dimension than the model (InputError).
void check_dimensions(const Model& m, const Survey& s);

/// Dominant frequency (Hz) of a sampled wavelet, from its amplitude spectrum.
double dominant_frequency(const std::vector<float>& w, double dt);

/// Everything shared by every shot of a run, in precision T.
template <typename T>
struct Medium {
  ShotProblem<T> layout;     // grid geometry and time-stepping fields; pointers unset
  aligned_vector<T> buffer;  // ShotProblem::medium_size(): [v²Δt² grid | a_z | b_z | a_x | b_x | a_y | b_y]
  int model_top = 0, model_front = 0, model_left = 0;  // padded-grid position of model cell (0, 0, 0)

  std::size_t grid_size() const { return layout.grid_size(); }
  /// Sets the medium pointers of `p` into `base` (a copy of `buffer` anywhere).
  void attach(ShotProblem<T>& p, const T* base) const;
};

/// The padded grid of a model (layers, strides, spacing) without the medium's values;
/// refuses a grid of 2^31 cells or more.
template <typename T>
Medium<T> medium_layout(const Model& m, const NumericalOptions& o);

template <typename T>
Medium<T> build_medium(const Model& m, const NumericalOptions& o, const TimeStepping& ts, int nt, double pml_frequency);

/// Node index (padded-grid, from the first non-guard cell) of a position in the model, or
/// InputError naming `what` when it is off the grid's nodes or outside the model.
template <typename T>
long node_index(const Medium<T>& med, const Model& m, const Position& p, const std::string& what);

/// The per-shot inputs of the forward task.
template <typename T>
struct ShotInputs {
  std::vector<T> source;    // nsteps samples of s(t)·δ_h at the internal step
  std::vector<long> nodes;  // [source index, receiver indices…, the receiver gather] (kernels/shot.hpp)
};

template <typename T>
ShotInputs<T> shot_inputs(const Medium<T>& med, const Model& m, const Survey& s, const TimeStepping& ts, int shot);

/// Band-limited resampling of `w` (interval dt) at interval dt/k, `count` samples
/// (windowed-sinc interpolation; exact at the original samples).
std::vector<double> upsample(const std::vector<float>& w, int k, int count);

}  // namespace starwave
