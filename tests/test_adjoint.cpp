// tests/test_adjoint.cpp — the adjoint kernel against the forward (docs/design.md §7): dot-product
// tests of the source-to-receiver map and of the linearised (Born) map against their
// transposes, a Taylor test of the gradient, and the two storage strategies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <utility>

#include "kernels/cpu/adjoint.hpp"
#include "kernels/cpu/levels.hpp"
#include "kernels/cpu/zfp_slot.hpp"
#include "kernels/stencil.hpp"
#include "kernels/store_cells.hpp"
#include "tests/helpers.hpp"

namespace starwave {
namespace {

/// A two-layer model with a vertical gradient, sources and receivers near the top: 36 × 44
/// cells in 2-D, 18 × 12 × 20 in 3-D (small: a 3-D test costs its cells times its steps).
Model test_model(int dim = 2) {
  Model m = dim == 3 ? test::constant_model_3d(18, 12, 20, 10, 1) : test::constant_model(36, 44, 10, 1);
  const int interface = dim == 3 ? 10 : 20;
  for (int z = 0; z < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x) m.at(z, y, x) = (z < interface ? 1800 : 2400) + 10.0 * z + 3.0 * y;
  return m;
}

/// Sources and receivers on the nodes, or `off_grid`: off them in every dimension (Hicks'
/// windowed sinc), within 4 nodes of a free surface (mirrored weights) when there is one.
Survey test_survey(const Model& m, bool free_surface, bool off_grid = false, double record = 1.0) {
  std::vector<Position> rec;
  const double zr = free_surface ? (off_grid ? 13.3 : 20.0) : 30.0;
  for (int x = 2; x < m.nx - 2; x += 3) {
    const double dz = off_grid ? 0.7 * (x % 4) : 0, dx = off_grid ? 6.1 - 0.9 * (x % 5) : 0;
    rec.push_back(m.three_d() ? Position{zr + dz, (x % 2 ? 30.0 : 80.0) + (off_grid ? 2.7 : 0), 10.0 * x + dx}
                              : Position{zr + dz, 10.0 * x + dx});
  }
  const double zs = off_grid ? (free_surface ? 23.7 : 53.7) : 50.0, ds = off_grid ? 4.1 : 0;
  if (m.three_d()) return test::point_survey({zs, 60 - ds, 90 + ds}, rec, 15, 2e-3, 0.2 * record, true);
  return test::point_survey({zs, 170 + ds}, rec, 15, 2e-3, 0.36 * record);
}

/// The dimensions the tests below run in.
const int kDims[] = {2, 3};

/// One shot's forward and adjoint through the CPU kernels, with its store.
template <typename T>
struct Shot {
  std::unique_ptr<test::PreparedShot<T>> ps;
  aligned_vector<T> store, final_state;
  int w = 0, h = 0;  // model region

  aligned_vector<T> checkpoints;

