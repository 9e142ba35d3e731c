#include "policy/default_memory_allocator_policy.h"

#include <vector>

#include "gtest/gtest.h"

namespace accelmem {
namespace policy {
namespace {

using ir::MemorySpace;

// Every on-chip space is allocated, DDR never.
TEST(DefaultMemoryAllocatorPolicyTest, SkipsOnlyDDR) {
  DefaultMemoryAllocatorPolicy p;
  EXPECT_FALSE(p.ShouldAllocate(MemorySpace::kDDR));
  for (MemorySpace s : {MemorySpace::kVec, MemorySpace::kMat, MemorySpace::kLeft,
                        MemorySpace::kRight, MemorySpace::kAcc, MemorySpace::kBias}) {
    EXPECT_TRUE(p.ShouldAllocate(s)) << ir::MemorySpaceName(s);
  }
}

// Addresses round up to 32 bytes in every space.
TEST(DefaultMemoryAllocatorPolicyTest, Aligns32) {
  DefaultMemoryAllocatorPolicy p;
  for (MemorySpace s : {MemorySpace::kVec, MemorySpace::kAcc, MemorySpace::kBias}) {
    EXPECT_EQ(p.AlignAddress(0, s), 0u);
    EXPECT_EQ(p.AlignAddress(1, s), 32u);
    EXPECT_EQ(p.AlignAddress(16384, s), 16384u);
    EXPECT_EQ(p.AlignAddress(16385, s), 16416u);
  }
}

// Roots are ordered by numeric id (so mem_vec_2 comes before mem_vec_10, unlike a name sort).
TEST(DefaultMemoryAllocatorPolicyTest, OrdersByIdNotName) {
  DefaultMemoryAllocatorPolicy p;
  std::vector<ir::MemRefPtr> refs = {
      ir::MemRef::MakeRoot("mem_vec_10", MemorySpace::kVec, -1, 32, 10),
      ir::MemRef::MakeRoot("mem_vec_2", MemorySpace::kVec, -1, 32, 2),
      ir::MemRef::MakeRoot("mem_vec_0", MemorySpace::kVec, -1, 32, 0)};
  p.OrderMemRefs(refs);
  ASSERT_EQ(refs.size(), 3u);
  EXPECT_EQ(refs[0]->id(), 0);
  EXPECT_EQ(refs[1]->id(), 2);
  EXPECT_EQ(refs[2]->id(), 10);
}

}  // namespace
}  // namespace policy
}  // namespace accelmem
