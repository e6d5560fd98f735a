// python/module.cpp — `import starwave`: the engine from Python (starwave._starwave; the
// package's __init__.py documents and re-exports it). The same library the command line runs:
// numpy arrays become a Model and a Survey, the same checks refuse bad input (InputError →
// ValueError, naming the argument), the same task graph runs on every CPU core and GPU StarPU
// finds. StarPU starts at the first call and stops at exit (or starwave.shutdown()); the GIL is
// released while it works, and calls from several Python threads run one at a time.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "python/arrays.hpp"
#include "src/base/error.hpp"
#include "src/memory/room.hpp"
#include "src/memory/store_plan.hpp"
#include "src/runtime/runtime.hpp"
#include "src/safety/signals.hpp"
#include "src/synthetic/synth.hpp"
#include "src/workflows/data_fit.hpp"
#include "src/workflows/gradient.hpp"
#include "src/workflows/hessian.hpp"
#include "src/workflows/modeling.hpp"

namespace py = pybind11;
using namespace starwave;

namespace {

/// One call at a time: a call holds this for its whole run. A call from a Python signal handler
/// run while the same thread's call looks for signals would wait for itself: refused instead.
class OneCall {
 public:
  OneCall() {
    if (holder().load() == std::this_thread::get_id())
      throw std::runtime_error("starwave: called from a signal handler during a starwave call on the same thread");
    lock().lock();
    holder().store(std::this_thread::get_id());
  }
  ~OneCall() {
    holder().store(std::thread::id());
    lock().unlock();
  }
  OneCall(const OneCall&) = delete;
  OneCall& operator=(const OneCall&) = delete;

