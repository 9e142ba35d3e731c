#include "policy/constrained_planner.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/dsa_problem.h"
#include "policy/dsa_validator.h"
#include "policy/testing/corpus_files.h"

namespace accelmem {
namespace policy {
namespace {

using ::testing::HasSubstr;

constexpr char kCorpus[] = "third_party/dsa_solver_corpus/";

DsaProblem OnePool(uint64_t capacity) {
  DsaProblem problem;
  problem.pools.push_back({0, "Vec", capacity, {}, std::nullopt});
  problem.objective.terms = {DsaObjectiveTerm::kCapacityOverflow, DsaObjectiveTerm::kReuseCost,
                             DsaObjectiveTerm::kTotalPeak};
  return problem;
}

void AddBuffer(DsaProblem* problem, uint32_t id, uint64_t size, int64_t lower, int64_t upper) {
  problem->buffers.push_back(
      {id, "b" + std::to_string(id), size, 32, {{lower, upper}}, {problem->pools[0].id}});
}

TEST(ConstrainedPlannerTest, LoadOverCapacityIsAProofNamingTheTime) {
  DsaProblem problem = OnePool(96);
  AddBuffer(&problem, 0, 64, 0, 10);
  AddBuffer(&problem, 1, 64, 5, 20);
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, ConstrainedStatus::kInfeasible);
  EXPECT_THAT(result->reason, HasSubstr("LOAD 128 bytes at time 5, over the usable capacity 96"));
  EXPECT_TRUE(result->placements.empty());
}

// An in-place pair (problem.extensions.exact_or_disjoint): x dies where y is defined, z lives
// throughout. 96 bytes hold z and x, so y fits only in x's bytes: from x's base it may, as a
// separation it may not.
TEST(ConstrainedPlannerTest, AnExactPairSharesItsBaseWhereApartItCannotFit) {
  DsaProblem problem = OnePool(96);
  AddBuffer(&problem, 0, 32, 0, 10);  // z
  AddBuffer(&problem, 1, 64, 0, 5);   // x
  AddBuffer(&problem, 2, 32, 5, 10);  // y
  problem.extensions.exact_or_disjoint = {{1, 2}};
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_EQ(result->placements[2].offset, result->placements[1].offset);
  EXPECT_EQ(result->total_peak, 96u);
  DsaProblem apart = problem;
  apart.extensions.exact_or_disjoint.clear();
  apart.constraints.separations = {{1, 2, {}}};
  result = SolveConstrained(apart);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, ConstrainedStatus::kInfeasible);
}

// Pins leave x only [32, 96) and y only [0, 64): y would overlap x partially, which a plain
// problem allows and an exact pair does not. The search proves it.
TEST(ConstrainedPlannerTest, AnExactPairNeverOverlapsPartially) {
  DsaProblem problem = OnePool(96);
  AddBuffer(&problem, 0, 32, 0, 5);   // a, pinned at 0
  AddBuffer(&problem, 1, 64, 0, 5);   // x
  AddBuffer(&problem, 2, 64, 5, 10);  // y
  AddBuffer(&problem, 3, 32, 5, 10);  // b, pinned at 64
  problem.constraints.pinned_allocations = {{0, 0, 0, false}, {3, 0, 64, false}};
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_EQ(result->placements[1].offset, 32u);
  EXPECT_EQ(result->placements[2].offset, 0u);
  problem.extensions.exact_or_disjoint = {{2, 1}};
  result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, ConstrainedStatus::kInfeasible);
  EXPECT_THAT(result->reason, HasSubstr("exhaustive search"));
}

// w is pinned at [0, 40); y needs alignment 64, so it starts at 64 at best, and x (alignment 1)
// may join it there. x's own resting points are 40 (partial against y at 64) and y's top 128:
// only as one group, aligned to 64, do they reach the least peak 128. A search that offered x
// its own resting points only would end exhausted at 160 and call it optimal.
TEST(ConstrainedPlannerTest, AnExactGroupRestsAtItsLargestAlignment) {
  DsaProblem problem = OnePool(1024);
  problem.objective.terms = {DsaObjectiveTerm::kTotalPeak};
  problem.buffers = {{0, "w", 40, 1, {{0, 10}}, {0}},
                     {1, "x", 32, 1, {{0, 5}}, {0}},
                     {2, "y", 64, 64, {{5, 10}}, {0}}};
  problem.constraints.pinned_allocations = {{0, 0, 0, false}};
  problem.extensions.exact_or_disjoint = {{1, 2}};
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_EQ(result->total_peak, 128u);
  EXPECT_EQ(result->placements[1].offset, 64u);
  EXPECT_EQ(result->placements[2].offset, 64u);
}

