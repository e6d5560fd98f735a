// src/workflows/fwi.hpp — full-waveform inversion (`starwave fwi`): L-BFGS on the velocity
// with bounds by projection and a backtracking Armijo line search, or Adam / plain
// gradient descent on mini-batches of shots; frequency bands one after the other. Every
// evaluation is one task graph, the gradient of src/workflows/gradient.hpp; the optimiser
// works on its result on the calling thread. After each iteration the whole state is written (atomically) so
// that a resumed run continues bit for bit.
#pragma once

#include <vector>

#include "src/model/model.hpp"
#include "src/model/survey.hpp"
#include "src/numerics/propagator.hpp"
#include "src/workflows/fwi_options.hpp"

namespace starwave {

struct FwiResult {
  Model model;
  std::vector<double> misfit;                // per band: Φ at its start, then after each of its iterations
  std::vector<double> band;                  // the band index of each misfit entry
  int iterations = 0;                        // completed (all of them unless stopped)
  bool stopped = false;                      // stop_requested() ended it early; the state is the last complete one
  bool converged = false;                    // the line search found no decrease: nothing more to gain
  std::vector<std::vector<float>> wavelets;  // --estimate-source: the last band's estimates (1 or a shot's each)
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
