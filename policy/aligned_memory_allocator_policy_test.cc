#include "policy/aligned_memory_allocator_policy.h"

#include "gtest/gtest.h"

namespace accelmem {
namespace policy {
namespace {

using ir::MemorySpace;

AlignmentTable Table() {
  AlignmentTable t{};
  t[static_cast<int>(MemorySpace::kVec)] = 128;
  t[static_cast<int>(MemorySpace::kLeft)] = 64;
  return t;
}

// Each space rounds up to its own alignment; a space without an entry is not aligned.
TEST(AlignedMemoryAllocatorPolicyTest, PerSpaceAlignment) {
  AlignedMemoryAllocatorPolicy p(Table());
  EXPECT_EQ(p.AlignAddress(1, MemorySpace::kVec), 128u);
  EXPECT_EQ(p.AlignAddress(129, MemorySpace::kVec), 256u);
  EXPECT_EQ(p.AlignAddress(65, MemorySpace::kLeft), 128u);
  EXPECT_EQ(p.AlignAddress(64, MemorySpace::kLeft), 64u);
  EXPECT_EQ(p.AlignAddress(3, MemorySpace::kAcc), 3u);
  EXPECT_EQ(p.Alignment(MemorySpace::kVec), 128u);
}

// Space filter and order are the default policy's.
TEST(AlignedMemoryAllocatorPolicyTest, KeepsDefaultFilter) {
  AlignedMemoryAllocatorPolicy p(Table());
  EXPECT_FALSE(p.ShouldAllocate(MemorySpace::kDDR));
  EXPECT_TRUE(p.ShouldAllocate(MemorySpace::kBias));
}

}  // namespace
}  // namespace policy
}  // namespace accelmem
