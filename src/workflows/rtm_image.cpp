// src/workflows/rtm_image.cpp — from an RTM stack to the image (docs/design.md §2): the
// illumination compensation, the imaging conditions, the acquisition's mute; the direct wave's
// model and the options' words.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "src/base/error.hpp"
#include "src/synthetic/synth.hpp"
#include "src/workflows/gradient.hpp"
#include "src/workflows/shot_run.hpp"

namespace starwave {
namespace {

/// The image's mute at `depth` (m): 0 down to `acquisition`, a sin² taper to 1 at `mute`.
double mute_weight(double depth, double acquisition, double mute) {
  if (depth <= acquisition) return 0;
  if (depth >= mute) return 1;
  return std::pow(std::sin(M_PI / 2 * (depth - acquisition) / (mute - acquisition)), 2);
}

}  // namespace

std::vector<double> finish_rtm_image(const Model& m, const std::vector<double>& raw,
                                     const std::vector<double>& illumination, double acquisition_depth,
                                     double mute_depth, ImagingCondition condition) {
  double peak = 0;
  for (double v : illumination) peak = std::max(peak, v);
  std::vector<double> c(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) c[i] = raw[i] / (illumination[i] + 0.01 * peak + 1e-300);
  auto at = [&](int z, int y, int x) {  // edge replication
    return c[m.index(std::clamp(z, 0, m.nz - 1), std::clamp(y, 0, m.ny - 1), std::clamp(x, 0, m.nx - 1))];
  };
  auto second = [&](int z, int y, int x, int dz, int dy, int dx, double h) {
    return (at(z + dz, y + dy, x + dx) - 2 * at(z, y, x) + at(z - dz, y - dy, x - dx)) / (h * h);
  };
  std::vector<double> out(raw.size());
  for (int z = 0; z < m.nz; ++z) {
    const double w = mute_weight(m.z0 + z * m.dz, acquisition_depth, mute_depth);
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x) {
        double v;
        if (condition == ImagingCondition::kLaplacian)
          v = -(second(z, y, x, 1, 0, 0, m.dz) + second(z, y, x, 0, 0, 1, m.dx) +
                (m.three_d() ? second(z, y, x, 0, 1, 0, m.dy) : 0.0));
        else if (condition == ImagingCondition::kIsic)
          v = at(z, y, x);
        else
          v = (at(z + 1, y, x) - at(z - 1, y, x)) / (2 * m.dz);
        out[m.index(z, y, x)] = w * v;
      }
  }
  return out;
}

const char* imaging_condition_name(ImagingCondition c) {
  return c == ImagingCondition::kLaplacian ? "laplacian" : c == ImagingCondition::kIsic ? "isic" : "cross";
}

ImagingCondition parse_imaging_condition(const std::string& text) {
  if (text == "cross") return ImagingCondition::kCross;
  if (text == "laplacian") return ImagingCondition::kLaplacian;
  if (text == "isic") return ImagingCondition::kIsic;
  throw InputError("--imaging-condition: '" + text + "' is not one of cross, laplacian, isic");
}

const char* compensation_name(Compensation c) {
  return c == Compensation::kReceiver ? "receiver" : c == Compensation::kBoth ? "both" : "source";
}

Compensation parse_compensation(const std::string& text) {
  if (text == "source") return Compensation::kSource;
  if (text == "receiver") return Compensation::kReceiver;
  if (text == "both") return Compensation::kBoth;
  throw InputError("--illumination: '" + text + "' is not one of source, receiver, both");
}

std::vector<double> compensating_illumination(const ImagingResult& r, Compensation c) {
  if (c == Compensation::kSource) return r.illumination;
  if (r.receiver_illumination.size() != r.illumination.size())
    throw RuntimeError("rtm: the stack was made without the receiver illumination its compensation needs");
  if (c == Compensation::kReceiver) return r.receiver_illumination;
  std::vector<double> both(r.illumination.size());
  for (std::size_t i = 0; i < both.size(); ++i) both[i] = std::sqrt(r.illumination[i] * r.receiver_illumination[i]);
  return both;
}

