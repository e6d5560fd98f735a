// kernels/cuda/imaging.cu — CUDA kernels of the misfit, image and reduce tasks.
#include <cuda_runtime.h>

#include "kernels/cuda/imaging.hpp"
#include "kernels/imaging.hpp"

namespace starwave::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void misfit_kernel(const T* syn, const float* obs, T* res, double* misfit, long n, int mode) {
  __shared__ double partial[kThreads];
  double sum = 0;
  for (long i = threadIdx.x; i < n; i += kThreads) {
    const T r = imaging::adjoint_source(syn[i], obs[i], mode);
    res[i] = r;
    sum += double(r) * double(r);
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *misfit = 0.5 * partial[0];
}

template <typename T>
__global__ void contribution_kernel(const T* corr, const T* illum, const T* v, T* out, long n, int mode) {
  const long k = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) imaging::contribution_point(corr, illum, v, out, n, mode, k);
}

template <typename T>
__global__ void accumulate_kernel(T* a, const T* b, long n) {
  const long k = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) a[k] += b[k];
}

unsigned blocks(long n) { return unsigned((n + kThreads - 1) / kThreads); }

}  // namespace

template <typename T>
int misfit(const T* synthetic, const float* observed, T* residual, double* misfit, long n, int mode, void* stream) {
  misfit_kernel<<<1, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(synthetic, observed, residual, misfit, n, mode);
  return int(cudaGetLastError());
}

template <typename T>
int contribution(const T* correlation, const T* illumination, const T* velocity, T* out, long n, int mode,
                 void* stream) {
  if (n > 0)
    contribution_kernel<<<blocks(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(correlation, illumination,
                                                                                       velocity, out, n, mode);
  return int(cudaGetLastError());
}

template <typename T>
int accumulate(T* a, const T* b, long n, void* stream) {
  if (n > 0) accumulate_kernel<<<blocks(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(a, b, n);
  return int(cudaGetLastError());
}

#define STARWAVE_INSTANTIATE(T)                                                     \
  template int misfit<T>(const T*, const float*, T*, double*, long, int, void*);    \
  template int contribution<T>(const T*, const T*, const T*, T*, long, int, void*); \
  template int accumulate<T>(T*, const T*, long, void*);
STARWAVE_INSTANTIATE(float)
STARWAVE_INSTANTIATE(double)
#undef STARWAVE_INSTANTIATE

}  // namespace starwave::cuda
