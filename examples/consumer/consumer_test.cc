// A downstream test built against @accelmem's targets and dependency macro.
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "plan.pb.h"

namespace {

absl::StatusOr<consumer::Placement> Place(const std::string& buffer, int64_t offset) {
  if (offset % 32 != 0) return absl::InvalidArgumentError(absl::StrCat("unaligned ", offset));
  consumer::Placement placement;
  placement.set_buffer(buffer);
  placement.set_offset(offset);
  return placement;
}

// accelmem's proto macro and abseil wiring work from another workspace.
TEST(ConsumerTest, ProtoMacroAndAbseilFromAccelmem) {
  auto placed = Place("mem_vec_0", 64);
  ASSERT_TRUE(placed.ok());
  std::string wire;
  ASSERT_TRUE(placed->SerializeToString(&wire));
  consumer::Placement parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  EXPECT_EQ(parsed.offset(), 64);
  EXPECT_FALSE(Place("mem_vec_1", 33).ok());
}

}  // namespace
