// The generated problems the constrained planner is checked on, and their exact optima computed
// once by the MILP oracle (dsa_exact_oracle.h) with a long time limit and checked in
// (policy/testdata/oracle_golden.txt), so every seed is checked on every run whatever the
// machine's speed. make_oracle_golden writes the file; constrained_planner_golden_test reads it.
//
// The file: one line per problem, fields separated by spaces:
//   FAMILY SEED FINGERPRINT STATUS TERMS R=REUSE T=TOTAL_PEAK M=MAX_PEAK [RELAXED...]
// STATUS is optimal or infeasible; TERMS the optimum of each objective term in the problem's
// order, joined by commas ("-" when infeasible). When the planner offers a pipeline-relaxed
// answer for the problem, RELAXED repeats FINGERPRINT STATUS TERMS R= T= M= for the relaxed
// problem the planner names (the oracle is the judge; the planner only says which problem).
#ifndef ACCELMEM_POLICY_TESTING_ORACLE_GOLDEN_H_
#define ACCELMEM_POLICY_TESTING_ORACLE_GOLDEN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/dsa_problem.h"
#include "policy/testing/dsa_problem_generator.h"

namespace accelmem {
namespace policy_testing {

// Families of generated problems: 0 the generator's defaults, 1 tight pools with many
// penalties, 2 aligned pools with reserved ranges and pins, 3 equal sizes (slot colouring), 4
// sizes of one or four units, 5 the planner's edge cases (buffers allowed in two pools,
// colocations across pools and chained with separations, pins at a class's edge, pipeline
// groups, every objective order), and 6 the ping-pong shape of GroupedProblem.
constexpr int kOracleFamilies = 7;
DsaGeneratorOptions OracleFamily(int family);
int OracleFamilySeeds(int family);
uint64_t OracleSeed(int family, int index);
policy::DsaProblem OracleProblem(int family, uint64_t seed);

// pypto-lib's ping-pong pools in small: groups of buffers live together, each group at its
// own time, penalties between groups, a capacity that makes the groups share bytes.
policy::DsaProblem GroupedProblem(uint64_t seed);

// The fingerprint of a bare problem (DsaProblemFingerprint of a fixed envelope).
std::string ProblemFingerprint(const policy::DsaProblem& problem);

struct GoldenOptimum {
  std::string fingerprint;
  bool feasible = false;
  std::vector<uint64_t> terms;
  uint64_t reuse_cost = 0, total_peak = 0, max_peak = 0;
};

struct GoldenEntry {
  int family = 0;
  uint64_t seed = 0;
  GoldenOptimum given;
  std::optional<GoldenOptimum> relaxed;
};

std::string FormatGolden(const GoldenEntry& entry);
absl::StatusOr<std::vector<GoldenEntry>> ParseGolden(const std::string& text);

}  // namespace policy_testing
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_TESTING_ORACLE_GOLDEN_H_
