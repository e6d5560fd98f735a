// src/workflows/hessian.cpp — the second-order adjoint over a survey: a hessian task a shot
// (codelets/hessian.hpp), a bounded window of shots in flight, each shot's results handed on
// in shot order (the model's sum in that order: the same bits on any worker).
#include "src/workflows/hessian.hpp"

#include <cmath>
#include <string>

#include "codelets/failure.hpp"
#include "codelets/hessian.hpp"
#include "graph/data.hpp"
#include "graph/resting.hpp"
#include "graph/window.hpp"
#include "kernels/cpu/hessian.hpp"
#include "kernels/shot_state.hpp"
#include "src/base/error.hpp"
#include "src/workflows/modeling.hpp"
#include "src/workflows/shot_run.hpp"
#include "src/workflows/state_tasks.hpp"

namespace starwave {
namespace {

void check_sizes(const Model& m, const Survey& s, const VjpDirection& io) {
  const std::size_t n = std::size_t(s.nshots());
  const auto check = [](const std::vector<double>& x, std::size_t size, bool may_be_empty, const char* name) {
    if ((x.empty() && may_be_empty) || x.size() == size) {
      for (double v : x)
        if (!std::isfinite(v)) throw InputError(std::string(name) + ": holds a value that is not finite");
      return;
    }
    throw InputError(std::string(name) + ": holds " + std::to_string(x.size()) + " values, not " +
                     std::to_string(size));
  };
  check(io.cotangent, n * std::size_t(s.nrec()) * std::size_t(s.nt), false, "cotangent");
  check(io.initial, n * io.per_shot, true, "initial_state");
  check(io.end_cotangent, n * io.per_shot, true, "final_cotangent");
  check(io.dv, m.cells(), true, "the direction's velocity part");
  check(io.d_initial, n * io.per_shot, true, "the direction's initial states");
  check(io.d_wavelet, n * std::size_t(s.nt), true, "the direction's wavelets");
}

template <typename T>
class Hessian {
 public:
  Hessian(const Model& m, const Survey& s, const NumericalOptions& o, VjpDirection& io)
      : m_(m), s_(s), o_(o), io_(io), run_(set_up_shots<T>(m, s, o)), layout_(run_.layout), parts_(run_.layout) {
    run_.medium.attach(layout_, run_.medium.buffer.data());  // for the states' conversions
    ds_ = s;                                                 // the direction's wavelets, resampled as the survey's are
    ds_.wavelets.assign(std::size_t(s.nshots()), std::vector<float>(std::size_t(s.nt), 0.0f));
    ds_.exact_wavelets.assign(std::size_t(s.nshots()), std::vector<double>(std::size_t(s.nt), 0.0));
    for (std::size_t i = 0; i < io.d_wavelet.size(); ++i) {
      ds_.wavelets[i / std::size_t(s.nt)][i % std::size_t(s.nt)] = float(io.d_wavelet[i]);
      ds_.exact_wavelets[i / std::size_t(s.nt)][i % std::size_t(s.nt)] = io.d_wavelet[i];
    }
    const std::size_t n = std::size_t(s.nshots());
    io.data.assign(n * std::size_t(s.nrec()) * std::size_t(s.nt), 0.0);
    io.end.assign(n * io.per_shot, 0.0);
    io.v.assign(m.cells(), 0.0);
    io.initial_cotangent.assign(n * io.per_shot, 0.0);
    io.wavelet.assign(n * std::size_t(s.nt), 0.0);
  }

  void run() {
    const graph::Resting resting;
    const std::vector<double> zero(io_.dv.empty() ? m_.cells() : 0, 0.0);
    std::vector<T> scatter = born_scatter(layout_, m_, io_.dv.empty() ? zero : io_.dv, io_.layers);
    MemoryNeed need;  // every step of two fields in each worker's scratch: refused before any handle if too large
    need.per_worker = sizeof(T) * cpu::hessian_work_size(layout_);
    need.per_shot = sizeof(T) * (parts_.inputs + parts_.outputs + std::size_t(layout_.signals_size()));
    need.shared = sizeof(T) * (run_.medium.buffer.size() + scatter.size());
    const int window = shots_in_window(need, 2 * graph::workers(), "a smaller model or a shorter record");
    graph::Data medium = graph::per_rank_vector(run_.medium.buffer.data(), run_.medium.buffer.size(), sizeof(T));
    graph::Data scatter_data = graph::per_rank_vector(scatter.data(), scatter.size(), sizeof(T));
    graph::Data work = graph::scratch_vector(cpu::hessian_work_size(layout_), sizeof(T));
    graph::InOrder<InFlight> in_flight(window, [&](InFlight& f) { finish(f); });
    for (int shot = 0; shot < s_.nshots(); ++shot) in_flight.add(submit(shot, medium, scatter_data, work));
    in_flight.drain();
    for (graph::Data* h : {&medium, &scatter_data, &work}) h->close();
    if (const std::string failure = codelets::take_failure(); !failure.empty()) throw TaskError(failure);
  }

