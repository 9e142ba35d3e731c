// The constrained planner against exact optima computed once by a MILP solver that shares no
// code with it (policy/testing/dsa_exact_oracle.h) and checked in
// (policy/testdata/oracle_golden.txt, written by //policy/testing:make_oracle_golden): every
// generated problem of every family, every run, none skipped for time. Every claim the planner
// makes is checked: a status of infeasible or optimal, the term values of an optimum, and the
// reuse, total-peak and max-peak lower bounds; a pipeline-relaxed answer is checked against the
// exact optimum of the relaxed problem. (The live comparison, with the MILP run each time, is
// constrained_planner_oracle_test, tagged oracle_live and run by CI.)
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "policy/constrained_planner.h"
#include "policy/dsa_problem.h"
#include "policy/dsa_validator.h"
#include "policy/testing/oracle_golden.h"

namespace accelmem {
namespace policy {
namespace {

using policy_testing::GoldenEntry;
using policy_testing::GoldenOptimum;

const std::vector<GoldenEntry>& Golden() {
  static const std::vector<GoldenEntry>* entries = [] {
    std::ifstream file("policy/testdata/oracle_golden.txt");
    std::stringstream text;
    text << file.rdbuf();
    absl::StatusOr<std::vector<GoldenEntry>> parsed = policy_testing::ParseGolden(text.str());
    if (!parsed.ok()) {
      std::fprintf(stderr, "oracle_golden.txt: %s\n",
                   std::string(parsed.status().message()).c_str());
      std::abort();
    }
    return new std::vector<GoldenEntry>(std::move(*parsed));
  }();
  return *entries;
}

bool Names(const DsaProblem& problem, DsaObjectiveTerm term) {
  for (DsaObjectiveTerm t : problem.objective.terms) {
    if (t == term) return true;
  }
  return false;
}

std::vector<uint64_t> TermValues(const DsaProblem& problem, const ConstrainedResult& result) {
  std::vector<uint64_t> values;
  for (DsaObjectiveTerm term : problem.objective.terms) {
    values.push_back(term == DsaObjectiveTerm::kReuseCost   ? result.reuse_cost
                     : term == DsaObjectiveTerm::kTotalPeak ? result.total_peak
                     : term == DsaObjectiveTerm::kMaxPeak   ? result.max_peak
                                                            : 0);
  }
  return values;
}

struct Tally {
  int problems = 0, optimal = 0, infeasible = 0, feasible = 0, no_fit = 0, relaxed = 0;
};

// Every claim of `result` for `problem` against its exact optimum.
void CheckClaims(const DsaProblem& problem, const ConstrainedResult& result,
                 const GoldenOptimum& truth, const std::string& where, Tally* tally) {
  if (!result.placements.empty()) {
    const DsaSolutionCheck check = CheckDsaSolution(problem, result.placements);
    ASSERT_TRUE(check.ok()) << where << ": " << check.errors.front();
  }
  switch (result.status) {
    case ConstrainedStatus::kInfeasible:
      ++tally->infeasible;
      EXPECT_FALSE(truth.feasible) << where << ": proven infeasible, but the optimum exists";
      return;
    case ConstrainedStatus::kNoFitWithinBudget:
      ++tally->no_fit;
      return;
    case ConstrainedStatus::kOptimal:
      ++tally->optimal;
      break;
    case ConstrainedStatus::kFeasible:
      ++tally->feasible;
      break;
  }
  ASSERT_TRUE(truth.feasible) << where << ": a placement for an infeasible problem";
  const std::vector<uint64_t> values = TermValues(problem, result);
  if (result.status == ConstrainedStatus::kOptimal) {
    EXPECT_EQ(values, truth.terms) << where << ": 'optimal' is not the optimum";
  } else {
    EXPECT_GE(values, truth.terms) << where << ": better than the optimum";
  }
  if (Names(problem, DsaObjectiveTerm::kReuseCost)) {
    EXPECT_LE(result.reuse_lower_bound, truth.reuse_cost) << where << ": reuse bound";
  }
  if (Names(problem, DsaObjectiveTerm::kTotalPeak)) {
    EXPECT_LE(result.total_peak_lower_bound, truth.total_peak) << where << ": total peak bound";
  }
  if (Names(problem, DsaObjectiveTerm::kMaxPeak)) {
    EXPECT_LE(result.max_peak_lower_bound, truth.max_peak) << where << ": max peak bound";
  }
}

class GoldenTest : public ::testing::TestWithParam<int> {};

TEST_P(GoldenTest, EveryClaimAgreesWithTheExactOptimum) {
  const int family = GetParam();
  Tally tally;
  int seen = 0;
  for (const GoldenEntry& entry : Golden()) {
    if (entry.family != family) continue;
    ++seen;
    const DsaProblem problem = policy_testing::OracleProblem(family, entry.seed);
    const std::string where =
        "family " + std::to_string(family) + " seed " + std::to_string(entry.seed);
    ASSERT_EQ(policy_testing::ProblemFingerprint(problem), entry.given.fingerprint)
        << where << ": the generator no longer draws the problem the optimum is for";
    ConstrainedOptions options;
    options.budget = absl::Milliseconds(200);
    absl::StatusOr<ConstrainedResult> result = SolveConstrained(problem, options);
    ASSERT_TRUE(result.ok()) << where << ": " << result.status();
    ++tally.problems;
    CheckClaims(problem, *result, entry.given,
                where + ", " + ConstrainedStatusName(result->status) + " (" + result->reason + ")",
                &tally);
    if (HasFatalFailure()) return;
    if (result->relaxed) {
      ++tally.relaxed;
      EXPECT_EQ(result->status, ConstrainedStatus::kInfeasible) << where;
      ASSERT_TRUE(entry.relaxed.has_value()) << where << ": a relaxed answer nobody checked";
      ASSERT_EQ(policy_testing::ProblemFingerprint(result->relaxed->problem),
                entry.relaxed->fingerprint)
          << where << ": another relaxed problem than the golden one";
      Tally ignored;
      CheckClaims(result->relaxed->problem, result->relaxed->result, *entry.relaxed,
                  where + " (relaxed)", &ignored);
    }
  }
  EXPECT_EQ(seen, policy_testing::OracleFamilySeeds(family)) << "golden entries of the family";
  std::printf(
      "family %d: %d problems, optimal %d, infeasible %d, feasible %d, no fit %d, "
      "relaxed answers %d\n",
      family, tally.problems, tally.optimal, tally.infeasible, tally.feasible, tally.no_fit,
      tally.relaxed);
  // The planner must decide most of them, or it is not being tested much.
  EXPECT_GE(tally.optimal + tally.infeasible, tally.problems * 3 / 4);
}

INSTANTIATE_TEST_SUITE_P(Families, GoldenTest,
                         ::testing::Range(0, policy_testing::kOracleFamilies));

// The bounds on their own (no search), with and without the bound from exactly solved parts,
// on the ping-pong family: neither passes the optimum, the subset bound never lowers the bound,
// and it raises it somewhere (else this test would not test it).
TEST(GoldenSubsetBoundTest, NeverPassesTheOptimum) {
  constexpr int kGrouped = 6;
  int checked = 0, raised = 0, reached = 0;
  for (const GoldenEntry& entry : Golden()) {
    if (entry.family != kGrouped) continue;
    const DsaProblem problem = policy_testing::GroupedProblem(entry.seed);
    ASSERT_TRUE(entry.given.feasible);
    ConstrainedOptions options;
    options.budget = absl::Milliseconds(500);
    options.search = false;
    options.subset_bound = false;
    absl::StatusOr<ConstrainedResult> without = SolveConstrained(problem, options);
    options.subset_bound = true;
    absl::StatusOr<ConstrainedResult> with = SolveConstrained(problem, options);
    ASSERT_TRUE(without.ok() && with.ok()) << entry.seed;
    const uint64_t optimum = entry.given.reuse_cost;
    const std::string where = "seed " + std::to_string(entry.seed) + ", optimum " +
                              std::to_string(optimum) + ", bounds " +
                              std::to_string(without->reuse_lower_bound) + " / " +
                              std::to_string(with->reuse_lower_bound);
    EXPECT_LE(with->reuse_lower_bound, optimum) << where;
    EXPECT_LE(without->reuse_lower_bound, with->reuse_lower_bound) << where;
    ++checked;
    raised += with->reuse_lower_bound > without->reuse_lower_bound;
    reached += with->reuse_lower_bound == optimum;
  }
  std::printf("grouped: %d checked; the subset bound raised %d bounds, %d reach the optimum\n",
              checked, raised, reached);
  EXPECT_EQ(checked, policy_testing::OracleFamilySeeds(kGrouped));
  EXPECT_GT(raised, 0);
}

}  // namespace
}  // namespace policy
}  // namespace accelmem