// Issue 51 (PyPTO #2872): a 256 KiB operand against a 64 KiB L0B is a proof naming the buffer,
// found before any pool is searched.
TEST(ConstrainedPlannerTest, ABufferLargerThanEveryPoolItMayGoToIsAProofNamingIt) {
  DsaProblem problem;
  problem.pools = {{0, "L0A", 65536, {}, std::nullopt}, {1, "L0B", 65536, {}, std::nullopt}};
  problem.objective.terms = {DsaObjectiveTerm::kTotalPeak};
  for (uint32_t i = 0; i < 30; ++i) {
    problem.buffers.push_back({i, "t" + std::to_string(i), 2048, 32, {{i, i + 4}}, {0}});
  }
  problem.buffers.push_back({30, "rhs_l0b", 262144, 512, {{0, 8}}, {1, 0}});
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, ConstrainedStatus::kInfeasible);
  EXPECT_EQ(result->reason,
            "buffer 30 'rhs_l0b' of 262144 bytes, aligned to 512, fits in no pool it may go to: "
            "pool 1 'L0B' has 65536 usable bytes (capacity 65536); pool 0 'L0A' has 65536 usable "
            "bytes (capacity 65536)");
  for (const PoolResult& pool : result->pools) EXPECT_EQ(pool.search_nodes, 0) << pool.name;
  // Reserved ranges split the room: 96 usable bytes, but no free range of 96.
  DsaProblem split = OnePool(128);
  split.pools[0].reserved_ranges = {{32, 64}};
  AddBuffer(&split, 0, 96, 0, 10);
  result = SolveConstrained(split);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, ConstrainedStatus::kInfeasible);
  EXPECT_THAT(result->reason, HasSubstr("buffer 0 'b0' of 96 bytes, aligned to 32, fits in no "
                                        "pool it may go to: pool 0 'Vec' has 96 usable bytes "
                                        "(capacity 128, largest free range 64)"));
  // One pool that holds it is enough: no proof, and it goes there.
  problem.pools[0].capacity = 262144 + 65536;
  result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_EQ(result->placements[30].pool, 0u);
}

TEST(ConstrainedPlannerTest, ReservedRangesCountAgainstTheCapacity) {
  DsaProblem problem = OnePool(128);
  problem.pools[0].reserved_ranges = {{32, 64}};
  AddBuffer(&problem, 0, 64, 0, 10);
  AddBuffer(&problem, 1, 32, 0, 10);
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_TRUE(CheckDsaSolution(problem, result->placements).ok());
  EXPECT_EQ(result->placements[0].offset, 64u);  // The 64-byte one cannot sit below the range.
  EXPECT_EQ(result->placements[1].offset, 0u);
  EXPECT_EQ(result->total_peak, 128u);
}

TEST(ConstrainedPlannerTest, PaysTheCheapestPenaltyWhenOverlapIsForced) {
  // Capacity for two buffers; 0 and 1 live together fill it, so 2 (live later) overlaps one of
  // them: the cheaper edge (weight 1, to buffer 1) is paid.
  DsaProblem problem = OnePool(64);
  AddBuffer(&problem, 0, 32, 0, 10);
  AddBuffer(&problem, 1, 32, 0, 10);
  AddBuffer(&problem, 2, 32, 10, 20);
  problem.cost_model = DsaCostModel{
      {{0, 2, 5, DsaPenaltyReason::kCrossPipe}, {1, 2, 1, DsaPenaltyReason::kCrossPipe}}};
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_EQ(result->reuse_cost, 1u);
  EXPECT_EQ(result->reuse_lower_bound, 1u);
  const DsaSolutionCheck check = CheckDsaSolution(problem, result->placements);
  EXPECT_TRUE(check.ok());
  EXPECT_EQ(check.reuse_cost, 1u);
}

TEST(ConstrainedPlannerTest, SeparationsAndPinsAreHard) {
  DsaProblem problem = OnePool(128);
  AddBuffer(&problem, 0, 32, 0, 10);
  AddBuffer(&problem, 1, 32, 20, 30);  // Not live with 0, but separated from it.
  AddBuffer(&problem, 2, 32, 40, 50);
  problem.constraints.separations.push_back({0, 1, {DsaSeparationReason::kSemanticNoAlias}});
  problem.constraints.pinned_allocations.push_back({2, 0, 96, false});
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_TRUE(CheckDsaSolution(problem, result->placements).ok());
  EXPECT_NE(result->placements[0].offset, result->placements[1].offset);
  EXPECT_EQ(result->placements[2].offset, 96u);
}

