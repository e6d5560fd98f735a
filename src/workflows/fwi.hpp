// src/workflows/fwi.hpp — full-waveform inversion (`starwave fwi`): L-BFGS on the velocity
// with bounds by projection and a backtracking Armijo line search, or Adam / plain
// gradient descent on mini-batches of shots; frequency bands one after the other. Every
// evaluation is one task graph, the gradient of src/workflows/imaging; the optimiser
// works on its result on the calling thread. After each iteration the whole state is written (atomically) so
// that a resumed run continues bit for bit.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "src/memory/plan.hpp"
#include "src/model/model.hpp"
#include "src/model/survey.hpp"
#include "src/numerics/propagator.hpp"

namespace starwave {

struct FwiProgress {
  int iteration = 0;        // iterations completed (all bands)
  int band = 0;             // 0-based index into FwiOptions::bands (0 when there are none)
  double frequency = 0;     // the band's low-pass corner, Hz (0 = the data as given)
  double misfit = 0;        // Φ after it
  double relative = 0;      // Φ / Φ at the start of the band (the initial model for the first)
  double model_error = -1;  // ‖v − v_true‖ / ‖v_true‖ when a true model is known, else −1
  double seconds = 0;       // this iteration
  int evaluations = 0;      // gradients computed in it (line-search trials)
  const std::vector<double>* model = nullptr;         // the current velocity (valid during the call)
  const std::vector<double>* gradient = nullptr;      // ∂Φ/∂v there
  const std::vector<double>* precond = nullptr;       // the preconditioner (0 on fixed cells)
  const std::vector<double>* history = nullptr;       // Φ before the first iteration, then after each
  const std::vector<double>* history_band = nullptr;  // the band of each history value
};

struct FwiOptions {
  int iterations = 10;              // per band
  double vmin = 0, vmax = 0;        // bounds (m/s); 0 = 0.75 × the initial minimum, 1.25 × the maximum
  int memory = 5;                   // L-BFGS pairs
  double first_step = 50;           // m/s: the largest change of the first iteration's first trial
  double fix_top = 0;               // m: rows shallower than this keep their initial velocity (a water layer)
  std::string optimizer = "lbfgs";  // "adam" or "gd": mini-batches of shots, fixed learning rate
  int batch_shots = 0;              // adam, gd: shots per iteration (0 = all), drawn from `seed`
  unsigned seed = 1;                // adam, gd: the batch of iteration t depends only on (seed, t)
  double learning_rate = 20;        // adam, gd: m/s per iteration (the largest change for gd)
  double smooth = 0;                // m: Gaussian smoothing of the gradient (in the preconditioner)
  std::vector<double> bands;        // Hz, increasing: data and wavelet low-passed per band ({} = as given)
  std::string state;                // restart file, written after every iteration ("" = none)
  bool resume = false;              // continue from `state`
  const Model* true_model = nullptr;
  std::function<void(const FwiProgress&)> on_iteration;
  std::function<void()> on_saved;  // after each save of the state (rank 0), before that iteration's report
  std::function<void(int done, int total)> on_shot_done;  // within an evaluation (a StarPU callback)
  std::function<void(const MemoryNeed&, std::uint64_t, const ShotPlacement&, int)>
      on_plan;                           // each evaluation: GradientHooks::on_plan
  std::function<bool()> stop_requested;  // checked between evaluations
  // Where a shot's observed traces come from when the survey does not hold them: read as
  // the shot is submitted (and band-filtered then), dropped after its misfit, so the data
  // in memory are those of the shots in flight (GradientHooks::observed).
  std::function<std::vector<float>(int shot)> observed;
  // With `observed`: each shot's checksum as it was checked (StreamedData::checksums of the
  // same file, one per shot), so that the state's record of the data needs no second
  // reading; empty: read to compute it.
  std::vector<std::uint64_t> observed_checksums;
  bool inputs_checked = false;  // the caller ran check_fwi_inputs on these inputs: not again
};

struct FwiResult {
  Model model;
  std::vector<double> misfit;  // per band: Φ at its start, then after each of its iterations
  std::vector<double> band;    // the band index of each misfit entry
  int iterations = 0;          // completed (all of them unless stopped)
  bool stopped = false;        // stop_requested() ended it early; the state is the last complete one
  bool converged = false;      // the line search found no decrease: nothing more to gain
};

/// The shots of iteration `t` (1-based) for a mini-batch of `k` of `nshots`: a shuffle
/// seeded by (seed, t) alone, so a resumed run draws the same batches. Sorted.
std::vector<int> batch_of(unsigned seed, int t, int nshots, int k);

/// ‖v − v_true‖ / ‖v_true‖ over the model region (the model error of the reports).
double model_error(const std::vector<double>& v, const Model& truth);

/// Every check that needs no runtime (options, time step, positions, data): InputError.
void check_fwi_inputs(const Model& initial, const Survey& s, const NumericalOptions& o, const FwiOptions& f);

/// With `resume`: refuses (InputError, one line naming the first difference) a state that
/// was made with other numerical or optimiser settings, another initial model or other
/// data than these, or by another state format; reads nothing but the state's record of
/// what made it. invert() checks the same; this lets a caller refuse before it writes
/// anything. Collective under MPI (every rank calls it; rank 0 decides).
void check_resume(const Model& initial, const Survey& s, const NumericalOptions& o, const FwiOptions& f);

/// The numerical options of every evaluation of an inversion from `initial`: the absorbing
/// layers' damping sized by the initial model's fastest velocity unless --pml-velocity says
/// otherwise, so that the misfit the optimiser follows is one smooth function of the model
/// (its gradient holds the damping fixed).
NumericalOptions fwi_numerics(const Model& initial, NumericalOptions o);

/// Needs a running Runtime. Throws InputError on bad options or an unreadable state.
/// Under several MPI ranks every rank calls it with its own shots' data: rank 0 runs the
/// optimiser, saves the state, reports, and returns the result; the other ranks evaluate
/// what rank 0 announces and return the initial model (with `stopped` as rank 0's).
FwiResult invert(const Model& initial, const Survey& s, const NumericalOptions& o, const FwiOptions& f);

}  // namespace starwave
