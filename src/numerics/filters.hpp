// src/numerics/filters.hpp — signal and image filters of the inversion: the causal Butterworth
// low-pass of frequency continuation (--bands) and the Gaussian smoothing of models
// (synth --smooth) and gradients (fwi --smooth). Pure functions on host vectors.
#pragma once

#include <cstddef>
#include <vector>

#include "src/model/survey.hpp"

namespace starwave::filters {

/// Causal 4th-order Butterworth low-pass (two bilinear-transform biquads, prewarped),
/// in place on `n` samples at interval `dt` s with corner `fc` Hz (−3 dB), starting from
/// rest. Causal on purpose: the data are the Green's function convolved with the wavelet,
/// both start at t = 0, so filtering the wavelet and filtering the data are the same
/// operation on the modeled traces (a zero-phase filter would need the wavelet before
/// t = 0). Requires 0 < fc < 0.5 / dt.
void lowpass(float* x, std::size_t n, double dt, double fc);

/// The survey with its wavelets and recorded data low-passed at `fc` Hz.
Survey lowpassed(const Survey& s, double fc);

/// How the Gaussian treats the outside of the grid.
enum class Edge {
  kReplicate,  // the edge value continues (models: no artificial slowdown at the borders)
  kZero        // zero outside: the operator is a symmetric matrix (gradient preconditioning)
};

/// Separable Gaussian smoothing of an (nz, nx) row-major field with standard deviation
/// `sigma` metres (kernel truncated at 3σ, normalised to unit sum); sigma ≤ 0 returns
/// the field unchanged.
std::vector<double> gaussian(const std::vector<double>& f, int nz, int nx, double dz, double dx, double sigma,
                             Edge edge);
/// The same over an (nz, ny, nx) field (z slowest): passes along x, y, then z.
std::vector<double> gaussian(const std::vector<double>& f, int nz, int ny, int nx, double dz, double dy, double dx,
                             double sigma, Edge edge);

}  // namespace starwave::filters
