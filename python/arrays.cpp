// python/arrays.cpp — numpy arrays to Model and Survey (arrays.hpp).
#include "python/arrays.hpp"

#include <algorithm>
#include <cmath>

#include "src/base/error.hpp"
#include "src/memory/room.hpp"

namespace starwave::python {
namespace {

std::string dtype_name(const py::dtype& d) { return py::str(static_cast<const py::handle&>(d)).cast<std::string>(); }

std::string shape_text(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

/// Refuses (InputError naming the argument, its shape and the bytes) an array whose copy of
/// `element_bytes` a value would not fit in the memory this process may still use — checked
/// on the shape it declares, before any copy: a broadcast view of 10¹⁰ values is a refusal,
/// not a crash.
void require_room_for(const py::array& a, std::uint64_t element_bytes, const std::string& name) {
  std::uint64_t count = 1;
  for (py::ssize_t i = 0; i < a.ndim(); ++i) {
    const std::uint64_t k = std::uint64_t(a.shape(i));
    if (k != 0 && count > ~std::uint64_t(0) / k)
      throw InputError(name + " of shape " + shape_text(a) + ": more values than any machine can hold");
    count *= k;
  }
  memory::require_memory(count, element_bytes, name + " of shape " + shape_text(a));
}

/// A real-valued array as C-contiguous doubles (any strides, any integer or float dtype but
/// float16, which is refused as the run's precision would be).
py::array_t<double, py::array::c_style | py::array::forcecast> doubles(const py::handle& a, const std::string& name) {
  const py::array arr = py::array::ensure(a);
  if (!arr) throw InputError(name + ": not an array of numbers");
  const char kind = arr.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u')
    throw InputError(name + ": an array of real numbers, not of dtype " + dtype_name(arr.dtype()));
  require_room_for(arr, 2 * sizeof(double), name);  // the float64 copy, and what the run builds from it
  auto out = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(arr);
  if (!out) throw InputError(name + " of shape " + shape_text(arr) + ": could not be copied as float64");
  return out;
}

void require_finite(const double* v, std::size_t n, const std::string& name) {
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i])) throw InputError(name + ": NaN or Inf at flat index " + std::to_string(i));
}

Position position(const double* p, int dim) { return dim == 3 ? Position(p[0], p[1], p[2]) : Position(p[0], p[1]); }

}  // namespace

std::vector<double> exact_shape_values(const py::object& a, const std::vector<py::ssize_t>& shape,
                                       const std::string& name) {
  const auto d = doubles(a, name);
  bool same = std::size_t(d.ndim()) == shape.size();
  for (std::size_t i = 0; same && i < shape.size(); ++i) same = d.shape(py::ssize_t(i)) == shape[i];
  if (!same) {
    std::string want = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) want += (i ? ", " : "") + std::to_string(shape[i]);
    throw InputError(name + ": an array of shape " + want + (shape.size() == 1 ? ",)" : ")") + ", not " +
                     shape_text(d));
  }
  require_finite(d.data(), std::size_t(d.size()), name);
  return std::vector<double>(d.data(), d.data() + d.size());
}

Precision precision_of(const py::object& vp) {
  const py::array a = py::array::ensure(vp);
  if (!a) throw InputError("vp: not an array of velocities");
  const py::dtype d = a.dtype();
  if (d.kind() == 'f' && d.itemsize() == 4) return Precision::kSingle;
  if (d.kind() == 'f' && d.itemsize() == 8) return Precision::kDouble;
  throw InputError("vp: dtype " + dtype_name(d) +
                   " is not supported: give float32 or float64 (its dtype is the run's precision)");
}

Model to_model(const py::object& vp, const py::object& spacing, const py::object& origin) {
  precision_of(vp);
  const auto v = doubles(vp, "vp");
  if (v.ndim() != 2 && v.ndim() != 3)
    throw InputError("vp: a (nz, nx) or (nz, ny, nx) array, not of shape " + shape_text(v));
  Model m;
  m.dim = int(v.ndim());
  m.nz = int(v.shape(0));
  m.ny = m.dim == 3 ? int(v.shape(1)) : 1;
  m.nx = int(v.shape(m.dim - 1));
  m.vp.assign(v.data(), v.data() + v.size());
  auto per_axis = [&](const py::object& given, const std::string& name, double fill) {
    std::vector<double> h(std::size_t(m.dim), fill);
    if (given.is_none()) return h;
    const auto a = doubles(given, name);
    if (a.ndim() == 0 || (a.ndim() == 1 && a.shape(0) == 1))
      h.assign(std::size_t(m.dim), a.data()[0]);
    else if (a.ndim() == 1 && a.shape(0) == m.dim)
      h.assign(a.data(), a.data() + m.dim);
    else
      throw InputError(name + ": one number or " + std::to_string(m.dim) + " (one per axis of vp), not of shape " +
                       shape_text(a));
    require_finite(h.data(), h.size(), name);
    return h;
  };
  const std::vector<double> h = per_axis(spacing, "spacing", 0), o = per_axis(origin, "origin", 0);
  m.dz = h[0], m.dx = h.back(), m.dy = m.dim == 3 ? h[1] : 0;
  m.z0 = o[0], m.x0 = o.back(), m.y0 = m.dim == 3 ? o[1] : 0;
  for (double x : h)
    if (!Model::spacing_ok(x)) throw InputError("spacing: each must be 1e-06 … 1e+06 m (got " + number_text(x) + ")");
  m.validate("vp");
  return m;
}

