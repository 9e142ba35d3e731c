#include "backends/ascend/ascend.h"

#include <memory>
#include <ostream>
#include <string>

#include "absl/strings/str_replace.h"
#include "backends/ascend/ascend_policy.h"
#include "backends/ascend/ascend_soc.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace backends {
namespace {

using ir::DType;
using ir::MemorySpace;

constexpr MemorySpace kOnChip[] = {MemorySpace::kVec,   MemorySpace::kMat, MemorySpace::kLeft,
                                   MemorySpace::kRight, MemorySpace::kAcc, MemorySpace::kBias};

// What one registered backend must do, written out independently of the SoC table.
struct BackendCase {
  const char* name;                          // registered backend name
  const char* soc;                           // AscendSoc::name of its row
  AddressAlignment alignment;                // how it aligns addresses
  int64_t vec, mat, left, right, acc, bias;  // capacities in bytes
  int64_t fp32_17_rows;                      // padded row count of a 17-row FP32 Acc tile
  int64_t int32_20_rows;                     // ... of a 20-row INT32 Acc tile
  int64_t int32_8_rows;                      // ... of an 8-row INT32 Acc tile
  uint64_t align_vec, align_mat, align_left, align_right, align_acc, align_bias;  // SoC table
};

const BackendCase kCases[] = {
    {"ascend910b", "ascend910b", AddressAlignment::kUniform32, 188416, 524288, 65536, 65536, 131072,
     1024, 32, 32, 32, 128, 128, 64, 64, 128, 64},
    {"ascend910b-soc-aligned", "ascend910b", AddressAlignment::kSocTable, 188416, 524288, 65536,
     65536, 131072, 1024, 32, 32, 32, 128, 128, 64, 64, 128, 64},
    {"ascend950", "ascend950", AddressAlignment::kUniform32, 245760, 524288, 65536, 65536, 262144,
     4096, 32, 32, 16, 128, 128, 64, 64, 128, 64},
    {"ascend950-soc-aligned", "ascend950", AddressAlignment::kSocTable, 245760, 524288, 65536,
     65536, 262144, 4096, 32, 32, 16, 128, 128, 64, 64, 128, 64},
};

void PrintTo(const BackendCase& c, std::ostream* os) { *os << c.name; }

class AscendBackendTest : public ::testing::TestWithParam<BackendCase> {
 protected:
  const AscendSoc& Soc() const {
    for (const AscendSoc& soc : AscendSocs()) {
      if (soc.name == std::string(GetParam().soc)) return soc;
    }
    ADD_FAILURE() << "no row " << GetParam().soc;
    return AscendSocs()[0];
  }
  BackendPtr Make() const { return MakeAscendBackend(Soc(), GetParam().alignment); }
};

// Capacities are the SoC descriptor's figures; DDR is unchecked.
TEST_P(AscendBackendTest, Capacities) {
  const BackendCase& c = GetParam();
  BackendPtr b = Make();
  EXPECT_EQ(b->GetMemSize(MemorySpace::kVec), c.vec);
  EXPECT_EQ(b->GetMemSize(MemorySpace::kMat), c.mat);
  EXPECT_EQ(b->GetMemSize(MemorySpace::kLeft), c.left);
  EXPECT_EQ(b->GetMemSize(MemorySpace::kRight), c.right);
  EXPECT_EQ(b->GetMemSize(MemorySpace::kAcc), c.acc);
  EXPECT_EQ(b->GetMemSize(MemorySpace::kBias), c.bias);
  EXPECT_EQ(b->GetMemSize(MemorySpace::kDDR), 0);
}

// Storage layouts are kept apart only in Vec on the 950 (pypto #2100 / #2517); an unstated
// layout counts as ND there. The 910B separates nothing.
TEST_P(AscendBackendTest, LayoutSeparation) {
  BackendPtr b = Make();
  const bool is_950 = std::string(GetParam().soc) == "ascend950";
  for (MemorySpace s : kOnChip) {
    EXPECT_EQ(b->SeparatesLayouts(s), is_950 && s == MemorySpace::kVec) << ir::MemorySpaceName(s);
  }
  EXPECT_FALSE(b->SeparatesLayouts(MemorySpace::kDDR));
  ir::TileType none(ir::StaticShape({16, 16}), DType::kFP16, MemorySpace::kVec);
  ir::TileType nz(ir::StaticShape({16, 16}), DType::kFP16, MemorySpace::kVec, nullptr,
                  ir::TileLayout::kNZ);
  ir::TileType mat_nz(ir::StaticShape({16, 16}), DType::kFP16, MemorySpace::kMat, nullptr,
                      ir::TileLayout::kNZ);
  EXPECT_EQ(SeparatedLayout(b.get(), none),
            is_950 ? std::optional<ir::TileLayout>(ir::TileLayout::kND) : std::nullopt);
  EXPECT_EQ(SeparatedLayout(b.get(), nz),
            is_950 ? std::optional<ir::TileLayout>(ir::TileLayout::kNZ) : std::nullopt);
  EXPECT_EQ(SeparatedLayout(b.get(), mat_nz), std::nullopt);
  EXPECT_EQ(SeparatedLayout(nullptr, nz), std::nullopt);
}

// Acc tiles pad their rows as the SoC says (by dtype); other spaces use the plain rule.
TEST_P(AscendBackendTest, AccRowPadding) {
  const BackendCase& c = GetParam();
  BackendPtr b = Make();
  ir::TileType acc(ir::StaticShape({17, 16}), DType::kFP32, MemorySpace::kAcc);
  EXPECT_EQ(b->TileBytes(acc), c.fp32_17_rows * 16 * 4);
  ir::TileType acc_i32(ir::StaticShape({20, 16}), DType::kINT32, MemorySpace::kAcc);
  EXPECT_EQ(b->TileBytes(acc_i32), c.int32_20_rows * 16 * 4);
  ir::TileType acc_i32_small(ir::StaticShape({8, 16}), DType::kINT32, MemorySpace::kAcc);
  EXPECT_EQ(b->TileBytes(acc_i32_small), c.int32_8_rows * 16 * 4);
  ir::TileType vec(ir::StaticShape({17, 16}), DType::kFP32, MemorySpace::kVec);
  EXPECT_EQ(b->TileBytes(vec), 17 * 16 * 4);
  EXPECT_EQ(b->tile_byte_sizer().Bytes(acc), c.fp32_17_rows * 16 * 4);
}

// The uniform backends align every space to 32 bytes (the default policy, as the upstream
// compiler does); the SoC-aligned ones hand out the SoC-table policy. The configuration gives
// that policy and the capacities to the passes, and ScopedBackend restores the previous one.
TEST_P(AscendBackendTest, PolicyAndConfig) {
  const BackendCase& c = GetParam();
  BackendConfig::Reset();
  {
    ScopedBackend scoped(Make());
    EXPECT_TRUE(BackendConfig::IsConfigured());
    policy::MemoryAllocatorPolicyPtr p = CreateActivePolicy();
    if (c.alignment == AddressAlignment::kUniform32) {
      EXPECT_EQ(dynamic_cast<AscendMemoryAllocatorPolicy*>(p.get()), nullptr);
      for (MemorySpace s : kOnChip) {
        EXPECT_EQ(p->AlignAddress(1, s), 32u) << ir::MemorySpaceName(s);
        EXPECT_EQ(p->AlignAddress(33, s), 64u) << ir::MemorySpaceName(s);
      }
    } else {
      EXPECT_NE(dynamic_cast<AscendMemoryAllocatorPolicy*>(p.get()), nullptr);
      EXPECT_EQ(p->AlignAddress(1, MemorySpace::kVec), c.align_vec);
      EXPECT_EQ(p->AlignAddress(1, MemorySpace::kMat), c.align_mat);
      EXPECT_EQ(p->AlignAddress(1, MemorySpace::kLeft), c.align_left);
      EXPECT_EQ(p->AlignAddress(1, MemorySpace::kRight), c.align_right);
      EXPECT_EQ(p->AlignAddress(1, MemorySpace::kAcc), c.align_acc);
      EXPECT_EQ(p->AlignAddress(1, MemorySpace::kBias), c.align_bias);
    }
    EXPECT_EQ(ActiveMemSize(MemorySpace::kAcc), c.acc);
  }
  EXPECT_FALSE(BackendConfig::IsConfigured());
}

// Linking the target registers the backend under its name, with its row and alignment mode.
TEST_P(AscendBackendTest, RegisteredByName) {
  const BackendCase& c = GetParam();
  EXPECT_EQ(Make()->Name(), c.name);
  absl::StatusOr<BackendPtr> b = BackendRegistry::Global().Create(c.name);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)->Name(), c.name);
  EXPECT_EQ((*b)->GetMemSize(MemorySpace::kVec), c.vec);
  EXPECT_EQ((*b)->GetMemSize(MemorySpace::kAcc), c.acc);
  policy::MemoryAllocatorPolicyPtr p = (*b)->CreateMemoryAllocatorPolicy();
  const uint64_t vec_alignment = c.alignment == AddressAlignment::kUniform32 ? 32 : c.align_vec;
  EXPECT_EQ(p->AlignAddress(1, MemorySpace::kVec), vec_alignment);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, AscendBackendTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<BackendCase>& info) {
                           return absl::StrReplaceAll(info.param.name, {{"-", "_"}});
                         });

