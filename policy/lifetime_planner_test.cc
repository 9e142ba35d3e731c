#include "policy/lifetime_planner.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/place_csv.h"
#include "policy/placement_checker.h"

namespace accelmem {
namespace policy {
namespace {

PlacementBuffer B(std::string id, int64_t start, int64_t end, int64_t size) {
  return PlacementBuffer{std::move(id), start, end, size};
}

PlannerOptions Search(absl::Duration budget, int64_t capacity = 0, int64_t alignment = 1) {
  PlannerOptions options;
  options.mode = PlannerMode::kSearch;
  options.budget = budget;
  options.capacity = capacity;
  options.alignment = alignment;
  return options;
}

std::vector<PlacementBuffer> RandomInstance(std::mt19937_64& rng, int max_buffers,
                                            int64_t max_size) {
  const int n = static_cast<int>(rng() % (max_buffers + 1));
  std::vector<PlacementBuffer> buffers;
  for (int i = 0; i < n; ++i) {
    const int64_t start = static_cast<int64_t>(rng() % 20);
    const int64_t end = start + static_cast<int64_t>(rng() % 12);       // May be empty.
    const int64_t size = static_cast<int64_t>(rng() % (max_size + 1));  // May be 0.
    buffers.push_back(B("b" + std::to_string(i), start, end, size));
  }
  return buffers;
}

// Lowest height over all canonical placements (each buffer, in some order, at the top of the
// highest already placed buffer it overlaps): the true optimum, by exhaustive enumeration.
int64_t BruteForceOptimum(const std::vector<PlacementBuffer>& buffers) {
  std::vector<int> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  int64_t best = std::numeric_limits<int64_t>::max();
  do {
    std::vector<int64_t> offsets(buffers.size(), 0);
    int64_t height = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      const PlacementBuffer& b = buffers[order[k]];
      int64_t offset = 0;
      for (size_t p = 0; p < k; ++p) {
        const PlacementBuffer& q = buffers[order[p]];
        if (LifetimesIntersect(b, q)) offset = std::max(offset, offsets[order[p]] + q.size);
      }
      offsets[order[k]] = offset;
      if (b.size > 0 && b.start < b.end) height = std::max(height, offset + b.size);
    }
    best = std::min(best, height);
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

std::vector<PlacementBuffer> LoadInstance(const std::string& path) {
  auto text = policy::ReadTextFile(path);
  EXPECT_TRUE(text.ok()) << text.status();
  if (!text.ok()) return {};
  auto buffers = policy::ParseInstanceCsv(*text, path);
  EXPECT_TRUE(buffers.ok()) << buffers.status();
  return buffers.ok() ? *buffers : std::vector<PlacementBuffer>{};
}

// Reference best fit: orders buffers with the documented keys, then scans every placed buffer.
std::vector<int64_t> NaiveBestFit(const std::vector<PlacementBuffer>& buffers, GreedyOrder order) {
  std::vector<int> idx;
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].size > 0 && buffers[i].start < buffers[i].end) {
      idx.push_back(i);
      first = std::min(first, buffers[i].start);
      last = std::max(last, buffers[i].end);
    }
  }
  auto key = [&](int i) -> std::tuple<int64_t, int64_t, int64_t> {
    const PlacementBuffer& b = buffers[i];
    const int64_t len = b.end - b.start;
    switch (order) {
      case GreedyOrder::kSize:
        return {-b.size, -len, 0};
      case GreedyOrder::kArea:
        return {-b.size * len, -b.size, 0};
      case GreedyOrder::kLifetime:
        return {-len, -b.size, 0};
      case GreedyOrder::kStart:
        return {b.start, -b.size, -len};
      case GreedyOrder::kWholeThenSize:
        if (b.start == first && b.end == last) return {0, 0, 0};
        return {1, -b.size, b.start};
      case GreedyOrder::kSizeFirstFit:
        return {-b.size, 0, 0};
    }
    return {};
  };
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return key(a) < key(b); });
  std::vector<int64_t> offsets(buffers.size(), 0);
  std::vector<int> placed;
  for (int i : idx) {
    std::vector<std::pair<int64_t, int64_t>> occupied;
    for (int j : placed) {
      if (LifetimesIntersect(buffers[i], buffers[j])) {
        occupied.push_back({offsets[j], offsets[j] + buffers[j].size});
      }
    }
    std::sort(occupied.begin(), occupied.end());
    int64_t best = -1, best_gap = std::numeric_limits<int64_t>::max(), covered = 0;
    for (const auto& [lo, hi] : occupied) {
      if (lo - covered >= buffers[i].size && lo - covered < best_gap) {
        best_gap = lo - covered;
        best = covered;
        if (order == GreedyOrder::kSizeFirstFit) break;
      }
      covered = std::max(covered, hi);
    }
    offsets[i] = best >= 0 ? best : covered;
    placed.push_back(i);
  }
  return offsets;
}

