// src/workflows/data_fit.cpp — the misfit functions' names.
#include "src/workflows/data_fit.hpp"

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

const char* misfit_help() {
  return "what the data misfit compares: l2 (every sample, ½Σw(d_syn − d_obs)²), normalized (each shot's "
         "traces divided by the shot's norm: forgives each shot's source strength), correlation (1 − the zero-lag "
         "correlation of each trace pair, normalised: forgives every trace's amplitude) or envelope (the traces' "
         "envelopes' L2: forgives the wavelet's phase)";
}

}  // namespace starwave
