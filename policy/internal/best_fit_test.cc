#include "policy/internal/best_fit.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "policy/greedy_order.h"
#include "policy/internal/placement_items.h"
#include "policy/placement_checker.h"

namespace accelmem {
namespace policy {
namespace internal {
namespace {

// Three fixed buffers over the whole trace leave the gaps [10, 30) and [40, 45) and the top at
// 100; item 3 is the one to place.
std::vector<PlacementBuffer> Gaps(int64_t size) {
  return {{"f0", 0, 10, 10}, {"f1", 0, 10, 10}, {"f2", 0, 10, 55}, {"x", 2, 5, size}};
}
const std::vector<std::pair<int, int64_t>> kFixed = {{0, 0}, {1, 30}, {2, 45}};

int64_t PlaceOne(int64_t size, bool first_fit) {
  const std::vector<PlacementBuffer> buffers = Gaps(size);
  const Items items = MakeItems(buffers, 1);
  BestFitPlacer placer(items);
  std::vector<int64_t> offsets;
  placer.Run({3}, offsets, std::numeric_limits<int64_t>::max(), first_fit, &kFixed);
  return offsets[3];
}

std::vector<PlacementBuffer> Random(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<PlacementBuffer> buffers;
  for (int i = 0; i < n; ++i) {
    const int64_t start = static_cast<int64_t>(rng() % 200);
    buffers.push_back({"b", start, start + 1 + static_cast<int64_t>(rng() % 30),
                       1 + static_cast<int64_t>(rng() % 64)});
  }
  return buffers;
}

// Best fit takes the smallest gap that holds the buffer, first fit the lowest; a buffer that fits
// no gap goes on top.
TEST(BestFitTest, SmallestGapOrLowestGap) {
  EXPECT_EQ(PlaceOne(5, /*first_fit=*/false), 40);
  EXPECT_EQ(PlaceOne(5, /*first_fit=*/true), 10);
  EXPECT_EQ(PlaceOne(6, /*first_fit=*/false), 10);
  EXPECT_EQ(PlaceOne(25, /*first_fit=*/false), 100);
}

// Fixed items count toward the height; a pass stops with a height above `limit` once it exceeds
// it.
TEST(BestFitTest, FixedItemsAndLimit) {
  const std::vector<PlacementBuffer> buffers = Gaps(25);
  const Items items = MakeItems(buffers, 1);
  BestFitPlacer placer(items);
  std::vector<int64_t> offsets;
  EXPECT_EQ(placer.Run({}, offsets, std::numeric_limits<int64_t>::max(), false, &kFixed), 100);
  EXPECT_EQ(placer.Run({3}, offsets, std::numeric_limits<int64_t>::max(), false, &kFixed), 125);
  EXPECT_GT(placer.Run({3}, offsets, 110, false, &kFixed), 110);
}

// Every order's pass is a valid placement, and the start-order sweep gives exactly the
// placements of the general best fit in that order.
TEST(BestFitTest, SweepMatchesBestFitPlacer) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const std::vector<PlacementBuffer> buffers = Random(seed, 150);
    const Items items = MakeItems(buffers, 1);
    BestFitPlacer placer(items);
    std::vector<int64_t> general, sweep;
    const std::vector<int> order = OrderItems(items, GreedyOrder::kStart);
    const int64_t h1 = placer.Run(order, general);
    const int64_t h2 = SweepBestFit(items, order, sweep);
    ASSERT_EQ(general, sweep) << "seed " << seed;
    EXPECT_EQ(h1, h2);
    for (GreedyOrder o : {GreedyOrder::kSize, GreedyOrder::kArea, GreedyOrder::kLifetime,
                          GreedyOrder::kWholeThenSize, GreedyOrder::kSizeFirstFit}) {
      std::vector<int64_t> offsets;
      const int64_t h =
          placer.Run(OrderItems(items, o), offsets, std::numeric_limits<int64_t>::max(),
                     o == GreedyOrder::kSizeFirstFit);
      const std::vector<int64_t> per_buffer = ToBufferOffsets(items, buffers.size(), offsets);
      EXPECT_TRUE(CheckPlacement(buffers, per_buffer).ok()) << GreedyOrderName(o);
      EXPECT_EQ(h, PlacementHeight(buffers, per_buffer));
    }
  }
}

// The sweep stops with a height above `limit` once it exceeds it.
TEST(BestFitTest, SweepLimit) {
  const std::vector<PlacementBuffer> buffers = Random(3, 100);
  const Items items = MakeItems(buffers, 1);
  std::vector<int64_t> offsets;
  const std::vector<int> order = OrderItems(items, GreedyOrder::kStart);
  const int64_t full = SweepBestFit(items, order, offsets);
  EXPECT_GT(SweepBestFit(items, order, offsets, full - 1), full - 1);
}

// Each order sorts by its keys (larger first where the rule says so), ties by input index.
TEST(BestFitTest, OrderKeys) {
  // size, [start, end): a 4 [0,2), b 8 [1,3), c 8 [0,6), d 2 [0,6), e 4 [4,5)
  const std::vector<PlacementBuffer> buffers = {
      {"a", 0, 2, 4}, {"b", 1, 3, 8}, {"c", 0, 6, 8}, {"d", 0, 6, 2}, {"e", 4, 5, 4}};
  const Items items = MakeItems(buffers, 1);
  EXPECT_EQ(OrderItems(items, GreedyOrder::kSize), (std::vector<int>{2, 1, 0, 4, 3}));
  EXPECT_EQ(OrderItems(items, GreedyOrder::kArea), (std::vector<int>{2, 1, 3, 0, 4}));
  EXPECT_EQ(OrderItems(items, GreedyOrder::kLifetime), (std::vector<int>{2, 3, 1, 0, 4}));
  EXPECT_EQ(OrderItems(items, GreedyOrder::kStart), (std::vector<int>{2, 0, 3, 1, 4}));
  EXPECT_EQ(OrderItems(items, GreedyOrder::kWholeThenSize), (std::vector<int>{2, 3, 1, 0, 4}));
  EXPECT_EQ(OrderItems(items, GreedyOrder::kSizeFirstFit), (std::vector<int>{1, 2, 0, 4, 3}));
}

// The items sorted by comparing an order's keys themselves (the definition of each order).
std::vector<int> SortedByKeys(const Items& items, GreedyOrder order) {
  int64_t first_start = std::numeric_limits<int64_t>::max();
  int64_t last_end = std::numeric_limits<int64_t>::min();
  for (int i = 0; i < items.count(); ++i) {
    first_start = std::min(first_start, items.start[i]);
    last_end = std::max(last_end, items.end[i]);
  }
  auto key = [&](int i) {
    const __int128 size = items.size[i];
    const __int128 length = items.end[i] - items.start[i];
    const __int128 start = items.start[i];
    switch (order) {
      case GreedyOrder::kSize:
        return std::make_tuple(-size, -length, __int128{0});
      case GreedyOrder::kArea:
        return std::make_tuple(-size * length, -size, __int128{0});
      case GreedyOrder::kLifetime:
        return std::make_tuple(-length, -size, __int128{0});
      case GreedyOrder::kStart:
        return std::make_tuple(start, -size, -length);
      case GreedyOrder::kWholeThenSize:
        if (items.start[i] == first_start && items.end[i] == last_end) {
          return std::make_tuple(__int128{0}, __int128{0}, __int128{0});
        }
        return std::make_tuple(__int128{1}, -size, start);
      case GreedyOrder::kSizeFirstFit:
        return std::make_tuple(-size, __int128{0}, __int128{0});
    }
    return std::make_tuple(__int128{0}, __int128{0}, __int128{0});
  };
  std::vector<int> order_of(items.count());
  std::iota(order_of.begin(), order_of.end(), 0);
  std::stable_sort(order_of.begin(), order_of.end(), [&](int a, int b) { return key(a) < key(b); });
  return order_of;
}

// ItemOrderer's packed ranks and radix sort give exactly the order of the keys themselves, ties by
// index: on small and large instances (comparison and radix paths), with many equal keys, with
// negative starts and with areas above 2^64.
TEST(BestFitTest, ItemOrdererMatchesKeyOrder) {
  const GreedyOrder kOrders[] = {GreedyOrder::kSize,          GreedyOrder::kArea,
                                 GreedyOrder::kLifetime,      GreedyOrder::kStart,
                                 GreedyOrder::kWholeThenSize, GreedyOrder::kSizeFirstFit};
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    std::mt19937_64 rng(seed);
    const int n = seed % 3 == 0 ? 40 : 3000;
    const int64_t span = seed % 2 == 0 ? 8 : (int64_t{1} << 40);  // Few or many distinct keys.
    std::vector<PlacementBuffer> buffers;
    for (int i = 0; i < n; ++i) {
      const int64_t start = static_cast<int64_t>(rng() % span) - span / 2;
      int64_t length = 1 + static_cast<int64_t>(rng() % span);
      int64_t size = 1 + static_cast<int64_t>(rng() % span);
      if (seed >= 10 && i % 7 == 0) size = (int64_t{1} << 40) + i;  // Areas above 2^64.
      if (i % 11 == 0) length = span + span / 2;                    // Some share the whole trace.
      buffers.push_back({"b", start, start + length, size});
    }
    const Items items = MakeItems(buffers, 1);
    ItemOrderer orderer(items);
    for (GreedyOrder o : kOrders) {
      EXPECT_EQ(orderer.Order(o), SortedByKeys(items, o))
          << "seed " << seed << " " << GreedyOrderName(o);
      EXPECT_EQ(OrderItems(items, o), SortedByKeys(items, o));
    }
  }
}

}  // namespace
}  // namespace internal
}  // namespace policy
}  // namespace accelmem
