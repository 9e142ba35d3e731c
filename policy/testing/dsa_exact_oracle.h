// An exact solver for small schema-v1 constrained placement problems (policy/dsa_problem.h), for
// tests only: a mixed-integer program solved by COIN-OR CBC, sharing no code with the planner in
// policy/constrained_planner.h, so each checks the other.
//
// A buffer allowed in several pools: every choice of one pool per buffer (at most 256 choices)
// is solved as its own problem, and the least optimum, term by term, is the answer.
//
// Model (for one choice: each buffer in exactly one pool). Schema v1 measures every overlap
// between buffers by the colocation class's largest size (its extent), so every buffer's size is
// first raised to its class's extent; capacity, reserved ranges and peaks are unchanged by that,
// since a class shares one offset.
//  - Colocation classes (union-find over the colocations) share one offset x = step * k, k an
//    integer >= 0; the step is the class's largest alignment, or the grid when that is coarser:
//    the gcd of all sizes, capacities, reserved bounds and pinned offsets (rounding an optimal
//    placement down to the grid keeps it valid and optimal, so this is exact; when an alignment
//    neither divides the grid nor is divided by it, the grid is 1). The class's extent is its
//    largest size. x + extent <= U and <= the pool's peak P, an integer at least every reserved
//    range's end. U is the capacity, or for an unbounded pool the highest reserved or pinned end
//    plus every free class's extent and alignment slack (stacking the free classes above
//    everything gives a placement that high with no reuse cost, so an optimum lies below it).
//    Pins fix x. A separation between buffers of one class is infeasible (they share bytes).
//  - Each class and reserved range: a binary chooses below (x + extent <= begin) or above
//    (x >= end).
//  - Each pair of buffers of one pool in different classes that must not share bytes (live at
//    the same time and not temporally excluded, or separated, or one pinned
//    exclusive_for_all_time): a binary chooses which is below the other (by extent).
//  - Each reuse penalty between buffers that may share bytes: a binary y = "allowed to overlap";
//    else one of two order binaries must hold. The reuse cost is sum cost * y.
//  - Big-Ms come from the offset bounds. Valid cuts (not needed for exactness, needed for speed):
//    for every maximal set of buffers pairwise disjoint or penalised, P >= reserved bytes + their
//    sizes - sum of min size * y over the penalised pairs; the same below and above each member.
// The objective is lexicographic, term by term in the problem's order: reuse_cost, total_peak
// (sum of P), max_peak (an integer >= every P); each optimum is fixed (<=) before the next term,
// and the bounds U shrink to what the fixed terms imply. The least peak of one pool is searched
// upwards on the grid from a load bound, one feasibility program per value (with every big-M at
// that value: much faster for CBC than closing the gap). capacity_overflow is 0: the capacity is
// hard, so a problem whose capacity cannot be met is infeasible. bank_cost and the
// exact_or_disjoint pairs of problem.extensions are not supported (refused, never ignored).
// Pools are solved one by one (one program each) unless max_peak comes before reuse_cost without
// total_peak in between, the one order that couples them.
//
// The reported reuse cost and peaks are recomputed from the placement (extents that share at
// least one byte); at an optimum they equal the program's values.
//
// Reach (generated problems, dsa_problem_generator.h): up to 12 buffers the median is tens of
// milliseconds and the slowest take a few seconds; at 16 buffers about the same; at 20 buffers
// many do not finish in 20 s. CBC is not known to be reentrant: call from one thread at a time.
#ifndef ACCELMEM_POLICY_TESTING_DSA_EXACT_ORACLE_H_
#define ACCELMEM_POLICY_TESTING_DSA_EXACT_ORACLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "policy/dsa_problem.h"

namespace accelmem {
namespace policy_testing {

enum class DsaOracleStatus {
  kOptimal,     // Proven optimal for every objective term.
  kInfeasible,  // Proven: no placement meets the hard constraints.
  kUnknown,     // The time limit ran out first (placements: an incumbent, possibly none).
  // Invalid problem, more than 256 choices of pools, bank_cost or exact_or_disjoint pairs
  // (`message`).
  kUnsupported
};
const char* DsaOracleStatusName(DsaOracleStatus status);

struct DsaOraclePoolPeak {
  uint32_t pool = 0;
  uint64_t peak = 0;  // max(reserved range ends, offset + size of its buffers).
};

struct DsaOracleResult {
  DsaOracleStatus status = DsaOracleStatus::kUnknown;
  uint64_t reuse_cost = 0;  // Recomputed from the placements.
  uint64_t total_peak = 0;
  uint64_t max_peak = 0;
  std::vector<DsaOraclePoolPeak> pool_peaks;     // In the problem's pool order.
  std::vector<policy::DsaPlacement> placements;  // Sorted by buffer id.
  // The program's optimum of each objective term, in the problem's order (kOptimal only).
  std::vector<uint64_t> term_values;
  std::string message;  // Why, for kInfeasible found before solving, kUnknown, kUnsupported.
  double seconds = 0;   // Wall clock spent.
};

// Solves `problem` exactly within `time_limit_s` seconds of wall clock (over all the lexicographic
// stages together). CBC's output is silenced.
DsaOracleResult SolveDsaExactly(const policy::DsaProblem& problem, double time_limit_s);

}  // namespace policy_testing
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_TESTING_DSA_EXACT_ORACLE_H_
