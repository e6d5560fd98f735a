// tests/test_cuda_device.cpp — the CUDA propagator on a real GPU against the CPU kernel.
// Skips, saying why, where CUDA is not compiled in or no GPU is present.
#include <gtest/gtest.h>

#include "tests/helpers.hpp"

#ifdef STARWAVE_USE_CUDA
#include <cuda_runtime.h>

#include "kernels/cuda/propagate.hpp"
#endif

namespace starwave::test {
namespace {

#ifdef STARWAVE_USE_CUDA
template <typename T, typename A>
T* to_device(const std::vector<T, A>& v) {
  T* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, v.size() * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return d;
}

template <typename T, int Order>
void compare(bool free_surface) {
  Model m = constant_model(61, 83, 10, 1800);
  for (int z = 0; z < m.nz; ++z)
    for (int x = 0; x < m.nx; ++x) m.at(z, x) = 1800 + 20 * z + 2 * x;
  Survey s = point_survey({100, 300}, {{10, 0}, {10, 820}, {600, 400}}, 15, 1e-3, 0.5);
  NumericalOptions o;
  o.order = Order;
  o.free_surface = free_surface;
  o.double_precision = sizeof(T) == 8;
  const std::vector<double> cpu = run_shot<T>(m, s, o);

  auto ps = prepare_shot<T>(m, s, o);
  ShotProblem<T> p = ps->p;  // host pointers replaced by device copies below
  T* d_medium = to_device(ps->med.buffer);
  ps->med.attach(p, d_medium);
  T* d_source = to_device(ps->in.source);
  long* d_nodes = to_device(ps->in.nodes);
  T *d_work = nullptr, *d_traces = nullptr;
  ASSERT_EQ(cudaMalloc(&d_work, p.work_size() * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_traces, std::size_t(s.nrec()) * s.nt * sizeof(T)), cudaSuccess);
  p.work = d_work;
  p.traces = d_traces;
  p.source = d_source;
  p.receiver_index = d_nodes + 1;
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ((cuda::forward<Order, T>(p, stream)), 0);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<T> traces(std::size_t(s.nrec()) * s.nt);
  ASSERT_EQ(cudaMemcpy(traces.data(), d_traces, traces.size() * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaStreamDestroy(stream);
  for (void* ptr : {(void*)d_medium, (void*)d_source, (void*)d_nodes, (void*)d_work, (void*)d_traces}) cudaFree(ptr);
  const std::vector<double> gpu(traces.begin(), traces.end());
  const double rel = diff_norm(cpu, gpu) / norm(cpu);
  std::printf("GPU vs CPU, order %d, %s, free surface %d: relative L2 difference %.2e\n", Order,
              sizeof(T) == 8 ? "double" : "float", int(free_surface), rel);
  EXPECT_LE(rel, sizeof(T) == 8 ? 1e-11 : 1e-4);
}
#endif

TEST(CudaDevice, ForwardMatchesCpu) {
#ifndef STARWAVE_USE_CUDA
  GTEST_SKIP() << "CUDA codelets are not compiled in this build (STARWAVE_USE_CUDA=OFF)";
#else
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0)
    GTEST_SKIP() << "no CUDA device on this machine (" << (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices")
                 << "); run on a GPU machine to compare the CUDA codelets with the CPU";
  compare<float, 2>(false);
  compare<float, 8>(false);
  compare<float, 8>(true);
  compare<double, 4>(false);
  compare<double, 8>(true);
#endif
}

}  // namespace
}  // namespace starwave::test
