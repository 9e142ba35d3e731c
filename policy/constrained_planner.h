// Constrained placement planner for schema-v1 problems (policy/dsa_problem.h): every hard
// constraint of the problem (capacity, reserved ranges, alignment, live intervals, colocations,
// separations, temporal exclusions, pins) and the lexicographic objective "fit the capacity, then
// the least reuse cost, then the least peak" (or the order the problem's objective gives to
// reuse cost and peak).
//
// Pools are independent (each buffer is placed in one of its allowed pools; the corpus fixes one)
// and are planned one by one. In each pool the planner proves what it can before searching:
// LOAD over the usable capacity at some time, or two pins that collide, is a proof of
// infeasibility. Then greedy placements over several orders give an incumbent, and a branch and
// bound over canonical placements (every buffer rests on the pool's bottom, a reserved range or
// another buffer) improves it and proves it optimal, or proves that nothing fits, when it ends
// within the budget. Lower bounds on the reuse cost come from disjoint "cores" (sets of penalty
// edges of which every placement must pay one), covering constraints over cliques, and, in
// small pools still open, exactly solved parts (docs/placement.md says how).
//
// Pipeline depth (separations whose reasons include pipeline_stage) stays hard. Only when the
// pool is proven infeasible with it, and a placement exists without it, are those separations
// relaxed to pipeline_serialization penalties of weight 1; the result names the groups relaxed.
//
// Deterministic for a given problem and budget, except where the budget cuts the search.
#ifndef ACCELMEM_POLICY_CONSTRAINED_PLANNER_H_
#define ACCELMEM_POLICY_CONSTRAINED_PLANNER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "policy/dsa_problem.h"

namespace accelmem {
namespace policy {

enum class ConstrainedStatus {
  kOptimal,            // The placement is optimal for the objective.
  kFeasible,           // Fits; the lower bounds below are proven, the gap may be open.
  kInfeasible,         // Proven: nothing fits. `reason` says why.
  kNoFitWithinBudget,  // No placement found, and no proof that none exists.
};
const char* ConstrainedStatusName(ConstrainedStatus status);

struct ConstrainedOptions {
  absl::Duration budget = absl::Milliseconds(100);  // Wall clock for the whole problem.
  // Relax pipeline_stage separations when a pool is proven infeasible with them.
  bool relax_pipeline_when_infeasible = true;
  // The reuse bound from exactly solved parts of small pools that the other bounds leave open
  // (off only to measure what it adds).
  bool subset_bound = true;
  // Off: no branch and bound or local search; each pool gets the greedy placement and the
  // proven bounds (a fast answer with its gap, and a way to test the bounds on their own).
  bool search = true;
};

struct PoolResult {
  uint32_t pool = 0;
  std::string name;
  ConstrainedStatus status = ConstrainedStatus::kNoFitWithinBudget;
  uint64_t reuse_cost = 0;         // Of the placement (when one was found).
  uint64_t reuse_lower_bound = 0;  // Proven.
  uint64_t peak = 0;               // max(offset + size, reserved ends) in the pool.
  uint64_t peak_lower_bound = 0;   // Proven (among placements of the least reuse cost).
  uint64_t load = 0;               // Largest total (aligned) size live at one time, plus reserved.
  int64_t load_time = 0;           // A time at which `load` is reached.
  std::string reason;              // For kInfeasible / kNoFitWithinBudget: why, in words.
  std::vector<uint32_t> relaxed_pipeline_groups;  // Groups whose depth was relaxed.
  int64_t search_nodes = 0;
  std::string method;  // "constrained" or "lifetime_planner:<mode>" for plain pools.
};

struct ConstrainedResult {
  ConstrainedStatus status = ConstrainedStatus::kNoFitWithinBudget;  // The worst of the pools.
  std::vector<DsaPlacement> placements;  // One per buffer, by buffer id, when every pool fits.
  uint64_t reuse_cost = 0;
  uint64_t reuse_lower_bound = 0;
  uint64_t total_peak = 0;
  uint64_t max_peak = 0;
  std::vector<PoolResult> pools;  // In the problem's pool order (pools without buffers too).
  std::string reason;             // The first pool's reason that is not optimal, if any.
  // Set when pipeline depth was relaxed in some pool: the problem the placement solves (the
  // pipeline_stage-only separations of those pools replaced by pipeline_serialization penalties
  // of weight 1, reuse cost right after fitting in the objective). Validate against it.
  std::optional<DsaProblem> relaxed_problem;
};

// Fails (InvalidArgument, naming the field) only when the problem is malformed
// (ValidateDsaProblem) or uses what the planner does not handle (a buffer allowed in more than
// one pool, bank geometry in the objective). Infeasibility is a status, not an error.
absl::StatusOr<ConstrainedResult> SolveConstrained(const DsaProblem& problem,
                                                   const ConstrainedOptions& options = {});

// The document the result's placement solves: `document`, or its pipeline-relaxed form (with
// metadata accelmem_pipeline_depth_relaxed = "true").
DsaProblemDocument SolvedDocument(const DsaProblemDocument& document,
                                  const ConstrainedResult& result);

// A solution document for SolvedDocument(document, result) (fingerprint, status and costs as
// metadata).
DsaSolutionDocument MakeSolutionDocument(const DsaProblemDocument& document,
                                         const ConstrainedResult& result);

}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_CONSTRAINED_PLANNER_H_
