// tests/test_cuda_emulation.cpp — the CUDA kernels' bodies and launch sequence, run on the
// host by the launch-emulation shim, against the CPU kernel (DESIGN §7).
#include <gtest/gtest.h>

#include <string>

#include "kernels/cpu/adjoint.hpp"
#include "tests/cuda_emulation.hpp"
#include "tests/helpers.hpp"

namespace starwave::test {
namespace {

/// Runs shot 0 with the CPU kernel and with the emulated CUDA launches; the traces agree
/// to ≤ 1e−5 (float) or ≤ 1e−12 (double) relative L2.
template <typename T, int Order>
void expect_emulation_matches_cpu(const Model& m, const Survey& s, const NumericalOptions& o,
                                  const std::string& context) {
  const std::vector<double> cpu = run_shot<T>(m, s, o);
  auto ps = prepare_shot<T>(m, s, o);
  EmulatedExec ex;
  ASSERT_TRUE((cuda_bodies::run_shot<Order>(ps->p, ex)));
  const std::vector<double> emu(ps->traces.begin(), ps->traces.end());
  ASSERT_GT(norm(cpu), 0);
  const double tol = sizeof(T) == 8 ? 1e-12 : 1e-5;
  EXPECT_LE(diff_norm(cpu, emu) / norm(cpu), tol) << "order " << Order << ", " << context;
}

/// The adjoint of shot 0 (residual = its traces) through cpu::adjoint and through the
/// emulated CUDA launches, each after its own forward with a `storage` store: the
/// correlation and illumination agree like the traces.
template <typename T, int Order>
void expect_adjoint_emulation_matches_cpu(const Model& m, const Survey& s, const NumericalOptions& o, int storage,
                                          const std::string& context) {
  std::vector<T> corr[2], illum[2];
  for (int emulated : {0, 1}) {
    auto ps = prepare_shot<T>(m, s, o);
    ShotProblem<T>& p = ps->p;
    p.storage = storage;
    ps->work.assign(p.adjoint_work_size(), T(0));
    p.work = ps->work.data();
    aligned_vector<T> store(p.store_size()), final_state(2 * p.grid_size());
    p.store = store.data();
    p.final_state = final_state.data();
    const std::size_t region = std::size_t(p.mz1() - p.mz0()) * std::size_t(p.mx1() - p.mx0());
    corr[emulated].assign(region, T(0));
    illum[emulated].assign(region, T(0));
    EmulatedExec ex;
    if (emulated) {
      ASSERT_TRUE((cuda_bodies::run_shot<Order>(p, ex)));
      ASSERT_TRUE((cuda_bodies::run_adjoint<Order>(p, ps->traces.data(), corr[1].data(), illum[1].data(), ex)));
    } else {
      cpu::forward<Order, T>(p);
      cpu::adjoint<Order, T>(p, ps->traces.data(), corr[0].data(), illum[0].data(), nullptr);
    }
  }
  const double tol = sizeof(T) == 8 ? 1e-11 : 1e-4;
  for (auto* field : {corr, illum}) {
    const std::vector<double> a(field[0].begin(), field[0].end()), b(field[1].begin(), field[1].end());
    ASSERT_GT(norm(a), 0) << context;
    EXPECT_LE(diff_norm(a, b) / norm(a), tol) << (field == corr ? "correlation" : "illumination") << ", order " << Order
                                              << ", storage " << storage << ", " << context;
  }
}

template <typename T, int Order>
void compare(bool free_surface) {
  // Odd sizes so no dimension is a multiple of the block shape; a heterogeneous model.
  Model m = constant_model(37, 53, 10, 1800);
  for (int z = 0; z < m.nz; ++z)
    for (int x = 0; x < m.nx; ++x) m.at(z, x) = 1800 + 25 * z + 3 * x;
  Survey s = point_survey({60, 170}, {{10, 0}, {10, 260}, {360, 520}, {200, 100}}, 15, 1e-3, 0.4);
  NumericalOptions o;
  o.order = Order;
  o.pml_width = 7;
  o.free_surface = free_surface;
  o.double_precision = sizeof(T) == 8;
  expect_emulation_matches_cpu<T, Order>(m, s, o, "free surface " + std::to_string(free_surface));
  for (int storage : {ShotProblem<T>::kStoreBoundary, ShotProblem<T>::kStoreFull})
    expect_adjoint_emulation_matches_cpu<T, Order>(m, s, o, storage, "free surface " + std::to_string(free_surface));
}

TEST(CudaEmulation, MatchesCpuKernelFloat) {
  compare<float, 2>(false);
  compare<float, 4>(false);
  compare<float, 6>(true);
  compare<float, 8>(false);
  compare<float, 8>(true);
}

TEST(CudaEmulation, MatchesCpuKernelDouble) {
  compare<double, 2>(true);
  compare<double, 4>(false);
  compare<double, 6>(false);
  compare<double, 8>(false);
  compare<double, 8>(true);
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
  Survey s = point_survey({zs, xs}, {{0, 0}, {0, 10.0 * (nx - 1)}, {10.0 * (nz - 1), xs}}, 20, 1e-3, 0.25);
  NumericalOptions o;
  o.order = Order;
  o.pml_width = pml;
  o.free_surface = free_surface;
  o.double_precision = sizeof(T) == 8;
  const std::string context = "model " + std::to_string(nz) + " × " + std::to_string(nx) + ", PML " +
                              std::to_string(pml) + ", free surface " + std::to_string(free_surface);
  expect_emulation_matches_cpu<T, Order>(m, s, o, context);
  expect_adjoint_emulation_matches_cpu<T, Order>(m, s, o, ShotProblem<T>::kStoreBoundary, context);
}

TEST(CudaEmulation, LayerGeometries) {
  for (int pml : {0, 1, 7, 8, 16, 17, 20})
    for (int nx : {3, 9, 40}) {
      compare_geometry<float, 8>(11, nx, pml, false);
      compare_geometry<float, 8>(3, nx, pml, pml % 2 == 0);  // thinner than two radii
      compare_geometry<double, 4>(6, nx, pml, pml % 2 == 1);
    }
}

}  // namespace
}  // namespace starwave::test
