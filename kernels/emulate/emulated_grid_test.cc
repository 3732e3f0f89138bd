#include "kernels/emulate/emulated_grid.h"

#include <cmath>
#include <cstdint>

#include "gtest/gtest.h"

namespace tiletune {
namespace {

TEST(HalfTest, ConvertsAsPtxCvtDoes) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const bool nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
    const uint16_t back = FloatToHalf(HalfToFloat(static_cast<uint16_t>(h)));
    EXPECT_EQ(back, nan ? 0x7fffu : h) << "half 0x" << std::hex << h;
  }
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00u);      // a tie: to even
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02u);  // a tie: to even
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000u);             // a subnormal tie
  EXPECT_EQ(FloatToHalf(3 * std::ldexp(1.0f, -25)), 0x0002u);
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bffu);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00u);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000u);
}

}  // namespace
}  // namespace tiletune
