// src/workflows/source_estimate.cpp — the Wiener filter's sums and the filtered wavelet, on
// the host, with the misfits' deterministic FFT (kernels/misfit_trace.hpp).
#include "src/workflows/source_estimate.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/misfit_trace.hpp"
#include "src/base/error.hpp"
#include "src/runtime/mpi.hpp"
#include "src/workflows/modeling.hpp"

namespace starwave {
using imaging::fft_twiddles;

const char* source_estimation_name(SourceEstimation e) {
  return e == SourceEstimation::kBand ? "band" : e == SourceEstimation::kShot ? "shot" : "none";
}

SourceEstimation parse_source_estimation(const std::string& text) {
  for (SourceEstimation e : {SourceEstimation::kNone, SourceEstimation::kBand, SourceEstimation::kShot})
    if (text == source_estimation_name(e)) return e;
  throw InputError("--estimate-source: '" + text +
                   "' is not one of none, band (one wavelet for every shot), shot "
                   "(one a shot)");
}

void FilterSums::add(const FilterSums& other) {
  if (cross.empty()) {
    *this = other;
    return;
  }
  for (std::size_t k = 0; k < cross.size(); ++k) cross[k] += other.cross[k];
  for (std::size_t k = 0; k < power.size(); ++k) power[k] += other.power[k];
  observed += other.observed;
}

FilterSums shot_filter_sums(const float* modelled, const float* observed, const std::vector<float>& weight,
                            const std::vector<float>& window, long nrec, long nt) {
  FilterSums f;
  f.fft = imaging::envelope_fft_length(nt);
  const long n = f.fft, half = n / 2;
  f.cross.assign(std::size_t(2 * (half + 1)), 0.0);
  f.power.assign(std::size_t(half + 1), 0.0);
  const std::vector<double> tw = fft_twiddles(n);
  std::vector<double> z(std::size_t(2 * n));
  for (long r = 0; r < nrec; ++r) {
    const double w = weight.empty() ? 1.0 : double(weight[std::size_t(r)]);
    if (w == 0) continue;
    const imaging::TraceWeights windows{nullptr, nt, window.empty() ? nullptr : window.data()};
    std::fill(z.begin(), z.end(), 0.0);
    for (long t = 0; t < nt; ++t) {  // both real traces in one transform: z = s + i o
      const double taper = windows.taper(r, t);
      z[std::size_t(2 * t)] = taper * double(modelled[r * nt + t]);
      z[std::size_t(2 * t + 1)] = taper * double(observed[r * nt + t]);
      f.observed += w * z[std::size_t(2 * t + 1)] * z[std::size_t(2 * t + 1)];
    }
    imaging::fft(z.data(), n, tw.data(), -1);
    for (long k = 0; k <= half; ++k) {
      const long m = (n - k) % n;  // S(k) = (Z(k) + conj Z(−k)) / 2, O(k) = (Z(k) − conj Z(−k)) / 2i
      const double zr = z[std::size_t(2 * k)], zi = z[std::size_t(2 * k + 1)];
      const double mr = z[std::size_t(2 * m)], mi = z[std::size_t(2 * m + 1)];
      const double sr = 0.5 * (zr + mr), si = 0.5 * (zi - mi);
      const double orr = 0.5 * (zi + mi), oi = -0.5 * (zr - mr);
      f.cross[std::size_t(2 * k)] += w * (sr * orr + si * oi);  // conj(S) O
      f.cross[std::size_t(2 * k + 1)] += w * (sr * oi - si * orr);
      f.power[std::size_t(k)] += w * (sr * sr + si * si);
    }
  }
  return f;
}

std::vector<float> filtered_wavelet(const std::vector<float>& wavelet, const FilterSums& sums,
                                    const std::string& what) {
  const long n = sums.fft, half = n / 2, nt = long(wavelet.size());
  double peak = 0;
  for (double p : sums.power) peak = std::max(peak, p);
  if (!(peak > 0) || !std::isfinite(peak))
    throw InputError("--estimate-source: " + what + ": the modelled data hold no energy to estimate the wavelet from");
  if (!(sums.observed > 0))
    throw InputError("--estimate-source: " + what + ": the observed data hold no energy to estimate the wavelet from");
  const double lambda = kFilterDamping * peak;
  const std::vector<double> tw = fft_twiddles(n);
  std::vector<double> z(std::size_t(2 * n), 0.0);
  for (long t = 0; t < nt && t < n; ++t) z[std::size_t(2 * t)] = double(wavelet[std::size_t(t)]);
  imaging::fft(z.data(), n, tw.data(), -1);
  for (long k = 0; k < n; ++k) {  // F(−k) = conj F(k): the filtered wavelet stays real
    const long j = k <= half ? k : n - k;
    const double sign = k <= half ? 1.0 : -1.0;
    const double p = sums.power[std::size_t(j)] + lambda;
    const double fr = (sums.cross[std::size_t(2 * j)] + lambda) / p, fi = sign * sums.cross[std::size_t(2 * j + 1)] / p;
    const double a = z[std::size_t(2 * k)], b = z[std::size_t(2 * k + 1)];
    z[std::size_t(2 * k)] = a * fr - b * fi;
    z[std::size_t(2 * k + 1)] = a * fi + b * fr;
  }
  imaging::fft(z.data(), n, tw.data(), 1);
  std::vector<float> out(wavelet.size());
  for (long t = 0; t < nt; ++t) out[std::size_t(t)] = float(z[std::size_t(2 * t)] / double(n));
  return out;
}

std::vector<std::vector<float>> shared_wavelets(const std::vector<std::vector<float>>& mine) {
  if (mpi::size() == 1) return mine;
  std::vector<double> v{double(mine.size()), mine.empty() ? 0.0 : double(mine[0].size())};
  for (const std::vector<float>& x : mine) v.insert(v.end(), x.begin(), x.end());
  mpi::broadcast(v);
  const std::size_t count = std::size_t(v[0]), nt = std::size_t(v[1]);
  std::vector<std::vector<float>> w;
  for (std::size_t k = 0; k < count; ++k)
    w.emplace_back(v.begin() + long(2 + k * nt), v.begin() + long(2 + (k + 1) * nt));
  return w;
}

std::vector<std::vector<float>> estimate_wavelets(const Model& m, const Survey& current, const Survey& band_survey,
                                                  const NumericalOptions& o, SourceEstimation how,
                                                  const std::function<std::vector<float>(int)>& observed,
                                                  const std::string& what) {
  std::vector<FilterSums> sums(std::size_t(current.nshots()));
  model_each_shot(
      m, band_survey, o,
      [&](int shot, const float* traces) {
        std::vector<float> read;
        const float* obs = band_survey.observed(shot);
        if (!obs && observed) {
          read = observed(shot);
          obs = read.data();
        }
        if (!obs)
          throw RuntimeError("--estimate-source: shot " + std::to_string(shot) + "'s observed traces are not here");
        sums[std::size_t(shot)] = shot_filter_sums(traces, obs, band_survey.trace_weights(shot),
                                                   band_survey.trace_windows(shot), current.nrec(), long(current.nt));
      },
      nullptr);
  if (mpi::rank() != 0) return {};  // the sums are rank 0's
  std::vector<std::vector<float>> w;
  if (how == SourceEstimation::kShot) {
    for (int shot = 0; shot < current.nshots(); ++shot)
      w.push_back(
          filtered_wavelet(current.wavelet(shot), sums[std::size_t(shot)], what + ", shot " + std::to_string(shot)));
    return w;
  }
  FilterSums all;
  for (const FilterSums& one : sums) all.add(one);
  for (const std::vector<float>& x : current.wavelets) w.push_back(filtered_wavelet(x, all, what + ", every shot"));
  return w;
}

}  // namespace starwave