// Every backend the table registers has a case above.
TEST(AscendBackendCoverageTest, EveryRegisteredNameHasACase) {
  auto has_case = [](const std::string& name) {
    for (const BackendCase& c : kCases) {
      if (name == c.name) return true;
    }
    return false;
  };
  for (const AscendSoc& soc : AscendSocs()) {
    EXPECT_TRUE(has_case(soc.name)) << soc.name;
    EXPECT_TRUE(has_case(soc.soc_aligned_name)) << soc.soc_aligned_name;
  }
}

TEST(PaddedAccTileBytesTest, PadsRows) {
  ir::TileType t(ir::StaticShape({17, 16}), DType::kFP32, MemorySpace::kAcc);
  EXPECT_EQ(PaddedAccTileBytes(t, 16), 32 * 16 * 4);
  EXPECT_EQ(PaddedAccTileBytes(t, 32), 32 * 16 * 4);
  ir::TileType exact(ir::StaticShape({16, 16}), DType::kFP32, MemorySpace::kAcc);
  EXPECT_EQ(PaddedAccTileBytes(exact, 16), 16 * 16 * 4);
  ir::TileType batched(ir::StaticShape({2, 3, 1, 8}), DType::kFP16, MemorySpace::kAcc);
  EXPECT_EQ(PaddedAccTileBytes(batched, 16), 2 * 3 * 16 * 8 * 2);
  ir::TileType vec1(ir::StaticShape({5}), DType::kFP32, MemorySpace::kAcc);
  EXPECT_EQ(PaddedAccTileBytes(vec1, 16), 20);
}

}  // namespace
}  // namespace backends
}  // namespace accelmem
