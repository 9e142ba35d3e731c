#include "backends/ascend950/ascend950.h"

#include <memory>

#include "backends/ascend950/ascend950_policy.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace backends {
namespace {

using ir::DType;
using ir::MemorySpace;

// Capacities are the study's §3.1 figures for this SoC; DDR is unchecked.
TEST(Ascend950BackendTest, Capacities) {
  Ascend950Backend b;
  EXPECT_EQ(b.GetMemSize(MemorySpace::kVec), 245760);
  EXPECT_EQ(b.GetMemSize(MemorySpace::kMat), 524288);
  EXPECT_EQ(b.GetMemSize(MemorySpace::kLeft), 65536);
  EXPECT_EQ(b.GetMemSize(MemorySpace::kRight), 65536);
  EXPECT_EQ(b.GetMemSize(MemorySpace::kAcc), 262144);
  EXPECT_EQ(b.GetMemSize(MemorySpace::kBias), 4096);
  EXPECT_EQ(b.GetMemSize(MemorySpace::kDDR), 0);
}

// Acc tiles pad rows (FP32 to 16, INT32 to 16); other spaces use the plain rule.
TEST(Ascend950BackendTest, AccRowPadding) {
  Ascend950Backend b;
  ir::TileType acc(ir::StaticShape({17, 16}), DType::kFP32, MemorySpace::kAcc);
  EXPECT_EQ(b.TileBytes(acc), 32 * 16 * 4);
  ir::TileType acc_i32(ir::StaticShape({20, 16}), DType::kINT32, MemorySpace::kAcc);
  EXPECT_EQ(b.TileBytes(acc_i32), 32 * 16 * 4);
  ir::TileType acc_i32_small(ir::StaticShape({8, 16}), DType::kINT32, MemorySpace::kAcc);
  EXPECT_EQ(b.TileBytes(acc_i32_small), 16 * 16 * 4);
  ir::TileType vec(ir::StaticShape({17, 16}), DType::kFP32, MemorySpace::kVec);
  EXPECT_EQ(b.TileBytes(vec), 17 * 16 * 4);
  EXPECT_EQ(b.tile_byte_sizer().Bytes(acc), 32 * 16 * 4);
}

// By default the backend aligns every space to 32 bytes, as the upstream compiler does; the
// configuration gives that policy to the passes.
TEST(Ascend950BackendTest, PolicyAndConfig) {
  BackendConfig::Reset();
  {
    ScopedBackend scoped(MakeAscend950Backend());
    EXPECT_TRUE(BackendConfig::IsConfigured());
    policy::MemoryAllocatorPolicyPtr p = CreateActivePolicy();
    EXPECT_EQ(dynamic_cast<Ascend950MemoryAllocatorPolicy*>(p.get()), nullptr);
    for (MemorySpace s : {MemorySpace::kVec, MemorySpace::kMat, MemorySpace::kLeft,
                          MemorySpace::kRight, MemorySpace::kAcc, MemorySpace::kBias}) {
      EXPECT_EQ(p->AlignAddress(1, s), 32u) << ir::MemorySpaceName(s);
      EXPECT_EQ(p->AlignAddress(33, s), 64u) << ir::MemorySpaceName(s);
    }
    EXPECT_EQ(ActiveMemSize(MemorySpace::kAcc), 262144);
  }
  EXPECT_FALSE(BackendConfig::IsConfigured());
}

// With AddressAlignment::kSocTable the backend hands out its SoC-table policy instead.
TEST(Ascend950BackendTest, SocTablePolicy) {
  ScopedBackend scoped(MakeAscend950Backend(AddressAlignment::kSocTable));
  policy::MemoryAllocatorPolicyPtr p = CreateActivePolicy();
  EXPECT_NE(dynamic_cast<Ascend950MemoryAllocatorPolicy*>(p.get()), nullptr);
  EXPECT_EQ(p->AlignAddress(1, MemorySpace::kVec), 128u);
  EXPECT_EQ(p->AlignAddress(1, MemorySpace::kLeft), 64u);
}

// Linking the target registers it by name.
TEST(Ascend950BackendTest, RegisteredByName) {
  absl::StatusOr<BackendPtr> b = BackendRegistry::Global().Create("ascend950");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)->Name(), "ascend950");
  EXPECT_EQ((*b)->GetMemSize(MemorySpace::kVec), 245760);
  absl::StatusOr<BackendPtr> soc = BackendRegistry::Global().Create("ascend950-soc-aligned");
  ASSERT_TRUE(soc.ok()) << soc.status();
  EXPECT_EQ((*soc)->Name(), "ascend950-soc-aligned");
  EXPECT_EQ((*soc)->GetMemSize(MemorySpace::kVec), 245760);
}

}  // namespace
}  // namespace backends
}  // namespace accelmem
