// src/workflows/data_fit.hpp — how a gradient compares modelled and observed data: the misfit
// function (`--misfit`, kernels/misfit_trace.hpp), its names on the command line and in files.
#pragma once

#include <string>

#include "kernels/misfit_trace.hpp"

namespace starwave {

/// "l2", "normalized", "correlation", "envelope".
const char* misfit_name(imaging::Misfit f);

/// --misfit's value (InputError naming the option otherwise).
imaging::Misfit parse_misfit(const std::string& text);

/// --misfit's help text.
const char* misfit_help();

}  // namespace starwave
