// src/workflows/gradient.hpp — the gradient ∇Φ = Jᵀ (F(v) − d) of the misfit and the RTM image
// Jᵀ (d − F(v_background)) (`starwave gradient`, `starwave rtm`; docs/design.md §2 names the
// operators): per shot forward_keep (F) → misfit → adjoint (Fᵀ) → image tasks, and a fixed
// binary tree of reduce tasks over shot index (docs/design.md §3).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/misfit_trace.hpp"
#include "src/memory/plan.hpp"
#include "src/model/model.hpp"
#include "src/model/survey.hpp"
#include "src/numerics/propagator.hpp"
#include "src/workflows/modeling.hpp"  // StateGradients

namespace starwave {

struct ImagingResult {
  double misfit = 0;                          // Φ = ½ Σ_s Σ_r Σ_n (d_syn − d_obs)² (gradient only)
  std::vector<double> values;                 // (nz, nx): ∂Φ/∂v, or the raw RTM stack
  std::vector<double> illumination;           // (nz, nx): Σ_s Σ_n u_s² over internal steps
  std::vector<double> receiver_illumination;  // (nz, nx): Σ_s Σ_n λ_s², when asked (ImageSums); else empty
  TimeStepping time;
  double seconds = 0;
  double cell_updates = 0;  // padded cells × internal steps × shots, forward and adjoint
};

/// What an inversion asks of a gradient evaluation.
struct GradientHooks {
  /// Called as each shot's last task finishes (done shots so far, all shots: this rank's
  /// under MPI), from a worker thread (a StarPU callback), one call at a time: keep it
  /// short, no StarPU calls.
  std::function<void(int done, int total)> on_shot_done;
  /// The shots of this evaluation (a mini-batch), ascending; empty = every shot. Each
  /// keeps its owner (graph::owner: a block of consecutive shots per rank), which holds its observed data.
  std::vector<int> shots;
  /// Called once on rank 0 before any work: what one shot in flight holds (`need.store` of
  /// it the forward wavefield kept for the adjoint), what keeping the whole wavefield
  /// instead would take (`full_store` bytes), where the shots in flight will run and how
  /// many there are (`shots`: no more are in flight).
  std::function<void(const MemoryNeed& need, std::uint64_t full_store, const ShotPlacement& where, int shots)> on_plan;
  /// Where a shot's observed traces (nrec × nt) come from when the survey does not hold
  /// them: called on the shot's rank, on the submitting thread, as the shot is submitted;
  /// the traces are copied into the shot's handle and dropped after its last task, so the
  /// observed data in memory are those of the shots in flight (streamed from the file).
  std::function<std::vector<float>(int shot)> observed;
  /// Plan only (`starwave plan`): choose the plan (checkpoints, shots in flight; on_plan, or
  /// the refusal when one shot does not fit), then return, before any task runs (the result
  /// then holds only `time`).
  bool plan_only = false;
  /// The caller checked these inputs (check_imaging_inputs, or check_fwi_inputs for every
  /// model within an inversion's bounds): an inversion's evaluations are not checked again.
  bool inputs_checked = false;
  /// misfit_gradient(): also sum the receiver side's illumination Σλ²
  /// (ImagingResult::receiver_illumination; rtm_stack's follows its RtmOptions).
  bool receiver_illumination = false;
  /// What the data misfit compares (misfit_gradient only; kernels/misfit_trace.hpp).
  imaging::Misfit misfit = imaging::Misfit::kL2;
  /// data_vjp() through states (src/workflows/state_tasks.hpp), or null: the shots start from
  /// its initial states, the end states' cotangents join the data's, and it receives the
  /// initial states' cotangents and the source gradients. One process, the store in memory.
  StateGradients* states = nullptr;
  /// misfit_gradient(): each shot's ∂Φ/∂w of its wavelet's samples (nshots × nt, on rank 0:
  /// `starwave gradient --source-gradient`), or null.
  std::vector<double>* source_gradient = nullptr;
};

/// Φ and its exact gradient with respect to the model's velocity (the padding held fixed)
/// for the survey's observed data. Needs a running Runtime. Under several MPI ranks every
/// rank calls it (each holding its own shots' data); the result (values, illumination,
/// misfit) is complete on rank 0 only.
ImagingResult misfit_gradient(const Model& m, const Survey& s, const NumericalOptions& o,
                              const GradientHooks& hooks = {});

/// The vector-Jacobian product Jᵀ r of the modeling F (traces as model_shots gives them, J = ∂F/∂v)
/// with r the survey's data (nshots × nrec × nt, weighted by its trace weights): ∂L/∂v for any
/// loss L of the modeled traces whose ∂L/∂d is r (values: (nz, nx) or (nz, ny, nx); misfit:
/// ½ Σ w r², of no use). misfit_gradient is this with r = F(v) − d. Needs a running Runtime.
ImagingResult data_vjp(const Model& m, const Survey& s, const NumericalOptions& o, const GradientHooks& hooks = {});

/// J and Jᵀ in one graph (least-squares RTM's normal operator): values = Jᵀ W J δv (∂/∂v of
/// ½‖J δv‖²_W, W the trace weights), misfit = ½‖J δv‖²_W, illumination as a gradient's.
/// Per shot one born task (J δv, u kept for the adjoint), a misfit against zeros, an
/// adjoint and an image. `dv`: one value a model cell. The survey needs no data. Needs a
/// running Runtime; under MPI as misfit_gradient.
ImagingResult normal_product(const Model& m, const Survey& s, const NumericalOptions& o, const std::vector<double>& dv,
                             const GradientHooks& hooks = {});

/// How RTM keeps the direct wave (and whatever else the background explains) out of the
/// image: the data back-propagated are the observed data less those modeled in
///   kSmooth — a copy of the migration model smoothed below the acquisition
///             (direct_wave_model()): it predicts the direct wave but not the reflections
///             of the interfaces smoothed away, so interfaces image whether the migration
///             model is smooth or sharp (the default);
///   kModel  — the migration model itself: right for a smooth model, but a model with the
///             interfaces predicts their reflections too and the image comes out zero;
///   kNone   — nothing: the observed data as they are (the direct wave's correlations are
///             left to the acquisition mute of finish_rtm_image()).
enum class DirectWave { kSmooth, kModel, kNone };

/// How `rtm` turns its illumination-compensated stack c into /image (finish_rtm_image):
///   kCross     — ∂c/∂z: a velocity step's band-limited step becomes a zero-phase peak at
///                the interface, and the smooth low-wavenumber part goes;
///   kLaplacian — −∇²c, the Laplacian filter (Zhang & Sun 2009): it removes the
///                low-wavenumber back-scattering in every direction, not in depth alone;
///   kIsic      — the inverse-scattering imaging condition (Stolk & de Hoop; Whitmore &
///                Crawley 2012): the stack of Σ_t [∂_t u ∂_t λ − v² ∇u·∇λ] (the adjoint sums
///                ∇u·∇λ beside its correlation: ImageSums::isic; L u + f = ∂²_t u / v² makes
///                the stack v² Σ_t μ(L u + f) + v² Σ_t ∇u·∇μ = −that), compensated, as it is:
///                waves that meet travelling the same way (the back-scattering, the
///                transmissions) cancel, reflections keep a cos² of their half opening angle,
///                and the stack itself peaks (positive) at a velocity increase downwards.
enum class ImagingCondition { kCross, kLaplacian, kIsic };

/// "cross", "laplacian", "isic".
const char* imaging_condition_name(ImagingCondition c);

/// --imaging-condition's value (InputError naming the option otherwise).
ImagingCondition parse_imaging_condition(const std::string& text);

/// What the RTM stack is divided by (`rtm --illumination`): the source illumination Σu²
/// (kSource), the receiver side's Σλ² (kReceiver) or their geometric mean √(Σu² Σλ²) (kBoth),
/// each plus 1 % of its peak so unlit cells stay bounded.
enum class Compensation { kSource, kReceiver, kBoth };

/// "source", "receiver", "both".
const char* compensation_name(Compensation c);

/// --illumination's value (InputError naming the option otherwise).
Compensation parse_compensation(const std::string& text);

struct RtmOptions {
  DirectWave direct = DirectWave::kSmooth;
  // The defaults measured best on the demo's case (docs/imaging.md): ISIC's stack over √(Σu² Σλ²).
  ImagingCondition condition = ImagingCondition::kIsic;
  Compensation compensation = Compensation::kBoth;
  double smooth = 0;  // kSmooth: Gaussian σ in m; 0: direct_wave_smoothing()
};

/// The σ (m) of kSmooth: `rtm.smooth`, else half a dominant wavelength at the model's mean
/// velocity (at most the model's extent), so an interface's reflection at the dominant
/// frequency falls by e^(−2π²) and at half of it by e^(−π²/2) (under 1 %) in the smoothed
/// copy; 0 for the other choices.
double direct_wave_smoothing(const Model& m, const Survey& s, const RtmOptions& rtm);

/// The model kSmooth models the direct wave in: the migration model as it is down to the
/// deepest source or receiver, where the direct wave travels, smoothed over
/// direct_wave_smoothing() below the mute depth of rtm_mute(), a sin² taper between (the
/// image is muted there anyway: what it predicts of that zone's reflections is lost).
Model direct_wave_model(const Model& m, const Survey& s, const RtmOptions& rtm);

/// --direct-wave's value (InputError naming the option otherwise).
DirectWave parse_direct_wave(const std::string& text);

/// The RTM stack of the data (back-propagated as `rtm` says, correlated with the source
/// field's second time difference) and the illumination. Needs a running Runtime.
ImagingResult rtm_stack(const Model& m, const Survey& s, const NumericalOptions& o, const GradientHooks& hooks = {},
                        const RtmOptions& rtm = {});

/// An RTM image that is zero everywhere is refused (InputError with a hint for `rtm`),
/// never written.
void check_rtm_image(const std::vector<double>& image, const RtmOptions& rtm);

/// The illumination `rtm` divides its stack by (Compensation), from the stack's sums.
std::vector<double> compensating_illumination(const ImagingResult& r, Compensation c);

/// The RTM image as it is used: the raw stack (∝ the velocity update, raw/illumination
/// compensated by `illumination` (compensating_illumination()) plus 1% of its peak so unlit
/// cells stay bounded), differentiated in depth (kCross; kLaplacian: −∇² instead; kIsic: as
/// it is) — the velocity-update image of a step is a band-
/// limited step, its depth derivative a zero-phase reflectivity peak, and the derivative
/// removes the smooth low-wavenumber (backscattering, transmission) part — and muted in
/// the acquisition zone: zero above `acquisition_depth` (m), a sin² taper down to
/// `mute_depth`, where correlations of the direct wave around sources and receivers
/// dominate.
std::vector<double> finish_rtm_image(const Model& m, const std::vector<double>& raw,
                                     const std::vector<double>& illumination, double acquisition_depth,
                                     double mute_depth, ImagingCondition condition = ImagingCondition::kCross);

/// The depth of the deepest source or receiver, and that plus one dominant wavelength at
/// the slowest velocity of the model's top row: the mute of finish_rtm_image().
std::pair<double, double> rtm_mute(const Model& m, const Survey& s);

/// finish_rtm_image()'s mute as a weight a model cell: 0 down to the deepest source or
/// receiver, a sin² taper to 1 at rtm_mute()'s depth, 1 below.
std::vector<double> rtm_mute_weights(const Model& m, const Survey& s);

/// The image `rtm` writes (and `starwave.rtm` returns): the stack `r` finished
/// (finish_rtm_image, muted to rtm_mute's depths) and checked (check_rtm_image), with the
/// mute's depth.
struct RtmImage {
  std::vector<double> image;
  double mute_depth = 0;
};
RtmImage rtm_image(const Model& m, const Survey& s, const ImagingResult& r, const RtmOptions& rtm);

/// Checks before any work (InputError): options, time step, positions, and that the survey
/// carries data of the right shape (`streamed`: the data are read shot by shot as the shots
/// are submitted, GradientHooks::observed; the caller has checked the file).
void check_imaging_inputs(const Model& m, const Survey& s, const NumericalOptions& o, bool streamed = false);

/// The observed traces of a data file, streamed (GradientHooks::observed) rather than held.
struct StreamedData {
  std::function<std::vector<float>(int shot)> read;  // one shot's nrec × nt traces, read again
  std::vector<std::uint64_t> checksums;              // by shot: of its traces (0: another rank's shot)
  std::vector<float> kept;                           // the traces of the shot asked to be kept
};

/// Reads every shot of `path` this rank owns once, shot by shot, before any work: a NaN or
/// Inf is refused (InputError naming the file and shot); of each shot only its checksum is
/// kept (what a restart state records of the data), and the traces of shot `keep` (−1:
/// none; a shot of another rank is read for itself).
StreamedData stream_observed_data(const std::string& path, const Survey& s, int keep = -1);

}  // namespace starwave
