#include "backends/ascend/ascend_policy.h"

#include <ostream>
#include <string>
#include <vector>

#include "backends/ascend/ascend_soc.h"
#include "gtest/gtest.h"
#include "ir/memref.h"

namespace accelmem {
namespace backends {
namespace {

using ir::MemorySpace;

// What the policy of one SoC row must do, written out independently of the table.
struct PolicyCase {
  const char* soc;  // AscendSoc::name
  uint64_t vec, mat, left, right, acc, bias;
};

const PolicyCase kCases[] = {
    {"ascend910b", 128, 128, 64, 64, 128, 64},
    {"ascend950", 128, 128, 64, 64, 128, 64},
};

void PrintTo(const PolicyCase& c, std::ostream* os) { *os << c.soc; }

const AscendSoc* FindRow(const std::string& name) {
  for (const AscendSoc& soc : AscendSocs()) {
    if (soc.name == name) return &soc;
  }
  return nullptr;
}

class AscendPolicyTest : public ::testing::TestWithParam<PolicyCase> {
 protected:
  const AscendSoc& Soc() const {
    const AscendSoc* soc = FindRow(GetParam().soc);
    if (soc == nullptr) ADD_FAILURE() << "no row " << GetParam().soc;
    return soc != nullptr ? *soc : AscendSocs()[0];
  }
};

// Each space aligns to the SoC table: 128 for Vec/Mat/Acc, 64 for Left/Right/Bias.
TEST_P(AscendPolicyTest, AlignsPerSpace) {
  const PolicyCase& c = GetParam();
  AscendMemoryAllocatorPolicy p(Soc());
  EXPECT_EQ(p.AlignAddress(1, MemorySpace::kVec), c.vec);
  EXPECT_EQ(p.AlignAddress(1, MemorySpace::kMat), c.mat);
  EXPECT_EQ(p.AlignAddress(1, MemorySpace::kAcc), c.acc);
  EXPECT_EQ(p.AlignAddress(1, MemorySpace::kLeft), c.left);
  EXPECT_EQ(p.AlignAddress(1, MemorySpace::kRight), c.right);
  EXPECT_EQ(p.AlignAddress(1, MemorySpace::kBias), c.bias);
  EXPECT_EQ(p.AlignAddress(c.bias + 1, MemorySpace::kBias), 2 * c.bias);
  EXPECT_EQ(p.AlignAddress(16384, MemorySpace::kVec), 16384u);
}

// DDR is skipped and roots are placed in id order, like the default policy.
TEST_P(AscendPolicyTest, DefaultFilterAndOrder) {
  AscendMemoryAllocatorPolicy p(Soc());
  EXPECT_FALSE(p.ShouldAllocate(MemorySpace::kDDR));
  EXPECT_TRUE(p.ShouldAllocate(MemorySpace::kVec));
  std::vector<ir::MemRefPtr> refs = {
      ir::MemRef::MakeRoot("mem_vec_3", MemorySpace::kVec, -1, 8, 3),
      ir::MemRef::MakeRoot("mem_vec_1", MemorySpace::kVec, -1, 8, 1)};
  p.OrderMemRefs(refs);
  EXPECT_EQ(refs[0]->id(), 1);
}

INSTANTIATE_TEST_SUITE_P(AllSocs, AscendPolicyTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<PolicyCase>& info) {
                           return std::string(info.param.soc);
                         });

// Every row of the table has a case above.
TEST(AscendPolicyCoverageTest, EveryRowHasACase) {
  for (const AscendSoc& soc : AscendSocs()) {
    bool found = false;
    for (const PolicyCase& c : kCases) found = found || c.soc == std::string(soc.name);
    EXPECT_TRUE(found) << soc.name;
  }
}

}  // namespace
}  // namespace backends
}  // namespace accelmem
