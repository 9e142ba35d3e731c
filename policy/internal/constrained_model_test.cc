// The pool model built from hand-made problems: what becomes an item, which pairs conflict or
// pay, what is an error, and the live-set sweep.
#include "policy/internal/constrained_model.h"

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/dsa_problem.h"

namespace accelmem {
namespace policy {
namespace internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A problem with one pool (id 7) of `capacity` bytes.
struct ProblemBuilder {
  DsaProblem p;
  explicit ProblemBuilder(uint64_t capacity) {
    DsaPool pool;
    pool.id = 7;
    pool.capacity = capacity;
    p.pools.push_back(pool);
  }
  uint32_t Add(uint64_t size, std::vector<DsaInterval> live, uint64_t alignment = 1) {
    DsaBuffer b;
    b.id = static_cast<uint32_t>(100 + p.buffers.size());
    b.size = size;
    b.alignment = alignment;
    b.live_intervals = std::move(live);
    b.allowed_pools = {7};
    p.buffers.push_back(b);
    return b.id;
  }
  void Penalty(uint32_t a, uint32_t b, uint64_t cost) {
    if (!p.cost_model) p.cost_model.emplace();
    p.cost_model->reuse_penalties.push_back({a, b, cost});
  }
  PoolModel Build() const {
    std::vector<int> all;
    for (size_t i = 0; i < p.buffers.size(); ++i) all.push_back(static_cast<int>(i));
    absl::StatusOr<PoolModel> m = BuildPoolModel(p, 0, all);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *m : PoolModel{};
  }
};

TEST(ConstrainedModelTest, ReservedRangesAreSortedAndMerged) {
  ProblemBuilder b(256);
  b.p.pools[0].reserved_ranges = {{200, 220}, {0, 32}, {16, 48}, {48, 50}};
  b.Add(8, {{0, 1}});
  const PoolModel m = b.Build();
  ASSERT_EQ(m.reserved.size(), 2u);
  EXPECT_EQ(m.reserved[0].begin, 0u);
  EXPECT_EQ(m.reserved[0].end, 50u);  // [48, 50) touches [16, 48): one range.
  EXPECT_EQ(m.reserved[1].begin, 200u);
  EXPECT_EQ(m.reserved_total, 70u);
  EXPECT_EQ(m.reserved_end, 220u);
  EXPECT_TRUE(m.has_capacity);
  EXPECT_EQ(UsableCapacity(m), 186u);

  ProblemBuilder unbounded(0);
  unbounded.p.pools[0].capacity.reset();
  unbounded.Add(8, {{0, 1}});
  const PoolModel u = unbounded.Build();
  EXPECT_FALSE(u.has_capacity);
  EXPECT_EQ(UsableCapacity(u), kNoCapacity);
}

TEST(ConstrainedModelTest, AColocationClassIsOneItem) {
  ProblemBuilder b(256);
  const uint32_t x = b.Add(32, {{10, 20}});
  const uint32_t y = b.Add(64, {{0, 5}}, /*alignment=*/16);
  const uint32_t z = b.Add(8, {{0, 30}});
  b.p.constraints.colocations = {{x, y}, {z, 999}};  // 999 is in no pool here: ignored.
  const PoolModel m = b.Build();
  ASSERT_EQ(m.items.size(), 2u);
  EXPECT_THAT(m.items[0].buffers, ElementsAre(0, 1));
  EXPECT_EQ(m.items[0].extent, 64u);
  EXPECT_EQ(m.items[0].alignment, 16u);
  ASSERT_EQ(m.items[0].intervals.size(), 2u);
  EXPECT_EQ(m.items[0].intervals[0].lower, 0);  // Sorted by lower end.
  EXPECT_EQ(m.items[0].intervals[1].lower, 10);
  EXPECT_THAT(m.items[1].buffers, ElementsAre(2));
  // z lives with both members: the class conflicts with it.
  EXPECT_TRUE(m.conflict[0][1]);
}

TEST(ConstrainedModelTest, ConflictsComeFromTimeExclusivePinsAndSeparations) {
  ProblemBuilder b(256);
  const uint32_t a = b.Add(8, {{0, 10}});
  const uint32_t c = b.Add(8, {{5, 15}});   // Lives with a...
  const uint32_t d = b.Add(8, {{20, 30}});  // ...d lives with neither...
  const uint32_t e = b.Add(8, {{40, 50}});
  const uint32_t f = b.Add(8, {{60, 70}});
  b.p.constraints.temporal_exclusions = {{c, a}};  // ...but a and c are proven apart.
  b.p.constraints.separations = {{a, d, {DsaSeparationReason::kPipelineStage}},
                                 {c, a, {DsaSeparationReason::kPipelineStage}},
                                 {d, e, {DsaSeparationReason::kTargetHazard}}};
  b.p.constraints.pinned_allocations = {{f, 7, 0, /*exclusive_for_all_time=*/true}};
  const PoolModel m = b.Build();
  EXPECT_TRUE(m.conflict[0][2]);  // Separated across time.
  EXPECT_TRUE(m.conflict[0][1]);  // Separated (the exclusion only lifts the time conflict).
  EXPECT_TRUE(m.conflict[2][3]);
  EXPECT_FALSE(m.conflict[1][2]);
  EXPECT_FALSE(m.conflict[1][3]);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(m.conflict[4][i] && m.conflict[i][4]) << i;
  EXPECT_TRUE(m.items[4].pinned && m.items[4].exclusive);
  // Only pipeline_stage separations of pairs that do not conflict otherwise.
  EXPECT_EQ(m.pipeline_only, (std::set<std::pair<int, int>>{{0, 1}, {0, 2}}));
  EXPECT_THAT(m.conflicts_of[1], ElementsAre(0, 4));
}

TEST(ConstrainedModelTest, PenaltiesBetweenBuffersLiveTogetherAreDropped) {
  ProblemBuilder b(256);
  const uint32_t a = b.Add(8, {{0, 10}});
  const uint32_t c = b.Add(8, {{5, 15}});
  const uint32_t d = b.Add(8, {{20, 30}});
  b.Penalty(a, c, 5);  // Live together: can never overlap, never paid.
  b.Penalty(a, d, 2);
  b.Penalty(d, a, 3);  // Both directions add up.
  const PoolModel m = b.Build();
  EXPECT_EQ(m.weight[0][1], 0u);
  EXPECT_EQ(m.weight[0][2], 5u);
  EXPECT_EQ(m.weight[2][0], 5u);
  EXPECT_TRUE(m.any_penalty);
  ASSERT_EQ(m.penalties_of[0].size(), 1u);
  EXPECT_EQ(m.penalties_of[0][0], std::make_pair(2, uint64_t{5}));
  EXPECT_TRUE(m.penalties_of[1].empty());
}

TEST(ConstrainedModelTest, ImpossibleClassesAreErrors) {
  ProblemBuilder b(256);
  const uint32_t a = b.Add(8, {{0, 10}});
  const uint32_t c = b.Add(8, {{20, 30}});
  const uint32_t d = b.Add(8, {{40, 50}});
  b.p.constraints.colocations = {{a, c}, {c, d}};
  b.p.constraints.separations = {{a, d, {}}};
  absl::StatusOr<PoolModel> m = BuildPoolModel(b.p, 0, {0, 1, 2});
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("separated but colocated"));

