// kernels/cpu/subnormals.hpp — the floating-point mode the CPU kernels run in (internal to
// kernels/cpu; the tests use it to run the emulated CUDA bodies in the device's mode).
#pragma once

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define STARWAVE_HAVE_MXCSR 1
#endif

namespace starwave::cpu::detail {

/// In float, flushes subnormal results and operands to zero while a shot runs, and
/// restores the caller's mode after. Ahead of the wavefront the stencil spreads amplitudes
/// that decay into the subnormal range, and x86 cores take a ~100-cycle assist on each of
/// them: with them the kernel runs 2–2.5× slower for no change in any significant digit.
/// The CUDA kernels flush float subnormals too (nvcc -ftz=true), and both keep them in
/// double (docs/design.md §3: the same bits on any worker), so `T` picks the mode.
template <typename T>
class FlushSubnormals {
 public:
  // Always inlined: a copy compiled in an AVX level would use VEX instructions.
  __attribute__((always_inline)) FlushSubnormals() {
#ifdef STARWAVE_HAVE_MXCSR
    saved_ = _mm_getcsr();
    if (sizeof(T) == sizeof(float))
      _mm_setcsr(saved_ | 0x8040u);  // FTZ (bit 15) | DAZ (bit 6)
    else
      _mm_setcsr(saved_ & ~0x8040u);
#endif
  }
  __attribute__((always_inline)) ~FlushSubnormals() {
#ifdef STARWAVE_HAVE_MXCSR
    _mm_setcsr(saved_);
#endif
  }
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;

 private:
  unsigned saved_ = 0;
};

}  // namespace starwave::cpu::detail
