// src/workflows/data_fit.hpp — how a gradient compares modelled and observed data: the misfit
// function (`--misfit`, kernels/misfit_trace.hpp), its names on the command line and in files,
// the traces it compares (`--offsets`) and the time window of each (`--window`).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernels/misfit_trace.hpp"
#include "src/model/model.hpp"
#include "src/model/survey.hpp"
#include "src/numerics/propagator.hpp"

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

/// --window: each trace compared from `before` s before its first arrival to `after` s after
/// it, tapered to 0 over `taper` s outside (imaging::window_taper). The arrival: the first
/// sample whose amplitude reaches kPickFraction of the trace's largest, picked in the data
/// modelled with the current model and wavelet (`velocity` 0), or the source–receiver
/// distance / `velocity` + the wavelet's onset (its first sample reaching kPickFraction of its
/// largest).
struct TimeWindow {
  double before = 0, after = 0, taper = 0, velocity = 0;
  bool on() const { return after > 0; }
};

/// The fraction of a trace's (or wavelet's) largest amplitude that marks its arrival.
constexpr double kPickFraction = 0.05;

/// --window's value "BEFORE,AFTER[,TAPER]" in s (TAPER: (BEFORE + AFTER) / 4 when left out) and
/// --window-velocity's (0: picked); InputError naming the option otherwise.
TimeWindow parse_window(const std::string& text, double velocity);

/// --window's and --window-velocity's help texts.
const char* window_help();
const char* window_velocity_help();

/// The window as text ("0.05,0.3,0.0875 picked" or "… at 2000 m/s"; the restart state's record).
std::string window_text(const TimeWindow& w);

/// The window as a result file's root attributes: window_before, window_after, window_taper (s)
/// and window_velocity (m/s; 0: the arrivals picked); none without a window.
std::map<std::string, double> window_attributes(const TimeWindow& w);

/// InputError naming --window when BEFORE + AFTER is not shorter than the survey's record.
void check_window(const TimeWindow& w, const Survey& s);

/// The first sample of a trace (or wavelet) of n samples reaching kPickFraction of its largest
/// amplitude; −1 when it holds no energy.
long first_arrival(const float* x, long n);

/// Every trace's arrival time (s; nshots × nrec, −1: none) at the window's velocity.
std::vector<double> velocity_arrivals(const Survey& s, const TimeWindow& w);

/// Every trace's arrival time picked (first_arrival) in the data modelled in `m` with the
/// survey's wavelets (collective under MPI; every rank gets the picks).
std::vector<double> picked_arrivals(const Model& m, const Survey& s, const NumericalOptions& o);

/// The survey with each trace's window around its arrival (`arrivals`: s, nshots × nrec, as
/// above; a trace with none compares nothing). InputError naming --window when no weighted
/// trace's window reaches into the record. The survey is taken by value: one moved in (holding
/// its observed data) is not copied.
Survey windowed(Survey s, const TimeWindow& w, const std::vector<double>& arrivals);

}  // namespace starwave
