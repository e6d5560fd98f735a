// tests/emulation_compare_float.cpp — tests/emulation_compare.hpp's comparisons in float.
#include "tests/emulation_compare_impl.hpp"

namespace starwave::test {
STARWAVE_EMULATION_COMPARISONS(float)
}  // namespace starwave::test
