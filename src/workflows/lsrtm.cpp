// src/workflows/lsrtm.cpp — see lsrtm.hpp. Conjugate gradients on the normal equations
// N x = c, N = Jᵀ W J, c = Jᵀ W b, b = d − F(v₀), preconditioned by a diagonal P:
//   x₀ = 0, s₀ = c, z₀ = P s₀, p₀ = z₀, γ₀ = ⟨s₀, z₀⟩
//   each iteration: a = N p, q² = ⟨p, a⟩ = ‖J p‖²_W (normal_product's 2Φ), α = γ / q²,
//   x += α p, s −= α a, z = P s, γ' = ⟨s, z⟩, p = z + (γ'/γ) p.
// The data misfit needs no J x: Φ(x + α p) = Φ(x) − α γ / 2 (the residual of the data,
// r − α J p, has ⟨r, J p⟩_W = ⟨s, p⟩ = γ). CG and not L-BFGS: the misfit is quadratic, and CG
// takes its exact steps with one J and one Jᵀ a shot an iteration, no line search.
#include "src/workflows/lsrtm.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "graph/clock.hpp"
#include "graph/data.hpp"
#include "src/base/error.hpp"
#include "src/io/hdf5.hpp"
#include "src/runtime/mpi.hpp"
#include "src/workflows/fwi_state.hpp"
#include "src/workflows/gradient.hpp"

