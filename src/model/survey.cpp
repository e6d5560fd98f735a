#include "src/model/survey.hpp"

#include <algorithm>
#include <cmath>

#include "src/base/error.hpp"

namespace starwave {

void Survey::validate(const std::string& where) const {
  if (dim != 2 && dim != 3) throw InputError(where + ": positions must be 2-D [z, x] or 3-D [z, y, x]");
  if (!(dt > 0) || !std::isfinite(dt)) throw InputError(where + ": attribute dt must be positive");
  if (nt < 2) throw InputError(where + ": attribute nt must be at least 2");
  if (sources.empty()) throw InputError(where + ": no sources in /source/position");
  if (wavelets.size() != 1 && wavelets.size() != sources.size())
    throw InputError(where + ": /source/wavelet must have shape (nt,) or (nshots, nt)");
  for (const auto& w : wavelets) {
    if (int64_t(w.size()) != nt) throw InputError(where + ": /source/wavelet length differs from nt");
    for (float v : w)
      if (!std::isfinite(v)) throw InputError(where + ": /source/wavelet contains NaN or inf");
  }
  if (receivers.size() != 1 && receivers.size() != sources.size())
    throw InputError(where + ": /receiver/position must have shape (nrec, D) or (nshots, nrec, D)");
  if (receivers[0].empty()) throw InputError(where + ": no receivers in /receiver/position");
  for (const auto& r : receivers)
    if (r.size() != receivers[0].size()) throw InputError(where + ": every shot must have the same receiver count");
  if (!counts.empty()) {
    if (counts.size() != sources.size()) throw InputError(where + ": /receiver/count must have shape (nshots,)");
    for (std::size_t k = 0; k < counts.size(); ++k)
      if (counts[k] < 1 || counts[k] > nrec())
        throw InputError(where + ": /receiver/count of shot " + std::to_string(k) + " is " + std::to_string(counts[k]) +
                         ", not between 1 and nrec = " + std::to_string(nrec()));
  }
  if (!weights.empty()) {
    if (weights.size() != std::size_t(nrec()) && weights.size() != sources.size() * std::size_t(nrec()))
      throw InputError(where + ": /receiver/weight must have shape (nrec,) or (nshots, nrec)");
    for (float w : weights)
      if (!(w >= 0) || !std::isfinite(w))
        throw InputError(where + ": /receiver/weight holds a negative, NaN or infinite weight");
  }
  if (!windows.empty() && windows.size() != 3 * sources.size() * std::size_t(nrec()))
    throw InputError(where + ": the time windows must have shape (nshots, nrec, 3)");
  const std::size_t loaded = data_shots.empty() ? std::size_t(nshots()) : data_shots.size();
  if (!data.empty() && data.size() != loaded * std::size_t(nrec()) * std::size_t(nt))
    throw InputError(where + ": /data must have shape (nshots, nrec, nt)");
}

std::vector<double> Survey::source_wavelet(int shot) const {
  if (!exact_wavelets.empty())
    return exact_wavelets.size() == 1 ? exact_wavelets[0] : exact_wavelets[std::size_t(shot)];
  const std::vector<float>& w = wavelet(shot);
  return std::vector<double>(w.begin(), w.end());
}

std::vector<float> Survey::trace_weights(int shot) const {
  const std::size_t n = std::size_t(nrec());
  std::vector<float> w(n, 1.0f);
  if (weights.size() == n)
    w = weights;
  else if (!weights.empty())
    w.assign(weights.begin() + long(std::size_t(shot) * n), weights.begin() + long(std::size_t(shot + 1) * n));
  for (std::size_t r = std::size_t(count(shot)); r < n; ++r) w[r] = 0;
  return w;
}

std::vector<float> Survey::trace_windows(int shot) const {
  if (windows.empty()) return {};
  const std::size_t n = 3 * std::size_t(nrec());
  return {windows.begin() + long(std::size_t(shot) * n), windows.begin() + long(std::size_t(shot + 1) * n)};
}

std::vector<int> Survey::receiver_lines(int shot) const {
  if (dim != 3) return {};
  const std::vector<Position>& r = receivers_of(shot);
  std::vector<int> line(r.size(), 0);
  for (std::size_t k = 1; k < r.size(); ++k) line[k] = line[k - 1] + (r[k].y != r[k - 1].y ? 1 : 0);
  return line;
}

const float* Survey::observed(int shot) const {
  if (data.empty() || shot < 0 || shot >= nshots()) return nullptr;
  std::size_t slot = std::size_t(shot);
  if (!data_shots.empty()) {
    const auto it = std::lower_bound(data_shots.begin(), data_shots.end(), shot);
    if (it == data_shots.end() || *it != shot) return nullptr;
    slot = std::size_t(it - data_shots.begin());
  }
  return data.data() + slot * std::size_t(nrec()) * std::size_t(nt);
}

const float* Survey::observed_low(int shot) const {
  const float* o = observed(shot);
  return o && data_low.size() == data.size() ? data_low.data() + (o - data.data()) : nullptr;
}

std::vector<float> ricker(double f, double delay, double dt, int64_t nt) {
  std::vector<float> w(static_cast<std::size_t>(nt));
  const double pi2f2 = M_PI * M_PI * f * f;
  for (int64_t n = 0; n < nt; ++n) {
    const double t = n * dt - delay;
    w[std::size_t(n)] = float((1.0 - 2.0 * pi2f2 * t * t) * std::exp(-pi2f2 * t * t));
  }
  return w;
}

}  // namespace starwave
