#include "policy/placement_checker.h"

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace policy {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

PlacementBuffer B(std::string id, int64_t start, int64_t end, int64_t size) {
  return PlacementBuffer{std::move(id), start, end, size};
}

// The O(n^2) definition of validity, used as the oracle for the sweep.
bool BruteForceValid(const std::vector<PlacementBuffer>& buffers,
                     const std::vector<int64_t>& offsets) {
  for (size_t i = 0; i < buffers.size(); ++i) {
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (!LifetimesIntersect(buffers[i], buffers[j])) continue;
      if (buffers[i].size == 0 || buffers[j].size == 0) continue;
      if (offsets[i] < offsets[j] + buffers[j].size && offsets[j] < offsets[i] + buffers[i].size) {
        return false;
      }
    }
  }
  return true;
}

// A placement where live-together buffers are stacked is accepted.
TEST(CheckPlacementTest, AcceptsDisjointPlacement) {
  std::vector<PlacementBuffer> buffers = {B("a", 0, 10, 4), B("b", 2, 5, 8), B("c", 5, 12, 8)};
  EXPECT_TRUE(CheckPlacement(buffers, {0, 4, 4}).ok());
}

// Two live-together buffers sharing bytes are rejected, and the message names both.
TEST(CheckPlacementTest, RejectsOverlapAndNamesBothBuffers) {
  std::vector<PlacementBuffer> buffers = {B("weights", 0, 10, 16), B("act", 3, 6, 8)};
  absl::Status s = CheckPlacement(buffers, {0, 8});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("'weights' (#0)"), HasSubstr("'act' (#1)"),
                    HasSubstr("bytes [0, 16)"), HasSubstr("bytes [8, 16)"), HasSubstr("step 3")));
}

// A buffer nested inside a larger one (not its address neighbour after others) is caught.
TEST(CheckPlacementTest, RejectsNestedOverlapBehindANeighbour) {
  std::vector<PlacementBuffer> buffers = {B("big", 0, 10, 100), B("mid", 0, 10, 0),
                                          B("small", 5, 6, 4), B("far", 0, 10, 4)};
  EXPECT_FALSE(CheckPlacement(buffers, {0, 0, 50, 100}).ok());
}

// Lifetimes are half-open: [0, 5) and [5, 9) may share an address.
TEST(CheckPlacementTest, HalfOpenLifetimesMayShareAddresses) {
  std::vector<PlacementBuffer> buffers = {B("a", 0, 5, 8), B("b", 5, 9, 8)};
  EXPECT_TRUE(CheckPlacement(buffers, {0, 0}).ok());
  buffers[1].start = 4;
  EXPECT_FALSE(CheckPlacement(buffers, {0, 0}).ok());
}

// Address ranges are half-open too: [0, 4) and [4, 8) touch but do not overlap.
TEST(CheckPlacementTest, TouchingAddressRangesAreFine) {
  std::vector<PlacementBuffer> buffers = {B("a", 0, 5, 4), B("b", 0, 5, 4)};
  EXPECT_TRUE(CheckPlacement(buffers, {0, 4}).ok());
  EXPECT_FALSE(CheckPlacement(buffers, {0, 3}).ok());
}

// Zero-size buffers and empty lifetimes never conflict with anything.
TEST(CheckPlacementTest, ZeroSizeAndEmptyLifetimesNeverConflict) {
  std::vector<PlacementBuffer> buffers = {B("a", 0, 5, 8), B("empty", 2, 2, 8), B("zero", 0, 5, 0)};
  EXPECT_TRUE(CheckPlacement(buffers, {0, 0, 0}).ok());
}

// Offsets must be multiples of the alignment.
TEST(CheckPlacementTest, RejectsMisalignedOffset) {
  std::vector<PlacementBuffer> buffers = {B("a", 0, 5, 8), B("b", 0, 5, 8)};
  EXPECT_TRUE(CheckPlacement(buffers, {0, 8}, {8, 0}).ok());
  absl::Status s = CheckPlacement(buffers, {0, 12}, {8, 0});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), AllOf(HasSubstr("'b'"), HasSubstr("alignment 8")));
}

// With a capacity, every buffer must end at or below it.
TEST(CheckPlacementTest, RejectsBufferAboveCapacity) {
  std::vector<PlacementBuffer> buffers = {B("a", 0, 5, 8), B("b", 0, 5, 8)};
  EXPECT_TRUE(CheckPlacement(buffers, {0, 8}, {1, 16}).ok());
  absl::Status s = CheckPlacement(buffers, {0, 9}, {1, 16});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), AllOf(HasSubstr("'b'"), HasSubstr("capacity 16")));
  // A buffer that is never live takes no space, so it cannot exceed the capacity.
  buffers.push_back(B("never", 3, 3, 100));
  EXPECT_TRUE(CheckPlacement(buffers, {0, 8, 0}, {1, 16}).ok());
}

// Negative offsets and a wrong number of offsets are rejected.
TEST(CheckPlacementTest, RejectsNegativeOffsetAndWrongCount) {
  std::vector<PlacementBuffer> buffers = {B("a", 0, 5, 8)};
  EXPECT_FALSE(CheckPlacement(buffers, {-8}).ok());
  EXPECT_FALSE(CheckPlacement(buffers, {}).ok());
  EXPECT_FALSE(CheckPlacement(buffers, {0, 0}).ok());
}

