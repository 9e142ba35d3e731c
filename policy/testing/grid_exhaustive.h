// An exhaustive search of one pool's least reuse cost on its address grid, for tests: the
// independent evidence behind optima the planner proves on corpus pools too large for the MILP
// oracle in test time (constrained_planner_oracle_test). It shares no code with the planner and
// uses no bound but the cost paid so far.
//
// Exact for pools whose sizes, capacity and alignments are multiples of one grid unit g (with no
// reserved ranges, pins, colocations, temporal exclusions or exact_or_disjoint pairs, which it
// refuses): rounding every
// offset of a placement down to a multiple of g keeps every disjoint pair disjoint (a + s <= b
// gives floor(a) + s = floor(a + s) <= floor(b) when s is a multiple of g), so it never adds an
// overlap or a cost, and some optimal placement lies on the grid.
#ifndef ACCELMEM_POLICY_TESTING_GRID_EXHAUSTIVE_H_
#define ACCELMEM_POLICY_TESTING_GRID_EXHAUSTIVE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "policy/dsa_problem.h"

namespace accelmem {
namespace policy_testing {

struct GridSearchResult {
  bool supported = false;
  std::string message;            // Why not, when unsupported.
  uint64_t grid = 0;              // The unit g.
  std::optional<uint64_t> least;  // The least reuse cost, or nullopt when nothing fits.
  uint64_t nodes = 0;
};

// The least reuse cost of pool `pool_id`'s buffers (the objective's other terms ignored).
GridSearchResult LeastReuseOnGrid(const policy::DsaProblem& problem, uint32_t pool_id);

}  // namespace policy_testing
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_TESTING_GRID_EXHAUSTIVE_H_
