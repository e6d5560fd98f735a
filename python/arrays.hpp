// python/arrays.hpp — numpy arrays in, starwave's Model and Survey out (the module's inputs,
// checked as the command line checks its files: one ValueError naming the argument).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

#include "src/model/model.hpp"
#include "src/model/survey.hpp"
#include "src/numerics/propagator.hpp"

namespace starwave::python {

namespace py = pybind11;

/// The model: `vp` (nz, nx) or (nz, ny, nx) in m/s, float32 or float64 (its dtype is the
/// run's precision), any strides; `spacing` one number or one per axis (m); `origin` the
/// position of cell 0 (m; default zeros).
Model to_model(const py::object& vp, const py::object& spacing, const py::object& origin);
/// float32 → kSingle, float64 → kDouble; ValueError for any other dtype (float16 named).
Precision precision_of(const py::object& vp);

/// The acquisition: `wavelet` (nt,) or (nshots, nt), sampled at `dt` s; `sources` (nshots,
/// ndim) and `receivers` (nrec, ndim) or (nshots, nrec, ndim) in m as [z, x] or [z, y, x];
/// `receiver_counts` (nshots,): shot s records with its first counts[s] receivers (ragged);
/// `weights` (nrec,) or (nshots, nrec) trace weights ≥ 0. A double-precision run propagates the
/// wavelet in double (Survey::exact_wavelets), a single-precision one as the command line does.
Survey to_survey(const Model& m, double dt, const py::object& wavelet, const py::object& sources,
                 const py::object& receivers, const py::object& receiver_counts, const py::object& weights,
                 Precision precision = Precision::kSingle);
/// `observed` (nshots, nrec, nt) into the survey's data: finite values only; `name` names the
/// argument in a refusal. `keep_remainders`: a float64 array's values beyond float32 too
/// (Survey::data_low: a double-precision cotangent enters in double).
void set_observed(Survey& s, const py::object& observed, const std::string& name = "observed",
                  bool keep_remainders = false);

/// An array of exactly `shape` (any layout, any real dtype) as C-ordered doubles, every value
/// finite (ValueError naming `name` otherwise).
std::vector<double> exact_shape_values(const py::object& a, const std::vector<py::ssize_t>& shape,
                                       const std::string& name);

/// A (nz, nx) or (nz, ny, nx) float64 array of a model's shape holding `values`.
py::array_t<double> model_array(const Model& m, const std::vector<double>& values);

/// pml_width: one whole number (an int, a 0-d integer array), or 2·ndim of them, each side's
/// (z low, z high, (y low, y high,) x low, x high: NumericalOptions::pml_sides' order), into
/// `o`; bools and non-integers refused naming --pml-width.
void set_pml_widths(NumericalOptions& o, const py::object& width, int ndim);

}  // namespace starwave::python
