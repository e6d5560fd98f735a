// src/workflows/data_fit.cpp — the misfit functions' names, the offset selection and the
// time windows around the first arrivals.
#include "src/workflows/data_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "src/base/error.hpp"
#include "src/runtime/mpi.hpp"
#include "src/workflows/modeling.hpp"

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

TimeWindow parse_window(const std::string& text, double velocity) {
  std::vector<double> v;
  std::stringstream all(text);
  std::string one;
  const std::string why = "--window: '" + text + "' is not BEFORE,AFTER or BEFORE,AFTER,TAPER in s";
  while (std::getline(all, one, ',')) {
    char* end = nullptr;
    const double x = std::strtod(one.c_str(), &end);
    if (end == one.c_str() || end != one.c_str() + one.size() || !std::isfinite(x)) throw InputError(why);
    v.push_back(x);
  }
  if (v.size() != 2 && v.size() != 3) throw InputError(why);
  TimeWindow w{v[0], v[1], v.size() == 3 ? v[2] : 0.25 * (v[0] + v[1]), velocity};
  if (w.before < 0 || w.taper < 0 || !(w.after > 0) || !(w.before + w.after > 0))
    throw InputError("--window: " + text + ": BEFORE and TAPER must be ≥ 0 and AFTER > 0 (s)");
  if (!(velocity >= 0) || !std::isfinite(velocity))
    throw InputError("--window-velocity: must be a velocity in m/s (> 0), or 0 to pick the arrivals");
  return w;
}

std::map<std::string, double> window_attributes(const TimeWindow& w) {
  if (!w.on()) return {};
  return {{"window_before", w.before},
          {"window_after", w.after},
          {"window_taper", w.taper},
          {"window_velocity", w.velocity}};
}

std::string window_text(const TimeWindow& w) {
  std::ostringstream t;
  t.precision(17);
  t << w.before << "," << w.after << "," << w.taper;
  if (w.velocity > 0)
    t << " at " << w.velocity << " m/s";
  else
    t << " picked";
  return t.str();
}

void check_window(const TimeWindow& w, const Survey& s) {
  const double record = double(s.nt) * s.dt;
  if (!(w.before + w.after < record)) {
    std::ostringstream t;
    t << "--window: BEFORE + AFTER = " << w.before + w.after << " s is not shorter than the record (" << s.nt
      << " samples of " << s.dt << " s = " << record << " s)";
    throw InputError(t.str());
  }
}

long first_arrival(const float* x, long n) {
  double peak = 0;
  for (long t = 0; t < n; ++t) peak = std::max(peak, std::abs(double(x[t])));
  if (!(peak > 0) || !std::isfinite(peak)) return -1;
  for (long t = 0; t < n; ++t)
    if (std::abs(double(x[t])) >= kPickFraction * peak) return t;
  return -1;
}

std::vector<double> velocity_arrivals(const Survey& s, const TimeWindow& w) {
  const std::size_t nrec = std::size_t(s.nrec());
  std::vector<double> a(std::size_t(s.nshots()) * nrec, -1.0);
  for (int shot = 0; shot < s.nshots(); ++shot) {
    const std::vector<float>& wavelet = s.wavelet(shot);
    const long onset = first_arrival(wavelet.data(), long(wavelet.size()));
    if (onset < 0) continue;
    const Position& src = s.sources[std::size_t(shot)];
    for (std::size_t k = 0; k < nrec; ++k) {
      const Position& p = s.receivers_of(shot)[k];
      const double d =
          std::sqrt((p.x - src.x) * (p.x - src.x) + (p.y - src.y) * (p.y - src.y) + (p.z - src.z) * (p.z - src.z));
      a[std::size_t(shot) * nrec + k] = d / w.velocity + double(onset) * s.dt;
    }
  }
  return a;
}

std::vector<double> picked_arrivals(const Model& m, const Survey& s, const NumericalOptions& o) {
  const std::size_t nrec = std::size_t(s.nrec());
  const long nt = long(s.nt);
  std::vector<double> a(std::size_t(s.nshots()) * nrec, -1.0);
  model_each_shot(
      m, s, o,
      [&](int shot, const float* traces) {
        for (std::size_t k = 0; k < nrec; ++k) {
          const long t = first_arrival(traces + long(k) * nt, nt);
          a[std::size_t(shot) * nrec + k] = t < 0 ? -1.0 : double(t) * s.dt;
        }
      },
      nullptr);
  mpi::broadcast(a);  // rank 0's picks (the sink runs there)
  return a;
}

Survey windowed(Survey out, const TimeWindow& w, const std::vector<double>& arrivals) {
  const std::size_t nrec = std::size_t(out.nrec());
  out.windows.assign(3 * std::size_t(out.nshots()) * nrec, 0.0f);
  const double last = double(out.nt - 1);
  bool any = false;
  for (int shot = 0; shot < out.nshots(); ++shot) {
    const std::vector<float> weight = out.trace_weights(shot);
    for (std::size_t k = 0; k < nrec; ++k) {
      const std::size_t i = std::size_t(shot) * nrec + k;
      float* win = out.windows.data() + 3 * i;
      const double t = arrivals[i];
      if (t < 0) {  // no arrival: a window before the record, no taper (W = 0 on every sample)
        win[0] = win[1] = -1.0f;
        continue;
      }
      win[0] = float((t - w.before) / out.dt);
      win[1] = float((t + w.after) / out.dt);
      win[2] = float(w.taper / out.dt);
      const double reach = double(win[2]);
      any = any || (weight[k] > 0 && double(win[1]) + reach > 0 && double(win[0]) - reach < last);
    }
  }
  if (!any)
    throw InputError(
        "--window: " + window_text(w) +
        ": no trace's window reaches into the record (every arrival lies outside it, or no trace has one)");
  return out;
}

const char* window_help() {
  return "compare each trace only around its first arrival: BEFORE,AFTER[,TAPER] in s, from BEFORE before the "
         "arrival to AFTER after it, tapered to 0 over TAPER outside (default (BEFORE + AFTER)/4); the arrival "
         "picked in the data modelled with the current model and wavelet (fwi: at the start of each band), or "
         "given by --window-velocity";
}

const char* window_velocity_help() {
  return "--window: the arrivals at the source–receiver distance / this velocity (m/s) + the wavelet's onset, "
         "instead of picked";
}

const char* misfit_help() {
  return "what the data misfit compares: l2 (every sample, ½Σw(d_syn − d_obs)²), normalized (each shot's "
         "traces divided by the shot's norm: forgives each shot's source strength), correlation (1 − the zero-lag "
         "correlation of each trace pair, normalised: forgives every trace's amplitude) or envelope (the traces' "
         "envelopes' L2: forgives the wavelet's phase)";
}

}  // namespace starwave
