// tests/cuda_emulation.hpp — runs the CUDA launch sequence and thread bodies of
// kernels/cuda/bodies.hpp on the host: loops over blocks and threads stand in for
// blockIdx/threadIdx, with the same block shapes and the same out-of-range threads as the
// GPU launches, so the index logic, bounds and PML branches are checked without a GPU.
#pragma once

#include <cstring>

#include "kernels/cuda/bodies.hpp"

namespace starwave::test {

struct EmulatedExec {
  template <typename T>
  bool zero(T* p, std::size_t n) {
    std::memset(p, 0, n * sizeof(T));
    return true;
  }
  template <typename F>
  void sweep2d(F f, int nz, int nx) {
    using namespace cuda_bodies;
    const int gx = (nx + kBlockX - 1) / kBlockX, gz = (nz + kBlockZ - 1) / kBlockZ;
    for (int bz = 0; bz < gz; ++bz)
      for (int bx = 0; bx < gx; ++bx)
        for (int tz = 0; tz < kBlockZ; ++tz)
          for (int tx = 0; tx < kBlockX; ++tx) f(bz * kBlockZ + tz, bx * kBlockX + tx);
  }
  template <typename F>
  void sweep1d(F f, int n) {
    using namespace cuda_bodies;
    const int g = (n + kBlock1D - 1) / kBlock1D;
    for (int b = 0; b < g; ++b)
      for (int t = 0; t < kBlock1D; ++t)
        if (b * kBlock1D + t < n) f(b * kBlock1D + t);
  }
  bool ok() const { return true; }
};

}  // namespace starwave::test
