// tests/test_born.cpp — the Born modelling J (kernels/cpu/born.hpp) is the derivative of the
// modelling F: ‖F(v + hδv) − F(v) − h J δv‖ falls as h² along a perturbation that moves
// every cell, edges included (and with them the layers that copy them), in 2-D and 3-D, with
// and without a free surface, the points on and off the nodes; float's J is double's to its
// precision; every instruction-set level gives the same bits. The dot test of J against the adjoint is
// tests/test_adjoint.cpp's.
#include "kernels/cpu/born.hpp"
#include "kernels/cpu/levels.hpp"
#include "tests/adjoint_fixture.hpp"

namespace starwave::test {
namespace {

/// J δv of shot 0 (traces, nrec × nt).
template <int Order, typename T>
std::vector<double> born_data(const Model& m, const Survey& sv, const NumericalOptions& o,
                              const std::vector<double>& dv) {
  auto bg = prepare_shot<T>(m, sv, o);
  auto sc = prepare_shot<T>(m, sv, o);
  const std::vector<T> scatter = born_scatter(bg->p, m, dv);
  std::vector<T> scratch(std::size_t(bg->p.stride));
  cpu::born<Order, T>(bg->p, sc->p, scatter.data(), scratch.data());
  return std::vector<double>(sc->traces.begin(), sc->traces.end());
}

/// A perturbation of every cell, edges included: rough (±20 m/s) on a ramp and a bump.
std::vector<double> everywhere(const Model& m) {
  std::vector<double> d(m.vp.size());
  std::mt19937 gen(11);
  std::uniform_real_distribution<double> rough(-20, 20);
  for (int z = 0; z < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x)
        d[m.index(z, y, x)] = rough(gen) + 30.0 * x / (m.nx - 1) - 20.0 * z / (m.nz - 1) + 10;
  return d;
}

Model perturbed(const Model& m, const std::vector<double>& dv, double h) {
  Model out = m;
  for (std::size_t i = 0; i < dv.size(); ++i) out.vp[i] += h * dv[i];
  return out;
}

struct BornCase {
  int dim, order;
  bool off_grid, free_surface;
};

class Linearisation : public ::testing::TestWithParam<BornCase> {};

TEST_P(Linearisation, BornDataAreTheModellingsDerivativeEdgesIncluded) {
  const BornCase c = GetParam();
  const Model m = test_model(c.dim);
  NumericalOptions o;
  o.order = c.order;
  o.pml_width = c.dim == 3 ? 6 : 10;
  o.precision = Precision::kDouble;
  o.free_surface = c.free_surface;
  const Survey sv = test_survey(m, o.free_surface, c.off_grid);
  const std::vector<double> dv = everywhere(m);
  // Δt and the CPML profile are the discretisation's, held for every h (as the gradient's Taylor test holds them).
  o.internal_dt = choose_time_step(perturbed(m, dv, 1.0), sv, o).dt;
  o.pml_velocity = m.vmax();
  const std::vector<double> f0 = run_shot<double>(m, sv, o);
  std::vector<double> born;
  with_order(c.order, [&](auto order) { born = born_data<decltype(order)::value, double>(m, sv, o, dv); });
  ASSERT_GT(norm(born), 0.0);
  std::vector<double> r1, r2;
  for (double h = 1; h > 1.0 / 256; h /= 2) {
    const std::vector<double> fh = run_shot<double>(perturbed(m, dv, h), sv, o);
    std::vector<double> first(fh.size()), second(fh.size());
    for (std::size_t i = 0; i < fh.size(); ++i) {
      first[i] = fh[i] - f0[i];
      second[i] = first[i] - h * born[i];
    }
    r1.push_back(norm(first));
    r2.push_back(norm(second));
  }
  for (std::size_t k = 1; k < r2.size(); ++k) {
    EXPECT_NEAR(std::log2(r2[k - 1] / r2[k]), 2.0, 0.05) << "second-order remainder, halving " << k;
    EXPECT_NEAR(std::log2(r1[k - 1] / r1[k]), 1.0, 0.1) << "first-order change, halving " << k;
  }
  EXPECT_LT(r2.back(), 1e-2 * r1.back()) << "J predicts the first-order change";

  std::vector<double> single;
  with_order(c.order, [&](auto order) { single = born_data<decltype(order)::value, float>(m, sv, o, dv); });
  std::vector<double> gap(born.size());
  for (std::size_t i = 0; i < born.size(); ++i) gap[i] = single[i] - born[i];
  EXPECT_LT(norm(gap), 1e-4 * norm(born)) << "float's J is double's to float's precision";
}

INSTANTIATE_TEST_SUITE_P(Geometries, Linearisation,
                         ::testing::Values(BornCase{2, 8, false, false}, BornCase{2, 2, false, false},
                                           BornCase{2, 4, true, true}, BornCase{3, 8, false, false},
                                           BornCase{3, 6, true, true}, BornCase{2, 8, true, true}),
                         [](const ::testing::TestParamInfo<BornCase>& i) {
                           return std::to_string(i.param.dim) + "DOrder" + std::to_string(i.param.order) +
                                  (i.param.off_grid ? "OffGrid" : "") + (i.param.free_surface ? "FreeSurface" : "");
                         });

TEST(Born, KeepsTheForwardsWavefieldBitForBit) {
  // The born task of J and Jᵀ in one graph keeps u for the adjoint: its store (boundary,
  // full; 16-bit; a checkpointed ring), checkpoints, final state and background traces are
  // the forward's, bit for bit (u's update is the forward's own), in pieces too.
  for (const int dim : {2, 3})
    for (const int storage : {int(StorePlan::kStoreBoundary), int(StorePlan::kStoreFull)})
      for (const int every : {0, 7}) {
        const Model m = test_model(dim);
        NumericalOptions o;
        o.order = 4;
        o.pml_width = dim == 3 ? 5 : 8;
        o.free_surface = every > 0;
        const Survey sv = test_survey(m, o.free_surface, true);
        const int compression = storage == StorePlan::kStoreFull ? pack16::kHalf : pack16::kNone;
        Shot<float> f(m, sv, o, storage, every, compression), b(m, sv, o, storage, every, compression);
        cpu::forward<4, float>(f.p());
        auto sc = prepare_shot<float>(m, sv, o);
        const std::vector<float> scatter = born_scatter(b.p(), m, everywhere(m));
        std::vector<float> row(std::size_t(b.p().stride));
        const int n = b.p().nsteps, cut = n / 3;
        cpu::born_steps<4, float>(b.p(), sc->p, scatter.data(), row.data(), 0, cut);
        cpu::born_steps<4, float>(b.p(), sc->p, scatter.data(), row.data(), cut, n);
        const std::string what = std::to_string(dim) + "-D storage " + std::to_string(storage) + " checkpoints every " +
                                 std::to_string(every);
        EXPECT_TRUE(same_bits(f.store, b.store)) << what << ": store";
        EXPECT_TRUE(same_bits(f.final_state, b.final_state)) << what << ": final state";
        EXPECT_TRUE(same_bits(f.checkpoints, b.checkpoints)) << what << ": checkpoints";
        EXPECT_TRUE(same_bits(f.ps->traces, b.ps->traces)) << what << ": background traces";
        EXPECT_GT(norm(std::vector<double>(sc->traces.begin(), sc->traces.end())), 0.0) << what;
        EXPECT_EQ(every > 0, !f.checkpoints.empty()) << what;
      }
}

TEST(Born, EveryInstructionSetLevelGivesTheSameBits) {
  // J's fused step (kernels/cpu/propagate.cpp: born_step) is compiled once per level, as the
  // forward is: each level this CPU runs gives the baseline's Born traces, bit for bit, 2-D
  // and 3-D, float and double, with and without a free surface.
  const cpu::Level was = cpu::level();
  for (const int dim : {2, 3})
    for (const bool fs : {false, true}) {
      const Model m = test_model(dim);
      NumericalOptions o;
      o.order = dim == 3 ? 4 : 8;
      o.pml_width = dim == 3 ? 5 : 10;
      o.free_surface = fs;
      const Survey sv = test_survey(m, fs, true);
      const std::vector<double> dv = everywhere(m);
      std::vector<double> reference_f, reference_d;
      for (const cpu::Level l : cpu::compiled_levels()) {
        if (!cpu::supported(l)) continue;
        ASSERT_EQ(cpu::choose_level(l), "");
        std::vector<double> f, d;
        with_order(o.order, [&](auto order) {
          f = born_data<decltype(order)::value, float>(m, sv, o, dv);
          d = born_data<decltype(order)::value, double>(m, sv, o, dv);
        });
        if (reference_f.empty()) {
          reference_f = f;
          reference_d = d;
          EXPECT_GT(norm(d), 0.0);
          continue;
        }
        const std::string what = std::to_string(dim) + "-D" + (fs ? " free surface, " : ", ") + cpu::level_name(l);
        EXPECT_TRUE(same_bits(reference_f, f))
            << what << " float: first difference at " << first_difference(reference_f, f);
        EXPECT_TRUE(same_bits(reference_d, d))
            << what << " double: first difference at " << first_difference(reference_d, d);
      }
    }
  cpu::choose_level(was);
}

}  // namespace
}  // namespace starwave::test
