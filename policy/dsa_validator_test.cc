#include "policy/dsa_validator.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/dsa_problem.h"

namespace accelmem {
namespace policy {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

DsaBuffer Buffer(uint32_t id, std::string name, uint64_t size, std::vector<DsaInterval> live,
                 std::vector<uint32_t> pools, uint64_t alignment = 32) {
  DsaBuffer buffer;
  buffer.id = id;
  buffer.name = std::move(name);
  buffer.size = size;
  buffer.alignment = alignment;
  buffer.live_intervals = std::move(live);
  buffer.allowed_pools = std::move(pools);
  return buffer;
}

DsaPool Pool(uint32_t id, std::string name, std::optional<uint64_t> capacity,
             std::vector<DsaAddressRange> reserved = {}) {
  DsaPool pool;
  pool.id = id;
  pool.name = std::move(name);
  pool.capacity = capacity;
  pool.reserved_ranges = std::move(reserved);
  return pool;
}

// The hand-made problem every mutation below starts from.
//
// Pool 1 'Vec' (capacity 1024, reserved [0, 64)):
//   0 'a'  128 B live [0,10)          at  64 -> [64, 192)  touches the reserved range
//   9 'j'   32 B live [0,10)          at  64 -> [64, 96)   temporal exclusion with 'a'
//   1 'b'   64 B live [5,15)          at 192 -> [192, 256)
//   4 'e'   32 B live [0,5) + [30,40) at 192 -> [192, 224)  not live with 'b'
//   2 'c'   64 B live [20,30)         at 256 -> extent [256, 352) (colocated with 'd')
//   3 'd'   96 B live [25,35)         at 256 -> [256, 352)
//   5 'f'   64 B live [12,18)         at 320 -> [320, 384)  separated from 'a'; meets c's extent
// Pool 2 'Mat' (capacity 4096):
//   6 'g'   64 B live [0,40)  pinned exclusive at 0 -> [0, 64)
//   7 'h'   64 B live [0,40)  pinned (not exclusive) at 64 -> [64, 128)
//   8 'i'   32 B live [50,60)                       at 64 -> [64, 96)  reuses h's bytes
// Pool 3 'Gm' (unbounded):
//   10 'k'  32 B live [40,50) at 4096
// Pool 4 'Spare' (capacity 256): empty.
DsaProblem HandProblem() {
  DsaProblem problem;
  problem.pools = {Pool(1, "Vec", 1024, {{0, 64}}), Pool(2, "Mat", 4096), Pool(3, "Gm", {}),
                   Pool(4, "Spare", 256)};
  problem.buffers = {
      Buffer(0, "a", 128, {{0, 10}}, {1}),
      Buffer(1, "b", 64, {{5, 15}}, {1}),
      Buffer(2, "c", 64, {{20, 30}}, {1}),
      Buffer(3, "d", 96, {{25, 35}}, {1}),
      Buffer(4, "e", 32, {{0, 5}, {30, 40}}, {1, 2}),
      Buffer(5, "f", 64, {{12, 18}}, {1}),
      Buffer(6, "g", 64, {{0, 40}}, {2}),
      Buffer(7, "h", 64, {{0, 40}}, {2}),
      Buffer(8, "i", 32, {{50, 60}}, {2}),
      Buffer(9, "j", 32, {{0, 10}}, {1}),
      Buffer(10, "k", 32, {{40, 50}}, {3}),
  };
  problem.constraints.colocations = {{2, 3}};
  problem.constraints.separations = {{0, 5, {DsaSeparationReason::kSemanticNoAlias}}};
  problem.constraints.temporal_exclusions = {{9, 0}};
  problem.constraints.pinned_allocations = {{6, 2, 0, true}, {7, 2, 64, false}};
  DsaCostModel cost;
  cost.reuse_penalties = {
      {1, 4, 3, DsaPenaltyReason::kCrossPipe},    // Overlap, not live together: paid.
      {0, 9, 1000, DsaPenaltyReason::kGeneric},   // Overlap, temporal exclusion: paid.
      {2, 5, 7, DsaPenaltyReason::kCrossPipe},    // Overlap of c's extent only: paid.
      {2, 3, 40, DsaPenaltyReason::kGeneric},     // Colocated: not paid.
      {4, 6, 11, DsaPenaltyReason::kCrossCore},   // Different pools: not paid.
      {0, 1, 500, DsaPenaltyReason::kCrossPipe},  // Disjoint (and live together): not paid.
  };
  problem.cost_model = cost;
  problem.objective.terms = {DsaObjectiveTerm::kCapacityOverflow, DsaObjectiveTerm::kReuseCost,
                             DsaObjectiveTerm::kTotalPeak};
  return problem;
}

std::vector<DsaPlacement> HandPlacements() {
  return {{0, 1, 64}, {1, 1, 192}, {2, 1, 256}, {3, 1, 256}, {4, 1, 192},  {5, 1, 320},
          {6, 2, 0},  {7, 2, 64},  {8, 2, 64},  {9, 1, 64},  {10, 3, 4096}};
}

// Sets the placement of `buffer` (which must have one).
void Move(std::vector<DsaPlacement>& placements, uint32_t buffer, uint32_t pool, uint64_t offset) {
  for (DsaPlacement& placement : placements) {
    if (placement.buffer == buffer) {
      placement.pool = pool;
      placement.offset = offset;
      return;
    }
  }
  FAIL() << "no placement of buffer " << buffer;
}

TEST(DsaValidatorTest, HandProblemIsValid) {
  ASSERT_THAT(ValidateDsaProblem(HandProblem()), IsEmpty());
}

TEST(DsaValidatorTest, AcceptsHandSolutionWithExactMetrics) {
  const DsaSolutionCheck check = CheckDsaSolution(HandProblem(), HandPlacements());
  EXPECT_THAT(check.errors, IsEmpty());
  EXPECT_TRUE(check.ok());
  EXPECT_EQ(check.reuse_cost, 3u + 1000u + 7u);
  // Vec: f ends at 384. Mat: h ends at 128. Gm: k ends at 4128. Spare: empty.
  EXPECT_EQ(check.peak_by_pool,
            (std::map<uint32_t, uint64_t>{{1, 384}, {2, 128}, {3, 4128}, {4, 0}}));
  EXPECT_EQ(check.total_peak, 384u + 128u + 4128u);
  EXPECT_EQ(check.max_peak, 4128u);
  EXPECT_EQ(check.capacity_overflow, 0u);
}

TEST(DsaValidatorTest, PlacementOrderDoesNotMatter) {
  std::vector<DsaPlacement> placements = HandPlacements();
  std::reverse(placements.begin(), placements.end());
  const DsaSolutionCheck check = CheckDsaSolution(HandProblem(), placements);
  EXPECT_TRUE(check.ok()) << check.errors[0];
  EXPECT_EQ(check.reuse_cost, 1010u);
}

TEST(DsaValidatorTest, ReservedRangeCountsInPeak) {
  DsaProblem problem = HandProblem();
  problem.pools[3].reserved_ranges = {{32, 128}};  // Spare: no buffers, peak from the range.
  const DsaSolutionCheck check = CheckDsaSolution(problem, HandPlacements());
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(check.peak_by_pool.at(4), 128u);
  EXPECT_EQ(check.total_peak, 384u + 128u + 4128u + 128u);
}

TEST(DsaValidatorTest, RejectsBufferMovedOntoLiveBuffer) {
  std::vector<DsaPlacement> placements = HandPlacements();
  Move(placements, 1, 1, 128);  // b [128, 192) meets a [64, 192); both live at [5, 10).
  const DsaSolutionCheck check = CheckDsaSolution(HandProblem(), placements);
  EXPECT_THAT(check.errors,
              ElementsAre("buffer 0 'a' [64, 192) overlaps buffer 1 'b' [128, 192) in pool 1 "
                          "'Vec' while both are live at time 5"));
}

TEST(DsaValidatorTest, MultiIntervalBufferConflictsInItsSecondInterval) {
  std::vector<DsaPlacement> placements = HandPlacements();
  Move(placements, 4, 1, 256);  // e's [30, 40) meets d's [25, 35); c [20, 30) only touches it.
  const DsaSolutionCheck check = CheckDsaSolution(HandProblem(), placements);
  EXPECT_THAT(check.errors,
              ElementsAre("buffer 3 'd' [256, 352) overlaps buffer 4 'e' [256, 288) in pool 1 "
                          "'Vec' while both are live at time 30"));
}

TEST(DsaValidatorTest, OverlapUsesColocationExtent) {
  DsaProblem problem = HandProblem();
  problem.buffers[5].live_intervals = {{12, 22}};  // f now live with c at [20, 22).
  // c itself is [256, 320), f [320, 384): only c's extent (96, from d) meets f.
  const DsaSolutionCheck check = CheckDsaSolution(problem, HandPlacements());
  EXPECT_THAT(check.errors,
              ElementsAre("buffer 2 'c' [256, 352) overlaps buffer 5 'f' [320, 384) in pool 1 "
                          "'Vec' while both are live at time 20"));
  EXPECT_EQ(check.reuse_cost, 3u + 1000u);  // The c-f edge is now a temporal conflict.
}

TEST(DsaValidatorTest, RejectsMisalignedOffset) {
  std::vector<DsaPlacement> placements = HandPlacements();
  Move(placements, 10, 3, 4100);
  const DsaSolutionCheck check = CheckDsaSolution(HandProblem(), placements);
  EXPECT_THAT(check.errors, ElementsAre("buffer 10 'k' at offset 4100 is not aligned to 32"));
}

TEST(DsaValidatorTest, RejectsOverlapWithReservedRange) {
  std::vector<DsaPlacement> placements = HandPlacements();
  Move(placements, 9, 1, 32);  // j [32, 64) meets reserved [0, 64).
  const DsaSolutionCheck check = CheckDsaSolution(HandProblem(), placements);
  EXPECT_THAT(check.errors, ElementsAre("buffer 9 'j' [32, 64) overlaps reserved range [0, 64) "
                                        "of pool 1 'Vec'"));
}

TEST(DsaValidatorTest, RejectsCapacityExcess) {
  std::vector<DsaPlacement> placements = HandPlacements();
  Move(placements, 8, 2, 4064);  // i [4064, 4096): exactly fits.
  DsaSolutionCheck check = CheckDsaSolution(HandProblem(), placements);
  EXPECT_TRUE(check.ok());
  EXPECT_EQ(check.capacity_overflow, 0u);
  EXPECT_EQ(check.peak_by_pool.at(2), 4096u);

  Move(placements, 8, 2, 4096);
  check = CheckDsaSolution(HandProblem(), placements);
  EXPECT_THAT(check.errors,
              ElementsAre("buffer 8 'i' [4096, 4128) exceeds capacity 4096 of pool 2 'Mat'"));
  EXPECT_EQ(check.capacity_overflow, 32u);
  EXPECT_EQ(check.peak_by_pool.at(2), 4128u);
}

TEST(DsaValidatorTest, RejectsBrokenColocation) {
  std::vector<DsaPlacement> placements = HandPlacements();
  Move(placements, 3, 1, 352);  // d [352, 448), only live with e; e is at [192, 224).
  const DsaSolutionCheck check = CheckDsaSolution(HandProblem(), placements);
  ASSERT_THAT(check.errors, SizeIs(1));
  EXPECT_THAT(check.errors[0],
              AllOf(HasSubstr("colocation 2-3 violated"), HasSubstr("buffer 2 'c'"),
                    HasSubstr("buffer 3 'd' in pool 1 'Vec' at offset 352")));
}

TEST(DsaValidatorTest, RejectsViolatedSeparation) {
  std::vector<DsaPlacement> placements = HandPlacements();
  Move(placements, 5, 1, 64);  // f [64, 128) meets a [64, 192); never live together.
  const DsaSolutionCheck check = CheckDsaSolution(HandProblem(), placements);
  EXPECT_THAT(check.errors,
              ElementsAre("separation 0-5 (semantic_no_alias) violated: buffer 0 'a' [64, 192) "
                          "overlaps buffer 5 'f' [64, 128) in pool 1 'Vec'"));
}

// An in-place pair (problem.extensions.exact_or_disjoint): 'x' dies where 'y' is defined, so
// they may share bytes, but only from the same base. 'z' is colocated with 'y' and larger.
DsaProblem InPlaceProblem() {
  DsaProblem problem;
  problem.pools = {Pool(1, "Vec", 1024), Pool(2, "Mat", 1024)};
  problem.buffers = {Buffer(0, "x", 64, {{0, 5}}, {1, 2}), Buffer(1, "y", 32, {{5, 10}}, {1, 2}),
                     Buffer(2, "z", 96, {{5, 8}}, {1, 2})};
  problem.constraints.colocations = {{1, 2}};
  problem.extensions.exact_or_disjoint = {{0, 1}};
  problem.objective.terms = {DsaObjectiveTerm::kTotalPeak};
  return problem;
}

TEST(DsaValidatorTest, ExactOrDisjointAcceptsTheSameBaseAndDisjointRanges) {
  const DsaProblem problem = InPlaceProblem();
  ASSERT_THAT(ValidateDsaProblem(problem), IsEmpty());
  // Same base: y and z at x's offset, sharing its bytes.
  EXPECT_THAT(CheckDsaSolution(problem, {{0, 1, 64}, {1, 1, 64}, {2, 1, 64}}).errors, IsEmpty());
  // Disjoint: the class [96, 192) above x [0, 64), and touching it.
  EXPECT_THAT(CheckDsaSolution(problem, {{0, 1, 0}, {1, 1, 96}, {2, 1, 96}}).errors, IsEmpty());
  EXPECT_THAT(CheckDsaSolution(problem, {{0, 1, 96}, {1, 1, 0}, {2, 1, 0}}).errors, IsEmpty());
  // Different pools: the pair says nothing.
  EXPECT_THAT(CheckDsaSolution(problem, {{0, 1, 32}, {1, 2, 0}, {2, 2, 0}}).errors, IsEmpty());
}

TEST(DsaValidatorTest, ExactOrDisjointRejectsAPartialOverlap) {
  const DsaProblem problem = InPlaceProblem();
  // The class [32, 128) starts inside x [0, 64), at another offset.
  EXPECT_THAT(CheckDsaSolution(problem, {{0, 1, 0}, {1, 1, 32}, {2, 1, 32}}).errors,
              ElementsAre("exact_or_disjoint pair 0-1 violated: buffer 0 'x' at offset 0 with "
                          "size 64 partially overlaps buffer 1 'y' at offset 32 with size 96 (its "
                          "colocation class) in pool 1 'Vec' (they must start at the same offset "
                          "or share no byte)"));
  // y [0, 32) alone would miss x [64, 128), but its class [0, 96) reaches it.
  EXPECT_THAT(CheckDsaSolution(problem, {{0, 1, 64}, {1, 1, 0}, {2, 1, 0}}).errors,
              ElementsAre(HasSubstr("buffer 0 'x' at offset 64 with size 64 partially overlaps "
                                    "buffer 1 'y' at offset 0 with size 96")));
  // The rule holds whatever the lifetimes: a separation is stricter, and the live-together
  // rule reports a same-base overlap of buffers live together on its own.
  DsaProblem live = problem;
  live.buffers[1].live_intervals = {{0, 10}};
  EXPECT_THAT(CheckDsaSolution(live, {{0, 1, 0}, {1, 1, 0}, {2, 1, 0}}).errors,
              ElementsAre(HasSubstr("while both are live at time 0")));
}

TEST(DsaValidatorTest, RejectsViolatedPin) {
  std::vector<DsaPlacement> placements = HandPlacements();
  Move(placements, 7, 2, 128);  // h [128, 192): clear of everything, but pinned at 64.
  const DsaSolutionCheck check = CheckDsaSolution(HandProblem(), placements);
  EXPECT_THAT(check.errors, ElementsAre("buffer 7 'h' is pinned to pool 2 'Mat' at offset 64 "
                                        "but placed in pool 2 'Mat' at offset 128"));
}

TEST(DsaValidatorTest, RejectsOverlapOfExclusivePinAtDisjointTime) {
  std::vector<DsaPlacement> placements = HandPlacements();
  Move(placements, 8, 2, 0);  // i [0, 32), live [50, 60), meets g [0, 64), live [0, 40).
  const DsaSolutionCheck check = CheckDsaSolution(HandProblem(), placements);
  ASSERT_THAT(check.errors, SizeIs(1));
  EXPECT_THAT(check.errors[0], AllOf(HasSubstr("buffer 6 'g' [0, 64) overlaps buffer 8 'i' [0, "
                                               "32) in pool 2 'Mat'"),
                                     HasSubstr("exclusive_for_all_time")));
}

TEST(DsaValidatorTest, ExclusivePinForbidsReuseThatAPlainPinAllows) {
  DsaProblem problem = HandProblem();
  problem.constraints.pinned_allocations[1].exclusive_for_all_time = true;
  // i [64, 96) on h [64, 128) was fine; now h is exclusive.
  const DsaSolutionCheck check = CheckDsaSolution(problem, HandPlacements());
  ASSERT_THAT(check.errors, SizeIs(1));
  EXPECT_THAT(check.errors[0], AllOf(HasSubstr("buffer 7 'h'"), HasSubstr("buffer 8 'i'"),
                                     HasSubstr("exclusive_for_all_time")));
}

TEST(DsaValidatorTest, RejectsDisallowedPool) {
  std::vector<DsaPlacement> placements = HandPlacements();
  Move(placements, 1, 2, 256);
  const DsaSolutionCheck check = CheckDsaSolution(HandProblem(), placements);
  EXPECT_THAT(check.errors, ElementsAre("buffer 1 'b' is placed in pool 2 'Mat', which is not "
                                        "among its allowed pools [1]"));
  // e may go to Mat.
  placements = HandPlacements();
  Move(placements, 4, 2, 256);
  EXPECT_TRUE(CheckDsaSolution(HandProblem(), placements).ok());
}

TEST(DsaValidatorTest, RejectsUnknownPool) {
  std::vector<DsaPlacement> placements = HandPlacements();
  Move(placements, 1, 9, 0);
  const DsaSolutionCheck check = CheckDsaSolution(HandProblem(), placements);
  EXPECT_THAT(check.errors, ElementsAre("buffer 1 'b' is placed in unknown pool 9"));
}

TEST(DsaValidatorTest, RejectsMissingPlacement) {
  std::vector<DsaPlacement> placements = HandPlacements();
  placements.pop_back();  // k
  const DsaSolutionCheck check = CheckDsaSolution(HandProblem(), placements);
  EXPECT_THAT(check.errors, ElementsAre("buffer 10 'k' has no placement"));
  EXPECT_EQ(check.peak_by_pool.at(3), 0u);
}

TEST(DsaValidatorTest, RejectsDuplicateAndUnknownPlacement) {
  std::vector<DsaPlacement> placements = HandPlacements();
  placements.push_back({10, 3, 0});
  placements.push_back({42, 1, 0});
  const DsaSolutionCheck check = CheckDsaSolution(HandProblem(), placements);
  ASSERT_THAT(check.errors, SizeIs(2));
  EXPECT_THAT(check.errors[0], HasSubstr("buffer 10 'k' is placed more than once"));
  EXPECT_THAT(check.errors[1], HasSubstr("placement of unknown buffer 42"));
}

TEST(DsaValidatorTest, RejectsOffsetWhoseEndOverflows) {
  std::vector<DsaPlacement> placements = HandPlacements();
  const uint64_t offset = std::numeric_limits<uint64_t>::max() - 31;  // Aligned to 32.
  Move(placements, 10, 3, offset);
  const DsaSolutionCheck check = CheckDsaSolution(HandProblem(), placements);
  ASSERT_THAT(check.errors, SizeIs(1));
  EXPECT_THAT(check.errors[0], AllOf(HasSubstr("buffer 10 'k'"), HasSubstr("2^64")));
}

TEST(DsaValidatorTest, TemporalExclusionPermitsOverlapOfLiveBuffers) {
  DsaProblem problem = HandProblem();
  problem.constraints.temporal_exclusions.clear();
  const DsaSolutionCheck check = CheckDsaSolution(problem, HandPlacements());
  EXPECT_THAT(check.errors,
              ElementsAre("buffer 0 'a' [64, 192) overlaps buffer 9 'j' [64, 96) in pool 1 'Vec' "
                          "while both are live at time 0"));
  EXPECT_EQ(check.reuse_cost, 3u + 7u);  // a-j now conflicts: no penalty.
}

TEST(DsaValidatorTest, RejectsInvalidProblem) {
  DsaProblem problem = HandProblem();
  problem.buffers[0].size = 0;
  const DsaSolutionCheck check = CheckDsaSolution(problem, HandPlacements());
  EXPECT_FALSE(check.ok());
  EXPECT_EQ(check.errors, ValidateDsaProblem(problem));
  EXPECT_EQ(check.total_peak, 0u);
}

// Two buffers x, y of 10 bytes, alignment 1, in one unbounded pool, and one penalty edge.
DsaProblem PenaltyPair(std::vector<DsaInterval> x_live, std::vector<DsaInterval> y_live) {
  DsaProblem problem;
  problem.pools = {Pool(1, "Vec", {})};
  problem.buffers = {Buffer(0, "x", 10, std::move(x_live), {1}, 1),
                     Buffer(1, "y", 10, std::move(y_live), {1}, 1)};
  DsaCostModel cost;
  cost.reuse_penalties = {{1, 0, 5, DsaPenaltyReason::kCrossPipe}};
  problem.cost_model = cost;
  problem.objective.terms = {DsaObjectiveTerm::kReuseCost};
  return problem;
}

TEST(DsaValidatorTest, ReuseCostCountsOneByteOverlapOnce) {
  const DsaProblem problem = PenaltyPair({{0, 10}}, {{10, 20}});
  DsaSolutionCheck check = CheckDsaSolution(problem, {{0, 1, 0}, {1, 1, 9}});
  EXPECT_TRUE(check.ok());
  EXPECT_EQ(check.reuse_cost, 5u);
  check = CheckDsaSolution(problem, {{0, 1, 9}, {1, 1, 0}});
  EXPECT_EQ(check.reuse_cost, 5u);
  check = CheckDsaSolution(problem, {{0, 1, 0}, {1, 1, 0}});
  EXPECT_EQ(check.reuse_cost, 5u);
}

TEST(DsaValidatorTest, ReuseCostIgnoresTouchingRanges) {
  const DsaProblem problem = PenaltyPair({{0, 10}}, {{10, 20}});
  DsaSolutionCheck check = CheckDsaSolution(problem, {{0, 1, 0}, {1, 1, 10}});
  EXPECT_TRUE(check.ok());
  EXPECT_EQ(check.reuse_cost, 0u);
  check = CheckDsaSolution(problem, {{0, 1, 10}, {1, 1, 0}});
  EXPECT_EQ(check.reuse_cost, 0u);
  EXPECT_EQ(check.total_peak, 20u);
}

TEST(DsaValidatorTest, ReuseCostIgnoresTemporallyConflictingPair) {
  const DsaProblem problem = PenaltyPair({{0, 10}}, {{9, 20}});
  const DsaSolutionCheck check = CheckDsaSolution(problem, {{0, 1, 0}, {1, 1, 9}});
  EXPECT_THAT(check.errors,
              ElementsAre(AllOf(HasSubstr("buffer 0 'x' [0, 10)"),
                                HasSubstr("buffer 1 'y' [9, 19)"), HasSubstr("live at time 9"))));
  EXPECT_EQ(check.reuse_cost, 0u);
}

TEST(DsaValidatorTest, ReuseCostIgnoresColocatedPair) {
  DsaProblem problem = PenaltyPair({{0, 10}}, {{5, 20}});
  problem.constraints.colocations = {{0, 1}};
  const DsaSolutionCheck check = CheckDsaSolution(problem, {{0, 1, 0}, {1, 1, 0}});
  EXPECT_TRUE(check.ok());
  EXPECT_EQ(check.reuse_cost, 0u);
}

TEST(DsaValidatorTest, ReuseCostIgnoresExclusivePin) {
  DsaProblem problem = PenaltyPair({{0, 10}}, {{10, 20}});
  problem.constraints.pinned_allocations = {{0, 1, 0, true}};
  const DsaSolutionCheck check = CheckDsaSolution(problem, {{0, 1, 0}, {1, 1, 5}});
  EXPECT_FALSE(check.ok());         // The exclusive pin is overlapped ...
  EXPECT_EQ(check.reuse_cost, 5u);  // ... but that is no temporal conflict.
}

TEST(DsaValidatorTest, ReuseCostSaturates) {
  DsaProblem problem = PenaltyPair({{0, 10}}, {{10, 20}});
  problem.buffers.push_back(Buffer(2, "z", 10, {{20, 30}}, {1}, 1));
  const uint64_t big = std::numeric_limits<uint64_t>::max() - 1;
  problem.cost_model->reuse_penalties = {{0, 1, big, DsaPenaltyReason::kGeneric},
                                         {1, 2, big, DsaPenaltyReason::kGeneric}};
  const DsaSolutionCheck check = CheckDsaSolution(problem, {{0, 1, 0}, {1, 1, 0}, {2, 1, 0}});
  EXPECT_TRUE(check.ok());
  EXPECT_EQ(check.reuse_cost, std::numeric_limits<uint64_t>::max());
}

DsaProblemDocument HandDocument() {
  DsaProblemDocument doc;
  doc.profile = "pypto_research_v1";
  doc.instance = "hand::validator";
  doc.problem = HandProblem();
  return doc;
}

DsaSolutionDocument SolutionFor(const DsaProblemDocument& doc) {
  DsaSolutionDocument solution;
  solution.schema_version = doc.schema_version;
  solution.profile = doc.profile;
  solution.instance = doc.instance;
  solution.problem_fingerprint = DsaProblemFingerprint(doc);
  solution.placements = HandPlacements();
  return solution;
}

TEST(DsaValidatorTest, DocumentReplayAcceptsMatchingSolution) {
  const DsaProblemDocument doc = HandDocument();
  EXPECT_TRUE(CheckDsaSolutionDocument(doc, SolutionFor(doc)).ok());
}

TEST(DsaValidatorTest, DocumentReplayRejectsMismatches) {
  const DsaProblemDocument doc = HandDocument();
  {
    DsaSolutionDocument solution = SolutionFor(doc);
    solution.problem_fingerprint = "0000000000000000";
    const absl::Status status = CheckDsaSolutionDocument(doc, solution);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()),
                AllOf(HasSubstr("problem_fingerprint '0000000000000000'"),
                      HasSubstr(DsaProblemFingerprint(doc))));
  }
  {
    // A solution made for another problem: same envelope, one buffer bigger.
    DsaProblemDocument other = doc;
    other.problem.buffers[0].size = 256;
    ASSERT_NE(DsaProblemFingerprint(other), DsaProblemFingerprint(doc));
    const absl::Status status = CheckDsaSolutionDocument(doc, SolutionFor(other));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()), HasSubstr("problem_fingerprint"));
  }
  {
    DsaSolutionDocument solution = SolutionFor(doc);
    solution.instance = "hand::other";
    const absl::Status status = CheckDsaSolutionDocument(doc, solution);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()), HasSubstr("instance 'hand::other'"));
  }
  {
    DsaSolutionDocument solution = SolutionFor(doc);
    solution.profile = "pypto_hard_v1";
    const absl::Status status = CheckDsaSolutionDocument(doc, solution);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()), HasSubstr("profile 'pypto_hard_v1'"));
  }
  {
    DsaSolutionDocument solution = SolutionFor(doc);
    solution.schema_version = 2;
    const absl::Status status = CheckDsaSolutionDocument(doc, solution);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()), HasSubstr("schema_version 2"));
  }
}