  /// `checkpoint_every` > 0: the store is a ring, the forward keeps checkpoints;
  /// `compression`: ShotProblem::compression.
  Shot(const Model& m, const Survey& s, const NumericalOptions& o, int storage, int checkpoint_every = 0,
       int compression = pack16::kNone) {
    ps = test::prepare_shot<T>(m, s, o);
    ShotProblem<T>& p = ps->p;
    p.storage = storage;
    p.checkpoint_every = checkpoint_every;
    p.compression = compression;
    ps->work.assign(p.adjoint_work_size(), T(0));
    p.work = ps->work.data();
    store.assign(p.store_size(), T(0));
    final_state.assign(2 * p.grid_size(), T(0));
    checkpoints.assign(p.checkpoints_size(), T(0));
    p.store = store.data();
    p.final_state = final_state.data();
    p.checkpoints = checkpoints.data();
    w = p.mx1() - p.mx0();
    h = int(p.model_cells() / w);  // rows of the model region (z and y)
  }
  ShotProblem<T>& p() { return ps->p; }
};

template <int Order, typename T>
void forward(Shot<T>& s) {
  cpu::forward<Order, T>(s.p());
}

/// The adjoint's outputs, zero and sized for shot `s`.
template <typename T>
void clear_outputs(Shot<T>& s, std::vector<T>& corr, std::vector<T>& illum, std::vector<T>& src_adj) {
  corr.assign(std::size_t(s.w) * s.h, T(0));
  illum.assign(corr.size(), T(0));
  src_adj.assign(std::size_t(s.p().nsteps), T(0));
}

/// Adjoint of `residual` (nrec × nt): correlation, illumination, and μ at the source.
template <int Order, typename T>
void adjoint(Shot<T>& s, const std::vector<T>& residual, std::vector<T>& corr, std::vector<T>& illum,
             std::vector<T>& src_adj) {
  clear_outputs(s, corr, illum, src_adj);
  cpu::adjoint<Order, T>(s.p(), residual.data(), corr.data(), illum.data(), src_adj.data());
}

/// The same through cpu::adjoint_steps in pieces: steps N − 1 alone, then down to 2N/3,
/// down to 5, down to 0 (cuts inside and across checkpoint intervals).
template <int Order, typename T>
void adjoint_in_pieces(Shot<T>& s, const std::vector<T>& residual, std::vector<T>& corr, std::vector<T>& illum,
                       std::vector<T>& src_adj) {
  clear_outputs(s, corr, illum, src_adj);
  const int n = s.p().nsteps, c2 = std::min(n - 1, std::max(2 * n / 3, 5)), c3 = std::min(c2, 5);
  const int cuts[] = {n, n - 1, c2, c3, 0};
  for (int k = 0; k + 1 < 5; ++k)
    if (cuts[k] > cuts[k + 1])
      cpu::adjoint_steps<Order, T>(s.p(), residual.data(), cuts[k], cuts[k + 1], corr.data(), illum.data(),
                                   src_adj.data());
}

template <typename T>
std::vector<T> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<T> v(n);
  for (auto& x : v) x = T(d(g));
  return v;
}

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

/// ∂Φ/∂v over the model region from a shot's correlation: 2/v × correlation.
template <typename T>
std::vector<double> gradient_of(const Model& m, const std::vector<T>& corr) {
  std::vector<double> g(corr.size());
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = 2.0 * double(corr[i]) / m.vp[i];
  return g;
}

/// Born traces: δu follows the forward step with the secondary source δ(v²Δt²)(L u + f) at
/// the model cells, u the background field, and at the layer cells, which copy the velocity
/// of their nearest model cell, δ(v²Δt²) × what v²Δt² multiplies there (CPML terms
/// included): (δ(v²Δt²) / v²Δt²) (u[m+1] − 2u[m] + u[m−1]).
template <int Order, typename T>
std::vector<T> born_traces(const Model& m, const Survey& sv, const NumericalOptions& o, const std::vector<double>& dv) {
  auto bg = test::prepare_shot<T>(m, sv, o);
  auto li = test::prepare_shot<T>(m, sv, o);
  const ShotProblem<T>& pb = bg->p;
  const ShotProblem<T>& pd = li->p;
  std::fill(bg->work.begin(), bg->work.end(), T(0));
  std::fill(li->work.begin(), li->work.end(), T(0));
  T *u = pb.u0(), *up = pb.u1(), *du = pd.u0(), *dup = pd.u1();
  const long o0 = pb.origin(), sy = pb.three_d() ? pb.stride : 0;
  const T cz = T(1) / (pb.dz * pb.dz), cy = T(1) / (pb.dy * pb.dy), cx = T(1) / (pb.dx * pb.dx);
  std::vector<T> traces(std::size_t(pd.nrec) * pd.nt, T(0)), sec(m.cells());
  // Calls f(grid offset, model index) for every model cell.
  auto each_model_cell = [&](auto&& f) {
    for (int z = pb.mz0(); z < pb.mz1(); ++z)
      for (int y = pb.my0(); y < pb.my1(); ++y)
        for (int x = pb.mx0(); x < pb.mx1(); ++x)
          f(pb.row_offset(z, y) + x, m.index(z - pb.mz0(), y - pb.my0(), x - pb.mx0()));
  };
  // Calls f(grid offset, model index of the copied cell) for every layer cell.
  auto each_layer_cell = [&](auto&& f) {
    for (int z = 0; z < pb.nz; ++z)
      for (int y = 0; y < pb.ny; ++y)
        for (int x = 0; x < pb.nx; ++x)
          if (pb.layer_point(z, y, x))
            f(pb.row_offset(z, y) + x, m.index(std::clamp(z, pb.mz0(), pb.mz1() - 1) - pb.mz0(),
                                               std::clamp(y, pb.my0(), pb.my1() - 1) - pb.my0(),
                                               std::clamp(x, pb.mx0(), pb.mx1() - 1) - pb.mx0()));
  };
  std::vector<double> before(pb.grid_size()), layer_sec(pb.grid_size());
  for (int mstep = 0; mstep < pb.nsteps; ++mstep) {
    each_layer_cell([&](long g, std::size_t) { before[std::size_t(o0 + g)] = 2.0 * u[o0 + g] - up[o0 + g]; });
    each_model_cell([&](long g, std::size_t k) {
      const long i = o0 + g;
      T lap = stencil::laplacian<Order>(u + i, pb.plane, sy, cz, cy, cx);
      for (int j = 0; j < pb.nsrc; ++j)
        if (g == pb.source_node[j]) lap += pb.source_weight[j] * pb.source[mstep];
      const T dw = T(2 * double(pb.vdt2[i]) * dv[k] / m.vp[k]);
      sec[k] = dw * lap;
    });
    cpu::step<Order, T>(pb, u, up, pb.source[mstep]);
    std::swap(u, up);
    each_layer_cell([&](long g, std::size_t k) {
      const std::size_t i = std::size_t(o0 + g);
      layer_sec[i] = 2 * dv[k] / m.vp[k] * (double(u[i]) - before[i]);
    });
    cpu::step<Order, T>(pd, du, dup, T(0));
    each_model_cell([&](long g, std::size_t k) { dup[o0 + g] += sec[k]; });
    each_layer_cell([&](long g, std::size_t) { dup[o0 + g] += T(layer_sec[std::size_t(o0 + g)]); });
    if (pd.free_surface)
      for (int y = 0; y < pd.ny; ++y)
        for (int x = 0; x < pd.nx; ++x)
          stencil::mirror_free_surface(dup + o0, pd.plane, pd.pml_top, pd.halo, pd.nz, pd.row_offset(0, y) + x);
    std::swap(du, dup);
    if ((mstep + 1) % pd.record_every == 0 && (mstep + 1) / pd.record_every < pd.nt)
      for (int r = 0; r < pd.nrec; ++r)
        traces[std::size_t(r) * pd.nt + (mstep + 1) / pd.record_every] = pd.sample(du + o0, r);
  }
  return traces;
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

/// ⟨B δv, δr⟩ against ⟨δv, Bᵀ δr⟩ for the Born map B = ∂(traces)/∂v.
template <int Order, typename T>
double born_dot(bool free_surface, int dim, bool off_grid = false) {
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
  Shot<T> s(m, sv, o, ShotProblem<T>::kStoreBoundary);
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
  for (int dim : kDims)
    for (bool fs : {false, true}) {
      const std::string what = std::to_string(dim) + "-D, free surface " + std::to_string(fs);
      EXPECT_LE((born_dot<2, double>(fs, dim)), 1e-10) << "order 2, " << what;
      EXPECT_LE((born_dot<4, double>(fs, dim)), 1e-10) << "order 4, " << what;
      EXPECT_LE((born_dot<6, double>(fs, dim)), 1e-10) << "order 6, " << what;
      EXPECT_LE((born_dot<8, double>(fs, dim)), 1e-10) << "order 8, " << what;
      EXPECT_LE((born_dot<2, float>(fs, dim)), 1e-4) << "float order 2, " << what;
      EXPECT_LE((born_dot<4, float>(fs, dim)), 1e-4) << "float order 4, " << what;
      EXPECT_LE((born_dot<6, float>(fs, dim)), 1e-4) << "float order 6, " << what;
      EXPECT_LE((born_dot<8, float>(fs, dim)), 1e-4) << "float order 8, " << what;
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
      EXPECT_LE((born_dot<8, double>(fs, dim, true)), 1e-10) << "Born, order 8, " << what;
      EXPECT_LE((born_dot<2, float>(fs, dim, true)), 1e-4) << "Born, float order 2, " << what;
    }
}

/// Φ(v) = ½ ‖d(v) − d_obs‖² and, when asked, its gradient, through the kernels in double.
double misfit(const Model& m, const Survey& sv, const NumericalOptions& o, const std::vector<double>& obs, int storage,
              std::vector<double>* gradient, int compression = pack16::kNone) {
  Shot<double> s(m, sv, o, storage, 0, compression);
  forward<8>(s);
  std::vector<double> r(obs.size());
  double J = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    r[i] = s.ps->traces[i] - obs[i];
    J += 0.5 * r[i] * r[i];
  }
  if (gradient) {
    std::vector<double> corr, illum, adj;
    adjoint<8>(s, r, corr, illum, adj);
    *gradient = gradient_of(m, corr);
  }
  return J;
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

INSTANTIATE_TEST_SUITE_P(Dimensions, Taylor,
                         ::testing::Values(TaylorCase{2, false, false}, TaylorCase{3, false, false},
                                           TaylorCase{2, true, true}, TaylorCase{3, true, true}),
                         [](const ::testing::TestParamInfo<TaylorCase>& i) {
                           return std::to_string(i.param.dim) + "D" + (i.param.off_grid ? "OffGrid" : "") +
                                  (i.param.free_surface ? "FreeSurface" : "");
                         });

/// Order 8, double, layers of 10 cells (6 in 3-D): the storage comparisons' options.
NumericalOptions gradient_options(int dim, bool free_surface) {
  NumericalOptions o;
  o.order = 8;
  o.pml_width = dim == 3 ? 6 : 10;
  o.free_surface = free_surface;
  o.precision = Precision::kDouble;
  return o;
}

TEST(Adjoint, BoundaryAndFullStorageGiveTheSameGradientShellOnlyInside) {
  for (int dim : kDims) {
    const Model m = test_model(dim);
    for (bool fs : {false, true}) {
      const NumericalOptions o = gradient_options(dim, fs);
      const Survey sv = test_survey(m, fs);
      std::vector<double> obs(test::run_shot<double>(m, sv, o).size(), 0.0);  // residual = the data
      std::vector<double> gb, gf, gs;
      misfit(m, sv, o, obs, ShotProblem<double>::kStoreBoundary, &gb);
      misfit(m, sv, o, obs, ShotProblem<double>::kStoreFull, &gf);
      misfit(m, sv, o, obs, ShotProblem<double>::kStoreShell, &gs);
      EXPECT_LE(test::diff_norm(gb, gf) / test::norm(gf), 1e-9) << dim << "-D, free surface " << fs;
      EXPECT_GT(test::norm(gf), 0);
      // The shell alone: the same bits wherever no layer copies the cell, the layers' share
      // missing on the edges (but on the surface row, where the field is zero in the model
      // and the layers alike).
      long edges = 0, differ = 0;
      for (int z = fs ? 1 : 0; z < m.nz; ++z)
        for (int y = 0; y < m.ny; ++y)
          for (int x = 0; x < m.nx; ++x) {
            const std::size_t i = m.index(z, y, x);
            const bool edge =
                z == 0 || z == m.nz - 1 || (dim == 3 && (y == 0 || y == m.ny - 1)) || x == 0 || x == m.nx - 1;
            if (!edge) {
              ASSERT_EQ(gs[i], gb[i]) << dim << "-D, free surface " << fs << ", cell " << z << ", " << y << ", " << x;
            }
            edges += edge;
            differ += edge && gs[i] != gb[i];
          }
      EXPECT_EQ(differ, edges) << dim << "-D, free surface " << fs << ": the shell store's edges lack the layers";
    }
  }
}

/// Traces, store, correlation, illumination and source adjoint of one shot at the level
/// the kernels use now, flattened to one vector of T.
template <int Order, typename T>
std::vector<T> everything(const Model& m, const Survey& sv, const NumericalOptions& o, int storage, int tile_rows = 0,
                          int compression = pack16::kNone) {
  Shot<T> s(m, sv, o, storage, 0, compression);
  s.p().tile_rows = tile_rows;
  forward<Order, T>(s);
  std::vector<T> out(s.ps->traces.begin(), s.ps->traces.end());
  out.insert(out.end(), s.store.begin(), s.store.end());
  std::vector<T> residual(s.ps->traces.begin(), s.ps->traces.end()), corr, illum, src;
  adjoint<Order, T>(s, residual, corr, illum, src);
  for (const auto* v : {&corr, &illum, &src}) out.insert(out.end(), v->begin(), v->end());
  return out;
}

template <typename T>
void expect_every_level_the_same(const Model& m, const NumericalOptions& o, int storage,
                                 int compression = pack16::kNone) {
  const Survey sv = test_survey(m, o.free_surface);
  const std::string what = "order " + std::to_string(o.order) + (sizeof(T) == 4 ? " float" : " double") +
                           (o.free_surface ? " free surface" : "") + (storage ? " full store" : "") + " store " +
                           compression_name(compression);
  const cpu::Level was = cpu::level();
  std::vector<T> reference;
  for (cpu::Level l : cpu::compiled_levels()) {
    if (!cpu::supported(l)) continue;
    ASSERT_EQ(cpu::choose_level(l), "");
    std::vector<T> got;
    ASSERT_TRUE(with_order(
        o.order, [&](auto order) { got = everything<decltype(order)::value, T>(m, sv, o, storage, 0, compression); }));
    if (reference.empty())
      reference = got;
    else
      EXPECT_TRUE(test::same_bits(reference, got)) << what << ": " << cpu::level_name(l) << " differs from baseline at "
                                                   << test::first_difference(reference, got);
  }
  cpu::choose_level(was);
  EXPECT_GT(test::max_abs(std::vector<double>(reference.begin(), reference.end())), 0) << what;
}

TEST(Adjoint, EveryInstructionSetLevelGivesTheSameBits) {
  // The kernels are compiled once per level (baseline x86-64, AVX2, AVX-512) and chosen at
  // run time: each level this CPU runs must give the baseline's bits, for every order,
  // precision, surface and store.
  std::string levels;
  for (cpu::Level l : cpu::compiled_levels())
    levels += std::string(cpu::level_name(l)) + (cpu::supported(l) ? " " : " (not on this CPU) ");
  std::cout << "compiled levels: " << levels << "\n";
  const Model m = test_model();
  for (int order : {2, 4, 6, 8})
    for (bool fs : {false, true}) {
      NumericalOptions o;
      o.order = order;
      o.pml_width = 10;
      o.free_surface = fs;
      expect_every_level_the_same<float>(m, o, ShotProblem<float>::kStoreBoundary);
      if (order >= 4)  // the 16-bit store's vectorised runs
        expect_every_level_the_same<float>(m, o, ShotProblem<float>::kStoreBoundary,
                                           order == 8 ? pack16::kHalf : pack16::kBfloat);
      o.precision = Precision::kDouble;
      expect_every_level_the_same<double>(
          m, o, order == 8 ? ShotProblem<double>::kStoreFull : ShotProblem<double>::kStoreBoundary);
    }
  const Model m3 = test_model(3);
  for (bool fs : {false, true}) {
    NumericalOptions o;
    o.order = 8;
    o.pml_width = 5;
    o.free_surface = fs;
    expect_every_level_the_same<float>(m3, o, ShotProblem<float>::kStoreBoundary);
    o.order = 4;
    o.precision = Precision::kDouble;
    expect_every_level_the_same<double>(m3, o, ShotProblem<double>::kStoreFull);
  }
  EXPECT_NE(cpu::choose_level(cpu::Level(7)), "");  // a level that does not exist is refused
}

template <typename T>
void expect_tiles_the_same(const Model& m, const NumericalOptions& o, int storage) {
  const Survey sv = test_survey(m, o.free_surface);
  const std::string what = "order " + std::to_string(o.order) + (sizeof(T) == 4 ? " float" : " double") + ", PML " +
                           std::to_string(o.pml_width) + (o.free_surface ? ", free surface" : "");
  std::vector<T> whole;
  const int ny = m.ny + 2 * o.pml_width;
  ASSERT_TRUE(
      with_order(o.order, [&](auto order) { whole = everything<decltype(order)::value, T>(m, sv, o, storage, ny); }));
  EXPECT_GT(test::max_abs(std::vector<double>(whole.begin(), whole.end())), 0) << what;
  // Tiles of one row, and of 3, 5 and 9 rows cutting the layers and their rims at other
  // rows (the size chosen for a cache is larger than this model: one tile, `whole`).
  for (int tile : {1, 3, 5, 9}) {
    std::vector<T> got;
    ASSERT_TRUE(
        with_order(o.order, [&](auto order) { got = everything<decltype(order)::value, T>(m, sv, o, storage, tile); }));
    EXPECT_TRUE(test::same_bits(whole, got))
        << what << ": tiles of " << tile << " rows differ at " << test::first_difference(whole, got);
  }
}

TEST(Adjoint, TilesInYGiveTheSameBits) {
  // The 3-D CPU sweeps (forward and adjoint) run over tiles of rows in y, the CPML passes in
  // y running ahead of each tile: any tile size gives the bits of one tile, rows cut inside
  // the y-layers and their rims included.
  const Model m3 = test_model(3);
  for (int pml : {2, 5})
    for (bool fs : {false, true}) {
      NumericalOptions o;
      o.pml_width = pml;
      o.free_surface = fs;
      o.order = 8;
      expect_tiles_the_same<float>(m3, o, ShotProblem<float>::kStoreBoundary);
      o.order = 2;
      o.precision = Precision::kDouble;
      expect_tiles_the_same<double>(m3, o, ShotProblem<double>::kStoreBoundary);
    }
}

/// The forward's traces and the adjoint's correlation, illumination and source adjoint with
/// checkpoints every `every` steps, against every slot kept.
template <int Order, typename T>
void expect_checkpoints_keep_the_bits(const Model& m, const Survey& sv, const NumericalOptions& o, int storage,
                                      int every, int compression = pack16::kNone) {
  Shot<T> whole(m, sv, o, storage, 0, compression), ring(m, sv, o, storage, every, compression);
  const ShotProblem<T>& p = ring.p();
  const std::string what = std::to_string(m.three_d() ? 3 : 2) + "-D, order " + std::to_string(Order) +
                           (o.free_surface ? ", free surface" : "") + ", storage " + std::to_string(storage) +
                           ", every " + std::to_string(every) + ", store " + compression_name(compression);
  if (every < p.nsteps) {
    ASSERT_EQ(p.intervals(), (p.nsteps + every - 1) / every) << what;
    ASSERT_EQ(p.store_size(), std::size_t(std::min(every + 2, p.nsteps + 1) * p.slot_size())) << what;
    ASSERT_EQ(p.checkpoints_size(), std::size_t(p.intervals() - 1) * p.checkpoint_size()) << what;
  } else {
    ASSERT_EQ(p.store_size(), whole.p().store_size()) << what;
    ASSERT_EQ(p.checkpoints_size(), 0u) << what;
  }
  forward<Order>(whole);
  forward<Order>(ring);
  ASSERT_EQ(whole.ps->traces, ring.ps->traces) << what;
  const std::vector<T> r = random_vector<T>(whole.ps->traces.size(), 5);
  std::vector<T> c1, i1, a1, c2, i2, a2;
  adjoint<Order>(whole, r, c1, i1, a1);
  adjoint<Order>(ring, r, c2, i2, a2);
  EXPECT_EQ(c1, c2) << what << ": correlation";
  EXPECT_EQ(i1, i2) << what << ": illumination";
  EXPECT_EQ(a1, a2) << what << ": source adjoint";
  // In pieces (the adjoint's state kept between calls): the one call's bits, whole and ring
  // (the forward again first: an adjoint with checkpoints leaves the ring holding interval 0).
  for (Shot<T>* s : {&whole, &ring}) {
    const int n = s->p().nsteps;
    for (const auto& [lo, hi] : {std::pair{0, std::min(3, n)}, std::pair{std::min(3, n), n}})
      cpu::forward_steps<Order, T>(s->p(), lo, hi);  // in pieces too
    adjoint_in_pieces<Order>(*s, r, c2, i2, a2);
    EXPECT_EQ(c1, c2) << what << ": correlation in pieces" << (s == &ring ? ", checkpoints" : "");
    EXPECT_EQ(i1, i2) << what << ": illumination in pieces" << (s == &ring ? ", checkpoints" : "");
    EXPECT_EQ(a1, a2) << what << ": source adjoint in pieces" << (s == &ring ? ", checkpoints" : "");
  }
  // A split store (every slot kept, a buffer per interval, each interval run alone on its
  // own): the whole store's bits.
  if (every < p.nsteps) {
    clear_outputs(ring, c2, i2, a2);
    ring.ps->traces.assign(ring.ps->traces.size(), T(0));
    const auto buffers = test::run_split_store(
        ring.p(), [](const ShotProblem<T>& q, int lo, int hi) { cpu::forward_steps<Order, T>(q, lo, hi); },
        [&](const ShotProblem<T>& q, int hi, int lo) {
          cpu::adjoint_steps<Order, T>(q, r.data(), hi, lo, c2.data(), i2.data(), a2.data());
        });
    ASSERT_EQ(int(buffers.size()), p.intervals()) << what;
    EXPECT_EQ(whole.ps->traces, ring.ps->traces) << what << ": traces, split store";
    EXPECT_EQ(c1, c2) << what << ": correlation, split store";
    EXPECT_EQ(i1, i2) << what << ": illumination, split store";
    EXPECT_EQ(a1, a2) << what << ": source adjoint, split store";
  }
  double norm = 0;
  for (T v : c1) norm += double(v) * double(v);
  EXPECT_GT(norm, 0) << what;
}

TEST(Adjoint, CheckpointedStoreGivesTheWholeStoresBits) {
  // Intervals of one step, two, uneven ones, one step short of the run, longer than the run
  // (3-D: fewer): the same bits as with every slot kept (the re-runs repeat the forward's
  // operations).
  for (int dim : kDims)
    for (bool fs : {false, true}) {
      const Model m = test_model(dim);
      const Survey sv = test_survey(m, fs, dim == 3, test::kRecordShare);
      NumericalOptions o;
      o.pml_width = dim == 3 ? 5 : 8;
      o.free_surface = fs;
      const int n = test::prepare_shot<float>(m, sv, o)->p.nsteps;
      for (int every : dim == 2 ? std::vector<int>{1, 2, 7, n - 1, n + 3} : std::vector<int>{1, 7, n}) {
        o.order = 8;
        expect_checkpoints_keep_the_bits<8, float>(m, sv, o, ShotProblem<float>::kStoreBoundary, every);
        if (every == 7) {  // a 16-bit or ZFP ring re-made from checkpoints: the whole store's bits
          expect_checkpoints_keep_the_bits<8, float>(m, sv, o, ShotProblem<float>::kStoreBoundary, every,
                                                     dim == 2 ? pack16::kHalf : pack16::kBfloat);
          expect_checkpoints_keep_the_bits<8, float>(m, sv, o, ShotProblem<float>::kStoreBoundary, every,
                                                     dim == 2 ? pack16::kZfp12 : pack16::kZfp8);
          o.order = 4;
          o.precision = Precision::kDouble;
          for (int storage :
               {ShotProblem<double>::kStoreBoundary, ShotProblem<double>::kStoreFull, ShotProblem<double>::kStoreShell})
            if (dim == 2 || storage == ShotProblem<double>::kStoreBoundary)
              expect_checkpoints_keep_the_bits<4, double>(m, sv, o, storage, every);
          o.precision = Precision::kSingle;
        }
      }
    }
}

/// The small case's forward (boundary store) with the store kept as computed and with
/// `compression`: the store tests' starting point; the traces must not differ.
struct StoredTwice {
  Shot<float> exact, packed;
  std::string what;
};
StoredTwice store_both_ways(int dim, int compression) {
  const Model m = test_model(dim);
  NumericalOptions o;
  o.pml_width = dim == 3 ? 5 : 8;
  const Survey sv = test_survey(m, false, true);
  StoredTwice s{Shot<float>(m, sv, o, ShotProblem<float>::kStoreBoundary),
                Shot<float>(m, sv, o, ShotProblem<float>::kStoreBoundary, 0, compression),
                std::to_string(dim) + "-D, " + compression_name(compression)};
  forward<8>(s.exact);
  forward<8>(s.packed);
  EXPECT_EQ(s.exact.ps->traces, s.packed.ps->traces) << s.what << ": the forward itself is untouched";
  return s;
}

TEST(Adjoint, SixteenBitStoreKeepsEachValueToItsPrecision) {
  // Every stored value, decoded, within half a unit in the last place of IEEE half (11
  // bits) or bfloat16 (8 bits) at its slot's scale; the header holds the slot's largest
  // magnitude; half or a quarter of the bytes.
  for (int dim : kDims)
    for (int c : {pack16::kHalf, pack16::kBfloat}) {
      StoredTwice twice = store_both_ways(dim, c);
      Shot<float>& exact = twice.exact;
      const ShotProblem<float>& p = twice.packed.p();
      const std::string& what = twice.what;
      EXPECT_LE(p.store_size() * 2, exact.p().store_size() + std::size_t(p.store_slots()) * 64) << what;
      const StoreCells cells = StoreCells::of(p);
      const double unit = c == pack16::kHalf ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
      long nonzero = 0;
      for (int n = 0; n <= p.nsteps; ++n) {
        const float* x = exact.store.data() + exact.p().slot_offset(n);
        float largest = 0;
        for (long k = 0; k < p.store_step_size(); ++k) largest = std::max(largest, std::abs(x[k]));
        ASSERT_EQ(p.store[p.slot_offset(n)], largest) << what << ", slot " << n;
        const int s = pack16::scale_exponent(largest);
        for (long k = 0; k < p.store_step_size(); ++k) {
          const double got = cells.load(p.store, n, k), want = x[k];
          // half an ulp of a normal value, or of the smallest subnormal (2^-24 or 2^-133), scaled back
          const double floor = std::ldexp(1.0, (c == pack16::kHalf ? -25 : -134) - s);
          ASSERT_LE(std::abs(got - want), unit * std::abs(want) + floor) << what << ", slot " << n << ", element " << k;
          nonzero += got != 0;
        }
      }
      EXPECT_GT(nonzero, p.store_step_size()) << what;
    }
}

TEST(Adjoint, CompressedStoreGradientsAreCloseToTheExactOne) {
  // The adjoint re-creates the model region from the stored shell and takes the layers'
  // share from second time differences of stored values: the gradient changes, by little,
  // less with half's 11 bits than with bfloat16's 8; ZFP codes blocks of neighbours where
  // fp16 rounds each value alone: at 16 bits a value closer than fp16, at 8 still close. The
  // misfit is the forward's: untouched.
  for (int dim : kDims)
    for (bool fs : {false, true}) {
      const Model m = test_model(dim);
      const NumericalOptions o = gradient_options(dim, fs);
      const Survey sv = test_survey(m, fs);
      std::vector<double> obs(test::run_shot<double>(m, sv, o).size(), 0.0);  // residual = the data
      std::vector<double> exact;
      const double J = misfit(m, sv, o, obs, ShotProblem<double>::kStoreBoundary, &exact);
      const std::string what = std::to_string(dim) + "-D, free surface " + std::to_string(fs);
      auto error = [&](int c) {
        std::vector<double> g;
        EXPECT_EQ(misfit(m, sv, o, obs, ShotProblem<double>::kStoreBoundary, &g, c), J) << what;
        return test::diff_norm(g, exact) / test::norm(exact);
      };
      const double eh = error(pack16::kHalf), eb = error(pack16::kBfloat), e16 = error(pack16::kZfp16),
                   e8 = error(pack16::kZfp8);
      std::printf("%s: gradient relative error fp16 %.2e, bf16 %.2e, zfp16 %.2e, zfp8 %.2e\n", what.c_str(), eh, eb,
                  e16, e8);
      EXPECT_GT(eh, 0) << what;
      EXPECT_LT(eh, eb) << what;
      EXPECT_LE(eh, 2e-4) << what;
      EXPECT_LE(eb, 2e-3) << what;
      EXPECT_GT(e16, 0) << what;
      EXPECT_LT(e16, eh) << what;
      EXPECT_LT(e16, e8) << what;
      EXPECT_LE(e8, 1e-2) << what;
    }
}

TEST(Adjoint, ZfpStoreTakesItsBytesAndKeepsTheValuesToItsRate) {
  // Each block's stream takes the bytes ShotProblem counts for it (ZFP's fixed rate); a slot
  // is a header and those streams, about rate/32 of the values; decoded, every slot is within
  // a small part of its largest value, less at more bits.
  for (int dim : kDims) {
    double previous = 1;
    for (int c : {pack16::kZfp8, pack16::kZfp12, pack16::kZfp16}) {
      StoredTwice twice = store_both_ways(dim, c);
      Shot<float>& exact = twice.exact;
      const ShotProblem<float>& p = twice.packed.p();
      const std::string& what = twice.what;
      ShotProblem<float>::StoreBlock b[ShotProblem<float>::kMaxStoreBlocks];
      const int n = p.store_blocks(b);
      const float* values = exact.store.data() + exact.p().slot_offset(p.nsteps / 2);
      long bytes = 0;
      for (int i = 0; i < n; ++i) {
        EXPECT_EQ(cpu::zfp_stream_bytes(p, b[i], values), p.zfp_block_bytes(b[i])) << what << ", block " << i;
        bytes += p.zfp_block_bytes(b[i]);
        values += b[i].size();
      }
      const double rate = pack16::zfp_rate(c);
      // ZFP pads each extent to blocks of 4: the test's thin layers (5 + 4 halo cells) to 12.
      EXPECT_LE(double(bytes), p.store_step_size() * rate / 8 * (dim == 3 ? 2.4 : 1.8)) << what;
      EXPECT_GE(double(bytes), p.store_step_size() * rate / 8) << what;
      std::vector<float> decoded(std::size_t(p.store_step_size()));
      double worst = 0;
      for (int k = 1; k <= p.nsteps; ++k) {
        cpu::zfp_decode_slot(p, p.store + p.slot_offset(k), decoded.data());
        const float* x = exact.store.data() + exact.p().slot_offset(k);
        double largest = 0, error = 0;
        for (long j = 0; j < p.store_step_size(); ++j) {
          largest = std::max(largest, double(std::abs(x[j])));
          error = std::max(error, double(std::abs(decoded[std::size_t(j)] - x[j])));
        }
        if (largest > 0) worst = std::max(worst, error / largest);
      }
      std::printf("%s: largest slot error / slot's largest value %.2e\n", what.c_str(), worst);
      EXPECT_GT(worst, 0) << what;
      EXPECT_LT(worst, previous) << what;
      EXPECT_LT(worst, c == pack16::kZfp16 ? 1e-3 : 0.1) << what;
      previous = worst;
    }
  }
}

TEST(Adjoint, StoreSlotsFollowStoreCell) {
  // save_slot's row-wise copies, store_cell's per-element map and StoreCells' (used by the
  // GPU) agree;
  // a boundary slot holds every layer cell and the shell around the model region, nothing of
  // the model region; a full slot holds the model region too. Layers narrower than the
  // stencil (2) widen the slot to the shell.
  for (int dim : kDims)
    for (int pml : {7, 2}) {
      const Model m = test_model(dim);
      NumericalOptions o;
      o.pml_width = pml;
      for (int storage :
           {ShotProblem<double>::kStoreBoundary, ShotProblem<double>::kStoreFull, ShotProblem<double>::kStoreShell}) {
        Shot<double> s(m, test_survey(m, false), o, storage);
        const ShotProblem<double>& p = s.p();
        std::vector<double> grid(p.grid_size());
        for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = double(i);
        cpu::save_slot(p, grid.data(), 1);
        const double* slot = p.store + p.store_step_size();
        long model = 0, layers = 0, shell = 0;
        const StoreCells cells = StoreCells::of(p);
        ASSERT_EQ(long(cells.first[cells.n]), p.store_step_size());
        for (long k = 0; k < p.store_step_size(); ++k) {
          const long g = p.store_cell(k);
          ASSERT_EQ(slot[k], grid[std::size_t(p.origin() + g)]) << "storage " << storage << " element " << k;
          int z, y, x;
          p.cell_of(g, z, y, x);
          ASSERT_EQ(p.row_offset(z, y) + x, g);
          int cz, cy, cx;
          cells.point(k, cz, cy, cx);
          ASSERT_TRUE(cz == z && cy == y && cx == x) << "storage " << storage << " element " << k;
          ASSERT_EQ(cells.cell(k), g);
          const int inside =
              (z >= p.mz0() && z < p.mz1()) + (y >= p.my0() && y < p.my1()) + (x >= p.mx0() && x < p.mx1());
          model += inside == 3;
          layers += p.layer_point(z, y, x);
          shell += inside == 2 && std::max({p.mz0() - z, z - p.mz1() + 1, p.my0() - y, y - p.my1() + 1, p.mx0() - x,
                                            x - p.mx1() + 1}) <= p.halo;
        }
        const std::string what =
            std::to_string(dim) + "-D, PML " + std::to_string(pml) + ", storage " + std::to_string(storage);
        const bool shell_only = storage == ShotProblem<double>::kStoreShell;
        if (shell_only) {
          EXPECT_EQ(shell, p.store_step_size()) << what << ": the shell alone";
        } else {
          EXPECT_EQ(layers, long(p.nz) * p.ny * p.nx - p.model_cells()) << what << ": every layer cell";
        }
        const long shell_cells = 2L * p.halo * (p.model_cells() / (p.mz1() - p.mz0())) +
                                 (dim == 3 ? 2L * p.halo * (p.model_cells() / (p.my1() - p.my0())) : 0) +
                                 2L * p.halo * (p.model_cells() / (p.mx1() - p.mx0()));
        EXPECT_EQ(shell, shell_cells) << what << ": the whole shell";
        EXPECT_EQ(model, storage == ShotProblem<double>::kStoreFull ? p.model_cells() : 0) << what;
      }
    }
}

}  // namespace
}  // namespace starwave
