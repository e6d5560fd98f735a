// tests/test_adjoint.cpp — the adjoint kernel against the forward (docs/design.md §7): dot-product
// tests of the source-to-receiver map and of the linearised (Born) map against their
// transposes, and a Taylor test of the gradient (the stores: tests/test_adjoint_store.cpp, the same
// executable).
#include "kernels/cpu/born.hpp"
#include "kernels/shot_state.hpp"
#include "tests/adjoint_fixture.hpp"

namespace starwave::test {
namespace {

/// ⟨F s, r⟩ against ⟨s, Fᵀ r⟩ for the map F from the source samples to the traces.
template <int Order, typename T>
double source_receiver_dot(const Model& m, const Survey& sv, const NumericalOptions& o) {
  Shot<T> s(m, sv, o, ShotProblem<T>::kStoreBoundary);
  const std::vector<T> src = random_vector<T>(std::size_t(s.p().nsteps), 1);
  std::copy(src.begin(), src.end(), s.ps->in.signals.begin());  // the samples; the points' weights follow
  forward<Order>(s);
  const std::vector<T> r = random_vector<T>(s.ps->traces.size(), 2);
  std::vector<T> corr, illum, adj;
  adjoint<Order>(s, r, corr, illum, adj);
  double lhs = 0, rhs = 0;
  for (std::size_t i = 0; i < r.size(); ++i) lhs += double(s.ps->traces[i]) * double(r[i]);
  for (std::size_t i = 0; i < src.size(); ++i) rhs += double(src[i]) * double(adj[i]);
  return std::abs(lhs - rhs) / std::max(std::abs(lhs), std::abs(rhs));
}

template <int Order, typename T>
double source_receiver_dot(bool free_surface, int dim, bool off_grid = false) {
  const Model m = test_model(dim);
  NumericalOptions o;
  o.order = Order;
  o.pml_width = dim == 3 ? 6 : 10;
  o.free_surface = free_surface;
  return source_receiver_dot<Order, T>(m, test_survey(m, free_surface, off_grid), o);
}

TEST(Adjoint, SourceToReceiverMapDotProductInOddGeometries) {
  // Layers thinner than, as wide as and wider than a vector; models narrower than one or
  // thinner than two stencil radii (shared layer arrays); receivers in the layers too.
  for (int pml : {1, 7, 17})
    for (int nx : {3, 9})
      for (int nz : {3, 11}) {
        Model m = test::constant_model(nz, nx, 10, 2000);
        for (int z = 0; z < nz; ++z)
          for (int x = 0; x < nx; ++x) m.at(z, x) = 1900 + 20 * z + 7 * x;
        const Survey sv =
            test::point_survey({10.0 * (nz / 2), 10.0 * (nx / 2)},
                               {{0, 0}, {0, 10.0 * (nx - 1)}, {10.0 * (nz - 1), 10.0 * (nx / 2)}}, 20, 1e-3, 0.2);
        NumericalOptions o;
        o.pml_width = pml;
        o.free_surface = pml == 7;
        EXPECT_LE((source_receiver_dot<8, double>(m, sv, o)), 1e-10)
            << "PML " << pml << ", model " << nz << " × " << nx << ", free surface " << o.free_surface;
        o.order = 4;
        EXPECT_LE((source_receiver_dot<4, double>(m, sv, o)), 1e-10)
            << "order 4, PML " << pml << ", model " << nz << " × " << nx;
      }
}

TEST(Adjoint, SourceToReceiverMapDotProductIn3DOddGeometries) {
  // y layers thinner than and wider than the stencil, models thinner than two radii in y
  // (shared layer arrays), receivers in the layers.
  for (int pml : {1, 7})
    for (int ny : {3, 9}) {
      Model m = test::constant_model_3d(7, ny, 9, 10, 2000);
      for (int z = 0; z < m.nz; ++z)
        for (int y = 0; y < m.ny; ++y)
          for (int x = 0; x < m.nx; ++x) m.at(z, y, x) = 1900 + 20 * z + 11 * y + 7 * x;
      const double yc = 10.0 * (ny / 2);
      const Survey sv =
          test::point_survey({30, yc, 40}, {{0, 0, 0}, {0, 10.0 * (ny - 1), 80}, {60, yc, 40}}, 20, 1e-3, 0.15, true);
      NumericalOptions o;
      o.pml_width = pml;
      o.free_surface = pml == 7;
      EXPECT_LE((source_receiver_dot<8, double>(m, sv, o)), 1e-10) << "PML " << pml << ", ny " << ny;
      o.order = 4;
      EXPECT_LE((source_receiver_dot<4, double>(m, sv, o)), 1e-10) << "order 4, PML " << pml << ", ny " << ny;
    }
}

TEST(Adjoint, SourceToReceiverMapDotProduct) {
  for (int dim : kDims)
    for (bool fs : {false, true}) {
      const std::string what = std::to_string(dim) + "-D, free surface " + std::to_string(fs);
      EXPECT_LE((source_receiver_dot<2, double>(fs, dim)), 1e-10) << "order 2, " << what;
      EXPECT_LE((source_receiver_dot<4, double>(fs, dim)), 1e-10) << "order 4, " << what;
      EXPECT_LE((source_receiver_dot<6, double>(fs, dim)), 1e-10) << "order 6, " << what;
      EXPECT_LE((source_receiver_dot<8, double>(fs, dim)), 1e-10) << "order 8, " << what;
      EXPECT_LE((source_receiver_dot<2, float>(fs, dim)), 1e-4) << "float order 2, " << what;
      EXPECT_LE((source_receiver_dot<4, float>(fs, dim)), 1e-4) << "float order 4, " << what;
      EXPECT_LE((source_receiver_dot<6, float>(fs, dim)), 1e-4) << "float order 6, " << what;
      EXPECT_LE((source_receiver_dot<8, float>(fs, dim)), 1e-4) << "float order 8, " << what;
    }
}

/// Born traces: the product's J (kernels/cpu/born.hpp) of perturbation `dv` (one value a
/// model cell).
template <int Order, typename T>
std::vector<T> born_traces(const Model& m, const Survey& sv, const NumericalOptions& o, const std::vector<double>& dv) {
  auto bg = test::prepare_shot<T>(m, sv, o);
  auto li = test::prepare_shot<T>(m, sv, o);
  const std::vector<T> scatter = born_scatter(bg->p, m, dv);
  std::vector<T> scratch(std::size_t(bg->p.stride));
  cpu::born<Order, T>(bg->p, li->p, scatter.data(), scratch.data());
  return std::vector<T>(li->traces.begin(), li->traces.end());
}

/// A smooth bump (cos² of the distance; 8 cells radius in 2-D, 5 in 3-D) well inside the
/// model region.
std::vector<double> bump(const Model& m, double amplitude) {
  std::vector<double> d(m.vp.size(), 0.0);
  const bool three = m.three_d();
  for (int z = 0; z < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x) {
        const double r = three ? std::sqrt(std::pow(z - 11.0, 2) + std::pow(y - 6.0, 2) + std::pow(x - 9.0, 2)) / 5
                               : std::hypot(z - 22.0, x - 18.0) / 8;
        if (r < 1) d[m.index(z, y, x)] = amplitude * std::pow(std::cos(M_PI / 2 * r), 2);
      }
  return d;
}

/// ⟨B δv, δr⟩ against ⟨δv, Bᵀ δr⟩ for the Born map B = ∂(traces)/∂v, Bᵀ with the whole
/// wavefield kept (`full`) or re-created backwards from the boundary store.
template <int Order, typename T>
double born_dot(bool free_surface, int dim, bool off_grid = false, bool full = false) {
  const Model m = test_model(dim);
  NumericalOptions o;
  o.order = Order;
  o.pml_width = dim == 3 ? 6 : 10;
  o.free_surface = free_surface;
  const Survey sv = test_survey(m, free_surface, off_grid);
  std::vector<double> dv = bump(m, 1.0);
  std::mt19937 gen(3);  // plus roughness everywhere, edges included
  std::uniform_real_distribution<double> rough(-0.3, 0.3);
  for (auto& x : dv) x += rough(gen);
  const std::vector<T> bt = born_traces<Order, T>(m, sv, o, dv);
  Shot<T> s(m, sv, o, full ? ShotProblem<T>::kStoreFull : ShotProblem<T>::kStoreBoundary);
  forward<Order>(s);
  const std::vector<T> dr = random_vector<T>(bt.size(), 4);
  std::vector<T> corr, illum, adj;
  adjoint<Order>(s, dr, corr, illum, adj);
  const std::vector<double> g = gradient_of(m, corr);
  double lhs = 0, rhs = 0;
  for (std::size_t i = 0; i < bt.size(); ++i) lhs += double(bt[i]) * double(dr[i]);
  for (std::size_t i = 0; i < g.size(); ++i) rhs += dv[i] * g[i];
  return std::abs(lhs - rhs) / std::max(std::abs(lhs), std::abs(rhs));
}

TEST(Adjoint, BornMapDotProduct) {
  // Double: 1e-12. Float: 1e-5 with the whole wavefield kept; 1e-4 with the boundary store,
  // whose backward re-creation of u adds float's rounding of its own to Bᵀ (measured: 1e-6 …
  // 7e-5 there, against at most 1e-5 with the field kept). Under the sanitizers, float's
  // orders 2 and 8 (the narrowest and widest halos; double runs every order).
  for (int dim : kDims)
    for (bool fs : {false, true}) {
      const std::string what = std::to_string(dim) + "-D, free surface " + std::to_string(fs);
      EXPECT_LE((born_dot<2, double>(fs, dim)), 1e-12) << "order 2, " << what;
      EXPECT_LE((born_dot<4, double>(fs, dim)), 1e-12) << "order 4, " << what;
      EXPECT_LE((born_dot<6, double>(fs, dim)), 1e-12) << "order 6, " << what;
      EXPECT_LE((born_dot<8, double>(fs, dim)), 1e-12) << "order 8, " << what;
      EXPECT_LE((born_dot<2, float>(fs, dim)), 1e-4) << "float order 2, " << what;
      EXPECT_LE((born_dot<2, float>(fs, dim, false, true)), 1e-5) << "float order 2, field kept, " << what;
      if (!kSanitized) {
        EXPECT_LE((born_dot<4, float>(fs, dim)), 1e-4) << "float order 4, " << what;
        EXPECT_LE((born_dot<4, float>(fs, dim, false, true)), 1e-5) << "float order 4, field kept, " << what;
        EXPECT_LE((born_dot<6, float>(fs, dim)), 1e-4) << "float order 6, " << what;
        EXPECT_LE((born_dot<6, float>(fs, dim, false, true)), 1e-5) << "float order 6, field kept, " << what;
      }
      EXPECT_LE((born_dot<8, float>(fs, dim)), 1e-4) << "float order 8, " << what;
      EXPECT_LE((born_dot<8, float>(fs, dim, false, true)), 1e-5) << "float order 8, field kept, " << what;
    }
}

TEST(Adjoint, OffGridPointsDotProducts) {
  // Hicks' weights at the source and every receiver, mirrored next to the free surface:
  // sampling must stay the transpose of injection, in both maps.
  for (int dim : kDims)
    for (bool fs : {false, true}) {
      const std::string what = std::to_string(dim) + "-D, free surface " + std::to_string(fs);
      const Model m = test_model(dim);
      const Survey sv = test_survey(m, fs, true);
      ASSERT_GT(test::prepare_shot<double>(m, sv, NumericalOptions{})->p.nsrc, 1) << "the source is off the nodes";
      EXPECT_LE((source_receiver_dot<8, double>(fs, dim, true)), 1e-10) << "order 8, " << what;
      EXPECT_LE((source_receiver_dot<4, float>(fs, dim, true)), 1e-4) << "float order 4, " << what;
      EXPECT_LE((born_dot<8, double>(fs, dim, true)), 1e-12) << "Born, order 8, " << what;
      EXPECT_LE((born_dot<2, float>(fs, dim, true)), 1e-4) << "Born, float order 2, " << what;
      EXPECT_LE((born_dot<2, float>(fs, dim, true, true)), 1e-5) << "Born, float order 2, field kept, " << what;
    }
}

struct TaylorCase {
  int dim;
  bool off_grid, free_surface;
};

class Taylor : public ::testing::TestWithParam<TaylorCase> {};

/// A perturbation that reaches every cell, edges included, as an inversion's updates do: a
/// uniform shift, ramps towards the sides, and a bump inside.
std::vector<double> edge_reaching(const Model& m) {
  std::vector<double> d = bump(m, 1.0);
  for (int z = 0; z < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x)
        d[m.index(z, y, x)] +=
            0.6 + 0.4 * x / (m.nx - 1) - 0.3 * z / (m.nz - 1) + (m.ny > 1 ? 0.2 * y / (m.ny - 1) : 0);
  return d;
}

TEST_P(Taylor, TheGradientPredictsTheMisfitToSecondOrderEdgesIncluded) {
  // The perturbation moves every edge cell, and with it the layers that copy them: the
  // gradient must hold their share (ShotProblem::edge_fold). Δt and the CPML profile are
  // the discretisation's, held fixed (--internal-dt, NumericalOptions::pml_velocity): v_max
  // moves with a uniform shift.
  const int dim = GetParam().dim;
  const Model m = test_model(dim);
  Model truth = m;
  const bool three = dim == 3;
  for (int z = 0; z < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x) {
        const double r2 = three ? std::pow(z - 12.0, 2) + std::pow(y - 5.0, 2) + std::pow(x - 8.0, 2)
                                : std::pow(z - 24.0, 2) + std::pow(x - 16.0, 2);
        truth.at(z, y, x) += 60 * std::exp(-r2 / (three ? 10.0 : 30.0));
      }
  NumericalOptions o;
  o.order = 8;
  o.pml_width = three ? 6 : 10;
  o.precision = Precision::kDouble;
  o.free_surface = GetParam().free_surface;
  const Survey sv = test_survey(m, o.free_surface, GetParam().off_grid);
  o.internal_dt = choose_time_step(truth, sv, o).dt;
  o.pml_velocity = truth.vmax();
  const std::vector<double> obs = test::run_shot<double>(truth, sv, o);
  std::vector<double> g;
  const double J0 = misfit(m, sv, o, obs, ShotProblem<double>::kStoreBoundary, &g);
  const std::vector<double> dv = edge_reaching(m);
  double slope = 0;
  for (std::size_t i = 0; i < dv.size(); ++i) slope += g[i] * dv[i];
  std::vector<double> r1, r2;
  for (double h = 1; h > 1.0 / 1024; h /= 2) {  // small steps, where a gradient's error would show
    Model mh = m;
    for (std::size_t i = 0; i < dv.size(); ++i) mh.vp[i] += h * dv[i];
    const double J = misfit(mh, sv, o, obs, ShotProblem<double>::kStoreBoundary, nullptr);
    r1.push_back(std::abs(J - J0));
    r2.push_back(std::abs(J - J0 - h * slope));
  }
  // Without the layers' share, the remainder's slope falls below 1.95 at these steps (1.6
  // with a free surface in 3-D); along this path the misfit's curvature is large beside its
  // slope, so the first-order remainder only becomes linear at the smallest steps.
  for (std::size_t k = 1; k < r1.size(); ++k)
    EXPECT_NEAR(std::log2(r2[k - 1] / r2[k]), 2.0, 0.05) << "second-order remainder, halving " << k;
  EXPECT_LT(r2.back(), 0.01 * r1.back()) << "the gradient predicts the first-order change";
  EXPECT_NEAR(std::log2(r1[r1.size() - 2] / r1.back()), 1.0, 0.1) << "first-order remainder, last halving";
}

/// A shot that starts from a random state (its memory variables in their layers) with random
/// source samples, and keeps its end state: its traces and end state (dense), the state and
/// samples it started from.
template <int Order, typename T>
struct StateRun {
  Shot<T> s;
  std::vector<T> start, end, samples;
  std::vector<double> x0, xn;  // the initial and the end state, dense
  StateRun(const Model& m, const Survey& sv, const NumericalOptions& o)
      : s(m, sv, o, ShotProblem<T>::kStoreBoundary),
        start(s.p().checkpoint_size()),
        end(s.p().checkpoint_size()),
        samples(random_vector<T>(std::size_t(s.p().nsteps), 1)) {
    ShotProblem<T>& p = s.p();
    const std::vector<double> r = random_vector<double>(state::cells(p) * std::size_t(state::components(p)), 5);
    state::from_dense(p, r.data(), start.data());  // then back: zero where the state holds nothing
    x0.resize(r.size());
    xn.resize(r.size());
    for (T& v : start) v *= T(1e-3);
    state::to_dense(p, start.data(), x0.data());
    std::copy(samples.begin(), samples.end(), s.ps->in.signals.begin());
    p.initial_state = start.data();
    p.end_state = end.data();
    forward<Order>(s);
    state::to_dense(p, end.data(), xn.data());
  }
};

/// ⟨M x, y⟩ against ⟨x, Mᵀ y⟩ for the map M from (the initial state, the source samples) to
/// (the traces, the end state), through the adjoint's start and end (kernels/shot_state.hpp)
/// and its source gradient.
template <int Order, typename T>
double state_dot(int dim) {
  const Model m = test_model(dim);
  NumericalOptions o;
  o.order = Order;
  o.pml_width = dim == 3 ? 6 : 10;
  StateRun<Order, T> run(m, test_survey(m, false), o);
  ShotProblem<T>& p = run.s.p();
  const std::vector<T> r = random_vector<T>(run.s.ps->traces.size(), 2);
  const std::vector<double> gy = random_vector<double>(run.xn.size(), 3);
  std::vector<T> astart(p.checkpoint_size()), aend(p.checkpoint_size());
  state::adjoint_start_from(p, gy.data(), astart.data());
  p.adjoint_start = astart.data();
  p.adjoint_end = aend.data();
  std::vector<T> corr, illum, adj;
  adjoint<Order>(run.s, r, corr, illum, adj);
  std::vector<double> gx(run.x0.size());
  state::initial_cotangent_from(p, aend.data(), gx.data());
  double lhs = 0, rhs = 0;
  for (std::size_t i = 0; i < r.size(); ++i) lhs += double(run.s.ps->traces[i]) * double(r[i]);
  for (std::size_t i = 0; i < gy.size(); ++i) lhs += run.xn[i] * gy[i];
  for (std::size_t i = 0; i < adj.size(); ++i) rhs += double(run.samples[i]) * double(adj[i]);
  for (std::size_t i = 0; i < gx.size(); ++i) rhs += run.x0[i] * gx[i];
  return std::abs(lhs - rhs) / std::max(std::abs(lhs), std::abs(rhs));
}

TEST(Adjoint, StateAndSourceMapDotProduct) {
  for (int dim : kDims) {
    const std::string what = std::to_string(dim) + "-D";
    EXPECT_LE((state_dot<8, double>(dim)), 1e-10) << "order 8, " << what;
    EXPECT_LE((state_dot<4, double>(dim)), 1e-10) << "order 4, " << what;
    EXPECT_LE((state_dot<2, double>(dim)), 1e-10) << "order 2, " << what;
    EXPECT_LE((state_dot<8, float>(dim)), 1e-4) << "float order 8, " << what;
  }
}

TEST(Adjoint, GradientFromAStateThroughTheEndStatePredictsToSecondOrder) {
  // Φ(v) = ⟨r, d(v)⟩ + ⟨g, S_N(v)⟩ from a non-zero initial state: the gradient holds the
  // end state's cotangent (the sweep's start) and u[−1] in the layers' term of step 0.
  for (int dim : kDims) {
    const Model m = test_model(dim);
    NumericalOptions o;
    o.order = 8;
    o.pml_width = dim == 3 ? 6 : 10;
    o.precision = Precision::kDouble;
    const Survey sv = test_survey(m, false);
    o.internal_dt = choose_time_step(m, sv, o).dt;
    o.pml_velocity = m.vmax() + 100;
    auto phi = [&](const Model& mv, std::vector<double>* gradient) {
      StateRun<8, double> run(mv, sv, o);
      const std::vector<double> r = random_vector<double>(run.s.ps->traces.size(), 2);
      const std::vector<double> gy = random_vector<double>(run.xn.size(), 3);
      double J = 0;
      for (std::size_t i = 0; i < r.size(); ++i) J += run.s.ps->traces[i] * r[i];
      for (std::size_t i = 0; i < gy.size(); ++i) J += run.xn[i] * gy[i];
      if (gradient) {
        ShotProblem<double>& p = run.s.p();
        std::vector<double> astart(p.checkpoint_size()), corr, illum, adj;
        state::adjoint_start_from(p, gy.data(), astart.data());
        p.adjoint_start = astart.data();
        adjoint<8>(run.s, r, corr, illum, adj);
        *gradient = gradient_of(mv, corr);
      }
      return J;
    };
    std::vector<double> g;
    const double J0 = phi(m, &g);
    const std::vector<double> dv = edge_reaching(m);
    double slope = 0;
    for (std::size_t i = 0; i < dv.size(); ++i) slope += g[i] * dv[i];
    std::vector<double> r2;
    for (double h = 1; h > 1.0 / 64; h /= 2) {
      Model mh = m;
      for (std::size_t i = 0; i < dv.size(); ++i) mh.vp[i] += h * dv[i];
      r2.push_back(std::abs(phi(mh, nullptr) - J0 - h * slope));
    }
    for (std::size_t k = 1; k < r2.size(); ++k)
      EXPECT_NEAR(std::log2(r2[k - 1] / r2[k]), 2.0, 0.05) << dim << "-D, second-order remainder, halving " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Dimensions, Taylor,
                         ::testing::Values(TaylorCase{2, false, false}, TaylorCase{3, false, false},
                                           TaylorCase{2, true, true}, TaylorCase{3, true, true}),
                         [](const ::testing::TestParamInfo<TaylorCase>& i) {
                           return std::to_string(i.param.dim) + "D" + (i.param.off_grid ? "OffGrid" : "") +
                                  (i.param.free_surface ? "FreeSurface" : "");
                         });

}  // namespace
}  // namespace starwave::test
