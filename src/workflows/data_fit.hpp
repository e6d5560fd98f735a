// src/workflows/data_fit.hpp — how a gradient compares modelled and observed data: the misfit
// function (`--misfit`, kernels/misfit_trace.hpp), its names on the command line and in files,
// and the traces it compares (`--offsets`).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kernels/misfit_trace.hpp"
#include "src/model/survey.hpp"

namespace starwave {

/// "l2", "normalized", "correlation", "envelope".
const char* misfit_name(imaging::Misfit f);

/// --misfit's value (InputError naming the option otherwise).
imaging::Misfit parse_misfit(const std::string& text);

/// --misfit's help text.
const char* misfit_help();

/// An offset range [lo, hi] in m (the horizontal source–receiver distance).
using OffsetRange = std::pair<double, double>;

/// --offsets' value: "MIN,MAX", or one range a band "MIN,MAX:MIN,MAX:…" (`bands` ranges, or
/// one for all); InputError naming the option otherwise (negative, MIN ≥ MAX, another count).
std::vector<OffsetRange> parse_offsets(const std::string& text, int bands);

/// The ranges as text ("0,1500:0,3000"; the restart state's record).
std::string offsets_text(const std::vector<OffsetRange>& ranges);

/// The survey with each trace's weight times the taper of range `r`: 1 inside, cos² down to 0
/// over a tenth of the range's length outside it. InputError naming --offsets when no trace of
/// any shot keeps a weight.
Survey offset_selected(const Survey& s, const OffsetRange& r);

}  // namespace starwave
