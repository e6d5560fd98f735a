// kernels/hd.hpp — qualifiers that let one function compile for the host and the GPU.
#pragma once

#if defined(__CUDACC__)
#define SW_HD __host__ __device__ __forceinline__
#define SW_LAMBDA __host__ __device__  // extended lambdas (nvcc --extended-lambda)
#define SW_UNROLL _Pragma("unroll")
#else
// Always inlined on the host too: the CPU kernels are compiled once per instruction-set
// level (kernels/cpu/levels.hpp), and an out-of-line copy made in the AVX-512 one could be
// the copy the linker keeps for every caller.
#define SW_HD inline __attribute__((always_inline))
#define SW_LAMBDA
#define SW_UNROLL _Pragma("GCC unroll 8")
#endif
