#include "policy/testing/trace_generators.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "policy/placement_checker.h"

namespace accelmem {
namespace policy_testing {
namespace {

using policy::PlacementBuffer;

bool Same(const std::vector<PlacementBuffer>& a, const std::vector<PlacementBuffer>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].id != b[i].id || a[i].start != b[i].start || a[i].end != b[i].end ||
        a[i].size != b[i].size) {
      return false;
    }
  }
  return true;
}

// Every family gives valid instances of about the requested size, with positive sizes and
// non-empty lifetimes, the same for the same seed and different for another.
TEST(TraceGeneratorsTest, ValidDeterministicAndSized) {
  for (const TraceFamily& family : TraceFamilies()) {
    for (int n : {1, 7, 100, 5000}) {
      const std::vector<PlacementBuffer> a = family.generate(1, n);
      EXPECT_TRUE(policy::ValidateInstance(a).ok()) << family.name << " n=" << n;
      EXPECT_GE(a.size(), 1u) << family.name;
      EXPECT_LE(a.size(), static_cast<size_t>(n) + n / 10 + 2) << family.name << " n=" << n;
      EXPECT_GE(a.size(), static_cast<size_t>(n) * 9 / 10) << family.name << " n=" << n;
      for (const PlacementBuffer& b : a) {
        ASSERT_GT(b.size, 0) << family.name;
        ASSERT_LT(b.start, b.end) << family.name;
      }
      EXPECT_TRUE(Same(a, family.generate(1, n))) << family.name;
      if (n >= 100) {
        EXPECT_FALSE(Same(a, family.generate(2, n))) << family.name;
      }
    }
  }
}

// A million buffers stay far below the placement size limit.
TEST(TraceGeneratorsTest, MillionBuffersStayWithinLimits) {
  for (const char* name : {"iopddl", "somas", "power_law"}) {
    const std::vector<PlacementBuffer> buffers = FindTraceFamily(name).generate(3, 1000000);
    EXPECT_TRUE(policy::ValidateInstance(buffers).ok()) << name;
  }
}

}  // namespace
}  // namespace policy_testing
}  // namespace accelmem
