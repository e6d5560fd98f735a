// src/workflows/fwi_options.hpp — what an inversion is asked (FwiOptions) and what it reports
// after each iteration (FwiProgress): read by the inversion (fwi.hpp) and by its restart
// state's record of what made it (fwi_state.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/misfit_trace.hpp"
#include "src/memory/plan.hpp"
#include "src/model/model.hpp"
#include "src/optim/first_order.hpp"
#include "src/workflows/data_fit.hpp"
#include "src/workflows/source_estimate.hpp"

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
  int iterations = 10;        // per band
  double vmin = 0, vmax = 0;  // bounds (m/s); 0 = 0.75 × the initial minimum, 1.25 × the maximum
  int memory = 5;             // L-BFGS pairs
  double first_step = 50;     // m/s: the largest change of the first iteration's first trial
  double fix_top = 0;         // m: rows shallower than this keep their initial velocity (a water layer)
  optim::Optimizer optimizer = optim::Optimizer::kLbfgs;  // Adam or GD: mini-batches of shots, fixed learning rate
  int batch_shots = 0;                                    // adam, gd: shots per iteration (0 = all), drawn from `seed`
  unsigned seed = 1;          // adam, gd: the batch of iteration t depends only on (seed, t)
  double learning_rate = 20;  // adam, gd: m/s per iteration (the largest change for gd)
  double smooth = 0;          // m: Gaussian smoothing of the gradient (in the preconditioner)
  std::vector<double> bands;  // Hz, increasing: data and wavelet low-passed per band ({} = as given)
  imaging::Misfit misfit = imaging::Misfit::kL2;  // what the data misfit compares (--misfit)
  // --estimate-source: the wavelet (one, or one a shot) estimated at the start of each band
  // from the data modelled with the current one (src/workflows/source_estimate.hpp).
  SourceEstimation estimate = SourceEstimation::kNone;
  // --offsets: the traces each band compares, by offset (one range, or one a band; {} = all),
  // as trace weights (data_fit.hpp offset_selected).
  std::vector<OffsetRange> offsets;
  // --window: each trace compared around its first arrival (picked at the start of each band
  // in the data modelled then, or at a velocity), off = every sample (data_fit.hpp).
  TimeWindow window;
  std::string state;    // restart file, written after every iteration ("" = none)
  bool resume = false;  // continue from `state`
  const Model* true_model = nullptr;
  std::function<void(const FwiProgress&)> on_iteration;
  std::function<void()> on_saved;  // after each save of the state (rank 0), before that iteration's report
  // After each band's source estimation (rank 0): the band and the wavelets (1, or one a
  // shot; nt samples each, unfiltered).
  std::function<void(int band, const std::vector<std::vector<float>>& wavelets)> on_wavelets;
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

}  // namespace starwave