// Every greedy order (the segment-tree path, first fit and the start-order sweep) places exactly
// like the reference best fit (first fit for kSizeFirstFit).
TEST(GreedyBestFitTest, MatchesReferenceBestFit) {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 2000; ++round) {
    std::vector<PlacementBuffer> buffers = RandomInstance(rng, round % 10 == 0 ? 120 : 30, 64);
    for (GreedyOrder order : PlannerOptions().orders) {
      ASSERT_EQ(GreedyBestFit(buffers, 1, order), NaiveBestFit(buffers, order))
          << "round " << round << " order " << GreedyOrderName(order);
    }
  }
  for (const std::string file : {"minimalloc/K.1048576.csv", "idealloc/G_1.csv"}) {
    const std::vector<PlacementBuffer> buffers =
        LoadInstance("third_party/placement_instances/" + file);
    for (GreedyOrder order : PlannerOptions().orders) {
      EXPECT_EQ(GreedyBestFit(buffers, 1, order), NaiveBestFit(buffers, order))
          << file << " " << GreedyOrderName(order);
    }
  }
}

// Greedy mode returns exactly the placement of the lowest order, ties going to the order listed
// first in options.orders, whatever order the orders are evaluated in (evaluation is reordered
// for speed, and orders that can no longer win stop early).
TEST(PlanPlacementTest, GreedyKeepsTheFirstListedLowestOrder) {
  std::mt19937_64 rng(11);
  std::vector<GreedyOrder> orders = PlannerOptions().orders;
  for (int round = 0; round < 400; ++round) {
    const std::vector<PlacementBuffer> buffers = RandomInstance(rng, 60, 64);
    std::shuffle(orders.begin(), orders.end(), rng);
    const size_t count = 1 + rng() % orders.size();
    PlannerOptions options;
    options.orders.assign(orders.begin(), orders.begin() + count);
    std::vector<int64_t> expected;
    int64_t expected_height = -1;
    for (GreedyOrder order : options.orders) {
      std::vector<int64_t> offsets = GreedyBestFit(buffers, 1, order);
      const int64_t height = PlacementHeight(buffers, offsets);
      if (expected_height < 0 || height < expected_height) {
        expected_height = height;
        expected = std::move(offsets);
      }
    }
    auto plan = PlanPlacement(buffers, options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->height, expected_height) << "round " << round;
    EXPECT_EQ(plan->offsets, expected) << "round " << round;
    EXPECT_EQ(plan->load, ComputeLoad(buffers)) << "round " << round;
  }
}

// Best fit takes the smallest gap that holds a buffer, not the lowest one.
TEST(GreedyBestFitTest, PicksTheSmallestFittingGap) {
  // Two holes at one step: [0,10) (10 bytes) and [14,18) (4 bytes). A 4-byte buffer goes into
  // the 4-byte hole although the 10-byte hole is lower.
  std::vector<PlacementBuffer> holes = {B("big", 0, 2, 10), B("bar", 0, 10, 4), B("small", 0, 2, 4),
                                        B("bar2", 0, 10, 3), B("late", 5, 10, 4)};
  PlannerOptions options;
  options.orders = {GreedyOrder::kStart};
  auto plan = PlanPlacement(holes, options);
  ASSERT_TRUE(plan.ok());
  ASSERT_TRUE(CheckPlacement(holes, plan->offsets).ok());
  // At step 5: big and small are dead; occupied are bar and bar2 (stacked in start order).
  EXPECT_EQ(plan->offsets[0], 0);   // big
  EXPECT_EQ(plan->offsets[1], 10);  // bar above big
  EXPECT_EQ(plan->offsets[2], 14);  // small above bar
  EXPECT_EQ(plan->offsets[3], 18);  // bar2 above small
  // late (4 bytes) at step 5: gaps [0,10) (10 bytes) and [14,18) (4 bytes): best fit -> 14.
  EXPECT_EQ(plan->offsets[4], 14);
}