 private:
  static std::mutex& lock() {
    static std::mutex m;
    return m;
  }
  static std::atomic<std::thread::id>& holder() {
    static std::atomic<std::thread::id> id;
    return id;
  }
};
std::unique_ptr<Runtime>& runtime() {
  static std::unique_ptr<Runtime> rt;
  return rt;
}

/// Set in a child made by fork() after a call had started StarPU: StarPU's threads do not
/// survive fork, and its state in the child says it runs — a call there would wait for ever.
std::atomic<bool> g_forked_from_a_run{false};

void on_fork_child() {
  if (!runtime()) return;     // StarPU never started (or was shut down): the child starts its own
  (void)runtime().release();  // the parent's, never stopped here (its threads are not in the child)
  g_forked_from_a_run.store(true);
}

/// Raises at once in a child forked from a process where StarPU ran.
void require_not_forked() {
  if (g_forked_from_a_run.load())
    throw std::runtime_error(
        "starwave: this process was made by fork() from one where starwave had started StarPU, whose worker "
        "threads do not survive fork(): call starwave from the parent, or start children with "
        "multiprocessing's 'spawn' or 'forkserver' method (or call starwave.shutdown() before forking)");
}

/// The running Runtime, started at the first call (with the GIL released: StarPU's start
/// takes a moment and its threads never call Python).
Runtime& started() {
  if (!runtime()) {
    RuntimeOptions alone;
    alone.alone = true;  // under mpirun or srun, each process its own calls (docs/python.md)
    runtime() = std::make_unique<Runtime>(alone);
  }
  return *runtime();
}

/// `work()` with the GIL released, one call at a time, StarPU started. The work runs on a thread
/// of its own while the calling thread looks for signals every 50 ms: Ctrl-C (Python's
/// KeyboardInterrupt, or any exception a signal handler raises) stops the run once the shots
/// under way have finished (safety::request_interrupt) and is raised here, nothing returned.
template <typename Work>
auto working(Work&& work) {
  using Result = decltype(work());
  require_not_forked();
  std::future<Result> result;
  bool raised = false;
  {
    const py::gil_scoped_release free;
    const OneCall one;
    started();
    safety::clear_interrupt();
    result = std::async(std::launch::async, [&work] { return work(); });
    while (result.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
      if (raised) continue;
      const py::gil_scoped_acquire held;
      if (PyErr_CheckSignals() != 0) {
        raised = true;  // the exception stays set on this thread until it is raised below
        safety::request_interrupt();
      }
    }
  }
  if (raised) {
    try {
      result.get();
    } catch (...) {  // Interrupted, or whatever the stopped run said: the signal's exception wins
    }
    throw py::error_already_set();
  }
  return result.get();
}

/// The numerical keywords every call takes (def_call binds them), as the command line's options.
struct Numerics {
  int order;
  py::object pml_width;  // one width, or one a side: (z low, z high, [y low, y high,] x low, x high)
  bool free_surface;
  double internal_dt, pml_velocity, pml_frequency;
};

/// The numerical options of a call on `vp` (its dtype: the precision), checked as the command
/// line checks its own.
NumericalOptions options(const py::object& vp, const Numerics& n) {
  NumericalOptions o;
  o.pml_velocity = n.pml_velocity;
  o.pml_frequency = n.pml_frequency;
  o.order = n.order;
  python::set_pml_widths(o, n.pml_width, int(py::array(vp).ndim()));
  if (n.free_surface && o.pml_sides[0] > 0)
    throw InputError("--pml-width: a free surface has no layer on top: give the top side 0 (or one width)");
  o.free_surface = n.free_surface;
  o.internal_dt = n.internal_dt;
  o.precision = python::precision_of(vp);
  o.validate();
  return o;
}

/// The command line's option names in a message, as the Python call names its arguments
/// ("--pml-width: …" → "pml_width: …", "--data" → "observed").
std::string pythonic(std::string message) {
  static const std::pair<const char*, const char*> names[] = {{"--data", "observed"},
                                                              {"--model", "vp"},
                                                              {"--survey", "the survey"},
                                                              {"--direct-smooth", "direct_smooth"},
                                                              {"--direct-wave", "direct_wave"},
                                                              {"--internal-dt", "internal_dt"},
                                                              {"--pml-frequency", "pml_frequency"},
                                                              {"--pml-velocity", "pml_velocity"},
                                                              {"--pml-width", "pml_width"},
                                                              {"--free-surface", "free_surface"},
                                                              {"--order", "order"},
                                                              {"--store-compression", "store_compression"},
                                                              {"--precision", "vp's dtype"}};
  for (const auto& [cli, py_name] : names)
    for (std::size_t at = message.find(cli); at != std::string::npos; at = message.find(cli, at)) {
      const std::size_t end = at + std::string(cli).size();
      if (end < message.size() && (std::isalnum(static_cast<unsigned char>(message[end])) || message[end] == '-')) {
        at = end;
        continue;
      }
      message.replace(at, end - at, py_name);
      at += std::string(py_name).size();
    }
  return message;
}

/// (nshots, nrec, nt) traces of `values` as an array of dtype V.
template <typename V>
py::array traces_array(const Survey& s, const std::vector<V>& values) {
  py::array_t<V> out({py::ssize_t(s.nshots()), py::ssize_t(s.nrec()), py::ssize_t(s.nt)});
  std::copy(values.begin(), values.end(), out.mutable_data());
  return std::move(out);
}

/// The traces of a run in the run's precision (doubles) as an array of vp's dtype.
py::array traces_of(const Survey& s, const NumericalOptions& o, const std::vector<double>& traces) {
  if (o.precision == Precision::kDouble) return traces_array(s, traces);
  return traces_array(s, std::vector<float>(traces.begin(), traces.end()));
}

/// model(): the traces; with an initial state or `final_state`, (traces, the shots' last states).
py::object model(const Numerics& n, const py::object& vp, const py::object& spacing, double dt,
                 const py::object& wavelet, const py::object& sources, const py::object& receivers,
                 const py::object& origin, const py::object& receiver_counts, const py::object& initial_state,
                 bool final_state) {
  const NumericalOptions o = options(vp, n);
  const Model m = python::to_model(vp, spacing, origin);
  const Survey s = python::to_survey(m, dt, wavelet, sources, receivers, receiver_counts, py::none(), o.precision);
  check_modeling_inputs(m, s, o);
  if (initial_state.is_none() && !final_state) {
    if (o.precision == Precision::kDouble)  // the traces as computed, to differentiate them (vjp)
      return traces_array(s, working([&] { return model_shots_exact(m, s, o); }));
    return traces_array(s, working([&] { return model_shots(m, s, o, nullptr); }));  // the command line's bits
  }
  ShotStates st = shot_states(m, s, o);
  std::vector<py::ssize_t> shape{py::ssize_t(s.nshots()), st.components, st.shape[0]};
  if (m.three_d()) shape.push_back(st.shape[1]);
  shape.push_back(st.shape[2]);
  if (!initial_state.is_none()) st.initial = python::exact_shape_values(initial_state, shape, "initial_state");
  const py::array traces = traces_of(s, o, working([&] { return model_shots_with_states(m, s, o, st); }));
  if (!final_state) return traces;
  py::array states =
      o.precision == Precision::kDouble ? py::array(py::array_t<double>(shape)) : py::array(py::array_t<float>(shape));
  if (o.precision == Precision::kDouble)
    std::copy(st.end.begin(), st.end.end(), static_cast<double*>(states.mutable_data()));
  else
    std::copy(st.end.begin(), st.end.end(), static_cast<float*>(states.mutable_data()));
  return py::make_tuple(traces, states);
}

py::array born(const Numerics& n, const py::object& vp, const py::object& dv, const py::object& spacing, double dt,
               const py::object& wavelet, const py::object& sources, const py::object& receivers,
               const py::object& origin, const py::object& receiver_counts, bool layers) {
  NumericalOptions o = options(vp, n);
  o.perturb_layers = layers;
  const Model m = python::to_model(vp, spacing, origin);
  const py::array v = py::array::ensure(vp);
  const std::vector<double> perturbation =
      python::exact_shape_values(dv, std::vector<py::ssize_t>(v.shape(), v.shape() + v.ndim()), "dv");
  // Any scale (a search direction's too: J is linear), within what the run's precision holds
  // (exact_shape_values refused a shape or a value that is not finite).
  if (o.precision == Precision::kSingle)
    for (const double x : perturbation)
      if (std::abs(x) > double(std::numeric_limits<float>::max()))
        throw InputError("dv: holds " + number_text(x) + ", beyond float32 (vp's dtype, the run's precision)");
  const Survey s = python::to_survey(m, dt, wavelet, sources, receivers, receiver_counts, py::none(), o.precision);
  check_modeling_inputs(m, s, o);
  const std::vector<double> j = working([&] { return born_shots_exact(m, perturbation, s, o); });
  if (!std::all_of(j.begin(), j.end(), [](double x) { return std::isfinite(x); }))
    throw InputError("born: the Born data overflow the run's precision (dv, vp or the wavelet too large for it)");
  if (o.precision == Precision::kDouble) return traces_array(s, j);
  return traces_array(s, std::vector<float>(j.begin(), j.end()));
}

/// What a gradient or RTM call runs on: its options, model and survey with the observed data,
/// checked as `starwave gradient` checks its files.
struct ImagingRun {
  NumericalOptions o;
  Model m;
  Survey s;
};
ImagingRun imaging_run(const Numerics& n, const py::object& vp, const py::object& spacing, double dt,
                       const py::object& wavelet, const py::object& sources, const py::object& receivers,
                       const py::object& observed, const py::object& origin, const py::object& receiver_counts,
                       const py::object& weights, const char* data_name = "observed") {
  ImagingRun run{options(vp, n), python::to_model(vp, spacing, origin), {}};
  run.s = python::to_survey(run.m, dt, wavelet, sources, receivers, receiver_counts, weights, run.o.precision);
  // vjp's cotangent in a double run enters in double (the other data as the command line reads them).
  python::set_observed(run.s, observed, data_name,
                       std::string(data_name) == "cotangent" && run.o.precision == Precision::kDouble);
  check_imaging_inputs(run.m, run.s, run.o);
  return run;
}

/// `x` as Python's ascii() writes it, cut to 80 characters, for a message (its type's name if
/// that fails).
std::string shown(const py::handle& x) {
  PyObject* text = PyObject_ASCII(x.ptr());
  const char* utf8 = text ? PyUnicode_AsUTF8(text) : nullptr;
  std::string out = utf8 ? utf8 : std::string("a ") + Py_TYPE(x.ptr())->tp_name;
  if (!utf8) PyErr_Clear();
  Py_XDECREF(text);
  return out.size() > 80 ? out.substr(0, 77) + "..." : out;
}

/// A number given to `option` (a float, an int, a numpy number: not a bool, text or bytes),
/// read once through its __float__; InputError naming the option otherwise. An exception
/// other than a wrong type or value (KeyboardInterrupt, MemoryError) goes on as it is.
double number_for(const py::handle& x, const std::string& option, const std::string& what) {
  const std::string type = Py_TYPE(x.ptr())->tp_name;
  const bool refused = PyBool_Check(x.ptr()) || type == "numpy.bool_" || type == "numpy.bool" ||
                       PyUnicode_Check(x.ptr()) || PyBytes_Check(x.ptr()) || PyByteArray_Check(x.ptr());
  if (!refused) {
    const double value = PyFloat_AsDouble(x.ptr());
    if (!(value == -1.0 && PyErr_Occurred())) return value;
    if (!PyErr_ExceptionMatches(PyExc_TypeError) && !PyErr_ExceptionMatches(PyExc_ValueError))
      throw py::error_already_set();
    PyErr_Clear();
  }
  throw InputError(option + ": " + what + ", not " + shown(x));
}

/// gradient()'s window as --window's text: a str as it is, or (BEFORE, AFTER[, TAPER]) in s,
/// each number as Python writes it (the shortest text that reads back to it). The length is
/// checked before anything is read, and the items are read from a tuple of their own (a list
/// that an item's __float__ changes is not walked).
std::string window_text_of(const py::object& window) {
  const std::string what = "give 'BEFORE,AFTER[,TAPER]' or (BEFORE, AFTER[, TAPER]) in s";
  const auto refuse = [&] { return InputError("--window: " + what + ", not " + shown(window)); };
  if (PyUnicode_Check(window.ptr())) {
    Py_ssize_t n = 0;
    const char* text = PyUnicode_AsUTF8AndSize(window.ptr(), &n);
    if (!text) {  // not UTF-8 (a lone surrogate)
      PyErr_Clear();
      throw refuse();
    }
    return std::string(text, std::size_t(n));
  }
  if (PyBytes_Check(window.ptr()) || PyByteArray_Check(window.ptr()) || !PySequence_Check(window.ptr())) throw refuse();
  const Py_ssize_t n = PySequence_Size(window.ptr());
  if (n == -1) {  // a sequence without a length (a 0-d array)
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw py::error_already_set();
    PyErr_Clear();
  }
  if (n != 2 && n != 3) throw refuse();
  const auto items = py::reinterpret_steal<py::tuple>(PySequence_Tuple(window.ptr()));
  if (!items) throw py::error_already_set();
  std::string joined;
  for (const py::handle& x : items) {
    const double value = number_for(x, "--window", what);
    joined += (joined.empty() ? "" : ",") + shown(py::float_(value));
  }
  return joined;
}

py::tuple gradient(const Numerics& n, const py::object& vp, const py::object& spacing, double dt,
                   const py::object& wavelet, const py::object& sources, const py::object& receivers,
                   const py::object& observed, const py::object& origin, const py::object& receiver_counts,
                   const py::object& weights, const std::string& misfit, const std::string& store_compression,
                   const py::object& window, const py::object& window_velocity) {
  GradientHooks hooks;
  hooks.misfit = parse_misfit(misfit);
  if (window.is_none() && !window_velocity.is_none())
    throw InputError("--window-velocity: only with --window (the window it places)");
  ImagingRun run =
      imaging_run(n, vp, spacing, dt, wavelet, sources, receivers, observed, origin, receiver_counts, weights);
  run.o.store_compression = parse_store_compression(store_compression, "store_compression");
  TimeWindow w;  // starwave gradient --window: each trace around its arrival, at a velocity or picked
  if (!window.is_none()) {
    const double velocity = window_velocity.is_none()
                                ? 0
                                : number_for(window_velocity, "--window-velocity", "a velocity in m/s (0: picked)");
    w = parse_window(window_text_of(window), velocity);
    check_window(w, run.s);
    if (w.velocity > 0) {  // the arrivals first, then the survey moved in (its observed data are not copied)
      const std::vector<double> arrivals = velocity_arrivals(run.s, w);
      run.s = windowed(std::move(run.s), w, arrivals);
    }
  }
  const ImagingResult r = working([&] {
    if (w.on() && w.velocity == 0) {  // picked in the data modelled in vp: StarPU's work
      const std::vector<double> arrivals = picked_arrivals(run.m, run.s, run.o);
      run.s = windowed(std::move(run.s), w, arrivals);
    }
    return misfit_gradient(run.m, run.s, run.o, hooks);
  });
  return py::make_tuple(r.misfit, python::model_array(run.m, r.values));
}

/// vjp(): Jᵀ·cotangent; through states (an initial state, a final state's cotangent, or `states`),
/// (Jᵀ·cotangent, the initial state's cotangent, the wavelet's), all float64.
py::object vjp(const Numerics& n, const py::object& vp, const py::object& spacing, double dt, const py::object& wavelet,
               const py::object& sources, const py::object& receivers, const py::object& cotangent,
               const py::object& origin, const py::object& receiver_counts, const py::object& weights, bool layers,
               const std::string& store_compression, const py::object& initial_state, const py::object& final_cotangent,
               bool states) {
  ImagingRun run = imaging_run(n, vp, spacing, dt, wavelet, sources, receivers, cotangent, origin, receiver_counts,
                               weights, "cotangent");
  run.o.store_compression = parse_store_compression(store_compression, "store_compression");
  if (!layers) run.o.storage = StorePlan::kStoreShell;  // the transpose of born(layers=False): no layers' share
  if (initial_state.is_none() && final_cotangent.is_none() && !states)
    return python::model_array(run.m, working([&] { return data_vjp(run.m, run.s, run.o); }).values);
  if (run.o.free_surface) throw InputError("free_surface: gradients through states are not computed with one");
  const ShotStates shape = shot_states(run.m, run.s, run.o);
  std::vector<py::ssize_t> dims{py::ssize_t(run.s.nshots()), shape.components, shape.shape[0]};
  if (run.m.three_d()) dims.push_back(shape.shape[1]);
  dims.push_back(shape.shape[2]);
  StateGradients g;
  g.per_shot = shape.per_shot;
  if (!initial_state.is_none()) g.initial = python::exact_shape_values(initial_state, dims, "initial_state");
  if (!final_cotangent.is_none())
    g.end_cotangent = python::exact_shape_values(final_cotangent, dims, "final_cotangent");
  GradientHooks hooks;
  hooks.states = &g;
  const ImagingResult r = working([&] { return data_vjp(run.m, run.s, run.o, hooks); });
  py::array_t<double> initial(dims), wavelets({py::ssize_t(run.s.nshots()), py::ssize_t(run.s.nt)});
  std::copy(g.initial_cotangent.begin(), g.initial_cotangent.end(), initial.mutable_data());
  std::copy(g.wavelet_gradient.begin(), g.wavelet_gradient.end(), wavelets.mutable_data());
  return py::make_tuple(python::model_array(run.m, r.values), initial, wavelets);
}

/// vjp_derivative(): the cotangents of vjp's inputs (vp, initial_state, wavelet, cotangent,
/// final_cotangent) for a cotangent (dv, d_initial_state, d_wavelet) of its outputs, float64.
py::tuple vjp_derivative(const Numerics& n, const py::object& vp, const py::object& spacing, double dt,
                         const py::object& wavelet, const py::object& sources, const py::object& receivers,
                         const py::object& cotangent, const py::object& origin, const py::object& receiver_counts,
                         const py::object& initial_state, const py::object& final_cotangent, const py::object& dv,
                         const py::object& d_initial_state, const py::object& d_wavelet, bool layers) {
  const NumericalOptions o = options(vp, n);
  const Model m = python::to_model(vp, spacing, origin);
  const Survey s = python::to_survey(m, dt, wavelet, sources, receivers, receiver_counts, py::none(), o.precision);
  const ShotStates shape = shot_states(m, s, o);
  std::vector<py::ssize_t> dims{py::ssize_t(s.nshots()), shape.components, shape.shape[0]};
  if (m.three_d()) dims.push_back(shape.shape[1]);
  dims.push_back(shape.shape[2]);
  const std::vector<py::ssize_t> traces{py::ssize_t(s.nshots()), py::ssize_t(s.nrec()), py::ssize_t(s.nt)};
  const std::vector<py::ssize_t> wavelets{py::ssize_t(s.nshots()), py::ssize_t(s.nt)};
  VjpDirection io;
  io.per_shot = shape.per_shot;
  io.layers = layers;
  io.cotangent = python::exact_shape_values(cotangent, traces, "cotangent");
  const auto optional = [](const py::object& x, const std::vector<py::ssize_t>& d, const char* name) {
    return x.is_none() ? std::vector<double>{} : python::exact_shape_values(x, d, name);
  };
  io.initial = optional(initial_state, dims, "initial_state");
  io.end_cotangent = optional(final_cotangent, dims, "final_cotangent");
  io.dv =
      optional(dv, std::vector<py::ssize_t>(py::array(vp).shape(), py::array(vp).shape() + py::array(vp).ndim()), "dv");
  io.d_initial = optional(d_initial_state, dims, "d_initial_state");
  io.d_wavelet = optional(d_wavelet, wavelets, "d_wavelet");
  working([&] { vjp_derivative(m, s, o, io); });
  const auto array = [](const std::vector<double>& x, const std::vector<py::ssize_t>& d) {
    py::array_t<double> a(d);
    std::copy(x.begin(), x.end(), a.mutable_data());
    return a;
  };
  return py::make_tuple(python::model_array(m, io.v), array(io.initial_cotangent, dims), array(io.wavelet, wavelets),
                        array(io.data, traces), array(io.end, dims));
}

py::array_t<double> rtm(const Numerics& n, const py::object& vp, const py::object& spacing, double dt,
                        const py::object& wavelet, const py::object& sources, const py::object& receivers,
                        const py::object& observed, const py::object& origin, const py::object& receiver_counts,
                        const py::object& weights, const std::string& direct_wave, double direct_smooth,
                        const std::string& imaging_condition, const std::string& illumination) {
  const ImagingRun run =
      imaging_run(n, vp, spacing, dt, wavelet, sources, receivers, observed, origin, receiver_counts, weights);
  const Model& m = run.m;
  RtmOptions rtm_options;
  rtm_options.direct = parse_direct_wave(direct_wave);
  rtm_options.smooth = direct_smooth;
  rtm_options.condition = parse_imaging_condition(imaging_condition);
  rtm_options.compensation = parse_compensation(illumination);
  if (!(direct_smooth >= 0)) throw InputError("direct_smooth: must be 0 (the default length) or a length in m");
  if (direct_smooth > 0 && rtm_options.direct != DirectWave::kSmooth)
    throw InputError("direct_smooth: only with direct_wave='smooth'");
  if (rtm_options.direct == DirectWave::kSmooth) check_smoothing_length(m, rtm_options.smooth, "direct_smooth");
  const ImagingResult r = working([&] { return rtm_stack(m, run.s, run.o, {}, rtm_options); });
  return python::model_array(m, rtm_image(m, run.s, r, rtm_options).image);
}

void shutdown() {
  if (g_forked_from_a_run.load()) return;  // nothing of this process's own to stop
  const py::gil_scoped_release free;
  const OneCall one;
  runtime().reset();
}

/// Binds `f` as `name` with its own arguments `extra` (to the keyword-only ones), then the
/// numerical keywords every call takes (Numerics) — the command line's options, their
/// defaults NumericalOptions's (written once, src/numerics/propagator.hpp) — which reach `f`
/// as its first argument.
template <typename R, typename... Args, typename... Extra>
void def_call(py::module_& mod, const char* name, R (*f)(const Numerics&, Args...), const char* doc,
              const Extra&... extra) {
  const NumericalOptions d;
  mod.def(
      name,
      [f](Args... args, int order, py::object pml_width, bool free_surface, double internal_dt, double pml_velocity,
          double pml_frequency) {
        return f(Numerics{order, pml_width, free_surface, internal_dt, pml_velocity, pml_frequency}, args...);
      },
      doc, extra..., py::arg("order") = d.order, py::arg("pml_width") = py::int_(d.pml_width),
      py::arg("free_surface") = d.free_surface, py::arg("internal_dt") = d.internal_dt,
      py::arg("pml_velocity") = d.pml_velocity, py::arg("pml_frequency") = d.pml_frequency);
}

}  // namespace

