#include "policy/internal/placement_items.h"

#include <vector>

#include "gtest/gtest.h"
#include "policy/placement_checker.h"

namespace accelmem {
namespace policy {
namespace internal {
namespace {

std::vector<PlacementBuffer> Example() {
  return {{"a", 0, 4, 10}, {"b", 2, 6, 0}, {"c", 3, 3, 5}, {"d", 4, 8, 20}, {"e", 2, 5, 6}};
}

// RoundUp rounds to the next multiple and keeps multiples.
TEST(PlacementItemsTest, RoundUp) {
  EXPECT_EQ(RoundUp(0, 4), 0);
  EXPECT_EQ(RoundUp(1, 4), 4);
  EXPECT_EQ(RoundUp(8, 4), 8);
  EXPECT_EQ(RoundUp(7, 1), 7);
}

// Buffers without size or lifetime are left out; the others keep input order, get aligned sizes
// and the sections (distinct start/end times) they span.
TEST(PlacementItemsTest, MakeItemsSectionsAndSizes) {
  const Items items = MakeItems(Example(), 4);
  ASSERT_EQ(items.count(), 3);
  EXPECT_EQ(items.buffer, (std::vector<int>{0, 3, 4}));
  EXPECT_EQ(items.size, (std::vector<int64_t>{12, 20, 8}));
  // Times 0, 2, 4, 5, 8: four sections.
  EXPECT_EQ(items.num_sections, 4);
  EXPECT_EQ(items.lo, (std::vector<int>{0, 2, 1}));
  EXPECT_EQ(items.hi, (std::vector<int>{2, 4, 3}));
  EXPECT_EQ(items.start, (std::vector<int64_t>{0, 4, 2}));
  EXPECT_EQ(items.end, (std::vector<int64_t>{4, 8, 5}));
}

// LOAD is taken over the aligned sizes, and `unit` is their gcd.
TEST(PlacementItemsTest, LoadAndUnit) {
  const Items items = MakeItems(Example(), 4);
  EXPECT_EQ(items.load, 28);  // d + e in [4, 5)
  EXPECT_EQ(items.unit, 4);
  const Items unaligned = MakeItems(Example(), 1);
  EXPECT_EQ(unaligned.load, 26);
  EXPECT_EQ(unaligned.unit, 2);
}

// An instance without items has no sections, LOAD 0 and unit 1.
TEST(PlacementItemsTest, EmptyInstance) {
  const Items items = MakeItems({{"z", 1, 1, 8}}, 1);
  EXPECT_EQ(items.count(), 0);
  EXPECT_EQ(items.num_sections, 0);
  EXPECT_EQ(items.load, 0);
  EXPECT_EQ(items.unit, 1);
}

// Item offsets map back to their buffers; left-out buffers get offset 0. The height is the
// highest item top.
TEST(PlacementItemsTest, BufferOffsetsAndHeight) {
  const Items items = MakeItems(Example(), 4);
  const std::vector<int64_t> item_offsets = {0, 12, 40};
  EXPECT_EQ(ToBufferOffsets(items, 5, item_offsets), (std::vector<int64_t>{0, 0, 0, 12, 40}));
  EXPECT_EQ(ItemHeight(items, item_offsets), 48);
}

}  // namespace
}  // namespace internal
}  // namespace policy
}  // namespace accelmem