TEST(ConstrainedPlannerTest, ExhaustiveSearchProvesWhatLoadCannot) {
  // LOAD fits (2 x 48 <= 128 at every time), but with 32-byte alignment and a reserved range in
  // the middle no two 48-byte buffers fit side by side: 48 -> 64 slots around [48, 80).
  DsaProblem problem = OnePool(128);
  problem.pools[0].reserved_ranges = {{48, 80}};
  for (uint32_t i = 0; i < 3; ++i) AddBuffer(&problem, i, 48, 0, 10);
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->status, ConstrainedStatus::kInfeasible);
}

TEST(ConstrainedPlannerTest, PipelineDepthIsRelaxedOnlyWhenProvenNecessary) {
  // Two stages of a depth-2 pipeline must not share bytes, but the pool holds one slot beside
  // the long-lived buffer 0: strict placement is infeasible, relaxing the depth fits at cost 1.
  DsaProblem problem = OnePool(64);
  AddBuffer(&problem, 0, 32, 0, 30);
  AddBuffer(&problem, 1, 32, 0, 10);
  AddBuffer(&problem, 2, 32, 10, 20);
  problem.constraints.separations.push_back({1, 2, {DsaSeparationReason::kPipelineStage}});
  problem.pypto_structure = DsaPyptoStructure{{}, {{7, 0, 32, 2, 2, {{1, 0, 0}, {2, 1, 1}}}}};
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok());
  // The problem as given is infeasible, with its proof; the relaxed placement is offered beside
  // it, as the answer to another problem.
  EXPECT_EQ(result->status, ConstrainedStatus::kInfeasible);
  EXPECT_TRUE(result->placements.empty());
  ASSERT_NE(result->relaxed, nullptr);
  const ConstrainedResult& relaxed = result->relaxed->result;
  EXPECT_EQ(relaxed.status, ConstrainedStatus::kOptimal);
  EXPECT_THAT(result->relaxed->groups, ::testing::ElementsAre(std::pair<uint32_t, uint32_t>(0, 7)));
  EXPECT_THAT(relaxed.pools[0].relaxed_pipeline_groups, ::testing::ElementsAre(7u));
  EXPECT_EQ(relaxed.reuse_cost, 1u);
  EXPECT_TRUE(CheckDsaSolution(result->relaxed->problem, relaxed.placements).ok());
  EXPECT_FALSE(CheckDsaSolution(problem, relaxed.placements).ok());
  // Its solution document carries the relaxed problem's fingerprint, never the original's.
  DsaProblemDocument document;
  document.instance = "pipeline";
  document.problem = problem;
  const DsaSolutionDocument solution = MakeRelaxedSolutionDocument(document, *result);
  EXPECT_NE(solution.problem_fingerprint, DsaProblemFingerprint(document));
  EXPECT_EQ(solution.problem_fingerprint,
            DsaProblemFingerprint(RelaxedDocument(document, *result->relaxed)));
  EXPECT_EQ(solution.metadata.at("relaxed_pipeline_groups"), "0:7");
  // Without the relaxation asked for, only the proof.
  ConstrainedOptions strict;
  strict.relax_pipeline_when_infeasible = false;
  result = SolveConstrained(problem, strict);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->status, ConstrainedStatus::kInfeasible);
  EXPECT_EQ(result->relaxed, nullptr);
  // With room for both slots the depth stays hard.
  problem.pools[0].capacity = 96;
  result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_EQ(result->relaxed, nullptr);
  EXPECT_TRUE(CheckDsaSolution(problem, result->placements).ok());
}

// The five edge problems of a review of the planner's claims: each was once answered "optimal"
// with a placement the validator rejects, or with a reuse bound above the optimum.
DsaProblem PinnedInsideALargerClass() {
  // Buffer 0 (32 B) pinned at 64, colocated with buffer 1 (128 B): the class ends at 192.
  DsaProblem problem = OnePool(160);
  problem.objective.terms = {DsaObjectiveTerm::kCapacityOverflow, DsaObjectiveTerm::kReuseCost};
  problem.buffers.push_back({0, "b0", 32, 1, {{0, 1}}, {0}});
  problem.buffers.push_back({1, "b1", 128, 1, {{5, 6}}, {0}});
  problem.constraints.colocations.push_back({0, 1});
  problem.constraints.pinned_allocations.push_back({0, 0, 64, false});
  return problem;
}

