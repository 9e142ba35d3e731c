#include "policy/internal/placement_items.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
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

// SortByKey against std::stable_sort, on both sides of the radix threshold, with keys of every
// width (a digit equal in every key is skipped; the top digit may be partial).
TEST(PlacementItemsTest, SortByKeyMatchesStableSort) {
  std::mt19937_64 rng(7);
  for (int n : {0, 1, 5, 511, 512, 3000}) {
    for (int bits : {1, 3, 11, 12, 22, 33, 63, 64}) {
      std::vector<KeyedIndex> keyed(n);
      for (int i = 0; i < n; ++i) {
        uint64_t key = bits == 64 ? rng() : rng() & ((uint64_t{1} << bits) - 1);
        if (i % 3 == 0 && i > 0) key = keyed[i - 1].key;  // Ties.
        keyed[i] = {key, i};
      }
      std::vector<KeyedIndex> expected = keyed;
      std::stable_sort(expected.begin(), expected.end(),
                       [](const KeyedIndex& a, const KeyedIndex& b) { return a.key < b.key; });
      std::vector<KeyedIndex> spare;
      SortByKey(keyed, spare, bits);
      ASSERT_EQ(keyed.size(), expected.size());
      for (int i = 0; i < n; ++i) {
        ASSERT_EQ(keyed[i].key, expected[i].key) << "n=" << n << " bits=" << bits << " i=" << i;
        ASSERT_EQ(keyed[i].index, expected[i].index) << "n=" << n << " bits=" << bits;
      }
    }
  }
}

TEST(PlacementItemsTest, BitsFor) {
  EXPECT_EQ(BitsFor(0), 1);
  EXPECT_EQ(BitsFor(1), 1);
  EXPECT_EQ(BitsFor(2), 2);
  EXPECT_EQ(BitsFor(2047), 11);
  EXPECT_EQ(BitsFor(2048), 12);
  EXPECT_EQ(BitsFor(std::numeric_limits<uint64_t>::max()), 64);
}

// Sections against the definition (sorted distinct times, each item's position of its start and
// end among them), on random instances whose times span from INT64_MIN to INT64_MAX, cluster,
// or repeat.
TEST(PlacementItemsTest, SectionsMatchSortedDistinctTimes) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 60; ++round) {
    const int n = round % 3 == 0 ? 40 : 900;
    std::vector<PlacementBuffer> buffers;
    for (int i = 0; i < n; ++i) {
      int64_t a, b;
      switch (round % 4) {
        case 0:  // Anywhere in the int64 range.
          a = static_cast<int64_t>(rng());
          b = static_cast<int64_t>(rng());
          break;
        case 1:  // Few distinct times.
          a = static_cast<int64_t>(rng() % 9) - 4;
          b = static_cast<int64_t>(rng() % 9) - 4;
          break;
        case 2:  // The extremes.
          a = rng() % 2 ? std::numeric_limits<int64_t>::min() : static_cast<int64_t>(rng() % 50);
          b = rng() % 2 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(rng() % 50);
          break;
        default:
          a = static_cast<int64_t>(rng() % 100000);
          b = a + static_cast<int64_t>(rng() % 500);
      }
      if (a > b) std::swap(a, b);
      buffers.push_back({"b", a, b, static_cast<int64_t>(1 + rng() % 64)});
    }
    const Items items = MakeItems(buffers, 1);
    std::vector<int64_t> times;
    for (const PlacementBuffer& b : buffers) {
      if (b.start < b.end) {
        times.push_back(b.start);
        times.push_back(b.end);
      }
    }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    ASSERT_EQ(items.num_sections, times.empty() ? 0 : static_cast<int>(times.size()) - 1);
    for (int i = 0; i < items.count(); ++i) {
      auto position = [&times](int64_t t) {
        return static_cast<int>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
      };
      ASSERT_EQ(items.lo[i], position(items.start[i])) << "round " << round << " item " << i;
      ASSERT_EQ(items.hi[i], position(items.end[i])) << "round " << round << " item " << i;
    }
  }
}

}  // namespace
}  // namespace internal
}  // namespace policy
}  // namespace accelmem
