// Writes policy/testdata/oracle_golden.txt (oracle_golden.h): every generated problem of every
// oracle family solved exactly by the MILP oracle with a long time limit, and, where the planner
// offers a pipeline-relaxed answer, the relaxed problem it names solved the same way.
//
//   bazel run -c opt //policy/testing:make_oracle_golden -- [TIME_LIMIT_S] > oracle_golden.txt
//
// Fails (exit 1, naming the problem) if the oracle leaves any problem undecided: the golden
// test checks every seed, none is skipped for time.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "policy/constrained_planner.h"
#include "policy/testing/dsa_exact_oracle.h"
#include "policy/testing/oracle_golden.h"

namespace accelmem {
namespace policy_testing {
namespace {

bool Solve(const policy::DsaProblem& problem, double limit, GoldenOptimum* out) {
  const DsaOracleResult oracle = SolveDsaExactly(problem, limit);
  out->fingerprint = ProblemFingerprint(problem);
  if (oracle.status == DsaOracleStatus::kInfeasible) return true;
  if (oracle.status != DsaOracleStatus::kOptimal) {
    std::fprintf(stderr, "undecided: %s\n", oracle.message.c_str());
    return false;
  }
  out->feasible = true;
  out->terms = oracle.term_values;
  out->reuse_cost = oracle.reuse_cost;
  out->total_peak = oracle.total_peak;
  out->max_peak = oracle.max_peak;
  return true;
}

int Main(int argc, char** argv) {
  const double limit = argc > 1 ? std::atof(argv[1]) : 120.0;
  // Every problem must be valid (the generator promises it) before any is solved.
  int invalid = 0;
  for (int family = 0; family < kOracleFamilies; ++family) {
    for (int i = 0; i < OracleFamilySeeds(family); ++i) {
      const uint64_t seed = OracleSeed(family, i);
      const std::vector<std::string> errors =
          policy::ValidateDsaProblem(OracleProblem(family, seed));
      if (errors.empty()) continue;
      ++invalid;
      std::fprintf(stderr, "family %d seed %llu: %s\n", family,
                   static_cast<unsigned long long>(seed), errors.front().c_str());
    }
  }
  if (invalid > 0) return 1;
  std::printf(
      "# Exact optima of the oracle families (policy/testing/oracle_golden.h), written by\n"
      "# make_oracle_golden with a %.0f s limit per problem.\n",
      limit);
  for (int family = 0; family < kOracleFamilies; ++family) {
    for (int i = 0; i < OracleFamilySeeds(family); ++i) {
      GoldenEntry entry;
      entry.family = family;
      entry.seed = OracleSeed(family, i);
      const policy::DsaProblem problem = OracleProblem(family, entry.seed);
      if (!Solve(problem, limit, &entry.given)) {
        std::fprintf(stderr, "family %d seed %llu\n", family,
                     static_cast<unsigned long long>(entry.seed));
        return 1;
      }
      absl::StatusOr<policy::ConstrainedResult> planner = policy::SolveConstrained(problem);
      if (planner.ok() && planner->relaxed) {
        entry.relaxed.emplace();
        if (!Solve(planner->relaxed->problem, limit, &*entry.relaxed)) {
          std::fprintf(stderr, "relaxed: family %d seed %llu\n", family,
                       static_cast<unsigned long long>(entry.seed));
          return 1;
        }
      }
      std::printf("%s\n", FormatGolden(entry).c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace policy_testing
}  // namespace accelmem

int main(int argc, char** argv) { return accelmem::policy_testing::Main(argc, argv); }