DsaProblem PinnedInsideAMoreAlignedClass() {
  DsaProblem problem = PinnedInsideALargerClass();
  problem.pools[0].capacity = 256;
  problem.buffers[1].alignment = 32;
  problem.constraints.pinned_allocations[0].offset = 16;
  return problem;
}

DsaProblem ColocatedAcrossPools() {
  DsaProblem problem = OnePool(256);
  problem.pools.push_back({1, "Mat", 256, {}, std::nullopt});
  problem.buffers.push_back({0, "b0", 32, 32, {{0, 4}}, {0}});
  problem.buffers.push_back({1, "b1", 32, 32, {{2, 6}}, {1}});
  problem.constraints.colocations.push_back({0, 1});
  return problem;
}

DsaProblem SeparatedThroughAColocationChain() {
  // 0~1, 1~2 put 0 and 2 at one offset; 0 apart from 2 cannot hold.
  DsaProblem problem = OnePool(256);
  for (uint32_t i = 0; i < 3; ++i) AddBuffer(&problem, i, 32, 2 * i, 2 * i + 1);
  problem.constraints.colocations = {{0, 1}, {1, 2}};
  problem.constraints.separations.push_back({0, 2, {DsaSeparationReason::kGeneric}});
  return problem;
}

DsaProblem MaxPeakBeforeReuse() {
  // P1 holds one 100 B buffer; P2 (capacity 200) two 50 B buffers live one after the other with
  // a penalty between them. The least max_peak is 100 (set by P1), and under it P2 can keep A
  // and B apart: max_peak 100, reuse 0.
  DsaProblem problem;
  problem.pools.push_back({1, "P1", std::nullopt, {}, std::nullopt});
  problem.pools.push_back({2, "P2", 200, {}, std::nullopt});
  problem.buffers.push_back({0, "big", 100, 1, {{0, 2}}, {1}});
  problem.buffers.push_back({1, "A", 50, 1, {{0, 1}}, {2}});
  problem.buffers.push_back({2, "B", 50, 1, {{1, 2}}, {2}});
  problem.cost_model = DsaCostModel{{{1, 2, 1, DsaPenaltyReason::kGeneric}}};
  problem.objective.terms = {DsaObjectiveTerm::kMaxPeak, DsaObjectiveTerm::kReuseCost};
  return problem;
}

TEST(ConstrainedPlannerEdgeTest, PinsHoldTheirWholeColocationClass) {
  for (const DsaProblem& problem : {PinnedInsideALargerClass(), PinnedInsideAMoreAlignedClass()}) {
    absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->status, ConstrainedStatus::kInfeasible);
    EXPECT_THAT(result->reason, HasSubstr("pinned at"));
    EXPECT_TRUE(result->placements.empty());
  }
  // Moved to where the class fits, the same pin holds.
  DsaProblem fits = PinnedInsideALargerClass();
  fits.constraints.pinned_allocations[0].offset = 32;
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(fits);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_TRUE(CheckDsaSolution(fits, result->placements).ok());
}

TEST(ConstrainedPlannerEdgeTest, ColocationsAcrossPoolsAndChainsAreProofs) {
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(ColocatedAcrossPools());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, ConstrainedStatus::kInfeasible);
  EXPECT_THAT(result->reason, HasSubstr("no pool in common"));
  result = SolveConstrained(SeparatedThroughAColocationChain());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, ConstrainedStatus::kInfeasible);
  EXPECT_THAT(result->reason, HasSubstr("separated but colocated"));
  // A common pool makes the cross-pool pair placeable: both land in it, at one offset.
  DsaProblem shared = ColocatedAcrossPools();
  shared.buffers[1].allowed_pools = {1, 0};
  result = SolveConstrained(shared);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_TRUE(CheckDsaSolution(shared, result->placements).ok());
  EXPECT_EQ(result->placements[1].pool, 0u);
}

