#include "policy/internal/branch_and_bound.h"

#include <chrono>
#include <limits>
#include <random>
#include <string>
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

// Small instances of three shapes: any lifetimes; lifetimes drawn from three (many buffers share
// their sections, so the twin rule applies); two long-lived buffers over short ones (placing a
// long one splits the rest into independent pieces).
std::vector<PlacementBuffer> Shaped(std::mt19937_64& rng, int shape) {
  const int n = 5 + static_cast<int>(rng() % 5);
  std::vector<PlacementBuffer> buffers;
  const int64_t shared[3][2] = {{0, 6}, {2, 9}, {5, 12}};
  for (int i = 0; i < n; ++i) {
    int64_t start = static_cast<int64_t>(rng() % 14);
    int64_t end = start + 1 + static_cast<int64_t>(rng() % 5);
    if (shape == 1) {
      const int k = static_cast<int>(rng() % 3);
      start = shared[k][0];
      end = shared[k][1];
    } else if (shape == 2 && i < 2) {
      start = static_cast<int64_t>(rng() % 3);
      end = 16 - static_cast<int64_t>(rng() % 3);
    }
    buffers.push_back({"b" + std::to_string(i), start, end, 1 + static_cast<int64_t>(rng() % 5)});
  }
  return buffers;
}

// Exhaustive feasibility that shares no idea with the search: every buffer (in input order)
// tries every offset in [0, cap - size] that conflicts with no buffer tried before it.
class Exhaustive {
 public:
  explicit Exhaustive(const std::vector<PlacementBuffer>& buffers) : buffers_(buffers) {}

  bool Fits(int64_t cap) {
    offsets_.assign(buffers_.size(), -1);
    return Place(0, cap);
  }

  // The lowest capacity that fits, from LOAD up.
  int64_t Optimum() {
    int64_t cap = ComputeLoad(buffers_);
    while (!Fits(cap)) ++cap;
    return cap;
  }

 private:
  bool Place(size_t k, int64_t cap) {
    if (k == buffers_.size()) return true;
    const PlacementBuffer& b = buffers_[k];
    for (int64_t offset = 0; offset + b.size <= cap; ++offset) {
      bool free = true;
      for (size_t j = 0; j < k && free; ++j) {
        const PlacementBuffer& o = buffers_[j];
        const bool same_time = b.start < o.end && o.start < b.end;
        free = !same_time || offset + b.size <= offsets_[j] || offsets_[j] + o.size <= offset;
      }
      if (!free) continue;
      offsets_[k] = offset;
      if (Place(k + 1, cap)) return true;
    }
    offsets_[k] = -1;
    return false;
  }

  const std::vector<PlacementBuffer>& buffers_;
  std::vector<int64_t> offsets_;
};

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

// Every preorder decides feasibility exactly: it finds a valid placement at the optimum that an
// exhaustive search over all offsets finds, and proves the capacity below it infeasible.
TEST(BranchAndBoundTest, MatchesExhaustiveSearch) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 450; ++round) {
    const std::vector<PlacementBuffer> buffers = Shaped(rng, round % 3);
    const int64_t optimum = Exhaustive(buffers).Optimum();
    const Items items = MakeItems(buffers, 1);
    BranchAndBound bnb;
    ASSERT_TRUE(bnb.Prepare(items, 1000000));
    for (int h = 0; h < BranchAndBound::kNumPreorders; ++h) {
      std::vector<int64_t> found;
      const int64_t no_limit = std::numeric_limits<int64_t>::max();
      ASSERT_EQ(bnb.Solve(optimum, h, no_limit, Far(), found), SearchResult::kFound)
          << "round " << round << " preorder " << h;
      ExpectValid(buffers, items, found, optimum);
      EXPECT_EQ(bnb.Solve(optimum - 1, h, no_limit, Far(), found), SearchResult::kNotFound)
          << "round " << round << " preorder " << h;
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
