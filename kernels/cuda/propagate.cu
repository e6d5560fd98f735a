// kernels/cuda/propagate.cu — CUDA kernels for the leapfrog/CPML scheme of
// kernels/stencil.hpp: one thread per grid point, launched on the caller's stream
// (StarPU's worker stream), never synchronising. The launch sequence and the thread bodies
// live in kernels/cuda/bodies.hpp so the tests can run them on the host.
#include <cuda_runtime.h>

#include "kernels/cuda/bodies.hpp"
#include "kernels/cuda/propagate.hpp"

namespace starwave::cuda {
namespace {

using namespace starwave::cuda_bodies;

template <typename F>
__global__ void sweep2d_kernel(F f) {
  f(int(blockIdx.y * blockDim.y + threadIdx.y), int(blockIdx.x * blockDim.x + threadIdx.x));
}

template <typename F>
__global__ void sweep1d_kernel(F f, int n) {
  const int t = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (t < n) f(t);
}

/// Executor of run_shot() on a real GPU stream.
struct DeviceExec {
  cudaStream_t stream;
  cudaError_t err = cudaSuccess;

  template <typename T>
  bool zero(T* p, std::size_t n) {
    err = cudaMemsetAsync(p, 0, n * sizeof(T), stream);
    return err == cudaSuccess;
  }
  template <typename F>
  void sweep2d(F f, int nz, int nx) {
    const dim3 block(kBlockX, kBlockZ);
    const dim3 grid((nx + kBlockX - 1) / kBlockX, (nz + kBlockZ - 1) / kBlockZ);
    sweep2d_kernel<<<grid, block, 0, stream>>>(f);
  }
  template <typename F>
  void sweep1d(F f, int n) {
    if (n <= 0) return;
    sweep1d_kernel<<<(n + kBlock1D - 1) / kBlock1D, kBlock1D, 0, stream>>>(f, n);
  }
  bool ok() {
    if (err == cudaSuccess) err = cudaGetLastError();
    return err == cudaSuccess;
  }
};

}  // namespace

template <int Order, typename T>
int forward(const ShotProblem<T>& p, void* stream) {
  DeviceExec ex{static_cast<cudaStream_t>(stream)};
  run_shot<Order>(p, ex);
  return int(ex.err);
}

template <int Order, typename T>
int adjoint(const ShotProblem<T>& p, const T* residual, T* correlation, T* illumination, void* stream) {
  DeviceExec ex{static_cast<cudaStream_t>(stream)};
  run_adjoint<Order>(p, residual, correlation, illumination, ex);
  return int(ex.err);
}

const char* error_string(int code) { return cudaGetErrorString(static_cast<cudaError_t>(code)); }

template int forward<2, float>(const ShotProblem<float>&, void*);
template int forward<4, float>(const ShotProblem<float>&, void*);
template int forward<6, float>(const ShotProblem<float>&, void*);
template int forward<8, float>(const ShotProblem<float>&, void*);
template int forward<2, double>(const ShotProblem<double>&, void*);
template int forward<4, double>(const ShotProblem<double>&, void*);
template int forward<6, double>(const ShotProblem<double>&, void*);
template int forward<8, double>(const ShotProblem<double>&, void*);
#define STARWAVE_ADJOINT(O, T) template int adjoint<O, T>(const ShotProblem<T>&, const T*, T*, T*, void*);
STARWAVE_ADJOINT(2, float)
STARWAVE_ADJOINT(4, float)
STARWAVE_ADJOINT(6, float)
STARWAVE_ADJOINT(8, float)
STARWAVE_ADJOINT(2, double)
STARWAVE_ADJOINT(4, double)
STARWAVE_ADJOINT(6, double)
STARWAVE_ADJOINT(8, double)
#undef STARWAVE_ADJOINT

}  // namespace starwave::cuda