  b.p.constraints.separations.clear();
  b.p.constraints.pinned_allocations = {{a, 7, 0, false}, {d, 7, 32, false}};
  m = BuildPoolModel(b.p, 0, {0, 1, 2});
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("pinned at 0 and 32"));

  b.p.constraints.pinned_allocations = {{a, 7, 32, false}, {d, 7, 32, false}};
  m = BuildPoolModel(b.p, 0, {0, 1, 2});
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->items[0].pinned);
  EXPECT_EQ(m->items[0].pin_offset, 32u);
}

TEST(ConstrainedModelTest, OnlyThePoolsBuffersAreItems) {
  ProblemBuilder b(256);
  b.Add(8, {{0, 10}});
  b.Add(16, {{0, 10}});
  const uint32_t c = b.Add(32, {{0, 10}});
  b.Penalty(100, c, 4);  // c is not in the pool: ignored.
  absl::StatusOr<PoolModel> m = BuildPoolModel(b.p, 0, {0, 1});
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->items.size(), 2u);
  EXPECT_FALSE(m->any_penalty);
  EXPECT_EQ(TotalExtent(*m, {0, 1}), 24u);
}

TEST(ConstrainedModelTest, RestrictModelKeepsThePairsBetweenItsItems) {
  ProblemBuilder b(256);
  const uint32_t a = b.Add(8, {{0, 10}});
  b.Add(8, {{0, 10}});
  const uint32_t c = b.Add(8, {{20, 30}});
  const uint32_t d = b.Add(8, {{40, 50}});
  b.Penalty(a, d, 3);
  b.p.constraints.separations = {{c, d, {DsaSeparationReason::kPipelineStage}}};
  const PoolModel m = b.Build();
  const PoolModel s = RestrictModel(m, {0, 2, 3});
  ASSERT_EQ(s.items.size(), 3u);
  EXPECT_EQ(s.capacity, 256u);
  EXPECT_EQ(s.weight[0][2], 3u);
  EXPECT_TRUE(s.conflict[1][2]);
  EXPECT_EQ(s.pipeline_only, (std::set<std::pair<int, int>>{{1, 2}}));
  EXPECT_THAT(s.penalties_of[0], ElementsAre(std::make_pair(2, uint64_t{3})));
}

