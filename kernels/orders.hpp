// kernels/orders.hpp — the stencil orders the kernels are compiled for, and the one place a
// run-time order becomes a compile-time one (docs/design.md §1: the order is a template parameter,
// the run time picks the instance). An order without kernels is never replaced by another.
#pragma once

#include <type_traits>

#include "kernels/hd.hpp"

namespace starwave {

/// Whether the kernels exist for this order of accuracy: 2, 4, 6 or 8.
SW_HD constexpr bool supported_order(int order) { return order == 2 || order == 4 || order == 6 || order == 8; }

/// Every (order, value type) a kernel template is compiled for: a file that instantiates
/// kernels defines its own X(O, T) and writes `STARWAVE_FOR_EACH_KERNEL(X)`. With
/// supported_order above and with_order below, the only place the orders are listed.
#define STARWAVE_FOR_EACH_KERNEL(X) \
  X(2, float) X(4, float) X(6, float) X(8, float) X(2, double) X(4, double) X(6, double) X(8, double)
#define STARWAVE_ORDER_IS_SUPPORTED(O, T) static_assert(supported_order(O), "an order without kernels");
STARWAVE_FOR_EACH_KERNEL(STARWAVE_ORDER_IS_SUPPORTED)
#undef STARWAVE_ORDER_IS_SUPPORTED

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
