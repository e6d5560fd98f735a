// src/workflows/source_estimate.hpp — the source wavelet estimated from the data (`fwi
// --estimate-source`): the least-squares (Wiener) filter F that best maps the data modelled with
// the current wavelet onto the observed data, frequency by frequency, applied to the wavelet.
// The data are linear in the wavelet (d = G * w), so in the true model F = W_true / W and the
// filtered wavelet is the true one wherever the data carry energy (docs/design.md §2).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "src/model/model.hpp"
#include "src/model/survey.hpp"
#include "src/numerics/propagator.hpp"

namespace starwave {

/// `fwi --estimate-source`: none; one wavelet for every shot (`band`), or one a shot (`shot`),
/// each estimated at the start of every band.
enum class SourceEstimation { kNone = 0, kBand = 1, kShot = 2 };

/// "none", "band", "shot".
const char* source_estimation_name(SourceEstimation e);

/// --estimate-source's value (InputError naming the option otherwise).
SourceEstimation parse_source_estimation(const std::string& text);

/// One shot's (or a sum of shots') filter sums over the frequencies k = 0 … L/2 of an FFT of
/// L points (the power of two ≥ 2 nt): cross[k] = Σ_r w_r conj(S_r(k)) O_r(k) (re, im) and
/// power[k] = Σ_r w_r |S_r(k)|², S the modelled and O the observed spectra; observed =
/// Σ_r w_r Σ_t o_r(t)².
struct FilterSums {
  long fft = 0;
  std::vector<double> cross, power;
  double observed = 0;
  /// this += other (the same L), in place: shots summed in shot order.
  void add(const FilterSums& other);
};

/// Shot sums of nrec traces of nt samples (`weight`: nrec trace weights, empty for 1;
/// `window`: nrec × 3 time windows, empty for none: both traces through them first).
FilterSums shot_filter_sums(const float* modelled, const float* observed, const std::vector<float>& weight,
                            const std::vector<float>& window, long nrec, long nt);

/// The wavelet through the filter F(k) = (cross + λ) / (power + λ), λ = kFilterDamping × the
/// largest power: the least-squares filter where the data carry energy, 1 (the wavelet as it
/// is) where they carry none. `wavelet`: nt samples; the result is nt samples too (the
/// filtered wavelet zero-padded to L, its first nt samples). Throws InputError when the
/// modelled or the observed data hold no energy (`what` names the band and shots).
std::vector<float> filtered_wavelet(const std::vector<float>& wavelet, const FilterSums& sums, const std::string& what);

/// λ against the largest power.
constexpr double kFilterDamping = 1e-3;

/// The wavelets `how` estimates in model `m`: every shot of `band_survey` (`current`, the
/// survey with the wavelets in use, as the band filters and selects it) modelled, each shot's
/// filter sums against its observed traces (held by band_survey, else `observed(shot)`) over
/// the traces and windows the band's misfit compares, then the filter
/// over all shots in shot order (kBand: one filter, each of current's wavelets through it) or
/// each shot's own (kShot: a wavelet a shot), applied to current's unfiltered wavelets.
/// Collective under MPI (the shots' traces reach rank 0, which needs every shot's observed
/// traces: streamed); the result is rank 0's (empty on the other ranks: see
/// shared_wavelets). `what` names the band in a refusal.
std::vector<std::vector<float>> estimate_wavelets(const Model& m, const Survey& current, const Survey& band_survey,
                                                  const NumericalOptions& o, SourceEstimation how,
                                                  const std::function<std::vector<float>(int)>& observed,
                                                  const std::string& what);

/// Rank 0's wavelets on every rank (MPI broadcast; as they are with one process).
std::vector<std::vector<float>> shared_wavelets(const std::vector<std::vector<float>>& mine);

}  // namespace starwave
