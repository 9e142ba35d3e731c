#include "policy/internal/occupancy_tree.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "policy/internal/placement_items.h"
#include "policy/placement_checker.h"

namespace accelmem {
namespace policy {
namespace internal {
namespace {

std::vector<std::pair<int64_t, int64_t>> Pairs(const std::vector<Interval>& list) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const Interval& iv : list) out.push_back({iv.begin, iv.end});
  return out;
}

// The union of `lists` as a sorted, coalesced list (touching intervals merge).
std::vector<Interval> Union(std::vector<Interval> all) {
  std::sort(all.begin(), all.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::vector<Interval> out;
  for (const Interval& iv : all) {
    if (!out.empty() && iv.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, iv.end);
    } else {
      out.push_back(iv);
    }
  }
  return out;
}

// AddInterval keeps the list sorted and merges overlapping and touching intervals.
TEST(OccupancyTreeTest, AddIntervalCoalesces) {
  std::vector<Interval> list;
  AddInterval(list, 10, 20);
  AddInterval(list, 30, 40);
  EXPECT_EQ(Pairs(list), (std::vector<std::pair<int64_t, int64_t>>{{10, 20}, {30, 40}}));
  AddInterval(list, 40, 45);  // touches the top
  AddInterval(list, 0, 5);    // below everything
  EXPECT_EQ(Pairs(list), (std::vector<std::pair<int64_t, int64_t>>{{0, 5}, {10, 20}, {30, 45}}));
  AddInterval(list, 22, 25);  // in a gap
  AddInterval(list, 4, 31);   // spans several
  EXPECT_EQ(Pairs(list), (std::vector<std::pair<int64_t, int64_t>>{{0, 45}}));
  AddInterval(list, 1, 2);  // inside
  EXPECT_EQ(Pairs(list), (std::vector<std::pair<int64_t, int64_t>>{{0, 45}}));
  std::vector<Interval> gap = {{0, 5}, {10, 20}, {30, 40}};
  AddInterval(gap, 5, 10);  // fills a gap exactly: touches both neighbours
  EXPECT_EQ(Pairs(gap), (std::vector<std::pair<int64_t, int64_t>>{{0, 20}, {30, 40}}));
}

// For every item's section range, the union of the lists Query returns is exactly the union of
// the intervals inserted for items whose sections meet that range; Clear empties the tree.
// Enough sections that buffers span whole blocks of 256 sections.
TEST(OccupancyTreeTest, QueryMatchesBruteForce) {
  std::mt19937_64 rng(7);
  std::vector<PlacementBuffer> buffers;
  for (int i = 0; i < 600; ++i) {
    const int64_t start = static_cast<int64_t>(rng() % 1500);
    const int64_t length = 1 + static_cast<int64_t>(rng() % (i % 10 == 0 ? 1200 : 40));
    buffers.push_back({"b", start, start + length, 1});
  }
  const Items items = MakeItems(buffers, 1);
  ASSERT_GT(items.num_sections, 512);
  OccupancyTree tree(items);
  for (int round = 0; round < 2; ++round) {
    std::vector<Interval> placed(items.count(), Interval{0, 0});
    std::vector<bool> inserted(items.count(), false);
    for (int i = 0; i < items.count(); i += 2) {
      const int64_t begin = static_cast<int64_t>(rng() % 100000);
      placed[i] = {begin, begin + 1 + static_cast<int64_t>(rng() % 500)};
      inserted[i] = true;
      tree.Insert(items.lo[i], items.hi[i], placed[i].begin, placed[i].end);
    }
    for (int q = 0; q < items.count(); ++q) {
      std::vector<IntervalRun> lists;
      tree.Query(items.lo[q], items.hi[q], lists);
      std::vector<Interval> got;
      for (const IntervalRun& list : lists) {
        ASSERT_GT(list.size, 0u);
        got.insert(got.end(), list.data, list.data + list.size);
      }
      std::vector<Interval> want;
      for (int i = 0; i < items.count(); ++i) {
        if (inserted[i] && items.lo[i] < items.hi[q] && items.lo[q] < items.hi[i]) {
          want.push_back(placed[i]);
        }
      }
      ASSERT_EQ(Pairs(Union(got)), Pairs(Union(want))) << "round " << round << " item " << q;
    }
    tree.Clear();
    std::vector<IntervalRun> lists;
    tree.Query(0, items.num_sections, lists);
    EXPECT_TRUE(lists.empty());
  }
}

// Brute force: the union of the intervals placed for items whose sections meet those of item q.
std::vector<Interval> Occupied(const Items& items, const std::vector<Interval>& placed,
                               const std::vector<bool>& inserted, int q) {
  std::vector<Interval> want;
  for (int i = 0; i < items.count(); ++i) {
    if (inserted[i] && items.lo[i] < items.hi[q] && items.lo[q] < items.hi[i]) {
      want.push_back(placed[i]);
    }
  }
  return Union(want);
}

std::vector<Interval> Got(const OccupancyTree& tree, const Items& items, int q) {
  std::vector<IntervalRun> lists;
  tree.Query(items.lo[q], items.hi[q], lists);
  std::vector<Interval> got;
  for (const IntervalRun& list : lists) got.insert(got.end(), list.data, list.data + list.size);
  return Union(got);
}

// As best fit uses it (query, retire, insert, in a random order; some items retired without
// being inserted): the query of every item not yet retired stays exact, although lists that
// only retired items read are no longer written. After Clear() every item reads again.
TEST(OccupancyTreeTest, RetiredItemsDoNotChangeOtherQueries) {
  std::mt19937_64 rng(11);
  std::vector<PlacementBuffer> buffers;
  for (int i = 0; i < 500; ++i) {
    const int64_t start = static_cast<int64_t>(rng() % 1500);
    const int64_t length = 1 + static_cast<int64_t>(rng() % (i % 7 == 0 ? 1400 : 30));
    buffers.push_back({"b", start, start + length, 1});
  }
  const Items items = MakeItems(buffers, 1);
  ASSERT_GT(items.num_sections, 512);
  OccupancyTree tree(items);
  for (int round = 0; round < 2; ++round) {
    tree.Clear();
    std::vector<int> order(items.count());
    for (int i = 0; i < items.count(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    // Long buffers first in round 0 (as the lifetime order does), random in round 1.
    if (round == 0) {
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return items.hi[a] - items.lo[a] > items.hi[b] - items.lo[b];
      });
    }
    std::vector<Interval> placed(items.count(), Interval{0, 0});
    std::vector<bool> inserted(items.count(), false), retired(items.count(), false);
    for (int k = 0; k < items.count(); ++k) {
      const int i = order[k];
      if (retired[i]) continue;
      ASSERT_EQ(Pairs(Got(tree, items, i)), Pairs(Occupied(items, placed, inserted, i)))
          << "round " << round << " step " << k;
      tree.Retire(items.lo[i], items.hi[i]);
      retired[i] = true;
      const int64_t begin = static_cast<int64_t>(rng() % 20000);
      placed[i] = {begin, begin + 1 + static_cast<int64_t>(rng() % 300)};
      inserted[i] = true;
      tree.Insert(items.lo[i], items.hi[i], placed[i].begin, placed[i].end);
      // Now and then an item that will never be placed stops reading.
      const int other = order[rng() % items.count()];
      if (k % 5 == 0 && !retired[other]) {
        tree.Retire(items.lo[other], items.hi[other]);
        retired[other] = true;
      }
    }
  }
}

// Lists far larger than the first chunk (2^12 intervals) grow through several blocks and chunks,
// and keep every interval; after Clear() the freed room is reused and the lists are exact again.
TEST(OccupancyTreeTest, LargeListsGrowAcrossChunks) {
  std::vector<PlacementBuffer> buffers = {{"a", 0, 10, 1}, {"b", 5, 20, 1}, {"c", 0, 20, 1}};
  const Items items = MakeItems(buffers, 1);
  OccupancyTree tree(items);
  for (int round = 0; round < 2; ++round) {
    tree.Clear();
    std::vector<Interval> placed;
    std::vector<bool> inserted;
    const int count = round == 0 ? 20000 : 9000;
    // Disjoint intervals, inserted in an order that puts many below the top (memmove path).
    for (int k = 0; k < count; ++k) {
      const int i = k % 2;
      const int64_t slot = (k * 7919) % count;
      tree.Insert(items.lo[i], items.hi[i], 10 * slot + i * 3, 10 * slot + i * 3 + 2);
    }
    std::vector<Interval> want;
    for (int k = 0; k < count; ++k) {
      const int64_t slot = (k * 7919) % count;
      want.push_back({10 * slot + (k % 2) * 3, 10 * slot + (k % 2) * 3 + 2});
    }
    EXPECT_EQ(Pairs(Got(tree, items, 2)), Pairs(Union(want))) << "round " << round;
  }
}

}  // namespace
}  // namespace internal
}  // namespace policy
}  // namespace accelmem
