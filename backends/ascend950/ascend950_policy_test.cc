#include "backends/ascend950/ascend950_policy.h"

#include <vector>

#include "gtest/gtest.h"

namespace accelmem {
namespace backends {
namespace {

using ir::MemorySpace;

// Each space aligns to the SoC table: 128 for Vec/Mat/Acc, 64 for Left/Right/Bias.
TEST(Ascend950PolicyTest, AlignsPerSpace) {
  Ascend950MemoryAllocatorPolicy p;
  EXPECT_EQ(p.AlignAddress(1, MemorySpace::kVec), 128u);
  EXPECT_EQ(p.AlignAddress(1, MemorySpace::kMat), 128u);
  EXPECT_EQ(p.AlignAddress(1, MemorySpace::kAcc), 128u);
  EXPECT_EQ(p.AlignAddress(1, MemorySpace::kLeft), 64u);
  EXPECT_EQ(p.AlignAddress(1, MemorySpace::kRight), 64u);
  EXPECT_EQ(p.AlignAddress(65, MemorySpace::kBias), 128u);
  EXPECT_EQ(p.AlignAddress(16384, MemorySpace::kVec), 16384u);
}

// DDR is skipped and roots are placed in id order, like the default policy.
TEST(Ascend950PolicyTest, DefaultFilterAndOrder) {
  Ascend950MemoryAllocatorPolicy p;
  EXPECT_FALSE(p.ShouldAllocate(MemorySpace::kDDR));
  EXPECT_TRUE(p.ShouldAllocate(MemorySpace::kVec));
  std::vector<ir::MemRefPtr> refs = {
      ir::MemRef::MakeRoot("mem_vec_3", MemorySpace::kVec, -1, 8, 3),
      ir::MemRef::MakeRoot("mem_vec_1", MemorySpace::kVec, -1, 8, 1)};
  p.OrderMemRefs(refs);
  EXPECT_EQ(refs[0]->id(), 1);
}

}  // namespace
}  // namespace backends
}  // namespace accelmem