// Offsets are multiples of the alignment, and sizes are rounded so buffers never share a unit.
TEST(PlanPlacementTest, RespectsAlignment) {
  std::vector<PlacementBuffer> buffers = {B("a", 0, 4, 3), B("b", 0, 4, 5), B("c", 2, 6, 1)};
  auto plan = PlanPlacement(buffers, Search(absl::Milliseconds(50), 0, 8));
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(CheckPlacement(buffers, plan->offsets, {8, 0}).ok());
  for (int64_t offset : plan->offsets) EXPECT_EQ(offset % 8, 0);
  // Three 8-byte slots; the height is 16 plus the raw size of the buffer in the top slot.
  EXPECT_GE(plan->height, 16 + 1);
  EXPECT_LE(plan->height, 16 + 5);
}

// Buffers taking no space get offset 0 and do not raise the height.
TEST(PlanPlacementTest, ZeroSizeAndEmptyLifetimes) {
  std::vector<PlacementBuffer> buffers = {B("a", 0, 4, 8), B("zero", 0, 4, 0),
                                          B("empty", 3, 3, 100)};
  auto plan = PlanPlacement(buffers);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->offsets, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(plan->height, 8);
  EXPECT_EQ(plan->load, 8);
  EXPECT_TRUE(plan->proven_optimal);
}

// Invalid instances and options are errors, not placements.
TEST(PlanPlacementTest, RejectsInvalidInput) {
  EXPECT_FALSE(PlanPlacement({B("a", 5, 1, 8)}).ok());
  EXPECT_FALSE(PlanPlacement({B("a", 0, 1, -8)}).ok());
  PlannerOptions options;
  options.alignment = 0;
  EXPECT_FALSE(PlanPlacement({B("a", 0, 1, 8)}, options).ok());
  options = PlannerOptions();
  options.orders.clear();
  EXPECT_FALSE(PlanPlacement({B("a", 0, 1, 8)}, options).ok());
}

// Instances whose sizes or lifetimes overflow int64 are errors naming the buffer, in both modes;
// extreme but representable times plan normally (lifetime lengths and areas are exact).
TEST(PlanPlacementTest, OverflowIsAnErrorNamingTheBuffer) {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t big = int64_t{1} << 60;
  for (PlannerMode mode : {PlannerMode::kGreedy, PlannerMode::kSearch}) {
    PlannerOptions options;
    options.mode = mode;
    options.budget = absl::Milliseconds(10);
    auto sizes = PlanPlacement({B("a", 0, 2, big), B("b", 1, 3, big)}, options);
    ASSERT_FALSE(sizes.ok());
    EXPECT_THAT(sizes.status().message(), ::testing::HasSubstr("'b' (#1)"));
    auto one = PlanPlacement({B("a", 0, 2, 8), B("huge", 1, 3, kMax)}, options);
    ASSERT_FALSE(one.ok());
    EXPECT_THAT(one.status().message(), ::testing::HasSubstr("'huge' (#1)"));
    auto times = PlanPlacement({B("t", kMin, kMax, 8)}, options);
    ASSERT_FALSE(times.ok());
    EXPECT_THAT(times.status().message(), ::testing::HasSubstr("'t' (#0)"));
    // Lifetimes of 2^62 and sizes of 2^58: areas of 2^120 still order exactly.
    const int64_t far = int64_t{1} << 62;
    const std::vector<PlacementBuffer> extreme = {B("p", -far, 0, int64_t{1} << 58),
                                                  B("q", -far, 1, (int64_t{1} << 58) - 1),
                                                  B("r", -1, far, 3), B("s", kMin, -far, 5)};
    auto plan = PlanPlacement(extreme, options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_TRUE(CheckPlacement(extreme, plan->offsets).ok());
    EXPECT_EQ(plan->height, plan->load);
  }
}

// A result above the capacity is returned and flagged, not dropped.
TEST(PlanPlacementTest, FlagsResultsAboveCapacity) {
  std::vector<PlacementBuffer> buffers = {B("a", 0, 4, 8), B("b", 0, 4, 8)};
  PlannerOptions options;
  options.capacity = 12;
  auto plan = PlanPlacement(buffers, options);
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->within_capacity);
  EXPECT_EQ(plan->height, 16);
  options.capacity = 16;
  EXPECT_TRUE(PlanPlacement(buffers, options)->within_capacity);
}

