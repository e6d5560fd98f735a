// src/workflows/lsrtm.hpp — least-squares RTM (`starwave lsrtm`): the velocity perturbation δv
// that minimises ½‖J δv − (d − F(v₀))‖²_W about a background v₀ (W the trace weights), by
// conjugate gradients on the normal equations Jᵀ W J δv = Jᵀ W (d − F(v₀)) with an optional
// diagonal preconditioner (docs/imaging.md). The first evaluation is the gradient at v₀
// (−Jᵀ W (d − F(v₀)): RTM's image in velocity); every iteration after it one task graph
// (normal_product: a born, a misfit, an adjoint and an image task a shot). After each
// iteration the whole state is written (atomically), so that a resumed run ends bit for
// bit where an uninterrupted one ends.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "src/memory/plan.hpp"
#include "src/model/model.hpp"
#include "src/model/survey.hpp"
#include "src/numerics/propagator.hpp"
#include "src/workflows/gradient.hpp"

namespace starwave {

struct LsrtmOptions {
  int iterations = 10;       // CG iterations after the first evaluation (≥ 1)
  bool precondition = true;  // diagonal: 1 / (illumination + 1 % of its peak), of the first evaluation
  // Which: Σu², Σλ² or √(Σu² Σλ²) (compensating_illumination); both sides' measured best (docs/imaging.md).
  Compensation illumination = Compensation::kBoth;
  bool mute = true;     // δv held at 0 in the acquisition zone, tapered below it (rtm_mute_weights)
  double fix_top = 0;   // δv held at 0 above this depth (m), e.g. a water layer; 0 = none
  std::string state;    // restart file, written after every iteration ("" = none)
  bool resume = false;  // continue from `state`
  bool inputs_checked = false;
  // Within an evaluation (a StarPU callback; GradientHooks::on_shot_done), and once at the
  // start (GradientHooks::on_plan).
  std::function<void(int done, int total)> on_shot_done;
  std::function<void(const MemoryNeed&, std::uint64_t, const ShotPlacement&, int)> on_plan;
  std::function<bool()> stop_requested;  // checked between evaluations
  // Streamed observed traces and their checksums (as FwiOptions::observed, observed_checksums).
  std::function<std::vector<float>(int shot)> observed;
  std::vector<std::uint64_t> observed_checksums;
};

/// Where an LSRTM run stands after iteration `iteration` (0: the first evaluation).
struct LsrtmProgress {
  int iteration = 0, iterations = 0;
  const std::vector<double>* image = nullptr;    // δv, m/s, one value a model cell
  const std::vector<double>* rtm = nullptr;      // Jᵀ W b (LsrtmResult::rtm)
  const std::vector<double>* history = nullptr;  // the misfit before the first iteration, then after each
  double misfit = 0;                             // ½‖J δv − b‖²_W
  double misfit0 = 0;                            // ½‖b‖²_W (δv = 0)
  double seconds = 0;                            // of the iteration
};

struct LsrtmResult {
  std::vector<double> image;         // δv, m/s
  std::vector<double> rtm;           // Jᵀ W b: RTM's image in velocity (the first evaluation's −∂Φ/∂v)
  std::vector<double> illumination;  // Σ_s Σ_n u_s² of the background
  std::vector<double> misfit;        // Φ before the first iteration, then after each
  int iterations = 0;                // completed
  bool stopped = false;              // stop_requested() ended it early; the state is the last complete one
};

/// Every check that needs no runtime (options, time step, positions, data): InputError.
/// --precondition's word for `l` (illumination, receiver, both, none), and `l` from it
/// (InputError naming the option otherwise).
const char* precondition_name(const LsrtmOptions& l);
void parse_precondition(const std::string& text, LsrtmOptions& l);

/// The most iterations a run takes (--iterations; a saved state's count).
inline constexpr int kMaxIterations = 100000;
/// `l.iterations` within 1 … kMaxIterations (InputError naming --iterations otherwise).
void check_lsrtm_iterations(const LsrtmOptions& l);
void check_lsrtm_inputs(const Model& background, const Survey& s, const NumericalOptions& o, const LsrtmOptions& l);

/// With `resume`: refuses (InputError naming the first difference) a state made with other
/// settings, another background or other data; reads nothing else. Collective under MPI.
void check_lsrtm_resume(const Model& background, const Survey& s, const NumericalOptions& o, const LsrtmOptions& l);

/// Needs a running Runtime. Under several MPI ranks every rank calls it with its own shots'
/// data; each rank runs the same iterations on rank 0's sums (the result on every rank;
/// rank 0 writes the state and reports through `on_iteration`).
LsrtmResult lsrtm(const Model& background, const Survey& s, const NumericalOptions& o, const LsrtmOptions& l,
                  const std::function<void(const LsrtmProgress&)>& on_iteration = {});

}  // namespace starwave