Survey to_survey(const Model& m, double dt, const py::object& wavelet, const py::object& sources,
                 const py::object& receivers, const py::object& receiver_counts, const py::object& weights,
                 Precision precision) {
  Survey s;
  s.dim = m.dim;
  if (!(std::isfinite(dt) && dt > 0)) throw InputError("dt: must be a positive number of seconds");
  s.dt = dt;
  const auto src = doubles(sources, "sources");
  if (src.ndim() != 2 || src.shape(1) != m.dim || src.shape(0) < 1)
    throw InputError("sources: an (nshots, " + std::to_string(m.dim) + ") array of positions in m, not of shape " +
                     shape_text(src));
  require_finite(src.data(), std::size_t(src.size()), "sources");
  const int nshots = int(src.shape(0));
  for (int i = 0; i < nshots; ++i) s.sources.push_back(position(src.data() + i * m.dim, m.dim));

  const auto w = doubles(wavelet, "wavelet");
  if (!(w.ndim() == 1 || (w.ndim() == 2 && w.shape(0) == nshots)) || w.shape(w.ndim() - 1) < 2)
    throw InputError("wavelet: an (nt,) or (nshots, nt) = (" + std::to_string(nshots) +
                     ", nt) array of at least 2 samples, not of shape " + shape_text(w));
  require_finite(w.data(), std::size_t(w.size()), "wavelet");
  s.nt = w.shape(w.ndim() - 1);
  const py::ssize_t rows = w.ndim() == 1 ? 1 : nshots;
  for (py::ssize_t r = 0; r < rows; ++r) s.wavelets.emplace_back(w.data() + r * s.nt, w.data() + (r + 1) * s.nt);
  if (precision == Precision::kDouble)  // a float64 run propagates the wavelet as given
    for (py::ssize_t r = 0; r < rows; ++r)
      s.exact_wavelets.emplace_back(w.data() + r * s.nt, w.data() + (r + 1) * s.nt);

  const auto rec = doubles(receivers, "receivers");
  const bool shared = rec.ndim() == 2;
  if (!(shared || (rec.ndim() == 3 && rec.shape(0) == nshots)) || rec.shape(rec.ndim() - 1) != m.dim ||
      rec.shape(rec.ndim() - 2) < 1)
    throw InputError("receivers: an (nrec, " + std::to_string(m.dim) + ") or (nshots, nrec, " + std::to_string(m.dim) +
                     ") array of positions in m, not of shape " + shape_text(rec));
  require_finite(rec.data(), std::size_t(rec.size()), "receivers");
  const py::ssize_t nrec = rec.shape(rec.ndim() - 2);
  for (py::ssize_t r = 0; r < (shared ? 1 : nshots); ++r) {
    s.receivers.emplace_back();
    for (py::ssize_t i = 0; i < nrec; ++i)
      s.receivers.back().push_back(position(rec.data() + (r * nrec + i) * m.dim, m.dim));
  }
  if (!receiver_counts.is_none()) {
    const auto c = doubles(receiver_counts, "receiver_counts");
    if (c.ndim() != 1 || c.shape(0) != nshots)
      throw InputError("receiver_counts: an (nshots,) = (" + std::to_string(nshots) + ",) array, not of shape " +
                       shape_text(c));
    for (py::ssize_t i = 0; i < nshots; ++i) {
      const double k = c.data()[i];
      if (!(k >= 1 && k <= double(nrec) && k == std::floor(k)))
        throw InputError("receiver_counts: each a whole number 1 … nrec = " + std::to_string(nrec) + " (shot " +
                         std::to_string(i) + ": " + number_text(k) + ")");
      s.counts.push_back(int64_t(k));
    }
  }
  if (!weights.is_none()) {
    const auto tw = doubles(weights, "weights");
    const bool per_shot = tw.ndim() == 2 && tw.shape(0) == nshots && tw.shape(1) == nrec;
    if (!per_shot && !(tw.ndim() == 1 && tw.shape(0) == nrec))
      throw InputError("weights: an (nrec,) or (nshots, nrec) array, not of shape " + shape_text(tw));
    for (py::ssize_t i = 0; i < tw.size(); ++i) {
      const double x = tw.data()[i];
      if (!(std::isfinite(x) && x >= 0))
        throw InputError("weights: each finite and ≥ 0 (flat index " + std::to_string(i) + ")");
      s.weights.push_back(float(x));
    }
  }
  s.validate("the survey");
  return s;
}

