// The schema-v1 rules read directly, in plain loops, and a brute force over pools and grid
// offsets, for tests only: a third reading of the schema, sharing no code with the planner
// (policy/constrained_planner.h), the validator (policy/dsa_validator.h) or the MILP oracle
// (dsa_exact_oracle.h), so that each can be checked against it on tiny problems.
#ifndef ACCELMEM_POLICY_TESTING_BRUTE_FORCE_H_
#define ACCELMEM_POLICY_TESTING_BRUTE_FORCE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "policy/dsa_problem.h"

namespace accelmem {
namespace policy_testing {
// Every hard constraint a placement breaks, in words (empty: valid), exact_or_disjoint pairs of
// problem.extensions included.
std::vector<std::string> HardViolations(const policy::DsaProblem& p,
                                        const std::vector<policy::DsaPlacement>& placements);

struct Costs {
  uint64_t reuse = 0, total_peak = 0, max_peak = 0;
};
// The objective's metrics of a valid placement.
Costs Evaluate(const policy::DsaProblem& p, const std::vector<policy::DsaPlacement>& placements);
// The objective terms' values in the problem's order (capacity_overflow 0).
std::vector<uint64_t> TermValues(const policy::DsaProblem& p, const Costs& c);

// Buffer id -> smallest id of its colocation class.
std::map<uint32_t, uint32_t> ColocationLabels(const policy::DsaProblem& p);

// The lexicographically least term values over every choice of pool (of a class's first
// buffer's allowed pools) and offset on the `unit` grid, or nullopt when nothing fits. Exact for
// problems whose sizes, capacities, reserved bounds and pins are multiples of `unit` and
// alignments divide it (dsa_problem_generator.h), and only for tiny ones: the search is
// exponential. Exact-or-disjoint pairs keep it exact: rounding every offset down to the grid keeps
// equal offsets equal, as it keeps disjoint ranges disjoint.
std::optional<std::vector<uint64_t>> BruteForce(const policy::DsaProblem& p, uint64_t unit);

}  // namespace policy_testing
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_TESTING_BRUTE_FORCE_H_
