// tests/test_cuda_emulation.cpp — the CUDA kernels' bodies and launch sequence, run on the
// host by the launch-emulation shim, against the CPU kernel (DESIGN §7).
#include <gtest/gtest.h>

#include "tests/cuda_emulation.hpp"
#include "tests/helpers.hpp"

namespace starwave::test {
namespace {

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
  const std::vector<double> cpu = run_shot<T>(m, s, o);

  auto ps = prepare_shot<T>(m, s, o);
  EmulatedExec ex;
  ASSERT_TRUE((cuda_bodies::run_shot<Order>(ps->p, ex)));

  const std::vector<double> emu(ps->traces.begin(), ps->traces.end());
  const double scale = max_abs(cpu);
  ASSERT_GT(scale, 0);
  const double tol = sizeof(T) == 8 ? 1e-12 : 1e-5;
  EXPECT_LE(diff_norm(cpu, emu) / norm(cpu), tol) << "order " << Order << " free surface " << free_surface;
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

}  // namespace
}  // namespace starwave::test