TEST(ConstrainedPlannerEdgeTest, MaxPeakBeforeReuseCouplesThePools) {
  const DsaProblem problem = MaxPeakBeforeReuse();
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_EQ(result->max_peak, 100u);
  EXPECT_EQ(result->reuse_cost, 0u);
  EXPECT_EQ(result->reuse_lower_bound, 0u);
  EXPECT_EQ(result->max_peak_lower_bound, 100u);
  // The same with total_peak after reuse: P2 still rises to 100 to avoid the penalty.
  DsaProblem with_total = problem;
  with_total.objective.terms.push_back(DsaObjectiveTerm::kTotalPeak);
  result = SolveConstrained(with_total);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_EQ(result->reuse_cost, 0u);
  EXPECT_EQ(result->total_peak, 200u);
  // total_peak first fixes each pool at its least peak: P2 at 50, paying the penalty.
  DsaProblem total_first = problem;
  total_first.objective.terms = {DsaObjectiveTerm::kTotalPeak, DsaObjectiveTerm::kMaxPeak,
                                 DsaObjectiveTerm::kReuseCost};
  result = SolveConstrained(total_first);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_EQ(result->total_peak, 150u);
  EXPECT_EQ(result->reuse_cost, 1u);
}

TEST(ConstrainedPlannerEdgeTest, BuffersAllowedInSeveralPoolsArePlaced) {
  // Two 64 B buffers live together, each allowed in a 64 B pool or a 128 B one: the pool is
  // part of the answer. Every choice fits; the one that pays nothing is the optimum.
  DsaProblem problem;
  problem.pools.push_back({0, "small", 64, {}, std::nullopt});
  problem.pools.push_back({1, "large", 128, {}, std::nullopt});
  problem.objective.terms = {DsaObjectiveTerm::kCapacityOverflow, DsaObjectiveTerm::kReuseCost,
                             DsaObjectiveTerm::kTotalPeak};
  problem.buffers.push_back({0, "a", 64, 32, {{0, 10}}, {0, 1}});
  problem.buffers.push_back({1, "b", 64, 32, {{0, 10}}, {0, 1}});
  problem.buffers.push_back({2, "c", 64, 32, {{0, 10}}, {1}});
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_TRUE(CheckDsaSolution(problem, result->placements).ok());
  EXPECT_EQ(result->total_peak, 192u);
  // With a third one live beside them nothing fits, whatever the choice: a proof over every
  // choice.
  problem.buffers.push_back({3, "d", 64, 32, {{0, 10}}, {0, 1}});
  result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, ConstrainedStatus::kInfeasible);
  EXPECT_THAT(result->reason, HasSubstr("choices of pools"));
}

TEST(ConstrainedPlannerTest, LargePlainPoolsGoToTheLifetimePlanner) {
  // 60 buffers of a staircase: at most three live at once, so LOAD (3 x 64) is reachable.
  DsaProblem problem = OnePool(1024);
  problem.objective.terms = {DsaObjectiveTerm::kTotalPeak, DsaObjectiveTerm::kMaxPeak};
  for (uint32_t i = 0; i < 60; ++i) AddBuffer(&problem, i, 64, i, i + 3);
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_THAT(result->pools[0].method, HasSubstr("lifetime_planner"));
  EXPECT_EQ(result->total_peak, 192u);
  EXPECT_TRUE(CheckDsaSolution(problem, result->placements).ok());
  // One separation makes it a constrained pool again.
  problem.constraints.separations.push_back({0, 59, {}});
  result = SolveConstrained(problem);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->pools[0].method, "constrained");
  EXPECT_TRUE(CheckDsaSolution(problem, result->placements).ok());
}

TEST(ConstrainedPlannerTest, MalformedProblemsAreErrorsNotCrashes) {
  DsaProblem problem = OnePool(64);
  AddBuffer(&problem, 0, 0, 0, 10);
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem);
  EXPECT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("size 0"));
}

