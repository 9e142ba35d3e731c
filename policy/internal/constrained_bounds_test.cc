// Every bound of the constrained planner on hand-made pools whose value is known by hand, and
// the cases where it must not rise: a bound that rises too far prints a false "optimal" or
// "infeasible". (The search that reads them is tested in constrained_search_test.cc.)
#include "policy/internal/constrained_bounds.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/internal/constrained_model.h"
#include "policy/internal/constrained_pool_testing.h"

namespace accelmem {
namespace policy {
namespace internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The least reuse cost of a pool whose items all have extents and alignments of multiples of 8,
// nothing pinned or reserved, by trying every offset that is a multiple of 8: exact for such
// pools (every canonical placement is on that grid).
uint64_t BruteForceReuse(const PoolModel& m) {
  const size_t n = m.items.size();
  std::vector<uint64_t> offsets(n, 0);
  uint64_t best = kInfinity;
  std::function<void(size_t, uint64_t)> place = [&](size_t i, uint64_t cost) {
    if (cost >= best) return;
    if (i == n) {
      best = cost;
      return;
    }
    const uint64_t extent = m.items[i].extent;
    for (uint64_t o = 0; o + extent <= m.capacity; o += 8) {
      uint64_t add = 0;
      bool ok = true;
      for (size_t k = 0; k < i && ok; ++k) {
        if (!Overlap(o, extent, offsets[k], m.items[k].extent)) continue;
        ok = !m.conflict[i][k];
        add += m.weight[i][k];
      }
      if (!ok) continue;
      offsets[i] = o;
      place(i + 1, cost + add);
    }
  };
  place(0, 0);
  return best;
}

// ---- LOAD ----

TEST(ConstrainedBoundsTest, LoadIsTheHeaviestLiveSet) {
  PoolBuilder b(256);
  b.Add(32, 0, 10);
  b.Add(16, 5, 15);
  b.Add(64, 20, 30);
  b.Add(8, 25, 26);
  const LoadBound load = ComputeLoad(b.Build());
  EXPECT_EQ(load.load, 72u);
  EXPECT_EQ(load.time, 25);
  EXPECT_FALSE(load.separation);
}

TEST(ConstrainedBoundsTest, LoadDoesNotRiseForBuffersApartInTime) {
  // Two 32-byte items live together; more items that never live with them (or each other at
  // more than 64 bytes), or that are proven apart, leave LOAD at 64.
  PoolBuilder b(64);
  b.Add(32, 0, 10);
  b.Add(32, 0, 10);
  b.Add(48, 10, 20);  // Born as the first two die (half-open intervals).
  b.Add(16, 10, 20);
  b.Add(64, 30, 40);
  PoolModel m = b.Build();
  EXPECT_EQ(ComputeLoad(m).load, 64u);
  EXPECT_EQ(LoadInfeasibility(m, ComputeLoad(m)), "");
  // Live together but proven apart (a temporal exclusion clears the conflict): no clique.
  PoolBuilder c(64);
  c.Add(48, 0, 10);
  c.Add(48, 0, 10);
  PoolModel apart = c.Build();
  apart.conflict[0][1] = apart.conflict[1][0] = 0;
  IndexPairs(&apart);
  EXPECT_EQ(ComputeLoad(apart).load, 48u);
}

TEST(ConstrainedBoundsTest, SeparationsMakeCliquesAcrossTime) {
  PoolBuilder b(96);
  b.Add(40, 0, 10);
  b.Add(40, 20, 30);
  b.Add(8, 40, 50);  // Apart in time, not separated: not in the clique.
  b.Separate(0, 1);
  const PoolModel m = b.Build();
  const LoadBound load = ComputeLoad(m);
  EXPECT_EQ(load.load, 80u);
  EXPECT_TRUE(load.separation);
  EXPECT_EQ(LoadInfeasibility(m, load), "");  // 80 <= 96.
  b.Reserve(80, 96);                          // Usable 80: still fits, exactly.
  EXPECT_EQ(LoadInfeasibility(b.Build(), load), "");
  b.Reserve(0, 1);  // Usable 79.
  EXPECT_THAT(LoadInfeasibility(b.Build(), load),
              HasSubstr("stay apart (separations) need 80 bytes, from time 0, over the usable "
                        "capacity 79 (capacity 96 minus 17 reserved)"));
}

TEST(ConstrainedBoundsTest, ExactCliqueBeatsTheGreedyOnes) {
  // Items 0..3 (30 bytes) pairwise separated: 120. Items 4 and 5 (40 bytes) are each separated
  // from two of them, so every greedy clique (heaviest first) takes a 40 and stops at 100. No
  // two items live together.
  PoolBuilder b(1000);
  for (int k = 0; k < 4; ++k) b.Add(30, 10 * k, 10 * k + 5);
  b.Add(40, 100, 105);
  b.Add(40, 110, 115);
  for (int i = 0; i < 4; ++i) {
    for (int j = i + 1; j < 4; ++j) b.Separate(i, j);
  }
  b.Separate(4, 0);
  b.Separate(4, 1);
  b.Separate(5, 2);
  b.Separate(5, 3);
  const PoolModel m = b.Build();
  for (int i = 0; i < 6; ++i) {
    std::vector<int> candidates = m.conflicts_of[i];
    candidates.push_back(i);
    EXPECT_LE(TotalExtent(m, GreedyClique(m, candidates)), 100u) << i;
  }
  EXPECT_THAT(MaxWeightClique(m), ElementsAre(0, 1, 2, 3));
  const LoadBound load = ComputeLoad(m);
  EXPECT_EQ(load.load, 120u);
  EXPECT_TRUE(load.separation);
  EXPECT_EQ(load.time, 0);
}

// ---- Peak ----

TEST(ConstrainedBoundsTest, PeakBoundIsLoadAboveReservedOrAPinnedTop) {
  PoolBuilder b(512);
  b.Reserve(100, 110);
  b.Add(64, 0, 10);
  EXPECT_EQ(PeakLowerBound(b.Build(), 64), 110u);  // max(reserved end 110, 64 + 10).
  EXPECT_EQ(PeakLowerBound(b.Build(), 128), 138u);
  b.Pin(8, 0, 10, /*offset=*/0);  // A pin below the bound does not raise it.
  EXPECT_EQ(PeakLowerBound(b.Build(), 64), 110u);
  b.Pin(8, 0, 10, /*offset=*/200);
  EXPECT_EQ(PeakLowerBound(b.Build(), 64), 208u);
}

// ---- Pins ----

TEST(ConstrainedBoundsTest, PinsThatCannotHold) {
  {
    PoolBuilder b(256);
    b.Pin(64, 0, 10, /*offset=*/16, /*alignment=*/32);
    EXPECT_THAT(PinInfeasibility(b.Build()), HasSubstr("need alignment 32"));
  }
  {
    PoolBuilder b(128);
    b.Pin(64, 0, 10, /*offset=*/65);
    EXPECT_THAT(PinInfeasibility(b.Build()), HasSubstr("end past the capacity 128"));
  }
  {
    PoolBuilder b(256);
    b.Reserve(60, 70);
    b.Pin(8, 0, 10, /*offset=*/64);
    EXPECT_THAT(PinInfeasibility(b.Build()), HasSubstr("overlaps a reserved range"));
  }
  {
    PoolBuilder b(256);
    b.Pin(64, 0, 10, /*offset=*/0);
    b.Pin(64, 5, 15, /*offset=*/63);
    EXPECT_THAT(PinInfeasibility(b.Build()), HasSubstr("conflicting pins"));
  }
}

TEST(ConstrainedBoundsTest, PinsThatHoldProveNothing) {
  PoolBuilder b(128);
  b.Reserve(64, 72);
  b.Pin(64, 0, 10, /*offset=*/0, /*alignment=*/32);  // Aligned, touches the reserved range.
  b.Pin(56, 0, 10, /*offset=*/72);                   // Ends exactly at the capacity.
  b.Pin(32, 20, 30, /*offset=*/16);                  // On the first pin, never live with it.
  EXPECT_EQ(PinInfeasibility(b.Build()), "");
  // [120, 128) on the second pin [72, 128), both live at 5..10.
  b.Pin(8, 5, 25, /*offset=*/120);
  EXPECT_THAT(PinInfeasibility(b.Build()),
              HasSubstr("conflicting pins: buffers pinned at 72 and 120"));
}

// ---- Cores ----

// 0 and 1 (32 bytes each) live together, 2 (48 bytes) after them, both penalised against 2.
PoolBuilder TwoAndOne(uint64_t capacity, uint64_t w02, uint64_t w12) {
  PoolBuilder b(capacity);
  b.Add(32, 0, 10);
  b.Add(32, 0, 10);
  b.Add(48, 10, 20);
  b.Penalty(0, 2, w02);
  b.Penalty(1, 2, w12);
  return b;
}

TEST(ConstrainedBoundsTest, CoreIsTheCheapestCoverOfTheDeficit) {
  // In 64 bytes, 2 overlaps 48 bytes of {0, 1}: both pairs (32 bytes each) must pay: 3 + 4.
  PoolBuilder b = TwoAndOne(64, 3, 4);
  PoolModel m = b.Build();
  PoolBounds bounds = ComputeBounds(m);
  EXPECT_EQ(bounds.reuse, 7u);
  EXPECT_EQ(BruteForceReuse(m), 7u);
  EXPECT_EQ(bounds.cores.total, 7u);
  // In 80 bytes the deficit is 32: one pair, the cheaper.
  m = TwoAndOne(80, 3, 4).Build();
  EXPECT_EQ(ComputeBounds(m).reuse, 3u);
  EXPECT_EQ(BruteForceReuse(m), 3u);
}

TEST(ConstrainedBoundsTest, CoreDoesNotRiseWhereRoomOrAFreePairIsLeft) {
  // Room for all three side by side.
  PoolModel m = TwoAndOne(112, 3, 4).Build();
  EXPECT_EQ(ComputeBounds(m).reuse, 0u);
  EXPECT_EQ(BruteForceReuse(m), 0u);
  // In 80 bytes, a pair with no penalty absorbs the deficit: 2 sits on 1 for free.
  m = TwoAndOne(80, 3, 0).Build();
  EXPECT_EQ(ComputeBounds(m).reuse, 0u);
  EXPECT_EQ(BruteForceReuse(m), 0u);
  // No capacity: nothing is forced.
  m = TwoAndOne(64, 3, 4).Build();
  m.has_capacity = false;
  m.capacity = kNoCapacity;
  EXPECT_EQ(ComputeBounds(m).reuse, 0u);
}

TEST(ConstrainedBoundsTest, DisjointCoresAddUp) {
  // Two copies of TwoAndOne(64) in turn: each pays both its pairs (5 + 1 and 2 + 9); pairs
  // across the copies have no penalty, so they add nothing: 17.
  PoolBuilder b(64);
  b.Add(32, 0, 10);
  b.Add(32, 0, 10);
  b.Add(48, 10, 20);
  b.Add(32, 20, 30);
  b.Add(32, 20, 30);
  b.Add(48, 30, 40);
  b.Penalty(0, 2, 5);
  b.Penalty(1, 2, 1);
  b.Penalty(3, 5, 2);
  b.Penalty(4, 5, 9);
  const PoolModel m = b.Build();
  const PoolBounds bounds = ComputeBounds(m);
  EXPECT_EQ(bounds.reuse, 17u);
  EXPECT_EQ(BruteForceReuse(m), 17u);
  EXPECT_EQ(bounds.cores.total, 17u);
}

TEST(ConstrainedBoundsTest, CoreBoundsAtASearchNode) {
  PackedCores cores;
  cores.edges = {{{0, 2}, {1, 2}}, {{3, 5}}};
  cores.cost = {1, 2};
  uint64_t open = 0, undecided = 0;
  CoreBoundsAt(cores, {0, 0, 0, 0, 0, 0}, &open, &undecided);
  EXPECT_EQ(open, 3u);
  EXPECT_EQ(undecided, 3u);
  CoreBoundsAt(cores, {1, 0, 0, 0, 0, 0}, &open, &undecided);  // One end of the first core.
  EXPECT_EQ(open, 2u);
  EXPECT_EQ(undecided, 3u);
  CoreBoundsAt(cores, {1, 0, 1, 0, 0, 0}, &open, &undecided);  // Its pair (0, 2) is decided.
  EXPECT_EQ(open, 2u);
  EXPECT_EQ(undecided, 2u);
}

TEST(ConstrainedBoundsTest, CoverCostIsAKnapsackCover) {
  struct Pair {
    uint64_t bytes;
    uint64_t cost;
  };
  const std::vector<Pair> pairs = {{32, 3}, {32, 4}, {16, 1}};
  EXPECT_EQ(CoverCost(pairs, 0), 0u);
  EXPECT_EQ(CoverCost(pairs, 16), 1u);
  EXPECT_EQ(CoverCost(pairs, 17), 3u);
  EXPECT_EQ(CoverCost(pairs, 48), 4u);  // 32 + 16 for 3 + 1.
  EXPECT_EQ(CoverCost(pairs, 80), 8u);
  // Costs too large for the table: the cheapest pair, weaker but valid.
  const std::vector<Pair> large = {{32, 5000}, {32, 4000}};
  EXPECT_EQ(CoverCost(large, 64), 4000u);
}

// ---- Covers ----

// Three 40-byte items in turn, every pair penalised 1.
PoolModel ThreeInTurn(uint64_t capacity) {
  PoolBuilder b(capacity);
  b.Add(40, 0, 10);
  b.Add(40, 10, 20);
  b.Add(40, 20, 30);
  b.Penalty(0, 1, 1);
  b.Penalty(0, 2, 1);
  b.Penalty(1, 2, 1);
  return b.Build();
}

TEST(ConstrainedBoundsTest, CoverBoundSeesThreeCliquesAtOnce) {
  // In 80 bytes every two items fit side by side (no core), but three need 120: one pair pays.
  const PoolModel m = ThreeInTurn(80);
  const PoolBounds bounds = ComputeBounds(m);
  EXPECT_EQ(bounds.reuse, 0u);
  const CoverSystem covers = BuildCovers(m, bounds.cover_cliques, bounds.usable);
  ASSERT_EQ(covers.covers.size(), 1u);
  EXPECT_EQ(covers.covers[0].deficit, 40u);
  EXPECT_EQ(covers.covers[0].edges.size(), 3u);
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  EXPECT_EQ(CoverBound(covers, 0, deadline), 1u);
  EXPECT_EQ(BruteForceReuse(m), 1u);
  // In 64 bytes every pair overlaps: 3 (the cores see it too).
  const PoolModel tight = ThreeInTurn(64);
  const PoolBounds tight_bounds = ComputeBounds(tight);
  EXPECT_EQ(tight_bounds.reuse, 3u);
  const CoverSystem tight_covers =
      BuildCovers(tight, tight_bounds.cover_cliques, tight_bounds.usable);
  EXPECT_EQ(CoverBound(tight_covers, tight_bounds.reuse, deadline), 3u);
  EXPECT_EQ(BruteForceReuse(tight), 3u);
}

TEST(ConstrainedBoundsTest, CoverBoundDoesNotRiseWithRoomLeft) {
  const PoolModel m = ThreeInTurn(120);
  const PoolBounds bounds = ComputeBounds(m);
  EXPECT_THAT(BuildCovers(m, bounds.cover_cliques, bounds.usable).covers, IsEmpty());
  EXPECT_EQ(CoverBound(CoverSystem{}, 0, absl::Now() + absl::Seconds(1)), 0u);
  EXPECT_EQ(CoverBound(CoverSystem{}, 5, absl::Now() + absl::Seconds(1)), 5u);
}

TEST(ConstrainedBoundsTest, CoverBoundOnHandMadeCovers) {
  // Edges e0, e1, e2 of weight 1, 10 bytes each. Cover A needs 15 bytes of {e0, e1} (both);
  // cover B 5 of {e1, e2} (either): e0 + e1 meets both, 2. With B at 15 too: all three.
  CoverSystem s;
  s.edges = {{0, 1}, {1, 2}, {2, 3}};
  s.weight = {1, 1, 1};
  s.covers = {{{{0, 10}, {1, 10}}, 15}, {{{1, 10}, {2, 10}}, 5}};
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  EXPECT_EQ(CoverBound(s, 0, deadline), 2u);
  EXPECT_EQ(CoverBound(s, 4, deadline), 4u);  // Never below where it starts.
  s.covers[1].deficit = 15;
  EXPECT_EQ(CoverBound(s, 0, deadline), 3u);
  // An edge both covers share meets them at once: e2 alone, 1 (not e0 + e1).
  s.weight = {1, 5, 1};
  s.covers = {{{{0, 10}, {2, 10}}, 5}, {{{1, 10}, {2, 10}}, 5}};
  EXPECT_EQ(CoverBound(s, 0, deadline), 1u);
}

// ---- Parts (SubsetBound) ----

// Four 40-byte items in turn in 80 bytes, every pair penalised 1: two pairs must overlap.
PoolModel FourInTurn() {
  PoolBuilder b(80);
  for (int k = 0; k < 4; ++k) b.Add(40, 10 * k, 10 * k + 10);
  for (int i = 0; i < 4; ++i) {
    for (int j = i + 1; j < 4; ++j) b.Penalty(i, j, 1);
  }
  return b.Build();
}

TEST(ConstrainedBoundsTest, CliqueGroupsCoverEveryItemOnce) {
  PoolBuilder b(256);
  b.Add(8, 0, 10);
  b.Add(32, 0, 10);
  b.Add(16, 0, 10);
  b.Add(64, 20, 30);
  b.Add(4, 40, 50);
  const std::vector<std::vector<int>> groups = CliqueGroups(b.Build());
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_THAT(groups[0], ElementsAre(3));  // 64 bytes: the heaviest first.
  EXPECT_THAT(groups[1], ElementsAre(1, 2, 0));
  EXPECT_THAT(groups[2], ElementsAre(4));
}

TEST(ConstrainedBoundsTest, SubsetBoundFromExactlySolvedParts) {
  const PoolModel m = FourInTurn();
  EXPECT_EQ(BruteForceReuse(m), 2u);
  // No two items are over the capacity: no core.
  EXPECT_EQ(ComputeBounds(m).reuse, 0u);
  // The incumbent: 0 and 2 low, 1 and 3 high, paying (0, 2) and (1, 3).
  const std::vector<uint64_t> incumbent = {0, 40, 0, 40};
  int parts = 0;
  auto exact = [&](const PoolModel& part, absl::Time) {
    ++parts;
    EXPECT_LT(part.items.size(), 4u);  // Never the pool itself.
    return BruteForceReuse(part);
  };
  EXPECT_EQ(SubsetBound(m, incumbent, 2, absl::Now() + absl::Seconds(5), exact), 2u);
  EXPECT_GT(parts, 0);
}

TEST(ConstrainedBoundsTest, SubsetBoundDoesNotRiseOnItsOwn) {
  const PoolModel m = FourInTurn();
  const std::vector<uint64_t> incumbent = {0, 40, 0, 40};
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  // Parts that prove nothing give nothing.
  auto nothing = [](const PoolModel&, absl::Time) { return uint64_t{0}; };
  EXPECT_EQ(SubsetBound(m, incumbent, 2, deadline, nothing), 0u);
  // Never above the incumbent, whatever the parts claim.
  auto too_much = [](const PoolModel&, absl::Time) { return uint64_t{100}; };
  EXPECT_EQ(SubsetBound(m, incumbent, 2, deadline, too_much), 2u);
  // An incumbent that pays nothing (four side by side in 160 bytes) leaves nothing to solve.
  PoolModel wide = FourInTurn();
  wide.capacity = 160;
  int parts = 0;
  auto counted = [&](const PoolModel&, absl::Time) {
    ++parts;
    return uint64_t{1};
  };
  EXPECT_EQ(SubsetBound(wide, {0, 40, 80, 120}, 0, deadline, counted), 0u);
  EXPECT_EQ(parts, 0);
}

}  // namespace
}  // namespace internal
}  // namespace policy
}  // namespace accelmem
