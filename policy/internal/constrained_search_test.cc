// One pool's search on hand-made pools whose answers are known by hand: the status each proof
// gives, what the cover and subset bounds add to the greedy placement, the optimum for either
// objective order, and a valid placement of a pool too large to finish. (Each bound alone is
// tested in constrained_bounds_test.cc; the planner around the search in
// //policy:constrained_planner_test and against exact optima in
// //policy:constrained_planner_golden_test.)
#include "policy/internal/constrained_search.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/constrained_result.h"
#include "policy/internal/constrained_model.h"
#include "policy/internal/constrained_pool_testing.h"

namespace accelmem {
namespace policy {
namespace internal {
namespace {

using ::testing::HasSubstr;

PoolResult Solve(const PoolModel& model, bool reuse_first = true, bool search = true,
                 std::vector<uint64_t>* offsets = nullptr) {
  PoolSearch pool(model, reuse_first, /*reuse_matters=*/true, /*peak_matters=*/true,
                  absl::Now() + absl::Seconds(5));
  pool.set_search(search);
  PoolResult out;
  std::vector<uint64_t> ignored;
  pool.Run(&out, offsets != nullptr ? offsets : &ignored);
  return out;
}

TEST(ConstrainedSearchTest, LoadOverCapacityIsAProof) {
  PoolBuilder b(96);
  b.Add(64, 0, 10);
  b.Add(64, 5, 20);
  const PoolResult r = Solve(b.Build());
  EXPECT_EQ(r.status, ConstrainedStatus::kInfeasible);
  EXPECT_THAT(r.reason, HasSubstr("LOAD 128 bytes at time 5"));
}

TEST(ConstrainedSearchTest, PinnedClassMustFitWhole) {
  // An item of extent 128 (a class whose pinned member is smaller) pinned at 64 of 160.
  PoolBuilder b(160);
  const int i = b.Add(128, 0, 1);
  b.m.items[i].pinned = true;
  b.m.items[i].pin_offset = 64;
  PoolResult r = Solve(b.Build());
  EXPECT_EQ(r.status, ConstrainedStatus::kInfeasible);
  EXPECT_THAT(r.reason, HasSubstr("past the capacity 160"));
  // Misaligned for the class.
  PoolBuilder c(256);
  const int k = c.Add(128, 0, 1, /*alignment=*/32);
  c.m.items[k].pinned = true;
  c.m.items[k].pin_offset = 16;
  r = Solve(c.Build());
  EXPECT_EQ(r.status, ConstrainedStatus::kInfeasible);
  EXPECT_THAT(r.reason, HasSubstr("alignment 32"));
  // At 32 it fits, exactly there.
  c.m.items[k].pin_offset = 32;
  std::vector<uint64_t> offsets;
  r = Solve(c.Build(), true, true, &offsets);
  EXPECT_EQ(r.status, ConstrainedStatus::kOptimal);
  EXPECT_EQ(offsets[k], 32u);
}

TEST(ConstrainedSearchTest, CollidingPinsAreAProof) {
  PoolBuilder b(256);
  const int i = b.Add(64, 0, 10), j = b.Add(64, 0, 10);
  b.m.items[i].pinned = b.m.items[j].pinned = true;
  b.m.items[i].pin_offset = 0;
  b.m.items[j].pin_offset = 32;
  const PoolResult r = Solve(b.Build());
  EXPECT_EQ(r.status, ConstrainedStatus::kInfeasible);
  EXPECT_THAT(r.reason, HasSubstr("conflicting pins"));
}

TEST(ConstrainedSearchTest, CoreBoundIsTheCheapestForcedPenalty) {
  // 0 and 1 live together fill the pool; 2, live later, must overlap one of them. The bounds
  // alone (no search) already prove the cheaper penalty, 1, and the greedy placement meets it.
  PoolBuilder b(64);
  b.Add(32, 0, 10);
  b.Add(32, 0, 10);
  b.Add(32, 10, 20);
  b.Penalty(0, 2, 5);
  b.Penalty(1, 2, 1);
  const PoolResult bounds = Solve(b.Build(), true, /*search=*/false);
  EXPECT_EQ(bounds.reuse_lower_bound, 1u);
  EXPECT_EQ(bounds.reuse_cost, 1u);
  EXPECT_EQ(bounds.status, ConstrainedStatus::kOptimal);
}

TEST(ConstrainedSearchTest, BoundDoesNotRiseWhereRoomIsLeft) {
  // The same with room for all three side by side: nothing is forced, the bound stays 0.
  PoolBuilder b(96);
  b.Add(32, 0, 10);
  b.Add(32, 0, 10);
  b.Add(32, 10, 20);
  b.Penalty(0, 2, 5);
  b.Penalty(1, 2, 1);
  PoolResult r = Solve(b.Build(), true, /*search=*/false);
  EXPECT_EQ(r.reuse_lower_bound, 0u);
  EXPECT_EQ(r.reuse_cost, 0u);
  // The peak (96: 2 clear of both) is above LOAD (64), so the bounds alone cannot prove it; the
  // search does.
  EXPECT_EQ(r.status, ConstrainedStatus::kFeasible);
  EXPECT_EQ(r.peak_lower_bound, 64u);
  r = Solve(b.Build());
  EXPECT_EQ(r.status, ConstrainedStatus::kOptimal);
  EXPECT_EQ(r.peak, 96u);
  EXPECT_EQ(r.peak_lower_bound, 96u);
}

TEST(ConstrainedSearchTest, PeakFirstOrReuseFirst) {
  // 0 (64 B) lives alone at first, 1 and 2 (32 B each) later, 1 penalised against 0. Reuse
  // first keeps 1 clear of 0 (peak 96, cost 0); peak first stacks within 64 and pays 1.
  PoolBuilder b(128);
  b.Add(64, 0, 10);
  b.Add(32, 10, 20);
  b.Add(32, 10, 20);
  b.Penalty(0, 1, 1);
  b.Penalty(0, 2, 1);
  PoolResult r = Solve(b.Build(), /*reuse_first=*/true);
  EXPECT_EQ(r.status, ConstrainedStatus::kOptimal);
  EXPECT_EQ(r.reuse_cost, 0u);
  EXPECT_EQ(r.peak, 128u);
  r = Solve(b.Build(), /*reuse_first=*/false);
  EXPECT_EQ(r.status, ConstrainedStatus::kOptimal);
  EXPECT_EQ(r.peak, 64u);
  EXPECT_EQ(r.reuse_cost, 2u);
  EXPECT_EQ(r.peak_lower_bound, 64u);
}

TEST(ConstrainedSearchTest, ExhaustedSearchIsAProof) {
  // LOAD fits (2 x 48 <= 128 at every time), but with 32-byte alignment and a reserved range in
  // the middle no two 48-byte items fit side by side.
  PoolBuilder b(128);
  b.m.reserved = {{48, 80}};
  b.m.reserved_total = 32;
  b.m.reserved_end = 80;
  for (int k = 0; k < 3; ++k) b.Add(48, 0, 10, 32);
  const PoolResult r = Solve(b.Build());
  EXPECT_EQ(r.status, ConstrainedStatus::kInfeasible);
}

TEST(ConstrainedSearchTest, CoverBoundProvesWhatTheCoresCannot) {
  // Three 40-byte items in turn in 80 bytes, every pair penalised 1: any two fit side by side
  // (no core), all three cannot, so one pair pays. With no search, the greedy placement pays
  // 1 and the cover bound proves 1; the search then proves the peak too.
  PoolBuilder b(80);
  b.Add(40, 0, 10);
  b.Add(40, 10, 20);
  b.Add(40, 20, 30);
  b.Penalty(0, 1, 1);
  b.Penalty(0, 2, 1);
  b.Penalty(1, 2, 1);
  PoolResult r = Solve(b.Build(), true, /*search=*/false);
  EXPECT_EQ(r.reuse_cost, 1u);
  EXPECT_EQ(r.reuse_lower_bound, 1u);
  r = Solve(b.Build());
  EXPECT_EQ(r.status, ConstrainedStatus::kOptimal);
  EXPECT_EQ(r.reuse_cost, 1u);
  EXPECT_EQ(r.peak, 80u);
}

TEST(ConstrainedSearchTest, SubsetBoundProvesWhatByteCountsUndercount) {
  // Four 32-byte items in turn, aligned to 64, in 96 bytes: each sits at 0 or 64, so two slots
  // for four items, and at least two pairs overlap (2 + 2). Byte counts see less: three items
  // fit the 96 bytes, four exceed them by 32, one pair's worth (cover bound 1). Every three of
  // them, solved exactly, pay 1, and only two pairs meet all four such constraints: the subset
  // bound proves 2. (Search off: the greedy placement and the bounds alone.)
  PoolBuilder b(96);
  for (int k = 0; k < 4; ++k) b.Add(32, 10 * k, 10 * k + 10, /*alignment=*/64);
  for (int i = 0; i < 4; ++i) {
    for (int j = i + 1; j < 4; ++j) b.Penalty(i, j, 1);
  }
  const PoolModel m = b.Build();
  for (bool subset : {false, true}) {
    PoolSearch pool(m, /*reuse_first=*/true, /*reuse_matters=*/true, /*peak_matters=*/false,
                    absl::Now() + absl::Seconds(5));
    pool.set_search(false);
    pool.set_subset_bound(subset);
    PoolResult r;
    std::vector<uint64_t> offsets;
    pool.Run(&r, &offsets);
    EXPECT_EQ(r.reuse_cost, 2u) << subset;
    EXPECT_EQ(r.reuse_lower_bound, subset ? 2u : 1u);
    EXPECT_EQ(r.status, subset ? ConstrainedStatus::kOptimal : ConstrainedStatus::kFeasible);
  }
}

TEST(ConstrainedSearchTest, LargePoolPlacementIsValid) {
  // 60 items (more than the branch and bound's exact size, so the neighbourhood search runs
  // first) of pseudo-random sizes, lifetimes and penalties in a pool as large as LOAD, where the
  // budget runs out (feasible, cost 1, bound 0 on the Zen 5 VM): whatever the budget allows, the
  // placement keeps conflicting items apart, stays within the capacity and pays what it says,
  // and the bounds are at most that.
  PoolBuilder b(656);  // LOAD.
  uint64_t state = 12345;
  auto next = [&]() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  for (int k = 0; k < 60; ++k) {
    const int64_t start = static_cast<int64_t>(next() % 100);
    b.Add(16 * (1 + next() % 6), start, start + 1 + static_cast<int64_t>(next() % 15));
  }
  for (int k = 0; k < 600; ++k) b.Penalty(next() % 60, next() % 60, 1 + next() % 5);
  for (int k = 0; k < 60; ++k) b.m.weight[k][k] = 0;
  const PoolModel m = b.Build();
  PoolSearch pool(m, /*reuse_first=*/true, /*reuse_matters=*/true, /*peak_matters=*/true,
                  absl::Now() + absl::Milliseconds(200));
  PoolResult r;
  std::vector<uint64_t> offsets;
  pool.Run(&r, &offsets);
  ASSERT_TRUE(r.status == ConstrainedStatus::kOptimal || r.status == ConstrainedStatus::kFeasible)
      << r.reason;
  ASSERT_EQ(offsets.size(), m.items.size());
  uint64_t reuse = 0, peak = 0;
  for (size_t i = 0; i < m.items.size(); ++i) {
    peak = std::max(peak, offsets[i] + m.items[i].extent);
    for (size_t j = i + 1; j < m.items.size(); ++j) {
      if (!Overlap(offsets[i], m.items[i].extent, offsets[j], m.items[j].extent)) continue;
      EXPECT_FALSE(m.conflict[i][j]) << i << " " << j;
      reuse += m.weight[i][j];
    }
  }
  EXPECT_LE(peak, 656u);
  EXPECT_EQ(r.reuse_cost, reuse);
  EXPECT_EQ(r.peak, peak);
  EXPECT_LE(r.reuse_lower_bound, r.reuse_cost);
  EXPECT_LE(r.peak_lower_bound, r.peak);
}

}  // namespace
}  // namespace internal
}  // namespace policy
}  // namespace accelmem