// Every corpus problem: the independent validator accepts each placement, its reuse cost and
// peaks are what the planner reports, and no lower bound exceeds the value reached.
TEST(ConstrainedPlannerCorpusTest, EveryDevelopmentProblemValidates) {
  std::vector<std::string> files =
      policy_testing::ListJsonFiles(std::string(kCorpus) + "pypto-lib");
  ASSERT_EQ(files.size(), 587u);
  // The published results bound the truth from outside: a published placement's reuse cost is
  // at least the optimum (so no lower bound of ours may exceed it), and a published proof of
  // optimality means nothing fits with less (so no placement of ours may cost less).
  struct Published {
    uint64_t best = 0;
    bool proven = false;
  };
  std::map<std::pair<std::string, std::string>, Published> published;
  {
    std::ifstream csv(std::string(kCorpus) + "results/dsa-rp-v1/paired-objectives.csv");
    std::string line;
    std::getline(csv, line);  // source,family,source_path,source_instance,...,best_known_cost,..
    while (std::getline(csv, line)) {
      std::vector<std::string> cells;
      std::stringstream stream(line);
      for (std::string cell; std::getline(stream, cell, ',');) cells.push_back(cell);
      if (cells.size() < 12 || cells[9].empty()) continue;
      published[{cells[2], cells[3]}] = {std::stoull(cells[9]), cells[11] == "true"};
    }
  }
  ASSERT_GE(published.size(), 150u);
  int compared = 0;
  std::map<std::string, int> statuses;
  for (const std::string& path : files) {
    absl::StatusOr<DsaProblemDocument> document = ReadDsaProblemFile(path);
    ASSERT_TRUE(document.ok()) << document.status();
    ConstrainedOptions options;
    options.budget = absl::Milliseconds(100);
    absl::StatusOr<ConstrainedResult> result = SolveConstrained(document->problem, options);
    ASSERT_TRUE(result.ok()) << path << ": " << result.status();
    ++statuses[ConstrainedStatusName(result->status)];
    EXPECT_LE(result->reuse_lower_bound, result->reuse_cost) << path;
    const auto& metadata = document->metadata;
    if (path.find("-cross-pipe-soft.json") != std::string::npos) {
      auto it = published.find(
          {metadata.at("corpus_source_path"), metadata.at("dsa_rp_source_instance")});
      ASSERT_NE(it, published.end()) << path;
      ++compared;
      EXPECT_LE(result->reuse_lower_bound, it->second.best) << path;
      if (it->second.proven && !result->placements.empty()) {
        EXPECT_GE(result->reuse_cost, it->second.best) << path;
      }
    }
    if (result->relaxed) {
      // A relaxed answer is never the answer: the problem as given is proven infeasible.
      EXPECT_EQ(result->status, ConstrainedStatus::kInfeasible) << path;
      const DsaSolutionCheck relaxed =
          CheckDsaSolution(result->relaxed->problem, result->relaxed->result.placements);
      EXPECT_TRUE(relaxed.ok()) << path;
      ++statuses["relaxed answers"];
    }
    if (result->placements.empty()) continue;
    const DsaSolutionCheck check = CheckDsaSolution(document->problem, result->placements);
    ASSERT_TRUE(check.ok()) << path << ": " << check.errors.front();
    EXPECT_EQ(check.reuse_cost, result->reuse_cost) << path;
    EXPECT_EQ(check.total_peak, result->total_peak) << path;
  }
  EXPECT_EQ(compared, 150);
  for (const auto& [status, count] : statuses) printf("%s: %d\n", status.c_str(), count);
}

// The pair the planner proved last: Qwen3-14B prefill gate_up_proj, total 52. The evidence that
// 52 is the optimum is in the repository and shares no code with the planner:
// constrained_planner_oracle_test's GateUpProjOptimumIsFiftyTwo solves the problem exactly with
// the MILP oracle (CI runs it). The byte-count bounds stop below 52 here; the bound from exactly
// solved parts (ConstrainedOptions::subset_bound) reaches it.
TEST(ConstrainedPlannerCorpusTest, OpenPairIsProvenByTheSubsetBound) {
  absl::StatusOr<DsaProblemDocument> document = ReadDsaProblemFile(
      std::string(kCorpus) +
      "pypto-lib/models/qwen3/14b/prefill_fwd/pypto_gate_up_proj-cross-pipe-soft.json");
  ASSERT_TRUE(document.ok()) << document.status();
  ConstrainedOptions options;
  options.budget = absl::Seconds(2);  // It ends when proven (tens of ms with -O2).
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(document->problem, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_FALSE(result->placements.empty());
  EXPECT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_EQ(result->reuse_cost, 52u);
  EXPECT_EQ(result->reuse_lower_bound, 52u);
  EXPECT_TRUE(CheckDsaSolution(document->problem, result->placements).ok());
  // Without it no claim may pass the optimum (a better bound elsewhere may prove it too).
  options.budget = absl::Milliseconds(300);
  options.subset_bound = false;
  result = SolveConstrained(document->problem, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_LE(result->reuse_lower_bound, 52u);
  EXPECT_GE(result->reuse_cost, 52u);
}

}  // namespace
}  // namespace policy
}  // namespace accelmem
