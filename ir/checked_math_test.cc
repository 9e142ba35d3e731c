#include "ir/checked_math.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace accelmem {
namespace ir {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Sums and products that fit are exact; one past the int64 range is nullopt, never a wrap.
TEST(CheckedMathTest, AddAndMulDetectOverflow) {
  EXPECT_EQ(CheckedAdd(40, 2), 42);
  EXPECT_EQ(CheckedAdd(kMax - 1, 1), kMax);
  EXPECT_EQ(CheckedAdd(kMax, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd(kMin, -1), std::nullopt);
  EXPECT_EQ(CheckedMul(1 << 20, 1 << 20), int64_t{1} << 40);
  EXPECT_EQ(CheckedMul(int64_t{1} << 32, int64_t{1} << 31), std::nullopt);
  EXPECT_EQ(CheckedMul(-1, kMin), std::nullopt);
}

// Alignment rounds up to the next multiple, keeps aligned values, and fails near the top.
TEST(CheckedMathTest, AlignUp) {
  EXPECT_EQ(CheckedAlignUp(0, 32), 0);
  EXPECT_EQ(CheckedAlignUp(1, 32), 32);
  EXPECT_EQ(CheckedAlignUp(64, 32), 64);
  EXPECT_EQ(CheckedAlignUp(100, 1), 100);
  EXPECT_EQ(CheckedAlignUp(kMax - 3, 32), std::nullopt);
  EXPECT_EQ(CheckedAlignUp(-1, 32), std::nullopt);
  EXPECT_EQ(CheckedAlignUp(5, 0), std::nullopt);
}

// Saturation keeps the order of results that would overflow.
TEST(CheckedMathTest, SaturatingAdd) {
  EXPECT_EQ(SaturatingAdd(1, 2), 3);
  EXPECT_EQ(SaturatingAdd(kMax, 5), kMax);
  EXPECT_EQ(SaturatingAdd(kMin, -5), kMin);
  EXPECT_GT(SaturatingAdd(kMax - 10, 100), SaturatingAdd(kMax - 200, 100));
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