namespace starwave {
namespace {

/// The state files lsrtm writes and reads (the root's text attribute `format`).
constexpr const char* kLsrtmFormat = "starwave lsrtm state 1";

/// What a restart needs, exactly.
struct CgState {
  std::vector<double> x, s, p, precond, illumination, rtm, history;
  double gamma = 0;
  int iteration = 0;  // completed CG iterations
};

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

std::vector<double> times(const std::vector<double>& precond, const std::vector<double>& s) {
  std::vector<double> z(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) z[i] = precond[i] * s[i];
  return z;
}

std::vector<fwi_state::Setting> lsrtm_made_with(const Model& m, const Survey& s, const NumericalOptions& o,
                                                const LsrtmOptions& l) {
  const std::vector<fwi_state::Setting> method{
      {"method", "the method", "lsrtm, conjugate gradients on the normal equations"},
      {"precondition", "--precondition", precondition_name(l)},
      {"mute", "--mute", l.mute ? "acquisition" : "none"},
      {"fix_top", "--fix-top", fwi_state::exact_text(l.fix_top)}};
  return fwi_state::made_with(m, s, o, method, fwi_state::ObservedSource{l.observed, l.observed_checksums});
}

void save(const std::string& path, const CgState& st, const std::vector<fwi_state::Setting>& made) {
  io::Record r;
  r.texts["format"] = kLsrtmFormat;
  for (const auto& x : made) r.texts["made_with_" + x.key] = x.value;
  r.arrays["image"] = st.x;
  r.arrays["normal_residual"] = st.s;
  r.arrays["direction"] = st.p;
  r.arrays["precond"] = st.precond;
  r.arrays["illumination"] = st.illumination;
  r.arrays["rtm"] = st.rtm;
  r.arrays["history"] = st.history;
  r.scalars["gamma"] = st.gamma;
  r.scalars["iteration"] = st.iteration;
  io::write_record(path, r);
}

CgState load(const std::string& path, std::size_t n) {
  const io::Record r =
      io::read_record(path, {"image", "normal_residual", "direction", "precond", "illumination", "rtm", "history"},
                      {"gamma", "iteration"});
  CgState st;
  st.x = r.arrays.at("image");
  st.s = r.arrays.at("normal_residual");
  st.p = r.arrays.at("direction");
  st.precond = r.arrays.at("precond");
  st.illumination = r.arrays.at("illumination");
  st.rtm = r.arrays.at("rtm");
  st.history = r.arrays.at("history");
  st.gamma = r.scalars.at("gamma");
  const double iteration = r.scalars.at("iteration");
  for (const auto* v : {&st.x, &st.s, &st.p, &st.precond, &st.illumination, &st.rtm})
    if (v->size() != n)
      throw InputError("--resume: " + path + " is a state for a model of " + std::to_string(v->size()) +
                       " cells, this model has " + std::to_string(n));
  const auto damaged = [&](const std::string& why) {
    return InputError("--resume: " + path + " is damaged (" + why + ")");
  };
  if (!(iteration >= 0 && iteration <= kMaxIterations && iteration == std::floor(iteration)) ||
      st.history.size() != std::size_t(iteration) + 1)
    throw damaged("its iteration count and misfit history disagree");
  st.iteration = int(iteration);
  if (!std::all_of(st.history.begin(), st.history.end(), [](double h) { return h >= 0 && std::isfinite(h); }))
    throw damaged("its misfit history holds a negative or infinite misfit");
  // γ = ⟨s, P s⟩, as every iteration computes it: the residual, the preconditioner and γ agree
  // bit for bit in a state as it was written.
  const double gamma = dot(st.s, times(st.precond, st.s));
  if (std::memcmp(&gamma, &st.gamma, sizeof gamma) != 0)
    throw damaged("its γ is not ⟨s, P s⟩ of its residual and preconditioner");
  return st;
}

/// The diagonal P: 1 / (the chosen illumination + 1 % of its peak) (or 1), times the mask of
/// the cells the image may change (the acquisition zone's mute, --fix-top).
std::vector<double> preconditioner(const Model& m, const Survey& s, const LsrtmOptions& l, const ImagingResult& g) {
  const std::size_t n = m.cells();
  std::vector<double> p(n, 1.0);
  if (l.precondition) {
    const std::vector<double> illumination = compensating_illumination(g, l.illumination);
    const double peak = *std::max_element(illumination.begin(), illumination.end());
    for (std::size_t i = 0; i < n; ++i) p[i] = 1.0 / (illumination[i] + 0.01 * peak + 1e-300);
  }
  if (l.mute) {
    const std::vector<double> w = rtm_mute_weights(m, s);
    for (std::size_t i = 0; i < n; ++i) p[i] *= w[i];
  }
  const std::size_t plane = std::size_t(m.ny) * std::size_t(m.nx);
  for (int z = 0; z < m.nz && m.z0 + z * m.dz < l.fix_top; ++z)
    std::fill(p.begin() + long(z * plane), p.begin() + long((z + 1) * plane), 0.0);
  return p;
}

/// An evaluation's values and misfit, the same on every rank (rank 0's).
void share(ImagingResult& r) {
  if (!graph::distributed()) return;
  std::vector<double> misfit{r.misfit};
  mpi::broadcast(misfit);
  r.misfit = misfit[0];
  mpi::broadcast(r.values);
  mpi::broadcast(r.illumination);
  mpi::broadcast(r.receiver_illumination);  // rank 0's size: empty unless asked for
}

}  // namespace

const char* precondition_name(const LsrtmOptions& l) {
  if (!l.precondition) return "none";
  return l.illumination == Compensation::kSource ? "illumination" : compensation_name(l.illumination);
}

void parse_precondition(const std::string& text, LsrtmOptions& l) {
  if (text != "illumination" && text != "receiver" && text != "both" && text != "none")
    throw InputError("--precondition: must be 'illumination', 'receiver', 'both' or 'none' (got '" + text + "')");
  l.precondition = text != "none";
  l.illumination = text == "illumination" || !l.precondition ? Compensation::kSource : parse_compensation(text);
}

void check_lsrtm_iterations(const LsrtmOptions& l) {
  if (l.iterations < 1)
    throw InputError("--iterations: " + std::to_string(l.iterations) +
                     "; least-squares RTM needs at least 1 (its first is RTM's image, scaled)");
  if (l.iterations > kMaxIterations)
    throw InputError("--iterations: " + std::to_string(l.iterations) + "; at most " + std::to_string(kMaxIterations));
}

void check_lsrtm_inputs(const Model& background, const Survey& s, const NumericalOptions& o, const LsrtmOptions& l) {
  check_lsrtm_iterations(l);
  if (l.resume && l.state.empty()) throw InputError("--resume: name the state to resume with --state");
  if (!(l.fix_top >= 0 && std::isfinite(l.fix_top)))
    throw InputError("--fix-top: " + number_text(l.fix_top) + " m; must be 0 (none) or a depth within the model");
  if (l.fix_top > background.z0 + (background.nz - 1) * background.dz)
    throw InputError("--fix-top: " + number_text(l.fix_top) + " m holds every row of the model at 0: nothing to image");
  check_imaging_inputs(background, s, o, bool(l.observed));
}

void check_lsrtm_resume(const Model& background, const Survey& s, const NumericalOptions& o, const LsrtmOptions& l) {
  if (!l.resume) return;
  const auto now = lsrtm_made_with(background, s, o, l);
  if (graph::rank() != 0) return;
  fwi_state::check_made_with(l.state, now, kLsrtmFormat);
  // A run that has done more iterations than asked for cannot give the image asked for.
  const double done = io::read_record(l.state, {}, {"iteration"}).scalars.at("iteration");
  const bool count = done >= 0 && done <= kMaxIterations && done == std::floor(done);  // else: damaged, said later
  if (count && done > l.iterations)
    throw InputError("--iterations: " + std::to_string(l.iterations) + "; " + l.state + " has done " +
                     number_text(done) + " iterations already: resume with --iterations " + number_text(done) +
                     " or more");
}

namespace {

/// The saved state (rank 0 reads and checks it), the same on every rank.
CgState resumed(const LsrtmOptions& l, const std::vector<fwi_state::Setting>& made, std::size_t n) {
  CgState st;
  if (graph::rank() == 0) {
    fwi_state::check_made_with(l.state, made, kLsrtmFormat);
    st = load(l.state, n);
  }
  if (!graph::distributed()) return st;
  std::vector<double> scalars{st.gamma, double(st.iteration), double(st.history.size())};
  mpi::broadcast(scalars);
  st.gamma = scalars[0];
  st.iteration = int(scalars[1]);
  for (auto* v : {&st.x, &st.s, &st.p, &st.precond, &st.illumination, &st.rtm}) {
    v->resize(n);
    mpi::broadcast(*v);
  }
  st.history.resize(std::size_t(scalars[2]));
  mpi::broadcast(st.history);
  return st;
}

/// CG's start from the first evaluation, the gradient g at v₀: s = −g = Jᵀ W b, x = 0,
/// p = P s, γ = ⟨s, P s⟩, Φ₀ = its misfit.
CgState started(const Model& m, const Survey& s, const LsrtmOptions& l, const ImagingResult& g) {
  CgState st;
  const std::size_t n = m.cells();
  st.s.resize(n);
  for (std::size_t i = 0; i < n; ++i) st.s[i] = -g.values[i];
  st.rtm = st.s;
  st.illumination = g.illumination;
  st.precond = preconditioner(m, s, l, g);
  st.x.assign(n, 0.0);
  st.p = times(st.precond, st.s);
  st.gamma = dot(st.s, st.p);
  st.history = {g.misfit};
  return st;
}

/// One CG iteration from a = Jᵀ W J p (values) and ‖J p‖²_W (twice its misfit); false when
/// J p = 0 (nothing left that the data can see).
bool step(CgState& st, const ImagingResult& a) {
  const double q2 = 2 * a.misfit;
  if (!std::isfinite(q2))
    throw RuntimeError("lsrtm: ‖J p‖² of iteration " + std::to_string(st.iteration + 1) +
                       " is not finite: the search direction overflowed (a damaged state, or data far too large)");
  if (!(q2 > 0)) return false;
  const double alpha = st.gamma / q2;
  for (std::size_t i = 0; i < st.x.size(); ++i) {
    st.x[i] += alpha * st.p[i];
    st.s[i] -= alpha * a.values[i];
  }
  const std::vector<double> z = times(st.precond, st.s);
  const double gamma = dot(st.s, z);
  const double beta = gamma / st.gamma;
  for (std::size_t i = 0; i < st.p.size(); ++i) st.p[i] = z[i] + beta * st.p[i];
  st.history.push_back(std::max(0.0, st.history.back() - alpha * st.gamma / 2));
  st.gamma = gamma;
  ++st.iteration;
  return true;
}

}  // namespace

LsrtmResult lsrtm(const Model& background, const Survey& s, const NumericalOptions& o, const LsrtmOptions& l,
                  const std::function<void(const LsrtmProgress&)>& on_iteration) {
  if (!l.inputs_checked) check_lsrtm_inputs(background, s, o, l);
  const std::vector<fwi_state::Setting> made =
      l.state.empty() ? std::vector<fwi_state::Setting>{} : lsrtm_made_with(background, s, o, l);
  GradientHooks hooks;
  hooks.on_shot_done = l.on_shot_done;
  hooks.observed = l.observed;
  hooks.inputs_checked = true;
  LsrtmResult result;
  CgState st;
  double t0 = graph::clock_seconds();
  auto report = [&] {  // the state to disk, then the progress (rank 0)
    if (graph::rank() != 0) return;
    if (!l.state.empty()) save(l.state, st, made);
    if (on_iteration) {
      LsrtmProgress pr;
      pr.iteration = st.iteration;
      pr.iterations = l.iterations;
      pr.image = &st.x;
      pr.rtm = &st.rtm;
      pr.history = &st.history;
      pr.misfit = st.history.back();
      pr.misfit0 = st.history.front();
      pr.seconds = graph::clock_seconds() - t0;
      on_iteration(pr);
    }
    t0 = graph::clock_seconds();
  };
  auto stopping = [&] { return result.stopped = l.stop_requested && l.stop_requested(); };

  if (l.resume) {
    st = resumed(l, made, background.cells());
  } else {
    if (stopping()) return result;
    hooks.on_plan = l.on_plan;
    hooks.receiver_illumination = l.precondition && l.illumination != Compensation::kSource;
    ImagingResult g = misfit_gradient(background, s, o, hooks);  // ∂Φ/∂v at v₀ = −Jᵀ W b
    hooks.receiver_illumination = false;
    share(g);
    hooks.on_plan = nullptr;
    st = started(background, s, l, g);
    report();
  }
  while (st.iteration < l.iterations && st.gamma > 0 && !stopping()) {
    ImagingResult a = normal_product(background, s, o, st.p, hooks);  // Jᵀ W J p and ½‖J p‖²_W
    share(a);
    if (!step(st, a)) break;
    report();
  }
  result.image = st.x;
  result.rtm = st.rtm;
  result.illumination = st.illumination;
  result.misfit = st.history;
  result.iterations = st.iteration;
  return result;
}

}  // namespace starwave
