// The lifetime planner (greedy portfolio and search) against an exact solver outside it: the
// CBC mixed-integer program of policy/testing/dsa_exact_oracle.h, on generated plain placement
// problems (single lifetimes, 32-byte alignment, with and without a capacity). No height may be
// below the optimum (that would be a bug in one of the two), a height at the optimum is the
// expected case, and the gap is printed per family.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "policy/dsa_problem.h"
#include "policy/lifetime_planner.h"
#include "policy/placement_checker.h"
#include "policy/testing/dsa_exact_oracle.h"
#include "policy/testing/dsa_problem_generator.h"

namespace accelmem {
namespace policy {
namespace {

using policy_testing::DsaGeneratorOptions;
using policy_testing::DsaOracleResult;
using policy_testing::DsaOracleStatus;

DsaGeneratorOptions Plain(int family) {
  DsaGeneratorOptions options;
  options.two_pools_probability = 0;
  options.aligned_probability = 1.0;
  options.multi_interval_probability = 0;
  options.reserved_probability = 0;
  options.separation_probability = 0;
  options.exclusion_probability = 0;
  options.colocation_probability = 0;
  options.pin_probability = 0;
  options.penalty_probability = 0;
  options.unbounded_probability = 0.4;
  options.tight_probability = 0.4;
  options.loose_probability = 0.1;
  if (family == 0) {  // Few buffers, short horizon: dense overlaps.
    options.min_buffers = 6;
    options.max_buffers = 10;
  } else if (family == 1) {  // More buffers over a longer horizon.
    options.min_buffers = 10;
    options.max_buffers = 13;
    options.horizon = 24;
  } else if (family == 2) {  // Mixed sizes, 1 to 8 units.
    options.min_buffers = 6;
    options.max_buffers = 10;
    options.max_size_units = 8;
  } else {  // Larger: 14 to 18 buffers of 1 to 6 units over a long horizon.
    options.min_buffers = 14;
    options.max_buffers = 18;
    options.max_size_units = 6;
    options.horizon = 20;
  }
  return options;
}

struct Gap {
  int solved = 0, greedy_optimal = 0, search_optimal = 0, fits = 0, oracle_fits = 0;
  int infeasible = 0, infeasible_proven = 0, unknown = 0;
  double greedy_excess = 0, search_excess = 0;  // Sum of height / optimum - 1.
};

class LifetimePlannerOracleTest : public ::testing::TestWithParam<int> {};

TEST_P(LifetimePlannerOracleTest, NeverBelowTheOptimumAndGapReported) {
  const int family = GetParam();
  Gap gap;
  const uint64_t count = family == 3 ? 30 : 80;
  for (uint64_t seed = 0; seed < count; ++seed) {
    DsaProblem problem =
        policy_testing::GenerateDsaProblem(50000 + 1000 * family + seed, Plain(family));
    problem.objective.terms = {DsaObjectiveTerm::kTotalPeak};
    std::vector<PlacementBuffer> buffers;
    for (const DsaBuffer& b : problem.buffers) {
      buffers.push_back({std::to_string(b.id), b.live_intervals[0].lower, b.live_intervals[0].upper,
                         static_cast<int64_t>(b.size)});
    }
    const std::optional<uint64_t> capacity = problem.pools[0].capacity;
    const DsaOracleResult oracle = policy_testing::SolveDsaExactly(problem, 10.0);
    if (oracle.status == DsaOracleStatus::kUnknown) {
      ++gap.unknown;
      continue;
    }
    ASSERT_NE(oracle.status, DsaOracleStatus::kUnsupported) << oracle.message;
    PlannerOptions options;
    options.alignment = 32;
    options.capacity = capacity ? static_cast<int64_t>(*capacity) : 0;
    absl::StatusOr<PlacementPlan> greedy = PlanPlacement(buffers, options);
    options.mode = PlannerMode::kSearch;
    options.budget = absl::Milliseconds(200);
    options.search_threads = 1;
    absl::StatusOr<PlacementPlan> search = PlanPlacement(buffers, options);
    ASSERT_TRUE(greedy.ok() && search.ok());
    const std::string where = "family " + std::to_string(family) + " seed " + std::to_string(seed);
    if (oracle.status == DsaOracleStatus::kInfeasible) {
      // Nothing fits: neither may claim to.
      EXPECT_FALSE(greedy->within_capacity) << where;
      EXPECT_FALSE(search->within_capacity) << where;
      ++gap.infeasible;
      gap.infeasible_proven += static_cast<uint64_t>(search->lower_bound) > capacity.value_or(0);
      continue;
    }
    ++gap.oracle_fits;
    const uint64_t optimum = oracle.total_peak;
    EXPECT_GE(static_cast<uint64_t>(greedy->height), optimum) << where;
    EXPECT_GE(static_cast<uint64_t>(search->height), optimum) << where;
    EXPECT_LE(static_cast<uint64_t>(search->lower_bound), optimum) << where;
    EXPECT_LE(search->height, greedy->height) << where;
    if (search->proven_optimal) {
      EXPECT_EQ(static_cast<uint64_t>(search->height), optimum) << where;
    }
    ++gap.solved;
    gap.fits += search->within_capacity;
    gap.greedy_optimal += static_cast<uint64_t>(greedy->height) == optimum;
    gap.search_optimal += static_cast<uint64_t>(search->height) == optimum;
    gap.greedy_excess += static_cast<double>(greedy->height) / optimum - 1;
    gap.search_excess += static_cast<double>(search->height) / optimum - 1;
  }
  ASSERT_GT(gap.solved, static_cast<int>(count) / 3);
  // Where the oracle fits the capacity, the search fits too.
  EXPECT_EQ(gap.fits, gap.oracle_fits);
  printf(
      "family %d: %d problems with an optimum; greedy optimal %d, mean gap %.4f%%; "
      "search optimal %d, mean gap %.4f%%; %d over capacity, %d of them proven by search; %d "
      "undecided by the oracle in 10 s\n",
      family, gap.solved, gap.greedy_optimal, 100 * gap.greedy_excess / gap.solved,
      gap.search_optimal, 100 * gap.search_excess / gap.solved, gap.infeasible,
      gap.infeasible_proven, gap.unknown);
}

INSTANTIATE_TEST_SUITE_P(Families, LifetimePlannerOracleTest, ::testing::Values(0, 1, 2, 3));

}  // namespace
}  // namespace policy
}  // namespace accelmem