TEST(DsaValidatorTest, DocumentReplayRejectsViolations) {
  const DsaProblemDocument doc = HandDocument();
  DsaSolutionDocument solution = SolutionFor(doc);
  Move(solution.placements, 10, 3, 4100);                  // Misaligned.
  solution.placements.erase(solution.placements.begin());  // a has no placement.
  const absl::Status status = CheckDsaSolutionDocument(doc, solution);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("violates 2 constraint(s)"),
                    HasSubstr("first: buffer 0 'a' has no placement")));
}

// Every buffer at offset 0 of its first allowed pool.
std::vector<DsaPlacement> AllZero(const DsaProblem& problem) {
  std::vector<DsaPlacement> placements;
  for (const DsaBuffer& buffer : problem.buffers) {
    placements.push_back({buffer.id, buffer.allowed_pools[0], 0});
  }
  return placements;
}

// Every buffer stacked above the previous one (and above every reserved range) in its first
// allowed pool; valid for problems without colocations and pins if it fits.
std::vector<DsaPlacement> Stacked(const DsaProblem& problem) {
  std::map<uint32_t, uint64_t> top;
  for (const DsaPool& pool : problem.pools) {
    for (const DsaAddressRange& range : pool.reserved_ranges) {
      top[pool.id] = std::max(top[pool.id], range.end);
    }
  }
  std::vector<DsaPlacement> placements;
  for (const DsaBuffer& buffer : problem.buffers) {
    uint64_t& offset = top[buffer.allowed_pools[0]];
    offset = (offset + buffer.alignment - 1) / buffer.alignment * buffer.alignment;
    placements.push_back({buffer.id, buffer.allowed_pools[0], offset});
    offset += buffer.size;
  }
  return placements;
}