// Exact-or-disjoint pairs become item pairs, except where they cannot matter: inside one class
// (one offset) or between items that conflict (never overlapping). Items connected through pairs
// form a group that knows its alignments.
TEST(ConstrainedModelTest, ExactPairsFormGroupsWithTheirAlignments) {
  ProblemBuilder b(1024);
  const uint32_t x = b.Add(64, {{0, 5}}, 8);
  const uint32_t y = b.Add(32, {{5, 10}}, 64);
  const uint32_t z = b.Add(16, {{10, 12}});
  const uint32_t live = b.Add(16, {{0, 10}});  // Live with x and y.
  const uint32_t c1 = b.Add(8, {{20, 30}});
  const uint32_t c2 = b.Add(8, {{20, 30}});  // Colocated with c1.
  b.p.constraints.colocations = {{c1, c2}};
  b.p.extensions.exact_or_disjoint = {{y, x}, {z, y}, {live, x}, {c1, c2}};
  const PoolModel m = b.Build();
  ASSERT_EQ(m.items.size(), 5u);  // x, y, z, live, {c1, c2}
  EXPECT_EQ(m.exact_pairs, (std::set<std::pair<int, int>>{{0, 1}, {1, 2}}));
  EXPECT_THAT(m.exact_of[1], ::testing::UnorderedElementsAre(0, 2));
  EXPECT_THAT(m.exact_of[3], ::testing::IsEmpty());
  EXPECT_EQ(m.exact_group, (std::vector<int>{0, 0, 0, -1, -1}));
  ASSERT_EQ(m.exact_members.size(), 1u);
  EXPECT_THAT(m.exact_members[0], ElementsAre(0, 1, 2));
  EXPECT_THAT(m.exact_alignments[0], ElementsAre(1, 8, 64));
  // A part keeps the pairs among its items, renumbered.
  const PoolModel part = RestrictModel(m, {1, 2, 3});
  EXPECT_EQ(part.exact_pairs, (std::set<std::pair<int, int>>{{0, 1}}));
  EXPECT_EQ(part.exact_group, (std::vector<int>{0, 0, -1}));
  EXPECT_THAT(part.exact_alignments[0], ElementsAre(1, 64));
}

TEST(ConstrainedModelTest, LiveSetsAtEachBirth) {
  ProblemBuilder b(256);
  b.Add(8, {{0, 10}, {30, 40}});  // Two intervals: born twice.
  b.Add(8, {{5, 30}});
  b.Add(8, {{10, 12}});
  b.Add(8, {{5, 6}});
  const std::vector<LiveSet> sets = LiveSets(b.Build());
  ASSERT_EQ(sets.size(), 4u);
  EXPECT_EQ(sets[0].time, 0);
  EXPECT_THAT(sets[0].items, ElementsAre(0));
  EXPECT_EQ(sets[1].time, 5);
  EXPECT_THAT(sets[1].items, ElementsAre(0, 1, 3));
  EXPECT_EQ(sets[2].time, 10);  // Item 0 ended at 10 (half-open).
  EXPECT_THAT(sets[2].items, ElementsAre(1, 2));
  EXPECT_EQ(sets[3].time, 30);  // Item 1 ended at 30.
  EXPECT_THAT(sets[3].items, ElementsAre(0));
}

}  // namespace
}  // namespace internal
}  // namespace policy
}  // namespace accelmem
