#include "ir/memory_space.h"

#include "gtest/gtest.h"

namespace accelmem {
namespace ir {
namespace {

// Every space's name parses back; the lower-case name is what MemRef names use.
TEST(MemorySpaceTest, NamesRoundTrip) {
  for (int i = 0; i < kNumMemorySpaces; ++i) {
    MemorySpace s = static_cast<MemorySpace>(i);
    auto parsed = MemorySpaceFromName(MemorySpaceName(s));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, s);
  }
  EXPECT_EQ(MemorySpaceName(MemorySpace::kAcc), "Acc");
  EXPECT_EQ(MemorySpaceLowerName(MemorySpace::kRight), "right");
}

// Unknown spaces (including the old hardware names) are errors naming the word.
TEST(MemorySpaceTest, UnknownNameIsNamed) {
  auto parsed = MemorySpaceFromName("UB");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "unknown memory space 'UB'");
}

// Only DDR is off chip.
TEST(MemorySpaceTest, OnChip) {
  EXPECT_FALSE(IsOnChip(MemorySpace::kDDR));
  EXPECT_TRUE(IsOnChip(MemorySpace::kBias));
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
