// kernels/orders.hpp — the stencil orders the kernels are compiled for, and the one place a
// run-time order becomes a compile-time one (docs/design.md §1: the order is a template parameter,
// the run time picks the instance). An order without kernels is never replaced by another.
#pragma once

#include <type_traits>

#include "kernels/hd.hpp"

namespace starwave {

/// Whether the kernels exist for this order of accuracy: 2, 4, 6 or 8.
SW_HD constexpr bool supported_order(int order) { return order == 2 || order == 4 || order == 6 || order == 8; }

/// Calls f(std::integral_constant<int, order>{}) and returns true for a supported order;
/// for any other order calls nothing and returns false (the caller says what failed).
template <typename F>
bool with_order(int order, F&& f) {
  switch (order) {
    case 2:
      f(std::integral_constant<int, 2>{});
      return true;
    case 4:
      f(std::integral_constant<int, 4>{});
      return true;
    case 6:
      f(std::integral_constant<int, 6>{});
      return true;
    case 8:
      f(std::integral_constant<int, 8>{});
      return true;
    default:
      return false;
  }
}

}  // namespace starwave