// Search reaches the true optimum (found by enumeration) on small random instances and proves it
// (lower_bound), and greedy never beats it.
TEST(PlanPlacementTest, SearchFindsTheOptimumOnSmallInstances) {
  std::mt19937_64 rng(11);
  int improved = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<PlacementBuffer> buffers = RandomInstance(rng, 7, 9);
    const int64_t optimum = BruteForceOptimum(buffers);
    auto greedy = PlanPlacement(buffers);
    auto search = PlanPlacement(buffers, Search(absl::Seconds(20)));
    ASSERT_TRUE(greedy.ok() && search.ok());
    ASSERT_TRUE(CheckPlacement(buffers, search->offsets).ok()) << "round " << round;
    EXPECT_EQ(search->height, optimum) << "round " << round;
    EXPECT_GE(greedy->height, optimum) << "round " << round;
    // Search proves the optimum: the targets below it are exhausted, so the bound reaches it.
    EXPECT_EQ(search->lower_bound, optimum) << "round " << round;
    EXPECT_TRUE(search->proven_optimal) << "round " << round;
    EXPECT_LE(greedy->lower_bound, optimum) << "round " << round;
    if (greedy->height > optimum) ++improved;
  }
  EXPECT_GT(improved, 0);  // The instances include some where greedy is not optimal.
}

// Every preorder, run as the portfolio of 2, 3 and 4 threads, finds
// the optimum of small instances too.
TEST(PlanPlacementTest, ThreadedSearchFindsTheOptimum) {
  std::mt19937_64 rng(13);
  for (int round = 0; round < 60; ++round) {
    std::vector<PlacementBuffer> buffers = RandomInstance(rng, 7, 9);
    const int64_t optimum = BruteForceOptimum(buffers);
    for (int threads : {2, 3, 4}) {
      PlannerOptions options = Search(absl::Seconds(20));
      options.search_threads = threads;
      auto search = PlanPlacement(buffers, options);
      ASSERT_TRUE(search.ok());
      ASSERT_TRUE(CheckPlacement(buffers, search->offsets).ok()) << "round " << round;
      EXPECT_EQ(search->height, optimum) << "round " << round << " threads " << threads;
    }
  }
  // And on public instances with a capacity: valid, never above greedy.
  for (const std::string file : {"minimalloc/A.1048576.csv", "minimalloc/I.1048576.csv"}) {
    std::vector<PlacementBuffer> buffers = LoadInstance("third_party/placement_instances/" + file);
    PlannerOptions options = Search(absl::Milliseconds(300), 1048576);
    options.search_threads = 4;
    auto search = PlanPlacement(buffers, options);
    ASSERT_TRUE(search.ok());
    EXPECT_TRUE(CheckPlacement(buffers, search->offsets).ok()) << file;
    EXPECT_LE(search->height, PlanPlacement(buffers)->height) << file;
  }
}

// The single-threaded search (restarts with doubling node limits) is also exact and valid.
TEST(PlanPlacementTest, SingleThreadedSearchFindsTheOptimum) {
  std::mt19937_64 rng(12);
  for (int round = 0; round < 100; ++round) {
    std::vector<PlacementBuffer> buffers = RandomInstance(rng, 7, 9);
    PlannerOptions options = Search(absl::Seconds(20));
    options.search_threads = 1;
    auto search = PlanPlacement(buffers, options);
    ASSERT_TRUE(search.ok());
    ASSERT_TRUE(CheckPlacement(buffers, search->offsets).ok()) << "round " << round;
    EXPECT_EQ(search->height, BruteForceOptimum(buffers)) << "round " << round;
  }
  // And on a public instance, with a capacity.
  std::vector<PlacementBuffer> buffers =
      LoadInstance("third_party/placement_instances/minimalloc/F.1048576.csv");
  PlannerOptions options = Search(absl::Milliseconds(200), 1048576);
  options.search_threads = 1;
  auto search = PlanPlacement(buffers, options);
  ASSERT_TRUE(search.ok());
  EXPECT_TRUE(CheckPlacement(buffers, search->offsets).ok());
}

// On a MiniMalloc-style example search fits under a capacity equal to LOAD.
TEST(PlanPlacementTest, SearchFitsTheMiniMallocExample) {
  std::vector<PlacementBuffer> buffers =
      LoadInstance("third_party/placement_instances/minimalloc/input.12.csv");
  ASSERT_EQ(buffers.size(), 5u);
  auto plan = PlanPlacement(buffers, Search(absl::Seconds(5), 12));
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(CheckPlacement(buffers, plan->offsets, {1, 12}).ok());
  EXPECT_EQ(plan->height, 12);
  EXPECT_TRUE(plan->within_capacity);
}

