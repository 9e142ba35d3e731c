#include "policy/memory_allocator_policy.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace accelmem {
namespace policy {
namespace {

using ir::MemorySpace;

// A policy that plans only Mat, aligns to 512 and orders by descending size.
class BigFirstMatOnly final : public MemoryAllocatorPolicy {
 public:
  bool ShouldAllocate(MemorySpace space) const override { return space == MemorySpace::kMat; }
  uint64_t AlignAddress(uint64_t addr, MemorySpace) const override { return AlignUp(addr, 512); }
  void OrderMemRefs(std::vector<ir::MemRefPtr>& refs) const override {
    std::stable_sort(refs.begin(), refs.end(), [](const ir::MemRefPtr& a, const ir::MemRefPtr& b) {
      return a->size() > b->size();
    });
  }
};

// AlignUp rounds up to the next multiple and leaves aligned values alone.
TEST(AlignUpTest, RoundsUpToMultiple) {
  EXPECT_EQ(AlignUp(0, 32), 0u);
  EXPECT_EQ(AlignUp(1, 32), 32u);
  EXPECT_EQ(AlignUp(32, 32), 32u);
  EXPECT_EQ(AlignUp(33, 32), 64u);
  EXPECT_EQ(AlignUp(100, 48), 144u);  // non-power-of-two alignments work too
  EXPECT_EQ(AlignUp(7, 1), 7u);
  EXPECT_EQ(AlignUp(7, 0), 7u);
}

// The interface is usable through a base pointer: all three decisions dispatch virtually.
TEST(MemoryAllocatorPolicyTest, CustomPolicyDispatches) {
  MemoryAllocatorPolicyPtr p = std::make_unique<BigFirstMatOnly>();
  EXPECT_TRUE(p->ShouldAllocate(MemorySpace::kMat));
  EXPECT_FALSE(p->ShouldAllocate(MemorySpace::kVec));
  EXPECT_EQ(p->AlignAddress(1, MemorySpace::kMat), 512u);
  EXPECT_TRUE(IsAligned(*p, 1024, MemorySpace::kMat));
  EXPECT_FALSE(IsAligned(*p, 1000, MemorySpace::kMat));
  std::vector<ir::MemRefPtr> refs = {
      ir::MemRef::MakeRoot("mem_mat_0", MemorySpace::kMat, -1, 64, 0),
      ir::MemRef::MakeRoot("mem_mat_1", MemorySpace::kMat, -1, 4096, 1)};
  p->OrderMemRefs(refs);
  EXPECT_EQ(refs[0]->name(), "mem_mat_1");
  EXPECT_EQ(refs[1]->name(), "mem_mat_0");
}

}  // namespace
}  // namespace policy
}  // namespace accelmem
