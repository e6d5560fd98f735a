// src/workflows/fwi.cpp — the inversion loop, readable as the algorithm:
//   J, g ← gradient(v₀)
//   repeat: d ← L-BFGS direction (bounds active set removed)
//           α ← first trial; while J(P(v + αd)) > J + c₁ gᵀ(P(v + αd) − v): α ← α/2
//           update the L-BFGS pairs; v, J, g ← the accepted trial; save the state
#include "src/workflows/fwi.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>

#include "src/error.hpp"
#include "src/io.hpp"
#include "src/optim/lbfgs.hpp"
#include "src/workflows/imaging.hpp"

namespace starwave {
namespace {

struct Evaluation {
  double misfit;
  std::vector<double> gradient;
  std::vector<double> illumination;
};

Evaluation evaluate(const Model& shape, const std::vector<double>& v, const Survey& s, const NumericalOptions& o) {
  Model m = shape;
  m.vp = v;
  ImagingResult r = misfit_gradient(m, s, o);
  return {r.misfit, std::move(r.values), std::move(r.illumination)};
}

double model_error(const std::vector<double>& v, const Model* truth) {
  if (!truth) return -1;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    num += (v[i] - truth->vp[i]) * (v[i] - truth->vp[i]);
    den += truth->vp[i] * truth->vp[i];
  }
  return std::sqrt(num / den);
}

/// What a restart needs, exactly.
struct State {
  std::vector<double> v, g;
  std::vector<double> precond;  // 1 / (illumination + 1% of its peak), from the initial model
  double misfit = 0;
  std::vector<double> history;
  optim::LbfgsState lbfgs;
  std::vector<double> adam_m, adam_v;  // Adam's moment estimates
  int iteration = 0;
};

void save(const std::string& path, const State& st) {
  io::Record r;
  r.arrays["vp"] = st.v;
  r.arrays["gradient"] = st.g;
  r.arrays["precond"] = st.precond;
  r.arrays["history"] = st.history;
  for (std::size_t k = 0; k < st.lbfgs.s.size(); ++k) {
    r.arrays["s" + std::to_string(k)] = st.lbfgs.s[k];
    r.arrays["y" + std::to_string(k)] = st.lbfgs.y[k];
  }
  r.scalars["iteration"] = st.iteration;
  r.scalars["misfit"] = st.misfit;
  r.scalars["pairs"] = double(st.lbfgs.s.size());
  r.scalars["memory"] = st.lbfgs.memory;
  r.scalars["adam"] = st.adam_m.empty() ? 0 : 1;
  if (!st.adam_m.empty()) {
    r.arrays["adam_m"] = st.adam_m;
    r.arrays["adam_v"] = st.adam_v;
  }
  io::write_record(path, r);
}

State load(const std::string& path, std::size_t n) {
  const io::Record head =
      io::read_record(path, {"vp", "gradient", "precond", "history"}, {"iteration", "misfit", "pairs", "memory"});
  State st;
  st.v = head.arrays.at("vp");
  st.g = head.arrays.at("gradient");
  st.precond = head.arrays.at("precond");
  st.history = head.arrays.at("history");
  st.iteration = int(head.scalars.at("iteration"));
  st.misfit = head.scalars.at("misfit");
  st.lbfgs.memory = int(head.scalars.at("memory"));
  if (st.v.size() != n || st.g.size() != n)
    throw InputError(path + ": the saved state is for a model of another size (" + std::to_string(st.v.size()) +
                     " cells, this model has " + std::to_string(n) + ")");
  const int pairs = int(head.scalars.at("pairs"));
  std::vector<std::string> names;
  for (int k = 0; k < pairs; ++k) {
    names.push_back("s" + std::to_string(k));
    names.push_back("y" + std::to_string(k));
  }
  if (io::read_record(path, {}, {"adam"}).scalars.at("adam") != 0) {
    names.push_back("adam_m");
    names.push_back("adam_v");
  }
  const io::Record mem = io::read_record(path, names, {});
  if (mem.arrays.count("adam_m")) {
    st.adam_m = mem.arrays.at("adam_m");
    st.adam_v = mem.arrays.at("adam_v");
  }
  for (int k = 0; k < pairs; ++k) {
    st.lbfgs.s.push_back(mem.arrays.at("s" + std::to_string(k)));
    st.lbfgs.y.push_back(mem.arrays.at("y" + std::to_string(k)));
  }
  return st;
}

/// The survey restricted to the given shots.
Survey sub_survey(const Survey& s, const std::vector<int>& shots) {
  Survey b;
  b.dt = s.dt;
  b.nt = s.nt;
  const std::size_t per_shot = std::size_t(s.nrec()) * std::size_t(s.nt);
  for (int k : shots) {
    b.sources.push_back(s.sources[std::size_t(k)]);
    if (s.wavelets.size() > 1) b.wavelets.push_back(s.wavelet(k));
    if (s.receivers.size() > 1) b.receivers.push_back(s.receivers_of(k));
    b.data.insert(b.data.end(), s.data.begin() + long(std::size_t(k) * per_shot),
                  s.data.begin() + long(std::size_t(k + 1) * per_shot));
  }
  if (s.wavelets.size() == 1) b.wavelets = s.wavelets;
  if (s.receivers.size() == 1) b.receivers = s.receivers;
  return b;
}

}  // namespace