 private:
  struct InFlight {
    int shot;
    graph::Data nodes, signals, inputs, outputs;
    std::vector<T> in, out;
  };

  InFlight submit(int shot, graph::Data& medium, graph::Data& scatter, graph::Data& work) {
    const typename ShotRun<T>::Shot x = run_.shot(m_, s_, shot), dx = run_.shot(m_, ds_, shot);
    const std::size_t at = std::size_t(shot) * io_.per_shot;
    InFlight f{shot, {}, {}, {}, {}, std::vector<T>(parts_.inputs, T(0)), std::vector<T>(parts_.outputs, T(0))};
    T* in = f.in.data();
    std::copy(dx.inputs.signals.begin(), dx.inputs.signals.begin() + layout_.nsteps, in + parts_.d_source);
    if (!io_.initial.empty()) state::from_dense(layout_, io_.initial.data() + at, in + parts_.initial);
    if (!io_.d_initial.empty()) state::from_dense(layout_, io_.d_initial.data() + at, in + parts_.d_initial);
    if (!io_.end_cotangent.empty())
      state::adjoint_start_from(layout_, io_.end_cotangent.data() + at, in + parts_.adjoint_start);
    const std::size_t traces = std::size_t(s_.nrec()) * std::size_t(s_.nt);
    for (std::size_t i = 0; i < traces; ++i)
      in[parts_.cotangent + i] = T(io_.cotangent[std::size_t(shot) * traces + i]);
    f.nodes = graph::input_vector(0, x.inputs.nodes.data(), x.inputs.nodes.size(), sizeof(long));
    f.signals = graph::input_vector(0, x.inputs.signals.data(), x.inputs.signals.size(), sizeof(T));
    f.inputs = graph::input_vector(0, f.in.data(), f.in.size(), sizeof(T));
    f.outputs = graph::owned_vector(0, f.out.data(), f.out.size(), sizeof(T));
    insert_hessian<T>({medium, scatter, f.nodes, f.signals, f.inputs, f.outputs, work}, x.problem, o_.order);
    return f;
  }

  /// Shot f's results, home, into the caller's arrays.
  void finish(InFlight& f) {
    for (graph::Data* h : {&f.nodes, &f.signals, &f.inputs, &f.outputs}) h->close();
    if (codelets::failed()) return;
    const std::size_t shot = std::size_t(f.shot), nt = std::size_t(s_.nt);
    const std::size_t traces = std::size_t(s_.nrec()) * nt, used = std::size_t(s_.count(f.shot)) * nt;
    const T* out = f.out.data();
    for (std::size_t i = 0; i < used; ++i) io_.data[shot * traces + i] = double(out[parts_.d_traces + i]);
    state::to_dense(layout_, out + parts_.d_end, io_.end.data() + shot * io_.per_shot);
    state::initial_cotangent_from(layout_, out + parts_.adjoint_end,
                                  io_.initial_cotangent.data() + shot * io_.per_shot);
    const std::size_t cells = m_.cells();
    for (std::size_t k = 0; k < cells; ++k)  // ∂Φ₂/∂v = (2A − B)/v
      io_.v[k] += (2 * double(out[parts_.image + k]) - double(out[parts_.image + cells + k])) / m_.vp[k];
    wavelet_cotangent(m_, out + parts_.source_gradient, std::size_t(layout_.nsteps), run_.time.k, int(nt),
                      io_.wavelet.data() + shot * nt);
  }

  const Model& m_;
  const Survey& s_;
  const NumericalOptions& o_;
  VjpDirection& io_;
  ShotRun<T> run_;
  ShotProblem<T> layout_;  // the medium attached
  cpu::HessianParts parts_;
  Survey ds_;
};

}  // namespace

void vjp_derivative(const Model& m, const Survey& s, const NumericalOptions& o, VjpDirection& io) {
  check_modeling_inputs(m, s, o);
  if (o.free_surface) throw InputError("free_surface: second derivatives are not computed with one");
  check_sizes(m, s, io);
  with_precision(o.precision, [&](auto t) {
    const graph::LocalScope alone;
    Hessian<decltype(t)>(m, s, o, io).run();
  });
}

}  // namespace starwave
