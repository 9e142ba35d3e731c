// Small random schema-v1 constrained placement problems (policy/dsa_problem.h), for checking the
// constrained planner against the exact oracle (dsa_exact_oracle.h) and for fuzz-like tests.
//
// Deterministic for a seed (its own helpers on std::mt19937_64, no <random> distributions, so the
// problems are the same with any standard library). Every problem passes ValidateDsaProblem.
// Each buffer is allowed in exactly one pool (unless multi_pool_probability). Sizes, capacities,
// reserved ranges and pinned offsets are multiples of `size_unit` and alignments are 1 or
// `size_unit`, so an optimal placement exists with every offset a multiple of `size_unit` (rounding
// every offset down to the grid keeps every disjoint pair disjoint and every range clear): a brute
// force over the grid is exact.
//
// What a problem may hold (each drawn with the probabilities below): one pool or two; a capacity
// that is unbounded (null), loose (everything side by side fits), tight (about the largest load
// at one time: reuse is needed, sometimes paid) or short of that load (infeasible, unless
// temporal exclusions save it); reserved ranges at the bottom, top or middle of a pool; buffers
// live over one interval or two; separations; temporal exclusions between pairs live at the same
// time; colocations of pairs; pins (some exclusive for all time); reuse penalties of weight
// 1..max_penalty_cost between pairs never live at the same time; objective terms
// [capacity_overflow, reuse_cost], [total_peak, max_peak] or
// [capacity_overflow, reuse_cost, total_peak].
#ifndef ACCELMEM_POLICY_TESTING_DSA_PROBLEM_GENERATOR_H_
#define ACCELMEM_POLICY_TESTING_DSA_PROBLEM_GENERATOR_H_

#include <cstdint>

#include "policy/dsa_problem.h"

namespace accelmem {
namespace policy_testing {

struct DsaGeneratorOptions {
  int min_buffers = 3;
  int max_buffers = 12;
  double two_pools_probability = 0.25;
  uint64_t size_unit = 32;  // Sizes are 1..max_size_units units; also the larger alignment.
  int max_size_units = 4;
  int horizon = 12;                  // Live intervals lie in [0, horizon).
  double aligned_probability = 0.5;  // Alignment size_unit, else 1.
  double multi_interval_probability = 0.2;
  // Capacity of a pool: null, loose, tight or short (the rest).
  double unbounded_probability = 0.2;
  double loose_probability = 0.2;
  double tight_probability = 0.45;
  double reserved_probability = 0.3;       // Per pool: one or two reserved ranges.
  double separation_probability = 0.08;    // Per pair of one pool.
  double exclusion_probability = 0.15;     // Per pair of one pool live at the same time.
  double colocation_probability = 0.3;     // Per pool: a colocated pair (sometimes two).
  double pin_probability = 0.3;            // Per pool: a pinned buffer.
  double exclusive_pin_probability = 0.4;  // Of pins.
  double penalty_probability = 0.5;        // Per pair of one pool never live together.
  int max_penalty_cost = 3;
  // The planner's edge cases, drawn after everything above (so with all of them 0, the default,
  // a seed gives the same problem as before they existed). Problems then may be infeasible in
  // ways the planner must prove.
  double multi_pool_probability = 0;  // With two pools: per unpinned buffer, allowed in both.
  double cross_pool_colocation_probability = 0;  // With two pools: one colocation across them.
  // A colocation b~c added next to an existing a~b, with a separation a-c (infeasible).
  double chained_separation_probability = 0;
  // Of pins: the offset moved to the top of the capacity, between capacity - (the class's
  // extent) and capacity - (the buffer's size), so the class may end past the capacity.
  double edge_pin_probability = 0;
  // Per pool: a depth-2 pipeline group over two buffers not live together, kept apart by a
  // pipeline_stage separation (relaxable when the pool is proven infeasible with it).
  double pipeline_probability = 0;
  // Per pair of one pool's buffers never live together: an exact_or_disjoint pair
  // (problem.extensions). Drawn after everything else, and only when above 0.
  double exact_or_disjoint_probability = 0;
  // Objective terms in any order of any non-empty subset of capacity_overflow, reuse_cost,
  // total_peak and max_peak (max_peak before reuse_cost couples the pools).
  bool every_objective_order = false;
};

// A valid problem (ValidateDsaProblem is empty) drawn from `seed`.
policy::DsaProblem GenerateDsaProblem(uint64_t seed, const DsaGeneratorOptions& options = {});

}  // namespace policy_testing
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_TESTING_DSA_PROBLEM_GENERATOR_H_