std::vector<int> batch_of(unsigned seed, int t, int nshots, int k) {
  std::vector<int> all(static_cast<std::size_t>(nshots));
  for (int i = 0; i < nshots; ++i) all[std::size_t(i)] = i;
  if (k <= 0 || k >= nshots) return all;
  std::mt19937_64 rng(std::uint64_t(seed) * 0x9E3779B97F4A7C15ull + std::uint64_t(t));
  for (int i = nshots - 1; i > 0; --i) {  // Fisher–Yates with our own index draw (portable)
    const int j = int(rng() % std::uint64_t(i + 1));
    std::swap(all[std::size_t(i)], all[std::size_t(j)]);
  }
  all.resize(std::size_t(k));
  std::sort(all.begin(), all.end());
  return all;
}

void check_fwi_inputs(const Model& initial, const Survey& s, const NumericalOptions& o, const FwiOptions& f) {
  if (f.iterations < 0) throw InputError("--iterations: must be 0 or more");
  if (f.memory < 1) throw InputError("--memory: must be at least 1");
  if (f.optimizer != "lbfgs" && f.optimizer != "adam")
    throw InputError("--optimizer: must be 'lbfgs' or 'adam' (got '" + f.optimizer + "')");
  if (f.batch_shots < 0 || f.batch_shots > s.nshots())
    throw InputError("--batch-shots: must be between 0 (all) and the number of shots, " + std::to_string(s.nshots()));
  if (!(f.learning_rate > 0)) throw InputError("--learning-rate: must be positive");
  const double lower = f.vmin > 0 ? f.vmin : 0.75 * initial.vmin();
  const double upper = f.vmax > 0 ? f.vmax : 1.25 * initial.vmax();
  if (!(lower < upper)) throw InputError("--vmin/--vmax: the lower bound must be below the upper one");
  check_imaging_inputs(initial, s, o);
}

