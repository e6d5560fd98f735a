// tests/adjoint_fixture.hpp — what the adjoint kernel's tests share (tests/test_adjoint.cpp,
// tests/test_adjoint_store.cpp): the small test model and survey, one shot's prepared arrays,
// its forward and adjoint (whole or in pieces), random vectors, the storage tests' options.
#pragma once

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

namespace starwave::test {

/// A two-layer model with a vertical gradient, sources and receivers near the top: 36 × 44
/// cells in 2-D, 18 × 12 × 20 in 3-D (small: a 3-D test costs its cells times its steps).
inline Model test_model(int dim = 2) {
  Model m = dim == 3 ? test::constant_model_3d(18, 12, 20, 10, 1) : test::constant_model(36, 44, 10, 1);
  const int interface = dim == 3 ? 10 : 20;
  for (int z = 0; z < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x) m.at(z, y, x) = (z < interface ? 1800 : 2400) + 10.0 * z + 3.0 * y;
  return m;
}

/// Sources and receivers on the nodes, or `off_grid`: off them in every dimension (Hicks'
/// windowed sinc), within 4 nodes of a free surface (mirrored weights) when there is one.
inline Survey test_survey(const Model& m, bool free_surface, bool off_grid = false, double record = 1.0) {
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
inline void forward(Shot<T>& s) {
  cpu::forward<Order, T>(s.p());
}

/// The adjoint's outputs, zero and sized for shot `s`.
template <typename T>
inline void clear_outputs(Shot<T>& s, std::vector<T>& corr, std::vector<T>& illum, std::vector<T>& src_adj,
                          T corr_start = T(0)) {
  corr.assign(std::size_t(s.w) * s.h, corr_start);
  illum.assign(corr.size(), T(0));
  src_adj.assign(std::size_t(s.p().nsteps), T(0));
}

/// Adjoint of `residual` (nrec × nt): correlation (added to `corr_start` in every cell),
/// illumination, and μ at the source.
template <int Order, typename T>
inline void adjoint(Shot<T>& s, const std::vector<T>& residual, std::vector<T>& corr, std::vector<T>& illum,
                    std::vector<T>& src_adj, T corr_start = T(0)) {
  clear_outputs(s, corr, illum, src_adj, corr_start);
  cpu::adjoint<Order, T>(s.p(), residual.data(), corr.data(), illum.data(), src_adj.data());
}

/// The same through cpu::adjoint_steps in pieces: steps N − 1 alone, then down to 2N/3,
/// down to 5, down to 0 (cuts inside and across checkpoint intervals).
template <int Order, typename T>
inline void adjoint_in_pieces(Shot<T>& s, const std::vector<T>& residual, std::vector<T>& corr, std::vector<T>& illum,
                              std::vector<T>& src_adj, T corr_start = T(0)) {
  clear_outputs(s, corr, illum, src_adj, corr_start);
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

/// Order 8, double, layers of 10 cells (6 in 3-D): the storage comparisons' options.
inline NumericalOptions gradient_options(int dim, bool free_surface) {
  NumericalOptions o;
  o.order = 8;
  o.pml_width = dim == 3 ? 6 : 10;
  o.free_surface = free_surface;
  o.precision = Precision::kDouble;
  return o;
}

/// ∂Φ/∂v over the model region from a shot's correlation: 2/v × correlation.
template <typename T>
inline std::vector<double> gradient_of(const Model& m, const std::vector<T>& corr) {
  std::vector<double> g(corr.size());
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = 2.0 * double(corr[i]) / m.vp[i];
  return g;
}

/// Φ(v) = ½ ‖d(v) − d_obs‖² and, when asked, its gradient, through the kernels in double.
inline double misfit(const Model& m, const Survey& sv, const NumericalOptions& o, const std::vector<double>& obs,
                     int storage, std::vector<double>* gradient, int compression = pack16::kNone) {
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

}  // namespace starwave::test
