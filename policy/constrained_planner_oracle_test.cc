// The live comparison (tagged oracle_live: CI runs it apart from the default suite, whose
// constrained_planner_golden_test checks the same families against optima checked in).
// The constrained planner against an exact solver that shares no code with it (a MILP solved by
// CBC, policy/testing/dsa_exact_oracle.h), on generated problems with every kind of constraint:
// each status the planner claims must agree with the oracle, every placement must pass the
// independent validator, and no lower bound may exceed the optimum.
#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "policy/constrained_planner.h"
#include "policy/dsa_problem.h"
#include "policy/dsa_validator.h"
#include "policy/testing/dsa_exact_oracle.h"
#include "policy/testing/dsa_problem_generator.h"
#include "policy/testing/grid_exhaustive.h"
#include "policy/testing/oracle_golden.h"

namespace accelmem {
namespace policy {
namespace {

using policy_testing::DsaGeneratorOptions;
using policy_testing::DsaOracleResult;
using policy_testing::DsaOracleStatus;

bool Names(const DsaProblem& problem, DsaObjectiveTerm term) {
  for (DsaObjectiveTerm t : problem.objective.terms) {
    if (t == term) return true;
  }
  return false;
}

struct Tally {
  int problems = 0, optimal = 0, infeasible = 0, feasible = 0, no_fit = 0, oracle_unknown = 0;
  int gap_problems = 0;
  uint64_t gap_reuse = 0;
};

void CheckAgainstOracle(uint64_t seed, const DsaGeneratorOptions& generator, Tally* tally) {
  const DsaProblem problem = policy_testing::GenerateDsaProblem(seed, generator);
  ConstrainedOptions options;
  options.budget = absl::Milliseconds(200);
  options.relax_pipeline_when_infeasible = false;  // The problem as given is compared.
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem, options);
  ASSERT_TRUE(result.ok()) << "seed " << seed << ": " << result.status();
  const DsaOracleResult oracle = policy_testing::SolveDsaExactly(problem, 10.0);
  ++tally->problems;
  if (oracle.status == DsaOracleStatus::kUnknown) {
    ++tally->oracle_unknown;
    return;
  }
  ASSERT_NE(oracle.status, DsaOracleStatus::kUnsupported) << oracle.message;
  const std::string where = "seed " + std::to_string(seed) + ", planner " +
                            ConstrainedStatusName(result->status) + " (" + result->reason +
                            "), oracle " + policy_testing::DsaOracleStatusName(oracle.status);
  if (oracle.status == DsaOracleStatus::kOptimal) {
    const DsaSolutionCheck check = CheckDsaSolution(problem, oracle.placements);
    ASSERT_TRUE(check.ok()) << where << ": the oracle's placement: " << check.errors.front();
  }
  if (!result->placements.empty()) {
    const DsaSolutionCheck check = CheckDsaSolution(problem, result->placements);
    ASSERT_TRUE(check.ok()) << where << ": " << check.errors.front();
    EXPECT_EQ(check.reuse_cost, result->reuse_cost) << where;
    EXPECT_EQ(check.total_peak, result->total_peak) << where;
  }
  switch (result->status) {
    case ConstrainedStatus::kInfeasible:
      ++tally->infeasible;
      EXPECT_EQ(oracle.status, DsaOracleStatus::kInfeasible) << where;
      return;
    case ConstrainedStatus::kNoFitWithinBudget:
      ++tally->no_fit;
      return;
    case ConstrainedStatus::kOptimal:
    case ConstrainedStatus::kFeasible:
      break;
  }
  ASSERT_EQ(oracle.status, DsaOracleStatus::kOptimal) << where;
  const bool reuse = Names(problem, DsaObjectiveTerm::kReuseCost);
  const bool peak = Names(problem, DsaObjectiveTerm::kTotalPeak);
  // Bounds never pass the optimum; found values never beat it.
  if (reuse) {
    EXPECT_LE(result->reuse_lower_bound, oracle.reuse_cost) << where;
    EXPECT_GE(result->reuse_cost, oracle.reuse_cost) << where;
  }
  if (result->status == ConstrainedStatus::kOptimal) {
    ++tally->optimal;
    if (reuse) {
      EXPECT_EQ(result->reuse_cost, oracle.reuse_cost) << where;
    }
    // Peak is compared when it is a term and the reuse cost (if ranked first) agrees.
    if (peak && (!reuse || result->reuse_cost == oracle.reuse_cost)) {
      EXPECT_EQ(result->total_peak, oracle.total_peak) << where;
    }
  } else {
    ++tally->feasible;
    if (reuse && result->reuse_cost > oracle.reuse_cost) {
      ++tally->gap_problems;
      tally->gap_reuse += result->reuse_cost - oracle.reuse_cost;
    }
  }
}

class ConstrainedOracleTest : public ::testing::TestWithParam<int> {};

TEST_P(ConstrainedOracleTest, EveryClaimAgreesWithTheExactSolver) {
  const int family = GetParam();
  Tally tally;
  for (int i = 0; i < policy_testing::OracleFamilySeeds(family); ++i) {
    CheckAgainstOracle(policy_testing::OracleSeed(family, i), policy_testing::OracleFamily(family),
                       &tally);
    if (HasFatalFailure()) return;
  }
  printf(
      "family %d: %d problems, planner optimal %d, infeasible %d, feasible %d, no fit %d; "
      "oracle unknown %d; reuse gap %llu over %d problems\n",
      family, tally.problems, tally.optimal, tally.infeasible, tally.feasible, tally.no_fit,
      tally.oracle_unknown, static_cast<unsigned long long>(tally.gap_reuse), tally.gap_problems);
  // The oracle must have decided nearly all, or the comparison says little.
  EXPECT_LE(tally.oracle_unknown, tally.problems / 10);
}

// Family 6 (the ping-pong shape) is SubsetBoundNeverPassesTheOptimum's.
INSTANTIATE_TEST_SUITE_P(Families, ConstrainedOracleTest, ::testing::Range(0, 6));

// The bounds on their own (no search), with and without the subset bound, against the exact
// optimum: neither passes it, the subset bound never lowers the bound, and it must raise it
// somewhere (else this test would not test it). The full planner's claims must agree too.
TEST(ConstrainedOracleTest, SubsetBoundNeverPassesTheOptimum) {
  int decided = 0, raised = 0, reached = 0, unknown = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const DsaProblem problem = policy_testing::GroupedProblem(9000 + seed);
    const DsaOracleResult oracle = policy_testing::SolveDsaExactly(problem, 4.0);
    if (oracle.status == DsaOracleStatus::kUnknown) {
      ++unknown;
      continue;
    }
    ASSERT_EQ(oracle.status, DsaOracleStatus::kOptimal) << "seed " << seed << oracle.message;
    ++decided;
    ConstrainedOptions options;
    options.budget = absl::Milliseconds(500);
    options.relax_pipeline_when_infeasible = false;
    options.search = false;
    options.subset_bound = false;
    absl::StatusOr<ConstrainedResult> without = SolveConstrained(problem, options);
    options.subset_bound = true;
    absl::StatusOr<ConstrainedResult> with = SolveConstrained(problem, options);
    options.search = true;
    absl::StatusOr<ConstrainedResult> full = SolveConstrained(problem, options);
    ASSERT_TRUE(without.ok() && with.ok() && full.ok()) << "seed " << seed;
    const std::string where = "seed " + std::to_string(seed) + ", optimum " +
                              std::to_string(oracle.reuse_cost) + ", bounds " +
                              std::to_string(without->reuse_lower_bound) + " / " +
                              std::to_string(with->reuse_lower_bound);
    EXPECT_LE(with->reuse_lower_bound, oracle.reuse_cost) << where;
    EXPECT_LE(without->reuse_lower_bound, with->reuse_lower_bound) << where;
    raised += with->reuse_lower_bound > without->reuse_lower_bound;
    reached += with->reuse_lower_bound == oracle.reuse_cost;
    ASSERT_FALSE(full->placements.empty()) << where;
    EXPECT_TRUE(CheckDsaSolution(problem, full->placements).ok()) << where;
    EXPECT_GE(full->reuse_cost, oracle.reuse_cost) << where;
    EXPECT_LE(full->reuse_lower_bound, oracle.reuse_cost) << where;
    if (full->status == ConstrainedStatus::kOptimal) {
      EXPECT_EQ(full->reuse_cost, oracle.reuse_cost) << where;
    }
  }
  printf(
      "grouped: %d decided by the oracle (%d unknown); the subset bound raised %d bounds, "
      "%d reach the optimum without search\n",
      decided, unknown, raised, reached);
  // The oracle's time limit is wall clock: on a slow or sanitized run more are left undecided.
  EXPECT_GE(decided, 30);
  EXPECT_GT(raised, 0);
}

// The evidence behind constrained_planner_test's OpenPairIsProvenByTheSubsetBound, kept here:
// an exhaustive search of every pool on its address grid (policy/testing/grid_exhaustive.h),
// sharing no code and no method with the planner (the MILP oracle does not finish this problem
// in 15 minutes), finds the least reuse cost of the Qwen3-14B prefill gate_up_proj pair's soft
// problem pool by pool. Their sum must be the 52 the planner proves.
TEST(ConstrainedOracleCorpusTest, GateUpProjOptimumIsFiftyTwo) {
  absl::StatusOr<DsaProblemDocument> document = ReadDsaProblemFile(
      "third_party/dsa_solver_corpus/pypto-lib/models/qwen3/14b/prefill_fwd/"
      "pypto_gate_up_proj-cross-pipe-soft.json");
  ASSERT_TRUE(document.ok()) << document.status();
  uint64_t total = 0;
  for (const DsaPool& pool : document->problem.pools) {
    const policy_testing::GridSearchResult r =
        policy_testing::LeastReuseOnGrid(document->problem, pool.id);
    ASSERT_TRUE(r.supported) << pool.name << ": " << r.message;
    ASSERT_TRUE(r.least.has_value()) << pool.name << ": nothing fits";
    std::printf("gate_up_proj pool %s: grid %llu, least reuse %llu (%llu nodes)\n",
                pool.name.c_str(), static_cast<unsigned long long>(r.grid),
                static_cast<unsigned long long>(*r.least),
                static_cast<unsigned long long>(r.nodes));
    total += *r.least;
  }
  EXPECT_EQ(total, 52u);
}

}  // namespace
}  // namespace policy
}  // namespace accelmem