void set_observed(Survey& s, const py::object& observed, const std::string& name, bool keep_remainders) {
  const py::array arr = py::array::ensure(observed);
  if (!arr || (arr.dtype().kind() != 'f' && arr.dtype().kind() != 'i'))
    throw InputError(name + ": an array of real numbers");
  if (arr.dtype().kind() == 'f' && arr.dtype().itemsize() < 4)
    throw InputError(name + ": dtype " + dtype_name(arr.dtype()) + " is not supported: float32 or float64");
  if (arr.ndim() != 3 || arr.shape(0) != s.nshots() || arr.shape(1) != s.nrec() || arr.shape(2) != s.nt)
    throw InputError(name + ": an (nshots, nrec, nt) = (" + std::to_string(s.nshots()) + ", " +
                     std::to_string(s.nrec()) + ", " + std::to_string(s.nt) + ") array, not of shape " +
                     shape_text(arr));
  require_room_for(arr, 2 * sizeof(float), name);  // a float32 copy, then the run's own
  const auto d = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(arr);
  if (!d) throw InputError(name + " of shape " + shape_text(arr) + ": could not be copied as float32");
  s.data.assign(d.data(), d.data() + d.size());
  for (std::size_t i = 0; i < s.data.size(); ++i)
    if (!std::isfinite(s.data[i]))
      throw InputError(name + ": NaN or Inf in shot " + std::to_string(i / (std::size_t(s.nrec()) * s.nt)));
  if (!keep_remainders || arr.dtype().kind() != 'f' || arr.dtype().itemsize() != 8) return;
  const auto full = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(arr);
  s.data_low.resize(s.data.size());
  for (std::size_t i = 0; i < s.data.size(); ++i) s.data_low[i] = float(full.data()[i] - double(s.data[i]));
}

py::array_t<double> model_array(const Model& m, const std::vector<double>& values) {
  std::vector<py::ssize_t> shape =
      m.three_d() ? std::vector<py::ssize_t>{m.nz, m.ny, m.nx} : std::vector<py::ssize_t>{m.nz, m.nx};
  py::array_t<double> a(shape);
  std::copy(values.begin(), values.end(), a.mutable_data());
  return a;
}

void set_pml_widths(NumericalOptions& o, const py::object& width, int ndim) {
  const auto cells = [](const py::handle& x) {
    const std::string type = py::str(py::type::handle_of(x).attr("__name__"));
    PyObject* index = (py::isinstance<py::int_>(x) || py::hasattr(x, "__index__")) && type != "bool" && type != "bool_"
                          ? PyNumber_Index(x.ptr())  // an __index__ may refuse (a float array's)
                          : nullptr;
    if (index == nullptr && PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_TypeError) &&
        !PyErr_ExceptionMatches(PyExc_ValueError))
      throw py::error_already_set();  // KeyboardInterrupt goes on
    PyErr_Clear();
    if (index == nullptr)
      throw InputError("--pml-width: a whole number of cells, or one a side (got " + std::string(py::repr(x)) + ")");
    return py::reinterpret_steal<py::object>(index).cast<long long>();
  };
  const bool zero_d = py::hasattr(width, "ndim") && py::int_(width.attr("ndim")).cast<int>() == 0;  // np.array(10)
  if (!py::isinstance<py::sequence>(width) || py::isinstance<py::str>(width) || zero_d) {
    const long long w = cells(width);
    if (w < 0 || w > 1000)
      throw InputError("--pml-width: must be between 0 and 1000 cells (got " + std::to_string(w) + ")");
    o.pml_width = int(w);
    return;
  }
  const py::sequence sides = width.cast<py::sequence>();
  if (ndim < 2 || ndim > 3 || int(sides.size()) != 2 * ndim)
    throw InputError("--pml-width: one width, or " + std::to_string(2 * std::max(ndim, 2)) +
                     " (each side's: low and high along each axis), not " + std::to_string(sides.size()));
  static const int side_of[2][6] = {{0, 1, 4, 5}, {0, 1, 2, 3, 4, 5}};  // (z, x) or (z, y, x) → pml_sides
  for (int i = 0; i < 2 * ndim; ++i) {
    const long long w = cells(sides[std::size_t(i)]);
    if (w < 0 || w > 1000)
      throw InputError("--pml-width: must be between 0 and 1000 cells (got " + std::to_string(w) + ")");
    o.pml_sides[std::size_t(side_of[ndim - 2][i])] = int(w);
  }
}

}  // namespace starwave::python
