// tests/emulation_compare_double.cpp — tests/emulation_compare.hpp's comparisons in double.
#include "tests/emulation_compare_impl.hpp"

namespace starwave::test {
STARWAVE_EMULATION_COMPARISONS(double)
}  // namespace starwave::test
