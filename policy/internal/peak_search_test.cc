#include "policy/internal/peak_search.h"

#include <chrono>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "policy/greedy_order.h"
#include "policy/internal/best_fit.h"
#include "policy/internal/placement_items.h"
#include "policy/placement_checker.h"

namespace accelmem {
namespace policy {
namespace internal {
namespace {

std::vector<PlacementBuffer> Random(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<PlacementBuffer> buffers;
  for (int i = 0; i < n; ++i) {
    const int64_t start = static_cast<int64_t>(rng() % 1000);
    buffers.push_back({"b", start, start + 1 + static_cast<int64_t>(rng() % 60),
                       1 + static_cast<int64_t>(rng() % 1000)});
  }
  return buffers;
}

// Starting from a greedy placement, the search keeps the placement valid, never raises the
// height, reports whether it lowered it and never goes below LOAD.
TEST(PeakSearchTest, ImprovesOrKeepsAValidPlacement) {
  int lowered = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const std::vector<PlacementBuffer> buffers = Random(seed, 400);
    const Items items = MakeItems(buffers, 1);
    BestFitPlacer placer(items);
    std::vector<int64_t> best;
    // The size order is rarely optimal on these traces, so there is room to improve.
    int64_t height = placer.Run(OrderItems(items, GreedyOrder::kSize), best);
    const int64_t start_height = height;
    const bool improved =
        PeakSearch(items, Clock::now() + std::chrono::milliseconds(300), seed, best, height);
    const std::vector<int64_t> offsets = ToBufferOffsets(items, buffers.size(), best);
    ASSERT_TRUE(CheckPlacement(buffers, offsets).ok()) << CheckPlacement(buffers, offsets);
    EXPECT_EQ(height, PlacementHeight(buffers, offsets));
    EXPECT_LE(height, start_height);
    EXPECT_GE(height, items.load);
    EXPECT_EQ(improved, height < start_height);
    lowered += improved;
  }
  EXPECT_GT(lowered, 0);
}

// A placement already at LOAD is returned unchanged.
TEST(PeakSearchTest, StopsAtLoad) {
  const std::vector<PlacementBuffer> buffers = {{"a", 0, 2, 4}, {"b", 2, 4, 4}};
  const Items items = MakeItems(buffers, 1);
  std::vector<int64_t> best = {0, 0};
  int64_t height = 4;
  EXPECT_FALSE(PeakSearch(items, Clock::now() + std::chrono::seconds(10), 1, best, height));
  EXPECT_EQ(best, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(height, 4);
}

}  // namespace
}  // namespace internal
}  // namespace policy
}  // namespace accelmem
