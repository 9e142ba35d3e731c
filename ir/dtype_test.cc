#include "ir/dtype.h"

#include "gtest/gtest.h"

namespace accelmem {
namespace ir {
namespace {

// Every dtype's name parses back to the same dtype.
TEST(DTypeTest, NamesRoundTrip) {
  for (int i = 0; i < kNumDTypes; ++i) {
    DType d = static_cast<DType>(i);
    auto parsed = DTypeFromName(DTypeName(d));
    ASSERT_TRUE(parsed.ok()) << DTypeName(d);
    EXPECT_EQ(*parsed, d);
  }
}

// Bit widths are the contract's table.
TEST(DTypeTest, BitsMatchContract) {
  EXPECT_EQ(DTypeBits(DType::kFP32), 32);
  EXPECT_EQ(DTypeBits(DType::kFP16), 16);
  EXPECT_EQ(DTypeBits(DType::kBF16), 16);
  EXPECT_EQ(DTypeBits(DType::kINT8), 8);
  EXPECT_EQ(DTypeBits(DType::kUINT8), 8);
  EXPECT_EQ(DTypeBits(DType::kINT16), 16);
  EXPECT_EQ(DTypeBits(DType::kINT32), 32);
  EXPECT_EQ(DTypeBits(DType::kINT64), 64);
  EXPECT_EQ(DTypeBits(DType::kINT4), 4);
  EXPECT_EQ(DTypeBits(DType::kFP4), 4);
}

// An unknown name is an error that names the word.
TEST(DTypeTest, UnknownNameIsNamed) {
  auto parsed = DTypeFromName("FP31");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "unknown dtype 'FP31'");
  EXPECT_FALSE(DTypeFromName("fp32").ok());  // case matters
}

// Float and int classification.
TEST(DTypeTest, Classification) {
  EXPECT_TRUE(IsFloatDType(DType::kBF16));
  EXPECT_TRUE(IsFloatDType(DType::kFP4));
  EXPECT_FALSE(IsFloatDType(DType::kINT4));
  EXPECT_TRUE(IsIntDType(DType::kUINT8));
  EXPECT_FALSE(IsIntDType(DType::kBOOL));
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
