#include "ir/memref.h"

#include "gtest/gtest.h"

namespace accelmem {
namespace ir {
namespace {

// A root carries its fields; the canonical name follows the contract.
TEST(MemRefTest, RootFields) {
  MemRefPtr m =
      MemRef::MakeRoot(MemRef::RootName(MemorySpace::kVec, 3), MemorySpace::kVec, -1, 16384, 3);
  EXPECT_EQ(m->name(), "mem_vec_3");
  EXPECT_TRUE(m->is_root());
  EXPECT_EQ(m->root(), m.get());
  EXPECT_EQ(m->addr(), -1);
  EXPECT_FALSE(m->is_planned());
  EXPECT_EQ(m->size(), 16384);
  EXPECT_EQ(m->id(), 3);
  EXPECT_EQ(MemRefToString(*m), "mem_vec_3");
}

// Views fold onto the root and accumulate offsets; their address follows the root's.
TEST(MemRefTest, ViewsFoldAndFollowRootAddress) {
  MemRefPtr root = MemRef::MakeRoot("mem_acc_0", MemorySpace::kAcc, -1, 4096, 0);
  MemRefPtr v1 = MemRef::MakeView(root, 1024, 2048);
  MemRefPtr v2 = MemRef::MakeView(v1, 256, 512);
  EXPECT_EQ(v2->root(), root.get());
  EXPECT_EQ(v2->offset(), 1280);
  EXPECT_EQ(v2->space(), MemorySpace::kAcc);
  EXPECT_EQ(v2->name(), "mem_acc_0");
  EXPECT_EQ(MemRefToString(*v2), "mem_acc_0+1280");
  EXPECT_EQ(v2->addr(), -1);
  MemRefPtr planned = root->WithAddr(8192);
  EXPECT_NE(planned.get(), root.get());  // immutable: a new object
  MemRefPtr v3 = MemRef::MakeView(planned, 64, 32);
  EXPECT_EQ(v3->addr(), 8192 + 64);
  EXPECT_EQ(root->addr(), -1);
}

// SameAllocation compares roots by object, not by name or fields.
TEST(MemRefTest, SameAllocationIsByObject) {
  MemRefPtr a = MemRef::MakeRoot("mem_vec_0", MemorySpace::kVec, 0, 64, 0);
  MemRefPtr b = MemRef::MakeRoot("mem_vec_0", MemorySpace::kVec, 0, 64, 0);
  EXPECT_TRUE(SameAllocation(*a, *MemRef::MakeView(a, 0, 32)));
  EXPECT_FALSE(SameAllocation(*a, *b));
}

// MayAlias: same allocation and intersecting half-open byte ranges.
TEST(MemRefTest, MayAliasUsesHalfOpenRanges) {
  MemRefPtr root = MemRef::MakeRoot("mem_vec_0", MemorySpace::kVec, -1, 1024, 0);
  MemRefPtr lo = MemRef::MakeView(root, 0, 512);
  MemRefPtr hi = MemRef::MakeView(root, 512, 512);
  MemRefPtr mid = MemRef::MakeView(root, 256, 512);
  EXPECT_FALSE(MayAlias(*lo, *hi));  // touching ranges do not overlap
  EXPECT_TRUE(MayAlias(*lo, *mid));
  EXPECT_TRUE(MayAlias(*root, *hi));
  MemRefPtr other = MemRef::MakeRoot("mem_vec_1", MemorySpace::kVec, -1, 1024, 1);
  EXPECT_FALSE(MayAlias(*root, *other));
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