// Malformed instances are rejected before any placement is looked at.
// Too many buffers are rejected before any is read (the span's elements past the first are never
// touched: the count is checked first).
TEST(ValidateInstanceTest, RejectsTooManyBuffers) {
  const PlacementBuffer one = B("a", 0, 5, 8);
  const absl::Span<const PlacementBuffer> huge(&one, kMaxPlacementBuffers + 1);
  EXPECT_THAT(ValidateInstance(huge).message(), HasSubstr("buffers, above the limit"));
  EXPECT_TRUE(ValidateInstance(absl::Span<const PlacementBuffer>(&one, 1)).ok());
}

TEST(ValidateInstanceTest, RejectsMalformedInstances) {
  EXPECT_TRUE(ValidateInstance({B("a", 0, 5, 8)}).ok());
  EXPECT_THAT(ValidateInstance({B("a", 6, 5, 8)}).message(), HasSubstr("'a' (#0) ends"));
  EXPECT_THAT(ValidateInstance({B("a", 0, 5, -1)}).message(), HasSubstr("negative size"));
  EXPECT_FALSE(ValidateInstance({B("a", 0, 5, 8)}, {0, 0}).ok());
  EXPECT_FALSE(ValidateInstance({B("a", 0, 5, 8)}, {1, -1}).ok());
  EXPECT_FALSE(
      ValidateInstance({B("a", 0, 5, kMaxPlacementBytes), B("b", 0, 5, kMaxPlacementBytes)}).ok());
}

// Sizes, their sum and lifetime lengths that would overflow int64 are errors naming the buffer,
// never a wrap: 2^62 + 2^62 + 2^62 + 2^62 wraps to 0 in int64.
TEST(ValidateInstanceTest, OverflowIsAnErrorNamingTheBuffer) {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_THAT(ValidateInstance({B("a", 0, 5, kMax)}).message(), HasSubstr("'a' (#0) has size"));
  const int64_t quarter = int64_t{1} << 60;
  EXPECT_THAT(ValidateInstance({B("a", 0, 5, quarter), B("b", 0, 5, quarter)}).message(),
              HasSubstr("up to buffer 'b' (#1) add up to more than"));
  // Alignment rounding counts: two buffers of 2^59 + 1 rounded to 2^59 * 2 each.
  EXPECT_THAT(
      ValidateInstance({B("x", 0, 1, (quarter >> 1) + 1), B("y", 0, 1, 1)}, {quarter >> 1, 0})
          .message(),
      HasSubstr("up to buffer 'y' (#1)"));
  EXPECT_THAT(ValidateInstance({B("ok", 0, 1, 8), B("long", kMin, kMax, 8)}).message(),
              AllOf(HasSubstr("'long' (#1)"), HasSubstr("too long")));
  EXPECT_THAT(ValidateInstance({B("long", -1, kMax, 8)}).message(), HasSubstr("'long' (#0)"));
  EXPECT_TRUE(ValidateInstance({B("edge", 0, kMax, 8), B("neg", kMin, -1, 8)}).ok());
  // The checker rejects the same instances before looking at offsets.
  EXPECT_THAT(CheckPlacement({B("long", kMin, kMax, 8)}, {0}).message(), HasSubstr("'long'"));
}

// An offset whose end would pass int64 saturates the height instead of wrapping negative.
TEST(PlacementHeightTest, SaturatesInsteadOfWrapping) {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(PlacementHeight({B("a", 0, 5, 8)}, {kMax - 3}), kMax);
  EXPECT_THAT(CheckPlacement({B("a", 0, 5, 8)}, {kMax - 3}).message(), HasSubstr("'a' (#0)"));
}

// LOAD is the largest total size live at one step, with half-open lifetimes.
TEST(ComputeLoadTest, MaximumLiveTotal) {
  std::vector<PlacementBuffer> buffers = {B("a", 0, 5, 4), B("b", 5, 9, 8), B("c", 3, 6, 2),
                                          B("zero", 0, 9, 0), B("empty", 4, 4, 100)};
  EXPECT_EQ(ComputeLoad(buffers), 10);  // b + c at steps 5.
  EXPECT_EQ(ComputeLoad({}), 0);
}

// Height ignores buffers that take no space.
TEST(PlacementHeightTest, HighestEnd) {
  std::vector<PlacementBuffer> buffers = {B("a", 0, 5, 4), B("b", 5, 9, 8), B("empty", 4, 4, 100)};
  EXPECT_EQ(PlacementHeight(buffers, {4, 0, 1000}), 8);
}

// The sweep agrees with the pairwise definition on many random placements, valid or not.
TEST(CheckPlacementTest, AgreesWithBruteForceOnRandomPlacements) {
  std::mt19937_64 rng(7);
  int valid = 0;
  int invalid = 0;
  for (int round = 0; round < 3000; ++round) {
    const int n = 1 + static_cast<int>(rng() % 12);
    std::vector<PlacementBuffer> buffers;
    std::vector<int64_t> offsets;
    for (int i = 0; i < n; ++i) {
      const int64_t start = static_cast<int64_t>(rng() % 10);
      const int64_t end = start + static_cast<int64_t>(rng() % 6);
      buffers.push_back(B("b" + std::to_string(i), start, end, static_cast<int64_t>(rng() % 9)));
      offsets.push_back(static_cast<int64_t>(rng() % 24));
    }
    const bool expected = BruteForceValid(buffers, offsets);
    EXPECT_EQ(CheckPlacement(buffers, offsets).ok(), expected) << "round " << round;
    (expected ? valid : invalid)++;
  }
  EXPECT_GT(valid, 100);
  EXPECT_GT(invalid, 100);
}

}  // namespace
}  // namespace policy
}  // namespace accelmem