PYBIND11_MODULE(_starwave, mod) {
  mod.doc() = "starwave's engine (see the starwave package)";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, pythonic(e.what()).c_str());
    } catch (const std::bad_alloc&) {  // what bounds it, as the command line says
      std::string why = "starwave: out of memory";
      try {
        const memory::MemoryRoom room = memory::memory_room();
        why += " (the call needs more than the " + bytes_text(double(room.bytes)) + " " + room.bound + ")";
      } catch (...) {
      }
      PyErr_SetString(PyExc_MemoryError, why.c_str());
    }
  });
  pthread_atfork(nullptr, nullptr, on_fork_child);
  using py::arg;
  def_call(mod, "model", &model,
           "Synthetic data of every shot: (nshots, nrec, nt) of vp's dtype, sample n at t = n·dt (see the "
           "package's help for the arguments). initial_state: each shot's state to start from instead of rest, "
           "(nshots, k, *grid) with the grid the model and its absorbing layers and k = 2 + 2·ndim arrays: u at "
           "sample 0, u one inner step before, ψ along each axis, ζ along each axis; final_state=True: returns "
           "(data, the shots' states after the last inner step, in that layout).",
           arg("vp"), arg("spacing"), arg("dt"), arg("wavelet"), arg("sources"), arg("receivers"), py::kw_only(),
           arg("origin") = py::none(), arg("receiver_counts") = py::none(), arg("initial_state") = py::none(),
           arg("final_state") = false);
  def_call(mod, "born", &born,
           "The Born data J·dv: the derivative of model(vp, …) along the velocity perturbation dv (m/s, vp's "
           "shape), (nshots, nrec, nt) of vp's dtype. layers=False: the absorbing layers carry no perturbation "
           "(Deepwave's scalar_born) instead of their edge cells'.",
           arg("vp"), arg("dv"), arg("spacing"), arg("dt"), arg("wavelet"), arg("sources"), arg("receivers"),
           py::kw_only(), arg("origin") = py::none(), arg("receiver_counts") = py::none(), arg("layers") = true);
  def_call(mod, "gradient", &gradient,
           "(misfit, gradient): Φ over every shot and its exact gradient ∂Φ/∂v, float64 shaped as vp; Φ = "
           "½ Σ w (d_syn − d_obs)², or misfit='normalized', 'correlation', 'envelope' (starwave gradient --misfit). "
           "store_compression: the stored forward wavefield's values (--store-compression). window='BEFORE,AFTER"
           "[,TAPER]' (s): each trace compared around its first arrival, picked in the data modelled in vp, or "
           "at window_velocity (m/s) from the source–receiver distance plus the wavelet's onset (--window, "
           "--window-velocity).",
           arg("vp"), arg("spacing"), arg("dt"), arg("wavelet"), arg("sources"), arg("receivers"), arg("observed"),
           py::kw_only(), arg("origin") = py::none(), arg("receiver_counts") = py::none(), arg("weights") = py::none(),
           arg("misfit") = "l2", arg("store_compression") = "none", arg("window") = py::none(),
           arg("window_velocity") = py::none());
  def_call(mod, "vjp", &vjp,
           "Jᵀ·cotangent: the gradient with respect to vp of Σ cotangent · model(vp, …), float64 shaped as vp (the "
           "cotangent (nshots, nrec, nt) enters in vp's precision). layers=False: without the absorbing layers' share "
           "on the edge cells (the transpose of born(…, layers=False)). store_compression: as gradient's. Through "
           "states (model()'s initial_state, final_cotangent: a cotangent of its final states, or states=True): "
           "(Jᵀ·cotangent, the initial states' cotangent, the wavelet's (nshots, nt)), float64.",
           arg("vp"), arg("spacing"), arg("dt"), arg("wavelet"), arg("sources"), arg("receivers"), arg("cotangent"),
           py::kw_only(), arg("origin") = py::none(), arg("receiver_counts") = py::none(), arg("weights") = py::none(),
           arg("layers") = true, arg("store_compression") = "none", arg("initial_state") = py::none(),
           arg("final_cotangent") = py::none(), arg("states") = false);
  def_call(
      mod, "vjp_derivative", &vjp_derivative,
      "The derivative of vjp(vp, …, cotangent, initial_state=, final_cotangent=, states=True) along a "
      "cotangent (dv, d_initial_state, d_wavelet) of its three outputs (each None: zero), as the cotangents of "
      "its inputs: (∂/∂vp, ∂/∂initial_state, ∂/∂wavelet (nshots, nt), ∂/∂cotangent: the data's tangent, "
      "∂/∂final_cotangent: the final states' tangent), float64 — second derivatives (torch's double backward, "
      "Hessian-vector products). layers=False: of vjp(…, layers=False), born(…, layers=False)'s transpose. No free "
      "surface; every step of two wavefields is held during a shot.",
      arg("vp"), arg("spacing"), arg("dt"), arg("wavelet"), arg("sources"), arg("receivers"), arg("cotangent"),
      py::kw_only(), arg("origin") = py::none(), arg("receiver_counts") = py::none(), arg("initial_state") = py::none(),
      arg("final_cotangent") = py::none(), arg("dv") = py::none(), arg("d_initial_state") = py::none(),
      arg("d_wavelet") = py::none(), arg("layers") = true);
  def_call(mod, "rtm", &rtm,
           "The reverse-time migration image of the observed data, float64 shaped as vp (starwave rtm's /image).",
           arg("vp"), arg("spacing"), arg("dt"), arg("wavelet"), arg("sources"), arg("receivers"), arg("observed"),
           py::kw_only(), arg("origin") = py::none(), arg("receiver_counts") = py::none(), arg("weights") = py::none(),
           arg("direct_wave") = "smooth", arg("direct_smooth") = 0.0,
           arg("imaging_condition") = imaging_condition_name(RtmOptions{}.condition),
           arg("illumination") = compensation_name(RtmOptions{}.compensation));
  mod.def("shutdown", &shutdown, "Stops StarPU now (the next call starts it again; at exit it stops by itself).");
}
