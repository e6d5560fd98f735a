// src/workflows/data_fit.cpp — the misfit functions' names.
#include "src/workflows/data_fit.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "src/base/error.hpp"

namespace starwave {

const char* misfit_name(imaging::Misfit f) {
  switch (f) {
    case imaging::Misfit::kNormalized:
      return "normalized";
    case imaging::Misfit::kCorrelation:
      return "correlation";
    case imaging::Misfit::kEnvelope:
      return "envelope";
    default:
      return "l2";
  }
}

imaging::Misfit parse_misfit(const std::string& text) {
  for (imaging::Misfit f :
       {imaging::Misfit::kL2, imaging::Misfit::kNormalized, imaging::Misfit::kCorrelation, imaging::Misfit::kEnvelope})
    if (text == misfit_name(f)) return f;
  throw InputError("--misfit: '" + text + "' is not one of l2, normalized, correlation, envelope");
}

std::vector<OffsetRange> parse_offsets(const std::string& text, int bands) {
  std::vector<OffsetRange> out;
  std::stringstream all(text);
  std::string one;
  const std::string why = "--offsets: '" + text + "' is not MIN,MAX in m (or one MIN,MAX a band, ':' between)";
  while (std::getline(all, one, ':')) {
    char* end = nullptr;
    const double lo = std::strtod(one.c_str(), &end);
    if (end == one.c_str() || *end != ',') throw InputError(why);
    const char* rest = end + 1;
    const double hi = std::strtod(rest, &end);
    if (end == rest || *end != '\0' || !std::isfinite(lo) || !std::isfinite(hi)) throw InputError(why);
    if (lo < 0 || !(hi > lo))
      throw InputError("--offsets: " + one + ": the range must be MIN,MAX with 0 ≤ MIN < MAX (m)");
    out.emplace_back(lo, hi);
  }
  if (out.empty()) throw InputError(why);
  if (out.size() != 1 && int(out.size()) != bands)
    throw InputError("--offsets: " + std::to_string(out.size()) + " ranges for " + std::to_string(bands) +
                     " bands: give one for all or one a band");
  return out;
}

std::string offsets_text(const std::vector<OffsetRange>& ranges) {
  std::ostringstream t;
  t.precision(17);
  for (std::size_t k = 0; k < ranges.size(); ++k) t << (k ? ":" : "") << ranges[k].first << "," << ranges[k].second;
  return t.str();
}

Survey offset_selected(const Survey& s, const OffsetRange& r) {
  Survey out = s;
  const std::size_t nrec = std::size_t(s.nrec());
  out.weights.assign(std::size_t(s.nshots()) * nrec, 0.0f);
  const double ramp = 0.1 * (r.second - r.first);
  bool any = false;
  for (int shot = 0; shot < s.nshots(); ++shot) {
    const std::vector<float> w = s.trace_weights(shot);
    const Position& src = s.sources[std::size_t(shot)];
    for (std::size_t k = 0; k < nrec; ++k) {
      const Position& p = s.receivers_of(shot)[k];
      const double offset = std::hypot(p.x - src.x, s.dim == 3 ? p.y - src.y : 0.0);
      const double outside = offset < r.first ? r.first - offset : offset > r.second ? offset - r.second : 0.0;
      const double c = outside < ramp ? std::cos(0.5 * M_PI * outside / ramp) : 0.0;
      const float taper = outside == 0 ? 1.0f : float(c * c);
      const float v = w[k] * taper;
      out.weights[std::size_t(shot) * nrec + k] = v;
      any = any || v > 0;
    }
  }
  if (!any)
    throw InputError("--offsets: " + offsets_text({r}) + " m selects no trace of any shot (the survey's offsets lie " +
                     "outside it)");
  return out;
}

const char* misfit_help() {
  return "what the data misfit compares: l2 (every sample, ½Σw(d_syn − d_obs)²), normalized (each shot's "
         "traces divided by the shot's norm: forgives each shot's source strength), correlation (1 − the zero-lag "
         "correlation of each trace pair, normalised: forgives every trace's amplitude) or envelope (the traces' "
         "envelopes' L2: forgives the wavelet's phase)";
}

}  // namespace starwave
