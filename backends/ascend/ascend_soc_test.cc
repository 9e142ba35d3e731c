#include "backends/ascend/ascend_soc.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace accelmem {
namespace backends {
namespace {

using ir::DType;
using ir::MemorySpace;

// The table holds the 910B and the 950, in that order, and the accessors return those rows.
TEST(AscendSocTest, RowsInOrder) {
  ASSERT_EQ(AscendSocs().size(), 2u);
  EXPECT_STREQ(AscendSocs()[0].name, "ascend910b");
  EXPECT_STREQ(AscendSocs()[1].name, "ascend950");
  EXPECT_EQ(&Ascend910b(), &AscendSocs()[0]);
  EXPECT_EQ(&Ascend950(), &AscendSocs()[1]);
}

// Every backend name in the table is distinct, and the SoC-aligned one is "<name>-soc-aligned".
TEST(AscendSocTest, NamesAreUnique) {
  std::set<std::string> names;
  for (const AscendSoc& soc : AscendSocs()) {
    EXPECT_TRUE(names.insert(soc.name).second) << soc.name;
    EXPECT_TRUE(names.insert(soc.soc_aligned_name).second) << soc.soc_aligned_name;
    EXPECT_EQ(std::string(soc.soc_aligned_name), std::string(soc.name) + "-soc-aligned");
  }
}

// Every on-chip alignment is a positive multiple of 32, so the SoC table is never looser than the
// uniform 32 bytes; DDR has no capacity and no alignment.
TEST(AscendSocTest, AlignmentsAreMultiplesOf32) {
  for (const AscendSoc& soc : AscendSocs()) {
    EXPECT_EQ(soc.MemSize(MemorySpace::kDDR), 0) << soc.name;
    EXPECT_EQ(soc.alignment[static_cast<int>(MemorySpace::kDDR)], 0u) << soc.name;
    for (MemorySpace s : {MemorySpace::kVec, MemorySpace::kMat, MemorySpace::kLeft,
                          MemorySpace::kRight, MemorySpace::kAcc, MemorySpace::kBias}) {
      const uint64_t a = soc.alignment[static_cast<int>(s)];
      EXPECT_GT(a, 0u) << soc.name << " " << ir::MemorySpaceName(s);
      EXPECT_EQ(a % 32, 0u) << soc.name << " " << ir::MemorySpaceName(s);
      EXPECT_GT(soc.MemSize(s), 0) << soc.name << " " << ir::MemorySpaceName(s);
    }
  }
}

// An out-of-range space has no capacity instead of reading past the row.
TEST(AscendSocTest, OutOfRangeSpaceHasNoCapacity) {
  EXPECT_EQ(Ascend910b().MemSize(static_cast<MemorySpace>(ir::kNumMemorySpaces)), 0);
}

// INT32 accumulators take their own row alignment; every other dtype takes the common one.
TEST(AscendSocTest, AccRowAlignmentByDType) {
  EXPECT_EQ(Ascend910b().AccRowAlignment(DType::kINT32), 32);
  EXPECT_EQ(Ascend910b().AccRowAlignment(DType::kFP32), 16);
  EXPECT_EQ(Ascend950().AccRowAlignment(DType::kINT32), 16);
  EXPECT_EQ(Ascend950().AccRowAlignment(DType::kFP16), 16);
}

}  // namespace
}  // namespace backends
}  // namespace accelmem
