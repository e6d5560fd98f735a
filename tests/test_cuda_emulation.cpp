// tests/test_cuda_emulation.cpp — the CUDA kernels' bodies and launch sequence, run on the
// host by the launch-emulation shim, against the CPU kernel (docs/design.md §7): the same bits,
// forward and adjoint, every order, float and double, with and without a free surface;
// the fused passes' launch counts; a refused launch reported with its name.
#include <gtest/gtest.h>
#include <algorithm>
#include <array>

#include <type_traits>

#include <cstring>
#include <string>

#include "kernels/cpu/adjoint.hpp"
#include "kernels/cpu/born.hpp"
#include "kernels/cpu/subnormals.hpp"
#include "kernels/cuda/born.hpp"  // the device flushes float subnormals (nvcc -ftz=true)
#include "kernels/misfit_image.hpp"
#include "kernels/shot_state.hpp"
#include "tests/adjoint_fixture.hpp"
#include "tests/cuda_emulation.hpp"
#include "tests/emulation_compare.hpp"
#include "tests/emulation_models.hpp"
#include "tests/helpers.hpp"

namespace starwave::test {
namespace {

template <typename T, int Order>
void compare(bool free_surface, int column_planes = 0) {
  // Odd sizes so no dimension is a multiple of the block shape; a heterogeneous model; two
  // receivers on one node (their adjoint sources add up in receiver order).
  Model m = constant_model(37, 53, 10, 1800);
  for (int z = 0; z < m.nz; ++z)
    for (int x = 0; x < m.nx; ++x) m.at(z, x) = 1800 + 25 * z + 3 * x;
  Survey s = point_survey({60, 170}, {{10, 0}, {10, 260}, {360, 520}, {200, 100}, {10, 260}, {0, 300}}, 15, 1e-3,
                          0.4 * kRecordShare);
  const NumericalOptions o = options_for<T, Order>(7, free_surface);
  const std::string context =
      "free surface " + std::to_string(free_surface) + ", column runs of " + std::to_string(column_planes) + " planes";
  expect_emulation_matches_cpu<T, Order>(m, s, o, context, column_planes);
  for (int storage : {ShotProblem<T>::kStoreBoundary, ShotProblem<T>::kStoreFull, ShotProblem<T>::kStoreShell})
    expect_adjoint_emulation_matches_cpu<T, Order>(m, s, o, storage, context, column_planes);
}

TEST(CudaEmulation, SameBitsAsCpuKernelFloat) {
  for (bool fs : {false, true}) {
    compare<float, 2>(fs);
    compare<float, 4>(fs);
    compare<float, 6>(fs);
    compare<float, 8>(fs);
  }
}

TEST(CudaEmulation, SameBitsAsCpuKernelDouble) {
  for (bool fs : {false, true}) {
    compare<double, 2>(fs);
    compare<double, 4>(fs);
    compare<double, 6>(fs);
    compare<double, 8>(fs);
  }
}

/// The CPU kernel sweeps the side layers in whole vectors (falling back to plain loops
/// when a layer is clamped by a narrow model) and keeps ψ, ζ in compact arrays; the
/// emulated CUDA bodies update each cell with the exact per-region formula. They must
/// agree for layer widths below, at and above a vector, and for models narrower than one
/// or thinner than two stencil radii (where the two layers share one array).
template <typename T, int Order>
void compare_geometry(int nz, int nx, int pml, bool free_surface) {
  Model m = constant_model(nz, nx, 10, 2000);
  for (int z = 0; z < m.nz; ++z)
    for (int x = 0; x < m.nx; ++x) m.at(z, x) = 1900 + 20 * z + 7 * x;
  const double zs = 10.0 * (nz / 2), xs = 10.0 * (nx / 2);
  Survey s =
      point_survey({zs, xs}, {{0, 0}, {0, 10.0 * (nx - 1)}, {10.0 * (nz - 1), xs}}, 20, 1e-3, 0.25 * kRecordShare);
  NumericalOptions o;
  o.order = Order;
  o.pml_width = pml;
  o.free_surface = free_surface;
  o.precision = precision_of<T>();
  const std::string context = "model " + std::to_string(nz) + " × " + std::to_string(nx) + ", PML " +
                              std::to_string(pml) + ", free surface " + std::to_string(free_surface);
  expect_emulation_matches_cpu<T, Order>(m, s, o, context);
  expect_adjoint_emulation_matches_cpu<T, Order>(m, s, o, ShotProblem<T>::kStoreBoundary, context);
}

TEST(CudaEmulation, EveryLayerWidthAndGridSizeGivesTheCpusBits) {
  for (int pml : {0, 1, 7, 8, 16, 17, 20})
    for (int nx : {3, 9, 40}) {
      compare_geometry<float, 8>(11, nx, pml, false);
      compare_geometry<float, 8>(3, nx, pml, pml % 2 == 0);  // thinner than two radii
      compare_geometry<double, 4>(6, nx, pml, pml % 2 == 1);
    }
}

/// The same in 3-D: odd extents, a heterogeneous model, receivers sharing a node, y layers
/// thinner than, as wide as and wider than the stencil (shared arrays when the model is
/// thinner than two radii), with and without a free surface.
template <typename T, int Order>
void compare_3d(int ny, int pml, bool free_surface, LaunchShape shape = {}, int nx = 13, int nz = 9) {
  Model m = constant_model_3d(nz, ny, nx, 10, 2000);
  for (int z = 0; z < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x) m.at(z, y, x) = 1900 + 20 * z + 11 * y + 7 * x;
  const double yc = 10.0 * (ny / 2);
  Survey s = point_survey({40, yc, 60}, {{0, 0, 0}, {0, 10.0 * (ny - 1), 120}, {80, yc, 60}, {0, 0, 0}, {10, yc, 20}},
                          20, 1e-3, 0.12 * kRecordShare, true);
  NumericalOptions o;
  o.order = Order;
  o.pml_width = pml;
  o.free_surface = free_surface;
  o.precision = precision_of<T>();
  const std::string context = "3-D, nz " + std::to_string(nz) + ", ny " + std::to_string(ny) + ", PML " +
                              std::to_string(pml) + ", free surface " + std::to_string(free_surface) + ", nx " +
                              std::to_string(nx) + ", column runs of " + std::to_string(shape.column_planes) +
                              " planes, marching " + std::to_string(shape.march_planes);
  expect_emulation_matches_cpu<T, Order>(m, s, o, context, shape);
  // The layers' share (boundary) always; the whole store or the rim alone in turn (each
  // 3-D geometry runs with and without a free surface).
  for (int storage :
       {ShotProblem<T>::kStoreBoundary, free_surface ? ShotProblem<T>::kStoreFull : ShotProblem<T>::kStoreShell})
    expect_adjoint_emulation_matches_cpu<T, Order>(m, s, o, storage, context, shape);
}

TEST(CudaEmulation, SameBitsAsCpuKernelIn3D) {
  for (bool fs : {false, true}) {
    compare_3d<float, 8>(7, 6, fs);
    compare_3d<double, 8>(7, 6, fs);
    compare_3d<float, 2>(5, 3, fs);
    compare_3d<double, 4>(5, 3, fs);
    compare_3d<float, 6>(5, 3, fs);
  }
  for (int pml : {1, 5, 9})
    for (int ny : {3, 10}) compare_3d<float, 8>(ny, pml, pml == 5);
}

/// Points off the nodes (Hicks' weights): a source and receivers whose windows cross the
/// free surface (folded weights) and reach into the side layer, two receivers whose
/// windows overlap (their adjoint sources add up cell by cell in entry order).
template <typename T, int Order>
void compare_off_grid(int dim, bool free_surface, double record = kRecordShare) {
  const bool three = dim == 3;
  const Model m = ramp_model(three, 19, 9, 23, {25, 5, 3}, 37, 53);
  auto at = [&](double z, double y, double x) { return three ? Position{z, y, x} : Position{z, x}; };
  const Survey s = point_survey(
      at(21.3, 41.7, 63.4),
      {at(12.6, 33.3, 13.1), at(14.1, 36.4, 31.7), at(17.2, 44.9, 35.5), at(150.5, 57.1, 200.25), at(80, 40, 100)}, 15,
      1e-3, (three ? 0.12 : 0.3) * record, three);
  NumericalOptions o;
  o.order = Order;
  o.pml_width = 7;
  o.free_surface = free_surface;
  o.precision = precision_of<T>();
  const std::string context = std::to_string(dim) + "-D, off the nodes, free surface " + std::to_string(free_surface);
  expect_emulation_matches_cpu<T, Order>(m, s, o, context);
  for (int storage : {ShotProblem<T>::kStoreBoundary, ShotProblem<T>::kStoreFull})
    expect_adjoint_emulation_matches_cpu<T, Order>(m, s, o, storage, context);
  // Checkpoints and a ring of slots (the re-runs inside the adjoint): the CPU's bits (in
  // float, intervals of 7 steps, and of one in 2-D at order 2; test_adjoint checks double
  // against the whole store).
  if (std::is_same_v<T, float> && (Order == 8 || dim == 2))
    expect_adjoint_emulation_matches_cpu<T, Order>(m, s, o, ShotProblem<T>::kStoreBoundary, context, 0,
                                                   Order == 2 ? 1 : 7);
  // A 16-bit store (the store-max launch, the scaled words, the decoded reads): the CPU's
  // bits (its vectorised float runs against the emulation's word-by-word path), with the
  // whole store and with checkpoints (the re-runs' maxima).
  if (free_surface && Order == 8)
    expect_adjoint_emulation_matches_cpu<T, Order>(m, s, o, ShotProblem<T>::kStoreBoundary, context, 0, 0,
                                                   pack16::kHalf);
  if (free_surface && Order == 4 && dim == 2)
    expect_adjoint_emulation_matches_cpu<T, Order>(m, s, o, ShotProblem<T>::kStoreFull, context, 0, 5, pack16::kBfloat);
  if (free_surface && Order == 8 && dim == 2)
    expect_adjoint_emulation_matches_cpu<T, Order>(m, s, o, ShotProblem<T>::kStoreBoundary, context, 0, 7,
                                                   pack16::kBfloat);
  // RTM's sums (the receiver illumination Σμ², ISIC's ∇u·∇μ in the correlation), with RTM's
  // shell store, whole and checkpointed: the CPU's bits.
  const ImageSums rtm_sums{true, true};
  expect_adjoint_emulation_matches_cpu<T, Order>(m, s, o, ShotProblem<T>::kStoreShell, context, {}, 0, 0, rtm_sums);
  if (Order == 8 || dim == 2)
    expect_adjoint_emulation_matches_cpu<T, Order>(m, s, o, ShotProblem<T>::kStoreBoundary, context, {}, 7, 0,
                                                   rtm_sums);
  // 3-D, marching: the imaging's march over the CPML interior with the off-grid source's term
  // and the receiver illumination in its cells; with ISIC (the image launch unmarched); a
  // model region that is the CPML interior (no frame).
  if (three && Order != 2) {
    const LaunchShape marching{0, 5};
    const std::string with = context + ", marching";
    expect_adjoint_emulation_matches_cpu<T, Order>(m, s, o, ShotProblem<T>::kStoreBoundary, with, marching, 0, 0,
                                                   ImageSums{true, false});
    expect_adjoint_emulation_matches_cpu<T, Order>(m, s, o, ShotProblem<T>::kStoreShell, with, marching, 0, 0,
                                                   rtm_sums);
    NumericalOptions no_inset = o;
    no_inset.pml_inset = 0;
    expect_adjoint_emulation_matches_cpu<T, Order>(m, s, no_inset, ShotProblem<T>::kStoreBoundary, with + ", no inset",
                                                   marching);
  }
}

/// J of one shot through cpu::born_steps and through the emulated launches (run_born_steps),
/// in two pieces, each with u's store (`storage`, `every`, `compression`): the same bits in
/// the Born traces, the background's traces, store, checkpoints and final state.
template <typename T, int Order>
void compare_born(int dim, bool free_surface, int storage, int every, int compression) {
  const Model m = test_model(dim);
  NumericalOptions o;
  o.order = Order;
  o.pml_width = dim == 3 ? 5 : 8;
  o.free_surface = free_surface;
  o.precision = precision_of<T>();
  const Survey sv = test_survey(m, free_surface, true);
  std::vector<double> dv(m.vp.size());
  for (std::size_t i = 0; i < dv.size(); ++i) dv[i] = 20.0 * std::sin(0.37 * double(i)) + 5;  // every cell, edges too
  Shot<T> cpu(m, sv, o, storage, every, compression), emu(m, sv, o, storage, every, compression);
  auto cpu_d = prepare_shot<T>(m, sv, o), emu_d = prepare_shot<T>(m, sv, o);
  const std::vector<T> scatter = born_scatter(cpu.p(), m, dv);
  std::vector<T> row(std::size_t(cpu.p().stride));
  const int n = cpu.p().nsteps, cut = n / 3;
  cpu::born_steps<Order, T>(cpu.p(), cpu_d->p, scatter.data(), row.data(), 0, cut);
  cpu::born_steps<Order, T>(cpu.p(), cpu_d->p, scatter.data(), row.data(), cut, n);
  {
    EmulatedExec ex;
    const cpu::detail::FlushSubnormals<T> as_on_the_device;
    ASSERT_TRUE((cuda_bodies::run_born_steps<Order>(emu.p(), emu_d->p, scatter.data(), 0, cut, ex)));
    ASSERT_TRUE((cuda_bodies::run_born_steps<Order>(emu.p(), emu_d->p, scatter.data(), cut, n, ex)));
  }
  const std::string what = std::to_string(dim) + "-D order " + std::to_string(Order) +
                           (free_surface ? " free surface" : "") + " storage " + std::to_string(storage) +
                           " checkpoints every " + std::to_string(every) + " store " + compression_name(compression) +
                           (sizeof(T) == 4 ? " float" : " double");
  EXPECT_GT(norm(std::vector<double>(cpu_d->traces.begin(), cpu_d->traces.end())), 0.0) << what;
  EXPECT_TRUE(same_bits(cpu_d->traces, emu_d->traces))
      << what << ": Born traces, first difference at " << first_difference(cpu_d->traces, emu_d->traces);
  EXPECT_TRUE(same_bits(cpu.ps->traces, emu.ps->traces)) << what << ": background traces";
  EXPECT_TRUE(same_bits(cpu.store, emu.store)) << what << ": store";
  EXPECT_TRUE(same_bits(cpu.checkpoints, emu.checkpoints)) << what << ": checkpoints";
  EXPECT_TRUE(same_bits(cpu.final_state, emu.final_state)) << what << ": final state";
}

TEST(CudaEmulation, BornSameBitsAsCpuKernel) {
  for (const int dim : {2, 3})
    for (const bool fs : {false, true}) {
      compare_born<float, 8>(dim, fs, StorePlan::kStoreBoundary, 0, pack16::kNone);
      compare_born<double, 4>(dim, fs, StorePlan::kStoreFull, 0, pack16::kNone);
    }
  compare_born<float, 2>(2, true, StorePlan::kStoreBoundary, 7, pack16::kNone);
  compare_born<float, 6>(2, false, StorePlan::kStoreFull, 5, pack16::kHalf);
  compare_born<float, 4>(3, true, StorePlan::kStoreBoundary, 7, pack16::kBfloat);
}

TEST(CudaEmulation, OffGridPointsSameBitsAsCpuKernel) {
  // Under the sanitizers, 3-D's double order 4 without the free surface and float order 2 with it.
  for (int dim : {2, 3})
    for (bool fs : {false, true}) {
      const bool both = !kSanitized || dim == 2;
      compare_off_grid<float, 8>(dim, fs);
      if (both || !fs) compare_off_grid<double, 4>(dim, fs);
      if (both || fs) compare_off_grid<float, 2>(dim, fs);
    }
}

TEST(CudaEmulation, ShortRecordsGiveTheSameBitsWhereTheFieldsUnderflow) {
  // A quarter of the records above: far from the points the flushed fields and their sums
  // end at zero, some at −0 (a CUDA sum adds to the caller's image at each step, the CPU's
  // starts from it), in 2-D and 3-D, with checkpoints and a free surface.
  for (int dim : {2, 3})
    for (bool fs : {false, true}) compare_off_grid<float, 8>(dim, fs, 0.25);
}

/// A shot from a given state (every dense array non-zero: the layers' ψ and ζ too) that hands on
/// its last: the CPU kernel and the emulated launches give the same traces and end state, and the
/// end state's dense arrays hold ψ and ζ only in their dimension's layers.
template <typename T>
void expect_states_match(bool three_d, bool free_surface) {
  const Model m = three_d ? constant_model_3d(11, 9, 13, 10, 1900) : constant_model(23, 31, 10, 1900);
  auto at = [&](double z, double x) { return three_d ? Position{z, 40, x} : Position{z, x}; };
  const Survey s = point_survey(at(50, 60), {at(10, 20), at(80, 100)}, 15, 1e-3, 0.03, three_d);
  NumericalOptions o;
  o.pml_width = 5;
  o.free_surface = free_surface;
  o.precision = precision_of<T>();
  auto cpu = prepare_shot<T>(m, s, o);
  auto emu = prepare_shot<T>(m, s, o);
  const ShotProblem<T>& l = cpu->p;
  const std::size_t n = state::cells(l), k = std::size_t(state::components(l));
  std::vector<double> dense(k * n);
  for (std::size_t i = 0; i < dense.size(); ++i) dense[i] = 1e-3 * std::sin(0.37 * double(i) + double(i / n));
  std::vector<T> start(l.checkpoint_size()), end_cpu(l.checkpoint_size()), end_emu(l.checkpoint_size());
  state::from_dense(l, dense.data(), start.data());
  for (auto* ps : {cpu.get(), emu.get()}) ps->p.initial_state = start.data();
  cpu->p.end_state = end_cpu.data();
  emu->p.end_state = end_emu.data();
  cpu::forward<8, T>(cpu->p);
  EmulatedExec ex;
  const cpu::detail::FlushSubnormals<T> as_on_the_device;
  ASSERT_TRUE((cuda_bodies::run_shot<8>(emu->p, ex)));
  const std::string what = std::string(three_d ? "3-D" : "2-D") + (free_surface ? ", free surface" : "");
  EXPECT_TRUE(same_bits(cpu->traces.data(), emu->traces.data(), cpu->traces.size())) << what;
  EXPECT_TRUE(same_bits(end_cpu.data(), end_emu.data(), end_cpu.size())) << what;
  std::vector<double> out(k * n);
  state::to_dense(l, end_cpu.data(), out.data());
  const stencil::StepArgs<T> a = stencil::make_step_args(l, l.u0(), l.u1());  // only its layer tests are read
  int moved = 0, outside = 0;
  for (int z = 0; z < l.nz; ++z)
    for (int y = 0; y < l.ny; ++y)
      for (int x = 0; x < l.nx; ++x) {
        const std::size_t i =
            (std::size_t(z) * std::size_t(l.ny) + std::size_t(y)) * std::size_t(l.nx) + std::size_t(x);
        const bool in[3] = {a.z_layer(z), a.y_layer(y), a.x_layer(x)};
        for (int d = 0; d < l.dim; ++d) {
          const bool layer = in[l.dim == 3 ? d : 2 * d];
          for (std::size_t c : {std::size_t(2 + d), std::size_t(2 + l.dim + d)}) {
            outside += !layer && out[c * n + i] != 0;
            moved += layer && out[c * n + i] != 0;
          }
        }
      }
  EXPECT_EQ(outside, 0) << what << ": ψ, ζ outside their layers";
  EXPECT_GT(moved, 0) << what;
}

TEST(CudaEmulation, StartsFromAStateAndHandsOnItsLastWithTheCpusBits) {
  for (bool fs : {false, true}) {
    expect_states_match<float>(false, fs);
    expect_states_match<double>(false, fs);
  }
  expect_states_match<float>(true, false);
}

/// The adjoint through states (kernels/shot.hpp: initial_state, adjoint_start, adjoint_end,
/// source_gradient) after a forward from a state: the CPU kernel and the emulated launches give
/// the same correlation, illumination, sweep's end and source gradient, with each store.
template <typename T>
void expect_state_adjoint_match(bool three_d, int storage, int checkpoint_every) {
  const Model m = three_d ? constant_model_3d(11, 9, 13, 10, 1900) : constant_model(23, 31, 10, 1900);
  auto at = [&](double z, double x) { return three_d ? Position{z, 40, x} : Position{z, x}; };
  const Survey s = point_survey(at(50, 60), {at(10, 20), at(80, 100)}, 15, 1e-3, 0.04, three_d);
  NumericalOptions o;
  o.pml_width = 5;
  o.precision = precision_of<T>();
  std::vector<T> out[2][4];  // correlation, illumination, the sweep's end, the source gradient
  for (int emulated : {0, 1}) {
    auto ps = prepare_shot<T>(m, s, o);
    ShotProblem<T>& p = ps->p;
    p.storage = storage;
    p.checkpoint_every = checkpoint_every;
    ps->work.assign(p.adjoint_work_size(), T(0));
    p.work = ps->work.data();
    aligned_vector<T> store(p.store_size()), final_state(2 * p.grid_size()), checkpoints(p.checkpoints_size());
    p.store = store.data();
    p.final_state = final_state.data();
    p.checkpoints = checkpoints.data();
    const std::size_t n = state::cells(p) * std::size_t(state::components(p));
    std::vector<double> dense(n), cotangent(n);
    for (std::size_t i = 0; i < n; ++i) {
      dense[i] = 1e-3 * std::sin(0.37 * double(i));
      cotangent[i] = std::cos(0.11 * double(i));
    }
    std::vector<T> start(p.checkpoint_size()), astart(p.checkpoint_size());
    state::from_dense(p, dense.data(), start.data());
    state::adjoint_start_from(p, cotangent.data(), astart.data());
    p.initial_state = start.data();
    out[emulated][2].assign(p.checkpoint_size(), T(0));
    out[emulated][3].assign(std::size_t(p.nsteps), T(0));
    out[emulated][0].assign(std::size_t(p.model_cells()), T(0));
    out[emulated][1].assign(std::size_t(p.model_cells()), T(0));
    p.adjoint_start = astart.data();
    p.adjoint_end = out[emulated][2].data();
    p.source_gradient = out[emulated][3].data();
    if (emulated) {
      EmulatedExec ex, adjoint, without;
      const cpu::detail::FlushSubnormals<T> as_on_the_device;
      ASSERT_TRUE((cuda_bodies::run_shot<8>(p, ex)));  // its traces are the residual, as below
      ASSERT_TRUE((cuda_bodies::run_adjoint<8>(p, ps->traces.data(), out[1][0].data(), out[1][1].data(), adjoint)));
      // The source gradient takes a thread of the alpha launch, not a launch of its own.
      std::vector<T> corr(out[1][0].size()), illum(out[1][1].size()), end(out[1][2].size());
      ShotProblem<T> q = p;
      q.source_gradient = nullptr;
      q.adjoint_end = end.data();
      ASSERT_TRUE((cuda_bodies::run_adjoint<8>(q, ps->traces.data(), corr.data(), illum.data(), without)));
      EXPECT_EQ(adjoint.launches.size(), without.launches.size());
    } else {
      cpu::forward<8, T>(p);
      cpu::adjoint<8, T>(p, ps->traces.data(), out[0][0].data(), out[0][1].data(), nullptr);
    }
  }
  const std::string what = std::string(three_d ? "3-D" : "2-D") + ", storage " + std::to_string(storage) +
                           ", checkpoints every " + std::to_string(checkpoint_every);
  const char* names[4] = {"correlation", "illumination", "the sweep's end", "the source gradient"};
  for (int k = 0; k < 4; ++k) {
    EXPECT_GT(norm(std::vector<double>(out[0][k].begin(), out[0][k].end())), 0) << names[k] << ", " << what;
    EXPECT_TRUE(same_bits(out[0][k].data(), out[1][k].data(), out[0][k].size()))
        << names[k] << ", " << what << ", first difference at "
        << first_difference(out[0][k].data(), out[1][k].data(), out[0][k].size());
  }
}

TEST(CudaEmulation, AdjointThroughStatesGivesTheCpusBits) {
  for (int storage : {ShotProblem<double>::kStoreBoundary, ShotProblem<double>::kStoreFull})
    for (int every : {0, 9}) {
      expect_state_adjoint_match<double>(false, storage, every);
      expect_state_adjoint_match<float>(false, storage, every);
    }
  expect_state_adjoint_match<float>(true, ShotProblem<float>::kStoreBoundary, 0);
}

TEST(CudaEmulation, ColumnRunsAlongZGiveTheSameBits) {
  // The u and μ launches stream down runs of planes per interior column: in 3-D runs of 2,
  // 4 and 11 planes cut the interior (of 21 planes with layers of 6, 15 under a free
  // surface) unevenly, and a run of 40 is longer than the grid; every run length gives the
  // CPU kernel's bits.
  // The forward's interior runs take 4 planes at a time from registers and the rest one
  // by one: runs of 1, 3, 4, 9 planes in 2-D too (23 interior planes, 30 under a free surface).
  for (int planes : {1, 3, 9}) {
    compare<float, 8>(false, planes);
    compare<double, 6>(true, planes);
  }
  // In 3-D too (the default: marching off, STARWAVE_CUDA_MARCH_PLANES unset).
  for (int planes : {2, 4, 11, 40}) {
    compare_3d<float, 8>(7, 6, false, {planes, -1});
    compare_3d<float, 8>(7, 6, true, {planes, -1});
    compare_3d<double, 4>(5, 6, true, {planes, -1});
  }
}

TEST(CudaEmulation, MarchingTilesGiveTheSameBits) {
  // The 3-D u and μ launches march down z in tiles of 16 × 32 columns (when asked): grids
  // of several tiles in y and x with partial tiles at their ends (34 × 45 and 18 × 77
  // columns with the layers), chunks of 1, 4, 7, 16 planes and one longer than the grid (21
  // planes with layers of 6, 15 under a free surface); orders 2 … 8, float and double.
  for (int planes : {1, 4, 7, 16, 40}) {
    compare_3d<float, 8>(22, 6, false, {0, planes}, 33);
    compare_3d<float, 8>(6, 6, true, {0, planes}, 65);
  }
  compare_3d<double, 4>(20, 3, true, {0, 5}, 40);
  compare_3d<float, 2>(17, 1, false, {0, 3}, 35);
  compare_3d<double, 6>(16, 9, false, {0, 16}, 31);
  // Models deep and wide enough that the cells out of the rim's reach (μ's march) are a box of
  // their own (9 × 6 × 17 at order 8 with layers of 3 + 4): the μ launches' march as well.
  // The imaging marches the CPML interior of each (its frame in the 1-D image launch).
  for (bool fs : {false, true}) {
    compare_3d<float, 8>(22, 3, fs, {0, 4}, 33, 25);
    compare_3d<double, 8>(22, 3, fs, {0, 16}, 33, 25);
  }
  compare_3d<float, 4>(19, 2, true, {0, 7}, 37, 21);
}

/// Every cell of a grid, once: the interior runs' cells and then the layer cells of a
/// u launch (the box itself) and of a μ launch (the box widened to the rim).
void expect_each_cell_once(const stencil::LayerBox& box, int run, const std::string& context) {
  const cuda_bodies::InteriorRuns in = cuda_bodies::InteriorRuns::of(box, run);
  std::vector<int> seen(std::size_t(box.nz) * box.ny * box.nx, 0);
  for (long t = 0; t < in.threads; ++t) {
    int z, z1, y, x;
    in.at(t, z, z1, y, x);
    ASSERT_LE(z1 - z, in.run) << context;
    for (; z < z1; ++z) ++seen[(std::size_t(z) * box.ny + y) * box.nx + x];
  }
  for (long t = 0; t < box.layer_cells(); ++t) {
    int z, y, x;
    box.layer_cell(t, z, y, x);
    ++seen[(std::size_t(z) * box.ny + y) * box.nx + x];
  }
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << context << ", cell " << i;
}

TEST(CudaEmulation, InteriorRunsAndLayerCellsCoverEachCellOnce) {
  // The 2-D reference case (600 × 250 + PML 20): 150 runs of 4 planes on 250 columns.
  stencil::LayerBox ref{640, 1, 290, 20, 620, 0, 1, 20, 270};
  ref.set_divisors();
  EXPECT_EQ(cuda_bodies::InteriorRuns::of(ref, 4).threads, 150 * 250);
  EXPECT_EQ(ref.layer_cells(), 640 * 290 - 600 * 250);
  const stencil::LayerBox rim = ref.widened(4);
  EXPECT_EQ(cuda_bodies::InteriorRuns::of(rim, 4).threads, 148 * 242);
  // A run longer than the box (STARWAVE_CUDA_COLUMN_PLANES is any positive int) is its depth.
  EXPECT_EQ(cuda_bodies::InteriorRuns::of(ref, 2147483647).run, 600);
  EXPECT_EQ(cuda_bodies::InteriorRuns::of(ref, 2147483647).threads, 250);
  // Layers on some sides only (a free surface has none on top), thin models whose rims
  // meet, 2-D and 3-D, runs of 1 to longer than the grid.
  for (int nz : {3, 9, 17})
    for (int ny : {1, 6})
      for (int pml : {0, 2, 5})
        for (bool top : {false, true})
          for (int run : {1, 3, 4, 40}) {
            const int yt = ny > 1 ? pml : 0, yb = ny > 1 ? ny - pml : ny;
            const int zt = top ? std::min(pml, nz) : 0;
            stencil::LayerBox box{nz,  ny,      11, zt, std::max(nz - pml, zt), yt < yb ? yt : 0, yt < yb ? yb : ny,
                                  pml, 11 - pml};
            box.set_divisors();
            const std::string context = "grid " + std::to_string(nz) + " × " + std::to_string(ny) + " × 11, PML " +
                                        std::to_string(pml) + (top ? "" : ", none on top") + ", runs of " +
                                        std::to_string(run);
            expect_each_cell_once(box, run, context);
            expect_each_cell_once(box.widened(4), run, context + ", widened by 4");
          }
}

/// The launches of one shot's forward and adjoint for `steps` internal steps, by name.
std::pair<std::vector<std::string>, std::vector<std::string>> launches(int steps, bool free_surface, int dim = 2,
                                                                       int march = 0) {
  const bool three = dim == 3;
  Model m = three ? constant_model_3d(20, 18, 22, 10, 2000) : constant_model(30, 40, 10, 2000);
  auto at = [&](double z, double x) { return three ? Position{z, 60, x} : Position{z, x}; };
  Survey s = point_survey(at(60, 70), {at(10, 50), at(10, 100), at(10, 100)}, 15, 1e-3, 1e-3 * steps, three);
  NumericalOptions o;
  o.pml_width = three ? 4 : 10;
  o.free_surface = free_surface;
  auto ps = prepare_shot<float>(m, s, o);
  ShotProblem<float>& p = ps->p;
  p.march_planes = march;
  EXPECT_EQ(p.nsteps, steps);
  ps->work.assign(p.adjoint_work_size(), 0.0f);
  p.work = ps->work.data();
  aligned_vector<float> store(p.store_size()), final_state(2 * p.grid_size());
  p.store = store.data();
  p.final_state = final_state.data();
  std::vector<float> corr(std::size_t(p.model_cells())), illum(corr.size());
  EmulatedExec fwd, adj;
  EXPECT_TRUE((cuda_bodies::run_shot<8>(p, fwd)));
  EXPECT_TRUE((cuda_bodies::run_adjoint<8>(p, ps->traces.data(), corr.data(), illum.data(), adj)));
  return {fwd.launches, adj.launches};
}

TEST(CudaEmulation, FusedPassesLaunchesPerTimeStep) {
  const auto count = [](const std::vector<std::string>& names, const std::string& name) {
    return std::count(names.begin(), names.end(), name);
  };
  for (int march : {0, 16})
    for (int dim : {2, 3})
      for (bool fs : {false, true}) {
        const std::string context =
            std::to_string(dim) + "-D, free surface " + std::to_string(fs) + ", marching " + std::to_string(march);
        const auto [f40, a40] = launches(40, fs, dim, march);
        const auto [f90, a90] = launches(90, fs, dim, march);
        const long f1 = long(f40.size()), a1 = long(a40.size()), f2 = long(f90.size()), a2 = long(a90.size());
        // Asked to, the 3-D u and μ launches march (the interior; the layer or rim cells in a
        // launch of their own); the 2-D ones stay the interior runs' 1-D launches.
        const bool marching = dim == 3 && march > 0;
        // (These grids' rims leave a μ box to march; the imaging marches the CPML interior.)
        const long f = marching ? 3 : 2, a = marching ? 5 : 3;
        EXPECT_EQ(f2 - f1, f * 50) << "forward: " << f << " launches per step, " << context;
        EXPECT_EQ(a2 - a1, a * 50) << "adjoint: " << a << " launches per step, " << context;
        EXPECT_LE(f1, f * 40 + 4) << "forward: a few launches outside the steps, " << context;
        EXPECT_LE(a1, a * 40 + 6) << "adjoint: a few launches outside the steps, " << context;
        EXPECT_EQ(count(f90, "forward update (marching)"), marching ? 90 : 0) << context;
        EXPECT_EQ(count(f90, "forward update (layer cells)"), marching ? 90 : 0) << context;
        EXPECT_EQ(count(f90, "forward update"), marching ? 0 : 90) << context;
        EXPECT_EQ(count(a90, "adjoint mu (marching)"), marching ? 90 : 0) << context;
        EXPECT_EQ(count(a90, "adjoint mu (rim cells)"), marching ? 90 : 0) << context;
        EXPECT_EQ(count(a90, "adjoint mu"), marching ? 0 : 90) << context;
        EXPECT_EQ(count(a90, "adjoint image (marching)"), marching ? 90 : 0) << context;
      }
}

/// Every cell inside `box`'s layers, once, and no other cell of its grid, over the blocks and
/// threads of a March of chunks of `planes` planes.
void expect_marching_covers_the_box_once(const stencil::LayerBox& box, int planes) {
  const std::string context = "grid " + std::to_string(box.nz) + " × " + std::to_string(box.ny) + " × " +
                              std::to_string(box.nx) + ", box from (" + std::to_string(box.zt) + ", " +
                              std::to_string(box.yt) + ", " + std::to_string(box.xl) + "), chunks of " +
                              std::to_string(planes);
  const auto none = [] SW_LAMBDA(int, int, int, int) {};
  using M = cuda_bodies::March<8, float, decltype(none)>;
  const M march{cuda_bodies::MarchGrid::inside(box, planes), nullptr, nullptr, nullptr, 0, 0, 0, 0, 0, {}, none};
  std::vector<int> seen(std::size_t(box.nz) * box.ny * box.nx, 0);
  for (long b = 0; b < march.g.blocks; ++b) {
    int z, zend, y0, x0;
    march.g.block(b, z, zend, y0, x0);
    ASSERT_LT(z, zend) << context << ", block " << b;
    for (int t = 0; t < M::kThreads; ++t) {
      const int y = y0 + t / cuda_bodies::kMarchX, x = x0 + t % cuda_bodies::kMarchX;
      if (!march.g.holds(y, x)) continue;
      ASSERT_TRUE(y < box.ny && x < box.nx) << context;
      for (int k = z; k < zend; ++k) ++seen[(std::size_t(k) * box.ny + y) * box.nx + x];
    }
  }
  for (int z = 0; z < box.nz; ++z)
    for (int y = 0; y < box.ny; ++y)
      for (int x = 0; x < box.nx; ++x) {
        const bool inside = z >= box.zt && z < box.zb && y >= box.yt && y < box.yb && x >= box.xl && x < box.xr;
        ASSERT_EQ(seen[(std::size_t(z) * box.ny + y) * box.nx + x], inside ? 1 : 0)
            << context << ", cell (" << z << ", " << y << ", " << x << ")";
      }
}

TEST(CudaEmulation, MarchingBlocksCoverEachCellOnce) {
  // The 3-D reference case (160³ + layers of 20): its interior in 5 × 10 tiles, 10 chunks of 16 planes.
  stencil::LayerBox ref{200, 200, 200, 20, 180, 20, 180, 20, 180};
  EXPECT_EQ(cuda_bodies::MarchGrid::inside(ref, 16).blocks, 5L * 10 * 10);
  EXPECT_EQ(cuda_bodies::MarchGrid::of(200, 200, 200, 16).blocks, 7L * 13 * 13);
  for (int nz : {1, 5, 33})
    for (int ny : {1, 16, 17, 40})
      for (int nx : {1, 32, 45})
        for (int planes : {1, 4, 16, 100})
          for (int pml : {0, 2}) {  // the whole grid; a box inside layers of 2 (none where the grid is too thin)
            const int pz = nz > 2 * pml ? pml : 0, py = ny > 2 * pml ? pml : 0, px = nx > 2 * pml ? pml : 0;
            expect_marching_covers_the_box_once({nz, ny, nx, pz, nz - pz, py, ny - py, px, nx - px}, planes);
          }
}

TEST(CudaEmulation, RefusedLaunchStopsTheShotAndIsNamed) {
  Model m = constant_model(20, 30, 10, 2000);
  Survey s = point_survey({100, 150}, {{10, 50}}, 15, 1e-3, 0.05);
  NumericalOptions o;
  o.pml_width = 5;
  auto ps = prepare_shot<float>(m, s, o);
  EmulatedExec ex;
  ex.fail_at = 8;  // the clock, then (side, update) per step: step 3's update, inside a replayed chunk
  EXPECT_FALSE((cuda_bodies::run_shot<8>(ps->p, ex)));
  ASSERT_NE(ex.failed, nullptr);
  EXPECT_EQ(std::string(ex.failed), "forward update");
  EXPECT_EQ(ex.launches.size(), 9u) << "nothing is launched after the refused one";
}

/// The CPU misfit (one pass over the samples, lanes by i mod kMisfitLanes) equals the
/// CUDA order: each lane summing its strided elements (imaging::misfit_lane, the body of a
/// GPU thread), then the halving trees — the same bits, and within round-off of a plain
/// sum.
TEST(CudaEmulation, MisfitOrderOfSummationIsTheDevicesOnTheCpu) {
  for (long n : {1L, 1000L, imaging::kMisfitLanes + 17, 5 * imaging::kMisfitLanes + 12345}) {
    const std::size_t count = std::size_t(n);
    std::vector<float> syn(count), obs(count), res_cpu(count), res_dev(count);
    for (long i = 0; i < n; ++i) {
      syn[std::size_t(i)] = float(std::sin(0.001 * double(i)) * (1 + i % 7));
      obs[std::size_t(i)] = float(std::cos(0.0013 * double(i)));
    }
    const double cpu = imaging::misfit_fixed_order(syn.data(), obs.data(), res_cpu.data(), n, imaging::Mode::kGradient);
    // The GPU's order: each lane's strided elements (a thread), then the blocks' and the
    // block sums' halving trees; writes `res`.
    auto device_order = [&](std::vector<float>& res, imaging::TraceWeights tw = {}) {
      std::vector<double> lanes(std::size_t(imaging::kMisfitLanes)), blocks(std::size_t(imaging::kMisfitBlocks));
      for (long l = 0; l < imaging::kMisfitLanes; ++l)
        lanes[std::size_t(l)] =
            imaging::misfit_lane(syn.data(), obs.data(), res.data(), n, imaging::Mode::kGradient, l, tw);
      for (int b = 0; b < imaging::kMisfitBlocks; ++b)
        blocks[std::size_t(b)] =
            imaging::halving_sum(lanes.data() + long(b) * imaging::kMisfitThreads, imaging::kMisfitThreads);
      return 0.5 * imaging::halving_sum(blocks.data(), imaging::kMisfitBlocks);
    };
    const double dev = device_order(res_dev);
    EXPECT_EQ(std::memcmp(&cpu, &dev, sizeof cpu), 0) << "n = " << n << ": " << cpu << " vs " << dev;
    EXPECT_TRUE(same_bits(res_cpu.data(), res_dev.data(), res_cpu.size())) << "n = " << n;
    double plain = 0;
    for (float r : res_cpu) plain += double(r) * double(r);
    EXPECT_NEAR(cpu, 0.5 * plain, 1e-12 * plain) << "n = " << n;
    // With trace weights (traces of 37 samples; dead ones, and weights other than 1): the
    // same bits on both sides; the residual is w × the unweighted one, Φ = ½ Σ w r².
    std::vector<float> weight(std::size_t((n + 36) / 37));
    for (std::size_t t = 0; t < weight.size(); ++t) weight[t] = t % 5 == 3 ? 0.0f : float(1 + t % 3) * 0.5f;
    const imaging::TraceWeights w{weight.data(), 37};
    std::vector<float> wres_cpu(count), wres_dev(count);
    const double wcpu =
        imaging::misfit_fixed_order(syn.data(), obs.data(), wres_cpu.data(), n, imaging::Mode::kGradient, w);
    const double wdev = device_order(wres_dev, w);
    EXPECT_EQ(std::memcmp(&wcpu, &wdev, sizeof wcpu), 0) << "weighted, n = " << n;
    EXPECT_TRUE(same_bits(wres_cpu.data(), wres_dev.data(), count)) << "weighted, n = " << n;
    double wplain = 0;
    for (long i = 0; i < n; ++i) {
      const float wi = weight[std::size_t(i / 37)];
      EXPECT_EQ(wres_cpu[std::size_t(i)], wi * res_cpu[std::size_t(i)]) << i;
      wplain += double(wi) * double(res_cpu[std::size_t(i)]) * double(res_cpu[std::size_t(i)]);
    }
    EXPECT_NEAR(wcpu, 0.5 * wplain, 1e-12 * wplain + 1e-300) << "weighted, n = " << n;
    // With time windows too (W: imaging::window_taper): the same bits on both sides, the
    // residual w W² r and Φ = ½ Σ w W² r².
    const long traces = long(weight.size());
    std::vector<float> windowed = weight;
    for (long r = 0; r < traces; ++r) windowed.insert(windowed.end(), {float(r % 30) - 2.5f, float(r % 30) + 6, 4.5f});
    const imaging::TraceWeights ww{windowed.data(), 37, windowed.data() + traces};
    std::vector<float> tres_cpu(count), tres_dev(count);
    const double tcpu =
        imaging::misfit_fixed_order(syn.data(), obs.data(), tres_cpu.data(), n, imaging::Mode::kGradient, ww);
    const double tdev = device_order(tres_dev, ww);
    EXPECT_EQ(std::memcmp(&tcpu, &tdev, sizeof tcpu), 0) << "windowed, n = " << n;
    EXPECT_TRUE(same_bits(tres_cpu.data(), tres_dev.data(), count)) << "windowed, n = " << n;
    double tplain = 0;
    long cut = 0;
    for (long i = 0; i < n; ++i) {
      const double taper = ww.taper(i / 37, i % 37), g = double(weight[std::size_t(i / 37)]) * taper * taper;
      const double r = double(res_cpu[std::size_t(i)]);
      EXPECT_NEAR(tres_cpu[std::size_t(i)], g * r, 1e-6 * std::abs(g * r) + 1e-30) << i;
      tplain += g * r * r;
      cut += taper == 0 ? 1 : 0;
    }
    EXPECT_NEAR(tcpu, 0.5 * tplain, 1e-12 * tplain + 1e-300) << "windowed, n = " << n;
    if (n > 1000) {
      EXPECT_GT(cut, n / 4) << "the windows leave samples out";
    }
  }
}

}  // namespace
}  // namespace starwave::test
