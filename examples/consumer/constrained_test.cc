// A downstream use of the constrained planner: a schema-v1 problem read from its JSON text,
// solved, and the placement checked by the independent validator.
#include <string>

#include "gtest/gtest.h"
#include "policy/constrained_planner.h"
#include "policy/dsa_problem.h"
#include "policy/dsa_validator.h"

namespace {

using accelmem::policy::CheckDsaSolution;
using accelmem::policy::ConstrainedStatus;
using accelmem::policy::ParseDsaProblemJson;
using accelmem::policy::SolveConstrained;

// Two buffers live together and a third, later, tied to the first by a reuse penalty: the 96-byte
// pool has room for all three apart, so the optimum pays nothing.
constexpr char kProblem[] = R"({
  "schema_version": 1, "profile": "dsa_rp_v1", "instance": "consumer",
  "problem": {
    "pools": [{"id": 0, "name": "Vec", "capacity": 96, "reserved_ranges": []}],
    "buffers": [
      {"id": 0, "name": "a", "size": 32, "alignment": 32,
       "live_intervals": [{"lower": 0, "upper": 4}], "allowed_pools": [0]},
      {"id": 1, "name": "b", "size": 32, "alignment": 32,
       "live_intervals": [{"lower": 2, "upper": 6}], "allowed_pools": [0]},
      {"id": 2, "name": "c", "size": 32, "alignment": 32,
       "live_intervals": [{"lower": 6, "upper": 9}], "allowed_pools": [0]}],
    "constraints": {"colocations": [], "separations": [], "temporal_exclusions": [],
                    "pinned_allocations": []},
    "cost_model": {"reuse_penalties": [
      {"first": 0, "second": 2, "cost": 1, "reason": "cross_pipe"}]},
    "objective": {"aggregation": "lexicographic", "terms": ["capacity_overflow", "reuse_cost"]}
  }
})";

TEST(ConstrainedConsumerTest, SolvesAndValidates) {
  auto document = ParseDsaProblemJson(kProblem, "consumer.json");
  ASSERT_TRUE(document.ok()) << document.status();
  auto result = SolveConstrained(document->problem);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_EQ(result->reuse_cost, 0u);
  EXPECT_TRUE(CheckDsaSolution(document->problem, result->placements).ok());
  // At 64 bytes c must share bytes with a or b. Sharing b's costs 2 once that pair is
  // penalised too, so the optimum shares a's and pays 1.
  document->problem.pools[0].capacity = 64;
  document->problem.cost_model->reuse_penalties.push_back(
      {1, 2, 2, accelmem::policy::DsaPenaltyReason::kCrossPipe});
  result = SolveConstrained(document->problem);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->status, ConstrainedStatus::kOptimal);
  EXPECT_EQ(result->reuse_cost, 1u);
  EXPECT_EQ(CheckDsaSolution(document->problem, result->placements).reuse_cost, 1u);
}

}  // namespace
