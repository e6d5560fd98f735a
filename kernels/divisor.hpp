// kernels/divisor.hpp — unsigned division by a divisor fixed before a launch, as one
// multiply and a shift. A GPU has no integer divide: `n / d` by a run-time d is a
// sequence of ~20 instructions, which the CUDA bodies would pay per cell to turn a thread
// number into a cell (kernels/cuda/bodies.hpp). Granlund & Montgomery (1994), theorem 4.2
// with N = 31: for d ≥ 1, l = ⌈log2 d⌉ and m = ⌈2^(31+l) / d⌉ (so 2^31 ≤ m < 2^32),
// ⌊n / d⌋ = ⌊m·n / 2^(31+l)⌋ for every 0 ≤ n < 2^31 — the cell counts here (build_medium
// refuses grids of 2^31 cells or more).
#pragma once

#include "kernels/hd.hpp"

namespace starwave {

struct Divisor {
  unsigned d = 1;
  unsigned m = 1u << 31;
  int shift = 31;

  Divisor() = default;
  /// d = 0 gives a quotient of 0 (and n mod 0 = n): never used (an absent layer is never
  /// divided by).
  SW_HD explicit Divisor(unsigned divisor) : d(divisor) {
    if (d == 0) {
      m = 0;
      return;
    }
    int l = 0;
    while ((1ull << l) < d) ++l;
    shift = 31 + l;
    m = unsigned(((1ull << shift) + d - 1) / d);
  }
  /// ⌊n / d⌋, for n < 2^31.
  SW_HD unsigned div(unsigned n) const { return unsigned((static_cast<unsigned long long>(n) * m) >> shift); }
  /// n mod d, for n < 2^31.
  SW_HD unsigned mod(unsigned n) const { return n - div(n) * d; }
};

}  // namespace starwave
