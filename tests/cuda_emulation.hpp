// tests/cuda_emulation.hpp — runs the CUDA launch sequence and thread bodies of
// kernels/cuda/bodies.hpp on the host: loops over blocks and threads stand in for
// blockIdx/threadIdx, with the same block shapes and the same out-of-range threads as the
// GPU launches, so the index logic, bounds and PML branches are checked without a GPU. It
// also counts the launches (the fused passes' limits) and can make one launch fail, as a
// GPU would refuse it, to check the error path.
#pragma once

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cuda/bodies.hpp"

namespace starwave::test {

struct EmulatedExec {
  std::vector<std::string> launches;  // names, in order
  long fail_at = -1;                  // this launch (0-based) fails instead of running
  const char* failed = nullptr;       // the failed launch's name

  template <typename T>
  bool zero(T* p, std::size_t n) {
    std::memset(p, 0, n * sizeof(T));
    return true;
  }
  /// Counts launch `name`; false when it is the one to fail (then it does not run).
  bool launch(const char* name) {
    if (failed) return false;
    launches.push_back(name);
    if (long(launches.size()) - 1 == fail_at) {
      failed = name;
      return false;
    }
    return true;
  }
  template <typename F>
  void sweep1d(const char* name, F f, long n) {
    using namespace cuda_bodies;
    if (n <= 0 || !launch(name)) return;
    const long g = (n + kBlock1D - 1) / kBlock1D;
    for (long b = 0; b < g; ++b)
      for (long t = 0; t < kBlock1D; ++t)
        if (b * kBlock1D + t < n) f(b * kBlock1D + t);
  }
  /// A 1-D launch whose threads may use more registers: on the host, sweep1d().
  template <typename F>
  void sweep_wide(const char* name, F f, long n) {
    sweep1d(name, f, n);
  }
  /// A launch over `shots` shots (blockIdx.y): each shot's blocks and threads as sweep1d's.
  template <typename F>
  void sweep_shots(const char* name, F f, long n, int shots) {
    using namespace cuda_bodies;
    if (n <= 0 || shots <= 0 || !launch(name)) return;
    const long g = (n + kBlock1D - 1) / kBlock1D;
    for (int s = 0; s < shots; ++s)
      for (long b = 0; b < g; ++b)
        for (long t = 0; t < kBlock1D; ++t)
          if (b * kBlock1D + t < n) f(s, b * kBlock1D + t);
  }
  template <typename F>
  void sweep_wide_shots(const char* name, F f, long n, int shots) {
    sweep_shots(name, f, n, shots);
  }
  /// A March's blocks one after another; in a block, each phase over every thread in
  /// turn (the barriers between them), the threads' registers and the shared tile kept
  /// between phases. The tile is filled with NaN before each plane's loads, so a cell
  /// computed from a value no thread loaded differs from the CPU's.
  template <typename B>
  void march(const char* name, const B& b) {
    if (b.g.blocks <= 0 || !launch(name)) return;
    std::vector<typename B::Value> tile(B::kTile);
    std::vector<typename B::Thread> s(B::kThreads);
    for (long blk = 0; blk < b.g.blocks; ++blk) {
      for (int t = 0; t < B::kThreads; ++t) b.begin(blk, t, s[t]);
      const int planes = b.planes(s[0]);
      for (int k = 0; k < planes; ++k) {
        std::fill(tile.begin(), tile.end(), std::numeric_limits<typename B::Value>::quiet_NaN());
        for (int t = 0; t < B::kThreads; ++t) b.load(s[t], t, tile.data(), k);
        for (int t = 0; t < B::kThreads; ++t) b.compute(s[t], t, tile.data(), k);
      }
    }
  }
  /// Runs the launches of `issue` `times` times, as a replayed CUDA graph runs them.
  template <typename F>
  void replay(const char*, long times, F&& issue) {
    for (long i = 0; i < times && ok(); ++i) issue(*this);
  }
  bool ok() const { return failed == nullptr; }
};

}  // namespace starwave::test
