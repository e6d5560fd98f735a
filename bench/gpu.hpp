// bench/gpu.hpp — what the benchmarks need to know of the GPU: whether one is there, its
// name, and its copy bandwidth measured in the same run (the roofline of docs/design.md §8).
#pragma once

#include <algorithm>
#include <string>

#include "bench/reference_case.hpp"

#ifdef STARWAVE_USE_CUDA
#include <cuda_runtime.h>
#endif

namespace starwave::bench {

/// The first GPU's name, or "" when there is none (or CUDA is not compiled in).
inline std::string gpu_name() {
#ifdef STARWAVE_USE_CUDA
  int n = 0;
  cudaDeviceProp prop;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0 && cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
    return prop.name;
#endif
  return "";
}

/// Device-to-device copy of 1 GiB, best of 5, in GB/s counting the bytes read and
/// written (2 × 1 GiB per copy): the memory roofline a memory-bound stencil works against.
inline double gpu_copy_bandwidth() {
  double best = 0;
#ifdef STARWAVE_USE_CUDA
  const std::size_t bytes = std::size_t(1) << 30;
  void *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) return 0;
  cudaMemset(a, 0, bytes);
  cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);  // warm-up
  cudaDeviceSynchronize();
  for (int rep = 0; rep < 5; ++rep) {
    const double t0 = now();
    cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
    cudaDeviceSynchronize();
    best = std::max(best, 2.0 * double(bytes) / (now() - t0) / 1e9);
  }
  cudaFree(a);
  cudaFree(b);
#endif
  return best;
}

}  // namespace starwave::bench
