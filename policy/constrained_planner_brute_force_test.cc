// The constrained planner as a new user meets it: 2,000 tiny generated problems with every
// constraint kind the schema allows (buffers allowed in two pools, colocations across pools and
// through chains with separations, pins at a class's edge, pipeline groups, every objective
// order), each compared with a brute force over pools and grid offsets that shares no code with
// the planner (policy/testing/brute_force.h). No problem may be refused, no placement invalid,
// no status or bound false.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "policy/constrained_planner.h"
#include "policy/dsa_problem.h"
#include "policy/testing/brute_force.h"
#include "policy/testing/dsa_problem_generator.h"

namespace accelmem {
namespace policy {
namespace {

namespace brute = policy_testing;  // brute_force.h

// The term values of the planner's result, in the objective's order.
std::vector<uint64_t> Values(const DsaProblem& problem, const ConstrainedResult& result) {
  brute::Costs costs;
  costs.reuse = result.reuse_cost;
  costs.total_peak = result.total_peak;
  costs.max_peak = result.max_peak;
  return brute::TermValues(problem, costs);
}

TEST(ConstrainedPlannerBruteForceTest, TinyProblemsWithEveryConstraintKind) {
  policy_testing::DsaGeneratorOptions options;
  options.min_buffers = 2;
  options.max_buffers = 5;
  options.max_size_units = 2;
  options.horizon = 6;
  options.unbounded_probability = 0;  // The brute force needs a capacity.
  options.two_pools_probability = 0.6;
  options.colocation_probability = 0.6;
  options.pin_probability = 0.5;
  options.multi_pool_probability = 0.4;
  options.cross_pool_colocation_probability = 0.3;
  options.chained_separation_probability = 0.4;
  options.edge_pin_probability = 0.6;
  options.pipeline_probability = 0.4;
  options.every_objective_order = true;
  int compared = 0, optimal = 0, infeasible = 0, feasible = 0, several_pools = 0, relaxed = 0;
  for (uint64_t seed = 0; compared < 2000 && seed < 20000; ++seed) {
    const DsaProblem problem = policy_testing::GenerateDsaProblem(seed, options);
    bool small = true;
    for (const DsaPool& pool : problem.pools) small = small && *pool.capacity <= 256;
    if (!small) continue;
    ++compared;
    for (const DsaBuffer& b : problem.buffers) several_pools += b.allowed_pools.size() > 1;
    const std::string where = "seed " + std::to_string(seed);
    absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem);
    ASSERT_TRUE(result.ok()) << where << ": " << result.status();
    const std::optional<std::vector<uint64_t>> truth = brute::BruteForce(problem, 32);
    if (!result->placements.empty()) {
      const std::vector<std::string> violations =
          brute::HardViolations(problem, result->placements);
      ASSERT_TRUE(violations.empty()) << where << ": " << violations.front();
      EXPECT_EQ(Values(problem, *result),
                brute::TermValues(problem, brute::Evaluate(problem, result->placements)))
          << where << ": the costs the planner reports";
    }
    switch (result->status) {
      case ConstrainedStatus::kInfeasible:
        ++infeasible;
        EXPECT_FALSE(truth.has_value()) << where << ": proven infeasible, but a placement exists";
        break;
      case ConstrainedStatus::kOptimal:
        ++optimal;
        ASSERT_TRUE(truth.has_value()) << where;
        EXPECT_EQ(Values(problem, *result), *truth) << where << ": 'optimal' is not the optimum";
        break;
      case ConstrainedStatus::kFeasible:
        ++feasible;
        ASSERT_TRUE(truth.has_value()) << where;
        EXPECT_GE(Values(problem, *result), *truth) << where;
        break;
      case ConstrainedStatus::kNoFitWithinBudget:
        break;
    }
    // Bounds hold for the optimum, whatever the order of the terms.
    for (size_t t = 0; truth && t < problem.objective.terms.size(); ++t) {
      const DsaObjectiveTerm term = problem.objective.terms[t];
      if (term == DsaObjectiveTerm::kReuseCost) {
        EXPECT_LE(result->reuse_lower_bound, (*truth)[t]) << where << ": reuse bound";
      } else if (term == DsaObjectiveTerm::kTotalPeak) {
        EXPECT_LE(result->total_peak_lower_bound, (*truth)[t]) << where << ": total peak bound";
      } else if (term == DsaObjectiveTerm::kMaxPeak) {
        EXPECT_LE(result->max_peak_lower_bound, (*truth)[t]) << where << ": max peak bound";
      }
    }
    if (result->relaxed) {
      ++relaxed;
      EXPECT_EQ(result->status, ConstrainedStatus::kInfeasible) << where;
      const ConstrainedResult& answer = result->relaxed->result;
      ASSERT_TRUE(brute::HardViolations(result->relaxed->problem, answer.placements).empty())
          << where << " (relaxed)";
      const std::optional<std::vector<uint64_t>> relaxed_truth =
          brute::BruteForce(result->relaxed->problem, 32);
      ASSERT_TRUE(relaxed_truth.has_value()) << where << " (relaxed)";
      if (answer.status == ConstrainedStatus::kOptimal) {
        EXPECT_EQ(Values(result->relaxed->problem, answer), *relaxed_truth)
            << where << " (relaxed)";
      }
    }
  }
  std::printf(
      "%d problems: optimal %d, infeasible %d, feasible %d, relaxed answers %d; %d buffers "
      "allowed in two pools\n",
      compared, optimal, infeasible, feasible, relaxed, several_pools);
  EXPECT_EQ(compared, 2000);
  EXPECT_GE(optimal, 500);
  EXPECT_GE(infeasible, 200);
  EXPECT_GE(several_pools, 300);
}

// Exact-or-disjoint pairs (problem.extensions) on tiny generated problems, against the brute
// force: no partial overlap, no false optimum, bound or proof. The same problems with the pairs
// dropped, and with the pairs as separations, show that the pairs bind (some optimum without
// them overlaps partially) and that the same base is used (some optimum is better than apart).
TEST(ConstrainedPlannerBruteForceTest, TinyProblemsWithExactOrDisjointPairs) {
  policy_testing::DsaGeneratorOptions options;
  options.min_buffers = 3;
  options.max_buffers = 5;
  options.max_size_units = 3;
  options.horizon = 6;
  options.unbounded_probability = 0;
  options.loose_probability = 0.1;
  options.tight_probability = 0.75;
  options.colocation_probability = 0.3;
  options.multi_pool_probability = 0.2;
  options.every_objective_order = true;
  options.exact_or_disjoint_probability = 0.7;
  int compared = 0, optimal = 0, infeasible = 0, binds = 0, shares = 0;
  for (uint64_t seed = 0; compared < 600 && seed < 20000; ++seed) {
    const DsaProblem problem = policy_testing::GenerateDsaProblem(seed, options);
    bool small = !problem.extensions.exact_or_disjoint.empty();
    for (const DsaPool& pool : problem.pools) small = small && *pool.capacity <= 256;
    if (!small) continue;
    ++compared;
    const std::string where = "seed " + std::to_string(seed);
    absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem);
    ASSERT_TRUE(result.ok()) << where << ": " << result.status();
    const std::optional<std::vector<uint64_t>> truth = brute::BruteForce(problem, 32);
    if (!result->placements.empty()) {
      const std::vector<std::string> violations =
          brute::HardViolations(problem, result->placements);
      ASSERT_TRUE(violations.empty()) << where << ": " << violations.front();
    }
    if (result->status == ConstrainedStatus::kInfeasible) {
      ++infeasible;
      EXPECT_FALSE(truth.has_value()) << where << ": proven infeasible, but a placement exists";
    } else if (result->status == ConstrainedStatus::kOptimal) {
      ++optimal;
      ASSERT_TRUE(truth.has_value()) << where;
      EXPECT_EQ(Values(problem, *result), *truth) << where << ": 'optimal' is not the optimum";
    } else if (truth) {
      EXPECT_GE(Values(problem, *result), *truth) << where;
    }
    for (size_t t = 0; truth && t < problem.objective.terms.size(); ++t) {
      if (problem.objective.terms[t] == DsaObjectiveTerm::kReuseCost) {
        EXPECT_LE(result->reuse_lower_bound, (*truth)[t]) << where << ": reuse bound";
      }
    }
    DsaProblem without = problem, apart = problem;
    without.extensions.exact_or_disjoint.clear();
    apart.extensions.exact_or_disjoint.clear();
    for (const DsaPair& pair : problem.extensions.exact_or_disjoint) {
      apart.constraints.separations.push_back({pair.first, pair.second, {}});
    }
    const std::optional<std::vector<uint64_t>> free_truth = brute::BruteForce(without, 32);
    const std::optional<std::vector<uint64_t>> apart_truth =
        ValidateDsaProblem(apart).empty() ? brute::BruteForce(apart, 32) : std::nullopt;
    binds += free_truth != truth;
    shares += truth && (!apart_truth || *truth < *apart_truth);
  }
  std::printf(
      "%d problems with exact pairs: optimal %d, infeasible %d; the pairs bind in %d, "
      "the same base beats apart in %d\n",
      compared, optimal, infeasible, binds, shares);
  EXPECT_EQ(compared, 600);
  EXPECT_GE(optimal, 300);
  EXPECT_GE(binds, 30);
  EXPECT_GE(shares, 150);
}

}  // namespace
}  // namespace policy
}  // namespace accelmem
