#include "policy/internal/branch_and_bound.h"

#include <chrono>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
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
    const int64_t start = static_cast<int64_t>(rng() % 12);
    buffers.push_back({"b", start, start + 1 + static_cast<int64_t>(rng() % 6),
                       1 + static_cast<int64_t>(rng() % 8)});
  }
  return buffers;
}

Clock::time_point Far() { return Clock::now() + std::chrono::hours(1); }

// A placement the search returns is valid and within the target.
void ExpectValid(const std::vector<PlacementBuffer>& buffers, const Items& items,
                 const std::vector<int64_t>& item_offsets, int64_t cap) {
  const std::vector<int64_t> offsets = ToBufferOffsets(items, buffers.size(), item_offsets);
  EXPECT_TRUE(CheckPlacement(buffers, offsets).ok()) << CheckPlacement(buffers, offsets);
  EXPECT_LE(ItemHeight(items, item_offsets), cap);
}

// On small instances every preorder finds the same lowest feasible height: every target below
// it is proven infeasible (never below LOAD) and the placement it finds at that height is valid.
TEST(BranchAndBoundTest, PreordersAgreeOnTheOptimum) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const std::vector<PlacementBuffer> buffers = Random(seed, 9);
    const Items items = MakeItems(buffers, 1);
    BranchAndBound bnb;
    ASSERT_TRUE(bnb.Prepare(items, 1000000));
    int64_t optimum = -1;
    for (int h = 0; h < BranchAndBound::kNumPreorders; ++h) {
      int64_t cap = 0;
      std::vector<int64_t> found;
      SearchResult r;
      while ((r = bnb.Solve(cap, h, std::numeric_limits<int64_t>::max(), Far(), found)) ==
             SearchResult::kNotFound) {
        ++cap;
      }
      ASSERT_EQ(r, SearchResult::kFound) << "seed " << seed;
      EXPECT_GE(cap, items.load);
      ExpectValid(buffers, items, found, cap);
      EXPECT_GT(bnb.nodes_used(), 0);
      if (optimum < 0) optimum = cap;
      EXPECT_EQ(cap, optimum) << "seed " << seed << " preorder " << h;
    }
  }
}

// A node limit ends the search as kLimit.
TEST(BranchAndBoundTest, NodeLimit) {
  const std::vector<PlacementBuffer> buffers = Random(5, 40);
  const Items items = MakeItems(buffers, 1);
  BranchAndBound bnb;
  ASSERT_TRUE(bnb.Prepare(items, 1000000));
  std::vector<int64_t> found;
  EXPECT_EQ(bnb.Solve(items.load, 0, 0, Far(), found), SearchResult::kLimit);
}

// Prepare refuses instances with more overlapping pairs than allowed.
TEST(BranchAndBoundTest, PrepareRefusesDenseInstances) {
  std::vector<PlacementBuffer> buffers(10, PlacementBuffer{"b", 0, 5, 4});
  const Items items = MakeItems(buffers, 1);
  BranchAndBound bnb;
  EXPECT_FALSE(bnb.Prepare(items, 44));  // 45 pairs
  EXPECT_TRUE(bnb.Prepare(items, 45));
}

// The portfolio finds a valid placement under a reachable target, proves an unreachable one
// infeasible, and counts the nodes of every solver.
TEST(BranchAndBoundTest, Portfolio) {
  const std::vector<PlacementBuffer> buffers = Random(11, 9);
  const Items items = MakeItems(buffers, 1);
  BranchAndBound bnb;
  ASSERT_TRUE(bnb.Prepare(items, 1000000));
  std::vector<BranchAndBound> solvers(3, bnb);
  std::vector<int64_t> found;
  int64_t nodes = 0;
  int64_t total = 0;
  for (const PlacementBuffer& b : buffers) total += b.size;
  EXPECT_EQ(Portfolio(solvers, items, total, Far(), found, nodes), SearchResult::kFound);
  ExpectValid(buffers, items, found, total);
  EXPECT_GT(nodes, 0);
  EXPECT_EQ(Portfolio(solvers, items, items.load - 1, Far(), found, nodes),
            SearchResult::kNotFound);
}

}  // namespace
}  // namespace internal
}  // namespace policy
}  // namespace accelmem