std::pair<double, double> rtm_mute(const Model& m, const Survey& s) {
  double depth = m.z0;
  for (const auto& p : s.sources) depth = std::max(depth, p.z);
  for (int shot = 0; shot < s.nshots(); ++shot)
    for (const auto& p : s.receivers_of(shot)) depth = std::max(depth, p.z);
  double vmin = m.vp[0];
  for (std::size_t i = 0; i < std::size_t(m.ny) * std::size_t(m.nx); ++i)
    vmin = std::min(vmin, m.vp[i]);  // the top plane
  return {depth, depth + vmin / dominant_frequency(s.wavelet(0), s.dt)};
}

std::vector<double> rtm_mute_weights(const Model& m, const Survey& s) {
  const auto [acquisition, mute] = rtm_mute(m, s);
  std::vector<double> w(m.cells());
  const std::size_t plane = std::size_t(m.ny) * std::size_t(m.nx);
  for (int z = 0; z < m.nz; ++z)
    std::fill(w.begin() + long(z * plane), w.begin() + long((z + 1) * plane),
              mute_weight(m.z0 + z * m.dz, acquisition, mute));
  return w;
}

double direct_wave_smoothing(const Model& m, const Survey& s, const RtmOptions& rtm) {
  if (rtm.direct != DirectWave::kSmooth) return 0;
  if (rtm.smooth > 0) return rtm.smooth;
  double mean = 0;
  for (double v : m.vp) mean += v;
  mean /= double(m.vp.size());
  const double extent = std::max({(m.nz - 1) * m.dz, (m.nx - 1) * m.dx, (m.ny - 1) * m.dy});
  return std::min(0.5 * mean / dominant_frequency(s.wavelet(0), s.dt), extent);
}

RtmImage rtm_image(const Model& m, const Survey& s, const ImagingResult& r, const RtmOptions& rtm) {
  const auto [acquisition, mute] = rtm_mute(m, s);
  RtmImage out{
      finish_rtm_image(m, r.values, compensating_illumination(r, rtm.compensation), acquisition, mute, rtm.condition),
      mute};
  check_rtm_image(out.image, rtm);
  return out;
}

Model direct_wave_model(const Model& m, const Survey& s, const RtmOptions& rtm) {
  const double sigma = direct_wave_smoothing(m, s, rtm);
  check_smoothing_length(m, sigma, "--direct-smooth");
  const Model smooth = smoothed(m, sigma);
  const auto [acquisition, mute] = rtm_mute(m, s);
  Model out = m;
  const std::size_t plane = std::size_t(m.ny) * std::size_t(m.nx);
  for (int z = 0; z < m.nz; ++z) {
    const double w = mute_weight(m.z0 + z * m.dz, acquisition, mute);  // the smoothed copy's weight
    for (std::size_t i = std::size_t(z) * plane; i < std::size_t(z + 1) * plane; ++i)
      out.vp[i] = (1 - w) * m.vp[i] + w * smooth.vp[i];
  }
  return out;
}

DirectWave parse_direct_wave(const std::string& text) {
  if (text == "smooth") return DirectWave::kSmooth;
  if (text == "model") return DirectWave::kModel;
  if (text == "none") return DirectWave::kNone;
  throw InputError("--direct-wave: '" + text + "' is not one of smooth, model, none");
}

void check_rtm_image(const std::vector<double>& image, const RtmOptions& rtm) {
  if (std::any_of(image.begin(), image.end(), [](double v) { return v != 0; })) return;
  const std::string hint =
      rtm.direct == DirectWave::kModel
          ? "the migration model predicts the recorded data (reflections included) and --direct-wave model "
            "subtracts what it predicts: use --direct-wave smooth (the default) or none"
          : "the observed data leave nothing to migrate below the acquisition's mute: check that --data holds "
            "recorded traces, not zeros, and that the record is long enough for reflections";
  throw InputError("the image is zero everywhere: " + hint);
}

}  // namespace starwave
