// tests/test_live_rows.cpp — the CPU forward, J and adjoint step only the rows within reach
// of those whose state is not all +0 (kernels/live_rows.hpp), and give the bits of steps over
// the whole grid: traces, final wavefields and memory variables, the adjoint's images, from
// rest, in pieces and from a state, while the waves are still crossing the grid (checked) and
// into its layers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cpu/born.hpp"
#include "kernels/cpu/levels.hpp"
#include "kernels/cpu/subnormals.hpp"
#include "kernels/live_rows.hpp"
#include "tests/adjoint_fixture.hpp"
#include "tests/helpers.hpp"

namespace starwave::test {
namespace {

struct Case {
  int dim, order;
  bool dbl, free_surface, per_side;
  double depth = 0.02;  // the source's, a share of the model's
  std::string name() const {
    return std::to_string(dim) + "-D, order " + std::to_string(order) + (dbl ? ", double" : ", float") +
           (free_surface ? ", free surface" : "") + (per_side ? ", per-side layers" : "");
  }
};

/// A layered model with a source off the nodes near the top-left layers: the waves reach
/// the left and top layers while most rows are still at rest.
Model case_model(int dim) {
  Model m = dim == 3 ? constant_model_3d(70, 20, 24, 10, 1500) : constant_model(160, 64, 10, 1500);
  for (int z = 0; z < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x) m.at(z, y, x) = z < m.nz / 4 ? 1500 : 2200 + 5 * x;
  return m;
}

Survey case_survey(const Model& m, bool free_surface, double depth = 0.02) {
  const double zs = (free_surface ? 12.4 : 33.3) + std::floor(depth * m.nz) * m.dz;
  if (m.three_d())
    return point_survey({zs, 81.7, 52.2}, {{21.0, 150.5, 200.4}, {650.0, 20.0, 220.0}}, 15, 2e-3, 0.12, true);
  return point_survey({zs, 48.6}, {{21.0, 300.5}, {1500.0, 20.0}}, 15, 2e-3, 0.2);
}

NumericalOptions case_options(const Case& c) {
  NumericalOptions o;
  o.order = c.order;
  o.precision = c.dbl ? Precision::kDouble : Precision::kSingle;
  o.free_surface = c.free_surface;
  o.pml_width = c.dim == 3 ? 6 : 10;
  if (c.per_side) o.pml_sides = {-1, 4, 5, 0, 0, 7};  // a side without layers, others of their own widths
  return o;
}

/// Whether the work arrays (ψ, ζ), the traces and the final u, u[N−1] of two shots agree bit for bit.
template <typename T>
void expect_same_state(const PreparedShot<T>& a, const std::vector<T>& a_final, const PreparedShot<T>& b,
                       const std::vector<T>& b_final, const std::string& what) {
  EXPECT_TRUE(same_bits(a.traces, b.traces)) << what << ": traces, " << first_difference(a.traces, b.traces);
  EXPECT_TRUE(same_bits(a_final, b_final)) << what << ": final wavefields, " << first_difference(a_final, b_final);
  const std::size_t layers = a.p.layer_arrays_size();
  EXPECT_TRUE(same_bits(a.p.cpml_z1(), b.p.cpml_z1(), layers))
      << what << ": memory variables, " << first_difference(a.p.cpml_z1(), b.p.cpml_z1(), layers);
}

template <typename T>
void record(const ShotProblem<T>& q, const T* u, int m_done) {
  if (m_done % q.record_every != 0 || m_done / q.record_every >= q.nt) return;
  for (int r = 0; r < q.nrec; ++r) q.traces[long(r) * q.nt + m_done / q.record_every] = q.sample(u + q.origin(), r);
}

template <int Order, typename T>
void expect_forward_is_whole_grids(const Case& c) {
  const Model m = case_model(c.dim);
  const NumericalOptions o = case_options(c);
  const Survey s = case_survey(m, c.free_surface, c.depth);
  const std::string what = c.name();

  // Every step over the whole grid (cpu::step).
  auto whole = prepare_shot<T>(m, s, o);
  const ShotProblem<T>& w = whole->p;
  const std::size_t grid = w.grid_size();
  const int half = w.nsteps / 2 + 1, quarter = w.nsteps / 4;
  live::Rows early, late;  // the live rows after a quarter of the steps, and at the end
  {
    const cpu::detail::FlushSubnormals<T> ftz;  // as cpu::forward runs
    std::fill(whole->work.begin(), whole->work.end(), T(0));
    T* u = w.u0();
    T* up = w.u1();
    record(w, u, 0);
    for (int k = 0; k < w.nsteps; ++k) {
      if (k == quarter) early = live::of_state(w, u, up);
      cpu::step<Order, T>(w, u, up, w.source[k]);
      std::swap(u, up);
      record(w, u, k + 1);
    }
    ASSERT_EQ(u, w.nsteps % 2 ? w.u1() : w.u0());
    late = live::of_state(w, u, up);
  }
  // The case checks something: steps over part of the grid, and (the deep sources') live
  // rows that reach the bottom layer after a quarter of the steps.
  EXPECT_FALSE(live::whole(w, live::swept(w, early))) << what << ": the waves fill the grid at once";
  const int bottom = w.nz - w.pml_bottom;
  if (c.depth > 0.1) {
    EXPECT_TRUE(early.z1 + 2 * w.halo <= bottom && late.z1 > bottom)
        << what << ": the live rows reach the bottom layer before a quarter of the steps, or never (rows " << early.z1
        << ", " << late.z1 << " of " << w.nz << ", the layer from " << bottom << ")";
  }
  std::vector<T> whole_final(w.u0(), w.u0() + 2 * grid);

  // cpu::forward from rest, in y-tiles of 5 rows in 3-D (tiles that start inside the grid),
  // counting the rows its steps sweep: fewer than the grid's.
  const long long all = (long long)w.nsteps * w.nz * w.ny;
  long long swept = 0;
  auto tracked = prepare_shot<T>(m, s, o);
  tracked->p.swept_rows = &swept;
  if (c.dim == 3) tracked->p.tile_rows = 5;
  cpu::forward<Order, T>(tracked->p);
  EXPECT_LT(swept, all * 19 / 20) << what << ": the forward swept " << swept << " of " << all << " rows";
  std::vector<T> tracked_final(tracked->p.u0(), tracked->p.u0() + 2 * grid);
  expect_same_state(*whole, whole_final, *tracked, tracked_final, what + ", from rest");

  // In three pieces: the later ones start from the state the earlier left.
  auto pieces = prepare_shot<T>(m, s, o);
  long long swept_pieces = 0;
  pieces->p.swept_rows = &swept_pieces;
  if (c.dim == 3) pieces->p.tile_rows = 5;
  const int cut1 = w.nsteps / 5 + 1, cut2 = half;
  cpu::forward_steps<Order, T>(pieces->p, 0, cut1);
  cpu::forward_steps<Order, T>(pieces->p, cut1, cut2);
  cpu::forward_steps<Order, T>(pieces->p, cut2, w.nsteps);
  std::vector<T> pieces_final(pieces->p.u0(), pieces->p.u0() + 2 * grid);
  expect_same_state(*whole, whole_final, *pieces, pieces_final, what + ", in pieces");
  EXPECT_LT(swept_pieces, all * 19 / 20) << what << ": the pieces swept " << swept_pieces << " of " << all << " rows";
}

template <int Order>
void run_forward_case(const Case& c) {
  if (c.dbl)
    expect_forward_is_whole_grids<Order, double>(c);
  else
    expect_forward_is_whole_grids<Order, float>(c);
}

TEST(LiveRows, TheForwardStepsTheLiveRowsAloneWithTheWholeGridsBits) {
  for (const Case& c :
       {Case{2, 8, false, false, false, 0.45}, Case{2, 2, true, true, false}, Case{2, 4, false, false, true, 0.45},
        Case{2, 6, true, true, true, 0.45}, Case{3, 8, false, false, false, 0.15}, Case{3, 4, true, true, true}}) {
    if (c.order == 2) run_forward_case<2>(c);
    if (c.order == 4) run_forward_case<4>(c);
    if (c.order == 6) run_forward_case<6>(c);
    if (c.order == 8) run_forward_case<8>(c);
  }
}

/// A start from a state whose memory variables alone are not zero far from the source (ψ_z
/// in the bottom layer): those rows are live from the first step.
template <int Order, typename T>
void expect_state_start_is_whole_grids(const Case& c) {
  const Model m = case_model(c.dim);
  const NumericalOptions o = case_options(c);
  const Survey s = case_survey(m, c.free_surface, c.depth);
  auto whole = prepare_shot<T>(m, s, o), tracked = prepare_shot<T>(m, s, o);
  const ShotProblem<T>& w = whole->p;
  std::vector<T> start(w.checkpoint_size(), T(0));
  const int bottom = w.nz - w.pml_bottom;
  state::for_each_run(w, [&](std::size_t k, int array, long, int n, int, int z, int, int) {
    if (array == state::kZ1 && z >= bottom)
      for (int j = 0; j < n; ++j) start[k + std::size_t(j)] = T(1e-3) * T(1 + (j % 5));
  });
  {
    const cpu::detail::FlushSubnormals<T> ftz;
    std::fill(whole->work.begin(), whole->work.end(), T(0));
    T* u = w.u0();
    T* up = w.u1();
    cpu::load_state(w, u, up, start.data());
    record(w, u, 0);
    for (int k = 0; k < w.nsteps; ++k) {
      cpu::step<Order, T>(w, u, up, w.source[k]);
      std::swap(u, up);
      record(w, u, k + 1);
    }
  }
  const std::size_t grid = w.grid_size();
  std::vector<T> whole_final(w.u0(), w.u0() + 2 * grid);
  tracked->p.initial_state = start.data();
  cpu::forward<Order, T>(tracked->p);
  std::vector<T> tracked_final(tracked->p.u0(), tracked->p.u0() + 2 * grid);
  expect_same_state(*whole, whole_final, *tracked, tracked_final, c.name() + ", from a state");
}

TEST(LiveRows, AStartFromAStateWhoseMemoryVariablesAloneAreNotZero) {
  expect_state_start_is_whole_grids<8, float>({2, 8, false, false, false});
  expect_state_start_is_whole_grids<4, double>({3, 4, true, false, true});
}

/// J: both fields stepped over the live rows (cpu::born) against born_step over the whole grid.
template <int Order, typename T>
void expect_born_is_whole_grids(const Case& c) {
  const Model m = case_model(c.dim);
  const NumericalOptions o = case_options(c);
  const Survey s = case_survey(m, c.free_surface, c.depth);
  std::vector<double> dv(m.vp.size());
  for (std::size_t i = 0; i < dv.size(); ++i) dv[i] = 10.0 + double(i % 7) - 3.0 * double(i % 5);

  auto bg = prepare_shot<T>(m, s, o), sc = prepare_shot<T>(m, s, o);
  const std::vector<T> scatter = born_scatter(bg->p, m, dv);
  std::vector<T> row(std::size_t(bg->p.stride));
  const ShotProblem<T>&p = bg->p, &d = sc->p;
  {
    const cpu::detail::FlushSubnormals<T> ftz;
    std::fill(bg->work.begin(), bg->work.end(), T(0));
    std::fill(sc->work.begin(), sc->work.end(), T(0));
    T *u = p.u0(), *up = p.u1(), *du = d.u0(), *dup = d.u1();
    record(p, u, 0);
    record(d, du, 0);
    for (int k = 0; k < p.nsteps; ++k) {
      cpu::born_step<Order, T>(p, u, up, d, du, dup, scatter.data(), p.source[k], row.data(), live::all_rows(p));
      std::swap(u, up);
      std::swap(du, dup);
      record(p, u, k + 1);
      record(d, du, k + 1);
    }
  }
  const std::size_t grid = p.grid_size();
  std::vector<T> whole_final(d.u0(), d.u0() + 2 * grid), whole_u(p.u0(), p.u0() + 2 * grid);

  auto bg2 = prepare_shot<T>(m, s, o), sc2 = prepare_shot<T>(m, s, o);
  long long swept = 0;
  bg2->p.swept_rows = &swept;
  const int cut = p.nsteps / 3 + 1;  // the second piece starts from both fields' states
  cpu::born_steps<Order, T>(bg2->p, sc2->p, scatter.data(), row.data(), 0, cut);
  cpu::born_steps<Order, T>(bg2->p, sc2->p, scatter.data(), row.data(), cut, p.nsteps);
  std::vector<T> tracked_final(sc2->p.u0(), sc2->p.u0() + 2 * grid), tracked_u(bg2->p.u0(), bg2->p.u0() + 2 * grid);
  expect_same_state(*sc, whole_final, *sc2, tracked_final, c.name() + ", J");
  expect_same_state(*bg, whole_u, *bg2, tracked_u, c.name() + ", J's background");
  const long long all = (long long)p.nsteps * p.nz * p.ny;
  EXPECT_LT(swept, all * 19 / 20) << c.name() << ", J swept " << swept << " of " << all << " rows";
}

TEST(LiveRows, JStepsTheLiveRowsAloneWithTheWholeGridsBits) {
  expect_born_is_whole_grids<8, float>({2, 8, false, false, false});
  expect_born_is_whole_grids<4, double>({2, 4, true, true, true});
  expect_born_is_whole_grids<8, float>({3, 8, false, true, false});
}

/// The adjoint of residuals injected at receivers near the top (and, in 3-D, near the front
/// layer of a grid wide in y: μ's box is partial in y while the front layer's α, β fill), a
/// deep source (the forward field reaches the bottom rows), whole and in pieces, with each
/// store, from rest or (3-D) from a state whose β_y alone is non-zero in the back layer, against
/// the same adjoint sweeping every row (RunTuning::every_row): the correlation, illumination,
/// source adjoint and μ's last state bit for bit, with fewer rows of μ swept than the grid's.
template <int Order, typename T>
void expect_adjoint_is_whole_grids(const Case& c, int storage, int checkpoint_every, bool from_state = false,
                                   double record = 0, bool final_at_rest = false, int compression = pack16::kNone) {
  Model m = c.dim == 3 ? constant_model_3d(36, 60, 20, 10, 1500) : case_model(2);
  for (int z = 0; z < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x) m.at(z, y, x) = z < m.nz / 4 ? 1500 : 2200 + 5 * x + 3 * y;
  const NumericalOptions o = case_options(c);
  std::vector<Position> rec;
  for (double x = 21.5; x < 10.0 * (m.nx - 2); x += 37.0)
    rec.push_back(m.three_d() ? Position{17.3 + 0.1 * x / 10, 31.4, x} : Position{17.3 + 0.1 * x / 10, x});
  const double zs = 10.0 * m.nz * 0.6;
  const Survey s = m.three_d() ? point_survey({zs, 81.7, 52.2}, rec, 15, 2e-3, record > 0 ? record : 0.1, true)
                               : point_survey({zs, 48.6}, rec, 15, 2e-3, record > 0 ? record : 0.2);
  const std::string what = c.name() + ", storage " + std::to_string(storage) +
                           (checkpoint_every ? ", checkpoints every " + std::to_string(checkpoint_every) : "") +
                           (from_state ? ", from a state" : "") +
                           (record > 0 ? ", a record of " + std::to_string(record) + " s" : "") +
                           (final_at_rest ? ", u's final state at rest" : "") +
                           (compression != pack16::kNone ? ", store compression " + std::to_string(compression) : "");
  Shot<T> shot(m, s, o, storage, checkpoint_every, compression);
  ShotProblem<T>& p = shot.p();
  // With `final_at_rest`, the adjoint's inputs are the store's slots and a final state of +0
  // (not a forward's, but the same inputs for both runs): the rows u's re-creation starts from
  // are the source's alone, and the store's restored rims and layers bring the others in.
  auto run_forward = [&] {
    forward<Order, T>(shot);
    if (final_at_rest) std::fill(p.final_state, p.final_state + 2 * p.grid_size(), T(0));
  };
  if (c.dim == 3) p.tile_rows = 5;
  std::vector<T> start(p.checkpoint_size(), T(0)), end0(start.size()), end1(start.size());
  if (from_state) {  // 3-D: β_y of the back layer's rows in the top planes, far from the receivers
    const int back = p.ny - p.pml_back;
    state::for_each_run(p, [&](std::size_t k, int array, long, int n, int, int z, int y, int) {
      if (array == state::kY2 && y >= back && z >= 0 && z < p.nz / 4)
        for (int j = 0; j < n; ++j) start[k + std::size_t(j)] = T(1e-3) * T(1 + (j % 5));
    });
    p.adjoint_start = start.data();
  }
  run_forward();
  const std::vector<T> residual = random_vector<T>(shot.ps->traces.size(), 7);
  std::vector<T> c0, i0, a0, c1, i1, a1;
  p.every_row = true;
  p.adjoint_end = end0.data();
  const T minus_zero = -T(0);  // sums from −0: the rows of u at rest must add what image_row adds
  adjoint<Order, T>(shot, residual, c0, i0, a0, minus_zero);
  p.every_row = false;
  p.adjoint_end = end1.data();
  run_forward();  // with checkpoints, the adjoint left the ring holding interval 0
  long long swept = 0, imaged = 0;
  p.swept_rows = &swept;
  p.imaged_rows = &imaged;
  adjoint<Order, T>(shot, residual, c1, i1, a1, minus_zero);
  p.swept_rows = nullptr;
  p.imaged_rows = nullptr;
  auto expect_same = [&](const std::string& how) {
    EXPECT_TRUE(same_bits(c0, c1)) << what << how << ": correlation, " << first_difference(c0, c1);
    EXPECT_TRUE(same_bits(i0, i1)) << what << how << ": illumination, " << first_difference(i0, i1);
    EXPECT_TRUE(same_bits(a0, a1)) << what << how << ": source adjoint, " << first_difference(a0, a1);
    EXPECT_TRUE(same_bits(end0, end1)) << what << how << ": μ's last state, " << first_difference(end0, end1);
  };
  expect_same("");
  const long long all = (long long)p.nsteps * p.nz * p.ny;
  // (From the state: the box spans the top planes' rows from the start, and fills soon.)
  EXPECT_LT(swept, from_state ? all : all * 19 / 20)
      << what << ": the adjoint swept " << swept << " of " << all << " rows of μ";
  // u re-created and imaged in full within reach of its rows not at rest (the whole store
  // restores every row: all of them).
  if (storage == ShotProblem<T>::kStoreFull) {
    EXPECT_EQ(imaged, all) << what << ": the counter";
  } else if (record > 0) {  // (with longer records, u's numerical front reaches the small grids' far rows)
    EXPECT_LT(imaged, all * 19 / 20) << what << ": u imaged in full in " << imaged << " of " << all << " rows";
  }
  run_forward();
  std::fill(end1.begin(), end1.end(), T(0));
  adjoint_in_pieces<Order, T>(shot, residual, c1, i1, a1, minus_zero);  // later pieces start from μ's state
  expect_same(", in pieces");
  double norm = 0;
  for (T v : c0) norm += double(v) * double(v);
  EXPECT_GT(norm, 0) << what << ": an image of zeros";
}

TEST(LiveRows, TheAdjointStepsTheLiveRowsOfMuAloneWithTheWholeGridsBits) {
  const int boundary = ShotProblem<float>::kStoreBoundary, full = ShotProblem<float>::kStoreFull,
            shell = ShotProblem<float>::kStoreShell;
  expect_adjoint_is_whole_grids<8, float>({2, 8, false, false, false}, boundary, 0);
  expect_adjoint_is_whole_grids<4, double>({2, 4, true, true, true}, full, 0);
  expect_adjoint_is_whole_grids<2, float>({2, 2, false, true, false}, shell, 0);
  expect_adjoint_is_whole_grids<6, double>({2, 6, true, false, false}, boundary, 7);
  expect_adjoint_is_whole_grids<8, float>({3, 8, false, false, false}, boundary, 0);
  expect_adjoint_is_whole_grids<4, double>({3, 4, true, true, true}, shell, 9);
  expect_adjoint_is_whole_grids<4, float>({3, 4, false, false, false}, boundary, 0, true);
  // A short record: u's waves (and their re-creation) stay within the rows near the source.
  expect_adjoint_is_whole_grids<8, float>({3, 8, false, false, false}, boundary, 0, false, 0.02);
  expect_adjoint_is_whole_grids<4, double>({3, 4, true, false, false}, boundary, 5, false, 0.02);
  // u's re-creation starting from rest: the rows the store restores each step are taken in.
  expect_adjoint_is_whole_grids<8, float>({2, 8, false, false, false}, boundary, 0, false, 0, true);
  expect_adjoint_is_whole_grids<4, double>({3, 4, true, true, false}, shell, 0, false, 0.02, true);
  // Slots in 16 bits and in ZFP (whose blocks reach guard cells), a free surface's mirror planes.
  expect_adjoint_is_whole_grids<8, float>({3, 8, false, true, false}, boundary, 0, false, 0.02, false, pack16::kHalf);
  expect_adjoint_is_whole_grids<2, float>({3, 2, false, true, true}, boundary, 6, false, 0.02, false, pack16::kZfp12);
}

/// A row's runs (for_each_row_run) are the runs of the kept state's layout at that row
/// (state::for_each_run, u_prev and a free surface's mirror planes aside), every one of them.
TEST(LiveRows, ARowsRunsAreTheKeptStatesRunsOfThatRow) {
  for (const Case& c : {Case{2, 8, false, false, false}, Case{2, 4, false, true, true}, Case{3, 8, false, false, true},
                        Case{3, 2, false, true, false}}) {
    Model m = case_model(c.dim);
    auto ps = prepare_shot<float>(m, case_survey(m, c.free_surface), case_options(c));
    const ShotProblem<float>& p = ps->p;
    std::set<std::tuple<int, long, int>> state_runs, row_runs;
    state::for_each_run(p, [&](std::size_t, int array, long offset, int n, int, int z, int, int) {
      if (array != state::kUPrev && z >= 0) state_runs.insert({array, offset, n});
    });
    for (int z = 0; z < p.nz; ++z)
      for (int y = 0; y < p.ny; ++y)
        live::for_each_row_run(p, z, y, [&](int array, long offset, int n) {
          EXPECT_TRUE(row_runs.insert({array, offset, n}).second) << c.name() << ": a run twice";
        });
    EXPECT_EQ(row_runs, state_runs) << c.name();
  }
  // Thin models: the layers of a dimension merged.
  Model thin = constant_model_3d(9, 10, 11, 10, 1500);
  NumericalOptions o;
  o.pml_width = 6;
  auto ps = prepare_shot<float>(thin, point_survey({40, 50, 50}, {{40, 50, 60}}, 15, 2e-3, 0.02, true), o);
  std::set<std::tuple<int, long, int>> state_runs, row_runs;
  state::for_each_run(ps->p, [&](std::size_t, int array, long offset, int n, int, int z, int, int) {
    if (array != state::kUPrev && z >= 0) state_runs.insert({array, offset, n});
  });
  for (int z = 0; z < ps->p.nz; ++z)
    for (int y = 0; y < ps->p.ny; ++y)
      live::for_each_row_run(ps->p, z, y, [&](int array, long offset, int n) { row_runs.insert({array, offset, n}); });
  EXPECT_EQ(row_runs, state_runs) << "merged layers";
}

}  // namespace
}  // namespace starwave::test
