// kernels/hd.hpp — qualifiers that let one function compile for the host and the GPU.
#pragma once

#if defined(__CUDACC__)
#define SW_HD __host__ __device__ __forceinline__
#define SW_LAMBDA __host__ __device__  // extended lambdas (nvcc --extended-lambda)
#define SW_UNROLL _Pragma("unroll")
#else
#define SW_HD inline
#define SW_LAMBDA
#define SW_UNROLL _Pragma("GCC unroll 8")
#endif