// Every placement of every public instance passes the checker; search is never worse.
TEST(PlanPlacementTest, EveryPublicInstancePassesTheChecker) {
  const std::vector<std::string> files = {
      "minimalloc/A.1048576.csv", "minimalloc/B.1048576.csv", "minimalloc/C.1048576.csv",
      "minimalloc/D.1048576.csv", "minimalloc/E.1048576.csv", "minimalloc/F.1048576.csv",
      "minimalloc/G.1048576.csv", "minimalloc/H.1048576.csv", "minimalloc/I.1048576.csv",
      "minimalloc/J.1048576.csv", "minimalloc/K.1048576.csv", "minimalloc/input.12.csv",
      "idealloc/G_1.csv",         "idealloc/resnet50.csv"};
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    const std::vector<PlacementBuffer> buffers =
        LoadInstance("third_party/placement_instances/" + file);
    ASSERT_FALSE(buffers.empty());
    auto greedy = PlanPlacement(buffers);
    ASSERT_TRUE(greedy.ok()) << greedy.status();
    EXPECT_TRUE(CheckPlacement(buffers, greedy->offsets).ok());
    EXPECT_GE(greedy->height, greedy->load);
    EXPECT_EQ(greedy->height, PlacementHeight(buffers, greedy->offsets));
    for (GreedyOrder order : PlannerOptions().orders) {
      const std::vector<int64_t> offsets = GreedyBestFit(buffers, 1, order);
      EXPECT_TRUE(CheckPlacement(buffers, offsets).ok()) << GreedyOrderName(order);
      EXPECT_LE(greedy->height, PlacementHeight(buffers, offsets)) << GreedyOrderName(order);
    }
    auto search = PlanPlacement(buffers, Search(absl::Milliseconds(100), 1048576));
    ASSERT_TRUE(search.ok()) << search.status();
    EXPECT_TRUE(CheckPlacement(buffers, search->offsets).ok());
    EXPECT_LE(search->height, greedy->height);
    auto aligned = PlanPlacement(buffers, Search(absl::Milliseconds(20), 0, 512));
    ASSERT_TRUE(aligned.ok()) << aligned.status();
    EXPECT_TRUE(CheckPlacement(buffers, aligned->offsets, {512, 0}).ok());
  }
}

// The 62k-buffer trace too: greedy (all orders) and a short search pass the checker.
TEST(PlanPlacementTest, LargestPublicInstancePassesTheChecker) {
  const std::vector<PlacementBuffer> buffers =
      LoadInstance("third_party/placement_instances/idealloc/Y_1.csv");
  ASSERT_EQ(buffers.size(), 62185u);
  auto greedy = PlanPlacement(buffers);
  ASSERT_TRUE(greedy.ok()) << greedy.status();
  EXPECT_TRUE(CheckPlacement(buffers, greedy->offsets).ok());
  EXPECT_GE(greedy->height, greedy->load);
  auto search = PlanPlacement(buffers, Search(absl::Milliseconds(10)));
  ASSERT_TRUE(search.ok()) << search.status();
  EXPECT_TRUE(CheckPlacement(buffers, search->offsets).ok());
  EXPECT_LE(search->height, greedy->height);
}

// 10,000 random instances (empty lifetimes, zero sizes, alignments, capacities): every greedy
// and search placement passes the checker, and search is never above greedy.
TEST(PlanPlacementTest, RandomInstancesPassTheChecker) {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 10000; ++round) {
    // Every 50th instance is large enough for the multi-threaded search.
    std::vector<PlacementBuffer> buffers =
        RandomInstance(rng, round % 50 == 0 ? 150 : 40, round % 2 ? 100 : 1 << 20);
    const int64_t alignment = int64_t{1} << (rng() % 5);
    const int64_t capacity = rng() % 3 == 0 ? static_cast<int64_t>(rng() % 400) : 0;
    PlannerOptions greedy_options;
    greedy_options.alignment = alignment;
    greedy_options.capacity = capacity;
    auto greedy = PlanPlacement(buffers, greedy_options);
    auto search = PlanPlacement(buffers, Search(absl::Milliseconds(1), capacity, alignment));
    ASSERT_TRUE(greedy.ok() && search.ok()) << "round " << round;
    const absl::Status greedy_check = CheckPlacement(buffers, greedy->offsets, {alignment, 0});
    const absl::Status search_check = CheckPlacement(buffers, search->offsets, {alignment, 0});
    ASSERT_TRUE(greedy_check.ok()) << "round " << round << ": " << greedy_check;
    ASSERT_TRUE(search_check.ok()) << "round " << round << ": " << search_check;
    ASSERT_LE(search->height, greedy->height) << "round " << round;
    ASSERT_GE(greedy->height, greedy->load) << "round " << round;
    if (capacity > 0) {
      EXPECT_EQ(search->within_capacity, search->height <= capacity) << "round " << round;
      EXPECT_EQ(CheckPlacement(buffers, search->offsets, {alignment, capacity}).ok(),
                search->within_capacity)
          << "round " << round;
    }
  }
}

}  // namespace
}  // namespace policy
}  // namespace accelmem
