// src/workflows/modeling.hpp — forward modeling d = F(v) of every shot of a survey (`starwave
// model`; the operators are named in docs/design.md §2).
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <vector>

#include "src/model/model.hpp"
#include "src/model/survey.hpp"
#include "src/numerics/propagator.hpp"

namespace starwave {

struct ModelingReport {
  TimeStepping time;
  double seconds = 0;
  double cell_updates = 0;  // padded cells × internal steps × shots
};

/// Receives one shot's traces, nrec × nt float32 (valid during the call).
using ShotSink = std::function<void(int shot, const float* traces)>;

/// Models every shot, handing each shot's traces to `sink` as the shot completes (in shot
/// order with one process; under MPI in graph::interleaved_shots' order), so that memory does
/// not grow with the number of shots. Needs a running Runtime.
/// Under several MPI ranks every rank calls it and computes its own shots; `sink` and
/// `on_shot_done` are called on rank 0 only, with every shot.
void model_each_shot(const Model& m, const Survey& s, const NumericalOptions& o, const ShotSink& sink,
                     ModelingReport* report, const std::function<void(int, int)>& on_shot_done = {});

/// Models every shot; returns traces as (nshots, nrec, nt) float32, sample n at t = n·dt.
/// Needs a running Runtime. `on_shot_done(done, total)` is called as shots complete.
std::vector<float> model_shots(const Model& m, const Survey& s, const NumericalOptions& o, ModelingReport* report,
                               const std::function<void(int, int)>& on_shot_done = {});

/// model_shots(), the traces in the run's precision (float32 or float64 values, as doubles): what
/// a caller that differentiates them needs (data_vjp). Needs a running Runtime.
std::vector<double> model_shots_exact(const Model& m, const Survey& s, const NumericalOptions& o);

/// The Born data J δv of every shot (docs/design.md §2: the derivative of F(v) along δv, one
/// value a model cell in Model::index order, m/s), each shot's traces handed to `sink` as
/// model_each_shot hands them. Runs on CPU and CUDA workers. Needs a running Runtime.
/// δv: one finite value a model cell, and with `bounded` none beyond kPerturbationBound × the
/// model's largest velocity (InputError naming `named` and what is wrong otherwise). Bounded: a
/// user's δv in m/s (J δv is the change to first order, for δv small against v); not a
/// direction of arbitrary scale (least-squares RTM's, whose step length scales it back).
inline constexpr double kPerturbationBound = 1000;
void check_perturbation(const Model& m, const std::vector<double>& dv, const std::string& named, bool bounded = true);

void born_each_shot(const Model& m, const std::vector<double>& dv, const Survey& s, const NumericalOptions& o,
                    const ShotSink& sink, ModelingReport* report,
                    const std::function<void(int, int)>& on_shot_done = {});

/// born_each_shot()'s traces in the run's precision, (nshots, nrec, nt), as doubles. Needs a
/// running Runtime.
std::vector<double> born_shots_exact(const Model& m, const std::vector<double>& dv, const Survey& s,
                                     const NumericalOptions& o);

/// Every shot's propagation state, as dense arrays (kernels/shot_state.hpp): `components`
/// arrays of shape `shape` (the grid with its absorbing layers: nz, ny, nx; ny = 1 in 2-D) a
/// shot, `per_shot` values. `initial`: where each shot starts (empty: at rest); `end`: where it
/// ends (filled by model_shots_with_states()).
struct ShotStates {
  int components = 0;
  std::array<int, 3> shape{};
  std::size_t per_shot = 0;
  std::vector<double> initial, end;
};

/// data_vjp() through states (GradientHooks::states): each shot's initial state (dense, as
/// ShotStates'; empty: at rest) and its end state's cotangent (empty: none) in; each shot's
/// initial state's cotangent (dense) and its wavelet's (nt values) out.
struct StateGradients {
  std::size_t per_shot = 0;  // a shot's dense values (ShotStates::per_shot)
  std::vector<double> initial, end_cotangent;
  std::vector<double> initial_cotangent, wavelet_gradient;
};

/// The states of the survey's shots for model `m` and options `o`, `end` sized and zero.
ShotStates shot_states(const Model& m, const Survey& s, const NumericalOptions& o);

/// model_shots_exact() from `states.initial` (every shot's state, in its layout; values not
/// finite or of another count: InputError), each shot's last state (u[nsteps], u[nsteps − 1],
/// the layers' ψ and ζ) into `states.end`. By this process alone. Needs a running Runtime.
std::vector<double> model_shots_with_states(const Model& m, const Survey& s, const NumericalOptions& o,
                                            ShotStates& states);

/// model_shots() by this process alone, whatever the ranks (a graph only it builds: rank
/// 0's pictures while the other ranks wait for the next evaluation).
std::vector<float> model_shots_alone(const Model& m, const Survey& s, const NumericalOptions& o);

/// Checks everything that can be checked before any work: options, time step, every
/// source and receiver position. Throws InputError.
void check_modeling_inputs(const Model& m, const Survey& s, const NumericalOptions& o);

}  // namespace starwave