FwiResult invert(const Model& initial, const Survey& s, const NumericalOptions& o, const FwiOptions& f) {
  check_fwi_inputs(initial, s, o, f);
  const bool adam = f.optimizer == "adam";
  const double lower = f.vmin > 0 ? f.vmin : 0.75 * initial.vmin();
  const double upper = f.vmax > 0 ? f.vmax : 1.25 * initial.vmax();

  State st;
  if (f.resume) {
    if (!std::filesystem::exists(f.state)) throw InputError("--resume: no saved state " + f.state);
    st = load(f.state, initial.vp.size());
    if (adam != !st.adam_m.empty())
      throw InputError(f.state + ": the saved state is from another optimizer than --optimizer " + f.optimizer);
  } else {
    st.v = initial.vp;
    for (double& v : st.v) v = std::clamp(v, lower, upper);
    st.lbfgs.memory = f.memory;
    Evaluation e = evaluate(initial, st.v, s, o);
    st.misfit = e.misfit;
    st.g = std::move(e.gradient);
    st.history = {st.misfit};
    // Preconditioner: the inverse source illumination (deep and edge cells, lit less,
    // would otherwise hardly move), normalised to 1 at the best-lit cell's level.
    double peak = 0;
    for (double x : e.illumination) peak = std::max(peak, x);
    st.precond.resize(e.illumination.size());
    for (std::size_t i = 0; i < e.illumination.size(); ++i)
      st.precond[i] = peak / (e.illumination[i] + 0.01 * peak + 1e-300);
    // A zero in the preconditioner fixes a cell: H₀ has no component there and, the cell
    // never moving, no L-BFGS pair has one either.
    for (int z = 0; z < initial.nz && initial.z0 + z * initial.dz < f.fix_top; ++z)
      for (int x = 0; x < initial.nx; ++x) st.precond[std::size_t(z) * std::size_t(initial.nx) + std::size_t(x)] = 0;
    if (adam) {
      st.adam_m.assign(st.v.size(), 0.0);
      st.adam_v.assign(st.v.size(), 0.0);
    }
    if (!f.state.empty()) save(f.state, st);
  }

  // After each completed iteration: the state to disk, then the report.
  auto finish_iteration = [&](std::chrono::steady_clock::time_point t0, int evaluations) {
    if (!f.state.empty()) save(f.state, st);
    if (!f.on_iteration) return;
    FwiProgress p;
    p.iteration = st.iteration;
    p.misfit = st.misfit;
    p.relative = st.misfit / st.history.front();
    p.model_error = model_error(st.v, f.true_model);
    p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    p.evaluations = evaluations;
    p.model = &st.v;
    p.gradient = &st.g;
    p.precond = &st.precond;
    p.history = &st.history;
    f.on_iteration(p);
  };

  FwiResult result;
  while (st.iteration < f.iterations) {
    const auto t0 = std::chrono::steady_clock::now();
    if (adam) {  // one mini-batch gradient, one Adam step (β₁ 0.9, β₂ 0.999)
      if (f.stop_requested && f.stop_requested()) {
        result.stopped = true;
        break;
      }
      const int t = st.iteration + 1;
      const Survey batch = sub_survey(s, batch_of(f.seed, t, s.nshots(), f.batch_shots));
      Evaluation e = evaluate(initial, st.v, batch, o);
      const double b1 = 0.9, b2 = 0.999, c1 = 1 - std::pow(b1, t), c2 = 1 - std::pow(b2, t);
      double vmax_hat = 0;
      for (std::size_t i = 0; i < st.v.size(); ++i) {
        st.adam_m[i] = b1 * st.adam_m[i] + (1 - b1) * e.gradient[i];
        st.adam_v[i] = b2 * st.adam_v[i] + (1 - b2) * e.gradient[i] * e.gradient[i];
        vmax_hat = std::max(vmax_hat, std::sqrt(st.adam_v[i] / c2));
      }
      const double eps = 1e-8 * vmax_hat + 1e-300;
      for (std::size_t i = 0; i < st.v.size(); ++i)
        if (st.precond[i] != 0)  // fixed cells (--fix-top) stay
          st.v[i] = std::clamp(st.v[i] - f.learning_rate * (st.adam_m[i] / c1) / (std::sqrt(st.adam_v[i] / c2) + eps),
                               lower, upper);
      st.g = std::move(e.gradient);
      st.misfit = e.misfit;  // of this iteration's batch, at the model before the step
      st.history.push_back(st.misfit);
      st.iteration = t;
      finish_iteration(t0, 1);
      continue;
    }
    std::vector<double> d = optim::direction(st.lbfgs, st.v, st.g, lower, upper, st.precond);
    if (optim::dot(d, st.g) >= 0) {  // not a descent direction: forget the pairs
      st.lbfgs.s.clear();
      st.lbfgs.y.clear();
      d = optim::direction(st.lbfgs, st.v, st.g, lower, upper, st.precond);
    }
    double dmax = 0;
    for (double x : d) dmax = std::max(dmax, std::abs(x));
    if (dmax == 0) {
      result.converged = true;
      break;
    }
    double alpha = st.lbfgs.s.empty() ? f.first_step / dmax : 1.0;
    bool accepted = false, stopped = false;
    int evaluations = 0;
    std::vector<double> v_new;
    Evaluation e{0, {}};
    for (int trial = 0; trial < 12; ++trial) {
      if (f.stop_requested && f.stop_requested()) {
        stopped = true;
        break;
      }
      v_new = optim::project_step(st.v, d, alpha, lower, upper);
      e = evaluate(initial, v_new, s, o);
      ++evaluations;
      double decrease = 0;  // gᵀ(v_new − v), the projected step's first-order change
      for (std::size_t i = 0; i < v_new.size(); ++i) decrease += st.g[i] * (v_new[i] - st.v[i]);
      if (std::isfinite(e.misfit) && e.misfit <= st.misfit + 1e-4 * decrease) {
        accepted = true;
        break;
      }
      alpha *= 0.5;
    }
    if (stopped) {
      result.stopped = true;
      break;
    }
    if (!accepted) {
      result.converged = true;
      break;
    }
    optim::update(st.lbfgs, st.v, v_new, st.g, e.gradient);
    st.v = std::move(v_new);
    st.g = std::move(e.gradient);
    st.misfit = e.misfit;
    st.history.push_back(st.misfit);
    ++st.iteration;
    finish_iteration(t0, evaluations);
    if (f.stop_requested && f.stop_requested()) {
      result.stopped = st.iteration < f.iterations;
      break;
    }
  }
  result.model = initial;
  result.model.vp = st.v;
  result.misfit = st.history;
  result.iterations = st.iteration;
  return result;
}

}  // namespace starwave
