#include "backends/ascend910b/ascend910b.h"

#include <memory>

#include "backends/ascend910b/ascend910b_policy.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace backends {
namespace {

using ir::DType;
using ir::MemorySpace;

// Capacities are the study's §3.1 figures for this SoC; DDR is unchecked.
TEST(Ascend910bBackendTest, Capacities) {
  Ascend910bBackend b;
  EXPECT_EQ(b.GetMemSize(MemorySpace::kVec), 188416);
  EXPECT_EQ(b.GetMemSize(MemorySpace::kMat), 524288);
  EXPECT_EQ(b.GetMemSize(MemorySpace::kLeft), 65536);
  EXPECT_EQ(b.GetMemSize(MemorySpace::kRight), 65536);
  EXPECT_EQ(b.GetMemSize(MemorySpace::kAcc), 131072);
  EXPECT_EQ(b.GetMemSize(MemorySpace::kBias), 1024);
  EXPECT_EQ(b.GetMemSize(MemorySpace::kDDR), 0);
}

// Acc tiles pad rows (FP32 to 16, INT32 to 32); other spaces use the plain rule.
TEST(Ascend910bBackendTest, AccRowPadding) {
  Ascend910bBackend b;
  ir::TileType acc(ir::StaticShape({17, 16}), DType::kFP32, MemorySpace::kAcc);
  EXPECT_EQ(b.TileBytes(acc), 32 * 16 * 4);
  ir::TileType acc_i32(ir::StaticShape({20, 16}), DType::kINT32, MemorySpace::kAcc);
  EXPECT_EQ(b.TileBytes(acc_i32), 32 * 16 * 4);
  ir::TileType acc_i32_small(ir::StaticShape({8, 16}), DType::kINT32, MemorySpace::kAcc);
  EXPECT_EQ(b.TileBytes(acc_i32_small), 32 * 16 * 4);
  ir::TileType vec(ir::StaticShape({17, 16}), DType::kFP32, MemorySpace::kVec);
  EXPECT_EQ(b.TileBytes(vec), 17 * 16 * 4);
  EXPECT_EQ(b.tile_byte_sizer().Bytes(acc), 32 * 16 * 4);
}

// By default the backend aligns every space to 32 bytes, as the upstream compiler does; the
// configuration gives that policy to the passes.
TEST(Ascend910bBackendTest, PolicyAndConfig) {
  BackendConfig::Reset();
  {
    ScopedBackend scoped(MakeAscend910bBackend());
    EXPECT_TRUE(BackendConfig::IsConfigured());
    policy::MemoryAllocatorPolicyPtr p = CreateActivePolicy();
    EXPECT_EQ(dynamic_cast<Ascend910bMemoryAllocatorPolicy*>(p.get()), nullptr);
    for (MemorySpace s : {MemorySpace::kVec, MemorySpace::kMat, MemorySpace::kLeft,
                          MemorySpace::kRight, MemorySpace::kAcc, MemorySpace::kBias}) {
      EXPECT_EQ(p->AlignAddress(1, s), 32u) << ir::MemorySpaceName(s);
      EXPECT_EQ(p->AlignAddress(33, s), 64u) << ir::MemorySpaceName(s);
    }
    EXPECT_EQ(ActiveMemSize(MemorySpace::kAcc), 131072);
  }
  EXPECT_FALSE(BackendConfig::IsConfigured());
}

// With AddressAlignment::kSocTable the backend hands out its SoC-table policy instead.
TEST(Ascend910bBackendTest, SocTablePolicy) {
  ScopedBackend scoped(MakeAscend910bBackend(AddressAlignment::kSocTable));
  policy::MemoryAllocatorPolicyPtr p = CreateActivePolicy();
  EXPECT_NE(dynamic_cast<Ascend910bMemoryAllocatorPolicy*>(p.get()), nullptr);
  EXPECT_EQ(p->AlignAddress(1, MemorySpace::kVec), 128u);
  EXPECT_EQ(p->AlignAddress(1, MemorySpace::kLeft), 64u);
}

// Linking the target registers it by name.
TEST(Ascend910bBackendTest, RegisteredByName) {
  absl::StatusOr<BackendPtr> b = BackendRegistry::Global().Create("ascend910b");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)->Name(), "ascend910b");
  EXPECT_EQ((*b)->GetMemSize(MemorySpace::kVec), 188416);
  absl::StatusOr<BackendPtr> soc = BackendRegistry::Global().Create("ascend910b-soc-aligned");
  ASSERT_TRUE(soc.ok()) << soc.status();
  EXPECT_EQ((*soc)->Name(), "ascend910b-soc-aligned");
  EXPECT_EQ((*soc)->GetMemSize(MemorySpace::kVec), 188416);
}

}  // namespace
}  // namespace backends
}  // namespace accelmem
