// tests/test_adjoint_store.cpp — the adjoint's stores against each other (docs/design.md §7):
// boundary and full storage, every CPU level, tiles in y, checkpoints, 16-bit and ZFP stores,
// the store's slots (tests/test_adjoint.cpp: the dot-product and Taylor tests; the same
// executable, the helpers of tests/adjoint_fixture.hpp).
#include <array>
#include <limits>

#include "kernels/cpu/propagate.hpp"  // save_state, load_state
#include "kernels/shot_state.hpp"
#include "tests/adjoint_fixture.hpp"

namespace starwave::test {
namespace {

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

TEST(Adjoint, KeptStatesHoldEveryValueAPropagationLeavesAndNothingElse) {
  // A forward stopped mid-way, its state kept (kernels/shot_state.hpp) and loaded into work
  // arrays spoiled with NaN: every array value the propagation left is back, bit for bit —
  // u and u_prev at the grid's cells and a free surface's mirror planes, ψ and ζ in their
  // CPML regions, zero everywhere else — and the GPU's one-index-at-a-time map (locate)
  // names the same places as the CPU's runs; 2-D and 3-D, free surface, a model thinner
  // than the layers' reach (z layers merged) and one narrower (x layers merged), layers of a
  // width a side with a side of none.
  struct Case {
    int dim, nz, nx;  // nz, nx > 0: a 2-D model of that size
    bool fs;
    std::array<int, 6> sides;
  };
  const std::array<int, 6> even{-1, -1, -1, -1, -1, -1};
  for (const Case c : {Case{2, 0, 0, false, even}, Case{2, 0, 0, true, even}, Case{3, 0, 0, false, even},
                       Case{3, 0, 0, true, even}, Case{2, 6, 44, false, even}, Case{2, 20, 6, false, even},
                       Case{2, 0, 0, false, {6, 3, -1, -1, 0, 9}}, Case{3, 0, 0, false, {5, 4, 0, 6, 3, 5}}}) {
    Model m = test_model(c.dim);
    Survey sv = test_survey(m, c.fs);
    if (c.nz > 0) {
      m = test::constant_model(c.nz, c.nx, 10, 1);
      for (int x = 0; x < m.nx; ++x) m.at(c.nz / 2, 0, x) = 2000;
      const double xs = 10.0 * (c.nx / 2);
      sv = test::point_survey({10, xs}, {{20, xs - 10}, {20, xs + 10}}, 15, 2e-3, 0.36);
    }
    NumericalOptions o;
    o.pml_width = c.dim == 3 ? 5 : 8;
    o.pml_sides = c.sides;
    o.free_surface = c.fs;
    std::string what = std::to_string(c.dim) + "-D" + (c.fs ? ", free surface" : "") +
                       (c.nz > 0 ? ", " + std::to_string(c.nz) + " × " + std::to_string(c.nx) : "");
    for (int w : c.sides) what += " " + std::to_string(w);
    auto ps = test::prepare_shot<float>(m, sv, o);
    const ShotProblem<float>& p = ps->p;
    const int steps = (p.nsteps / 2) | 1;  // odd: u[steps] in u1
    cpu::forward_steps<8, float>(p, 0, steps);
    float* u = p.u1();
    float* up = p.u0();
    const std::size_t live = 2 * p.grid_size() + p.layer_arrays_size();  // u0, u1, the layer arrays
    const std::vector<float> before(p.work, p.work + live);
    std::size_t nonzero = 0;
    for (float v : before) nonzero += v != 0.0f;
    std::vector<float> kept(p.checkpoint_size());
    cpu::save_state(p, u, up, kept.data());
    std::fill(p.work, p.work + live, std::numeric_limits<float>::quiet_NaN());
    cpu::load_state(p, u, up, kept.data());
    EXPECT_GT(nonzero, std::size_t(0)) << what;
    EXPECT_LT(kept.size(), live) << what;
    EXPECT_TRUE(test::same_bits(before.data(), p.work, live)) << what;
    std::size_t runs = 0, differ = 0;
    state::for_each_run(p, [&](std::size_t k, int array, long offset, int n, int, int, int, int) {
      for (int j = 0; j < n; ++j) {
        int a;
        long at;
        state::locate(p, k + std::size_t(j), a, at);
        differ += a != array || at != offset + j;
      }
      runs += std::size_t(n);
    });
    EXPECT_EQ(runs, kept.size()) << what;
    EXPECT_EQ(differ, std::size_t(0)) << what;
  }
}

TEST(Adjoint, ThinModelsKeepACpmlInteriorAndEveryStoreBlock) {
  // A model of under two stencil radii in z: the CPML regions reach fewer cells into it
  // (ShotGrid::inset), so the interior keeps a plane and no store block is empty (a ZFP
  // store codes each block as a field of its extents); the ZFP store's gradient stays close.
  for (int nz : {8, 9, 3}) {
    Model m = test::constant_model(nz, 44, 10, 1);
    for (int z = 0; z < m.nz; ++z)
      for (int x = 0; x < m.nx; ++x) m.at(z, 0, x) = 1800 + 10.0 * z + 3.0 * x;
    const NumericalOptions o = gradient_options(2, false);
    const std::string what = "nz " + std::to_string(nz);
    const Survey sv =
        nz > 5 ? test_survey(m, false) : test::point_survey({10, 170}, {{20, 100}, {20, 300}}, 15, 2e-3, 0.36);
    for (int storage : {ShotProblem<double>::kStoreBoundary, ShotProblem<double>::kStoreShell}) {
      Shot<double> s(m, sv, o, storage);
      const ShotProblem<double>& p = s.p();
      EXPECT_GT(p.iz1(), p.iz0()) << what;
      EXPECT_GT(p.inset, 0) << what;
      typename ShotProblem<double>::StoreBlock b[ShotProblem<double>::kMaxStoreBlocks];
      const int n = p.store_blocks(b);
      for (int i = 0; i < n; ++i) EXPECT_GT(b[i].size(), 0) << what << ", storage " << storage << ", block " << i;
    }
    std::vector<double> obs(test::run_shot<double>(m, sv, o).size(), 0.0);
    std::vector<double> exact, zfp;
    misfit(m, sv, o, obs, ShotProblem<double>::kStoreBoundary, &exact);
    misfit(m, sv, o, obs, ShotProblem<double>::kStoreBoundary, &zfp, pack16::kZfp16);
    const double e = test::diff_norm(zfp, exact) / test::norm(exact);
    EXPECT_GT(test::norm(exact), 0) << what;
    EXPECT_LT(e, 1e-3) << what;
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
  // a boundary slot holds every cell outside the CPML interior (the layers and the model
  // cells next to them) and the shell around the interior, nothing of the interior; a full
  // slot holds the interior too; a shell slot the shell alone, which holds every model cell
  // outside the interior. Layers narrower than the stencil (2) widen the slot to the shell.
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
        long interior = 0, outside = 0, model_outside = 0, shell = 0;
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
          const bool on_grid = z >= 0 && z < p.nz && y >= 0 && y < p.ny && x >= 0 && x < p.nx;
          interior += p.interior_point(z, y, x);
          outside += on_grid && !p.interior_point(z, y, x);
          model_outside += !p.layer_point(z, y, x) && on_grid && !p.interior_point(z, y, x);
          shell += !p.interior_point(z, y, x) && std::max({p.iz0() - z, z - p.iz1() + 1, p.iy0() - y, y - p.iy1() + 1,
                                                           p.ix0() - x, x - p.ix1() + 1}) <= p.halo;
        }
        const std::string what =
            std::to_string(dim) + "-D, PML " + std::to_string(pml) + ", storage " + std::to_string(storage);
        const long interior_cells = long(p.iz1() - p.iz0()) * (p.iy1() - p.iy0()) * (p.ix1() - p.ix0());
        const long model_rim = p.model_cells() - interior_cells;
        EXPECT_GT(model_rim, 0) << what << ": the CPML regions reach into the model";
        if (storage == ShotProblem<double>::kStoreShell) {
          EXPECT_EQ(shell, p.store_step_size()) << what << ": the shell alone";
        } else {
          EXPECT_EQ(outside, long(p.nz) * p.ny * p.nx - interior_cells) << what << ": every cell outside the interior";
        }
        const long box =
            long(p.iz1() - p.iz0() + 2 * p.halo) * (p.iy1() - p.iy0() + 2 * p.yhalo) * (p.ix1() - p.ix0() + 2 * p.halo);
        EXPECT_EQ(shell, box - interior_cells) << what << ": the whole shell";
        EXPECT_EQ(model_outside, model_rim) << what << ": every model cell outside the interior";
        EXPECT_EQ(interior, storage == ShotProblem<double>::kStoreFull ? interior_cells : 0) << what;
      }
    }
}

}  // namespace
}  // namespace starwave::test