bool HasLifetimeOverlap(const DsaProblem& problem) {
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    for (size_t j = i + 1; j < problem.buffers.size(); ++j) {
      for (const DsaInterval& x : problem.buffers[i].live_intervals) {
        for (const DsaInterval& y : problem.buffers[j].live_intervals) {
          if (x.lower < y.upper && y.lower < x.upper) return true;
        }
      }
    }
  }
  return false;
}

TEST(DsaValidatorTest, CorpusAllZeroPlacementIsRejected) {
  const std::string dir = "third_party/dsa_solver_corpus/pypto-lib/examples/intermediate/";
  for (const std::string file : {"rms_norm__pypto_rms_norm_rows.json",
                                 "layer_norm/pypto_layer_norm_rows-cross-pipe-soft.json"}) {
    SCOPED_TRACE(file);
    absl::StatusOr<DsaProblemDocument> doc = ReadDsaProblemFile(dir + file);
    ASSERT_TRUE(doc.ok()) << doc.status();
    const DsaProblem& problem = doc->problem;
    ASSERT_THAT(ValidateDsaProblem(problem), IsEmpty());
    ASSERT_TRUE(problem.constraints.colocations.empty());
    ASSERT_TRUE(problem.constraints.pinned_allocations.empty());
    ASSERT_TRUE(HasLifetimeOverlap(problem));

    const DsaSolutionCheck zero = CheckDsaSolution(problem, AllZero(problem));
    EXPECT_FALSE(zero.ok());
    ASSERT_THAT(zero.errors, testing::Not(IsEmpty()));
    EXPECT_THAT(zero.errors[0], HasSubstr("while both are live at time"));

    // Stacking never reuses a byte: no conflict, no reuse cost, peak = the stack's height.
    std::vector<DsaPlacement> stacked = Stacked(problem);
    const DsaSolutionCheck stack = CheckDsaSolution(problem, stacked);
    EXPECT_EQ(stack.reuse_cost, 0u);
    uint64_t height = 0;
    for (size_t i = 0; i < stacked.size(); ++i) {
      height = std::max(height, stacked[i].offset + problem.buffers[i].size);
    }
    EXPECT_EQ(stack.total_peak, height);
    // Only the capacity can stop it (rms_norm fits, layer_norm does not).
    EXPECT_EQ(stack.ok(), height <= *problem.pools[0].capacity);
    for (const std::string& error : stack.errors) EXPECT_THAT(error, HasSubstr("capacity"));

    // The replay of a matching solution document goes through the fingerprint.
    DsaSolutionDocument solution;
    solution.profile = doc->profile;
    solution.instance = doc->instance;
    solution.problem_fingerprint = DsaProblemFingerprint(*doc);
    solution.placements = stacked;
    EXPECT_EQ(CheckDsaSolutionDocument(*doc, solution).ok(), stack.ok());
  }
}

}  // namespace
}  // namespace policy
}  // namespace accelmem
