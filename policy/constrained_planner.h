// Constrained placement planner for schema-v1 problems (policy/dsa_problem.h): every hard
// constraint of the problem (capacity, reserved ranges, alignment, live intervals, colocations,
// separations, temporal exclusions, pins, allowed pools) and the lexicographic objective of the
// problem over capacity_overflow (the capacity is hard, so 0), reuse_cost, total_peak and
// max_peak, in any order.
//
// Pools are planned one by one for a choice of pool per buffer. A buffer allowed in several
// pools makes the pool part of the answer: up to 64 choices are each solved and the best taken
// (optimal only when every choice is proven); beyond that one greedy choice is solved and the
// answer is at best feasible. Pools are independent for every objective order but one:
// max_peak before reuse_cost (with no total_peak before it), where the least largest peak M is
// found first and every pool then pays the least reuse cost with its peak capped at M.
//
// In each pool the planner proves what it can before searching: LOAD over the usable capacity at
// some time, a pinned class over the capacity, misaligned or on a reserved range, or two pins
// that collide, is a proof of infeasibility. Then greedy placements over several orders give an
// incumbent, and a branch and bound over canonical placements (every buffer rests on the pool's
// bottom, a reserved range or another buffer) improves it and proves it optimal, or proves that
// nothing fits, when it ends within the budget. Lower bounds on the reuse cost come from
// disjoint "cores" (sets of penalty edges of which every placement must pay one), covering
// constraints over cliques, and, in small pools still open, exactly solved parts
// (docs/placement.md says how).
//
// Every placement is checked by the independent validator (//policy:dsa_validator) before it is
// returned; a placement it rejects is an internal error, never a status.
//
// Pipeline depth (separations whose reasons include pipeline_stage) stays hard: a problem that
// fits only without it is infeasible as given. Its relaxed form (those separations replaced by
// pipeline_serialization penalties of weight 1) is a different problem, solved and returned
// beside the answer (ConstrainedResult::relaxed), with its own status, groups and fingerprint.
//
// Deterministic for a given problem and budget when every pool ends within its share; the
// searches also cut themselves into wall-clock slices (first search, exactly solved parts), so a
// pool that does not end may get different statuses and bounds on a slower machine.
#ifndef ACCELMEM_POLICY_CONSTRAINED_PLANNER_H_
#define ACCELMEM_POLICY_CONSTRAINED_PLANNER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "policy/constrained_result.h"
#include "policy/dsa_problem.h"

namespace accelmem {
namespace policy {

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

struct RelaxedAnswer;

struct ConstrainedResult {
  // For the problem as given: the worst of the pools, or kInfeasible for a proof that needs no
  // pool (a colocation whose buffers allow no common pool, a separation inside a colocation
  // class), or the answer over every choice of pools (below).
  ConstrainedStatus status = ConstrainedStatus::kNoFitWithinBudget;
  // One per buffer, by buffer id, exactly when the status is optimal or feasible. A buffer
  // allowed in several pools is placed in the pool the planner chose. Checked by the independent
  // validator (//policy:dsa_validator) before SolveConstrained returns.
  std::vector<DsaPlacement> placements;
  uint64_t reuse_cost = 0;
  uint64_t total_peak = 0;
  uint64_t max_peak = 0;
  // Proven lower bounds on the optimum's reuse cost, total and largest peak, whichever pools
  // the optimum puts its buffers in.
  uint64_t reuse_lower_bound = 0;
  uint64_t total_peak_lower_bound = 0;
  uint64_t max_peak_lower_bound = 0;
  // In the problem's pool order (pools without buffers too), for the pools chosen: with buffers
  // allowed in several pools, a pool's bounds hold for that choice only.
  std::vector<PoolResult> pools;
  std::string reason;  // The first pool's reason that is not optimal, if any.
  // Set when the problem as given is proven infeasible with pipeline depth hard
  // (status kInfeasible, no placements) and a placement exists with that depth relaxed: the
  // answer to that other problem, offered beside this one, never in its place.
  std::shared_ptr<const RelaxedAnswer> relaxed;
};

// The pipeline-relaxed problem (the pipeline_stage-only separations of the pools proven
// infeasible replaced by pipeline_serialization penalties of weight 1, reuse cost right after
// fitting in the objective) and the planner's answer to it.
struct RelaxedAnswer {
  DsaProblem problem;
  std::vector<std::pair<uint32_t, uint32_t>> groups;  // (pool id, group) relaxed.
  ConstrainedResult result;
};

// Fails (InvalidArgument, naming the field) only when the problem is malformed
// (ValidateDsaProblem) or uses what the planner does not handle (bank geometry in the
// objective); Internal, with the validator's message, if a placement it found fails the
// independent validator (a bug: never handed out). Infeasibility is a status, not an error.
absl::StatusOr<ConstrainedResult> SolveConstrained(const DsaProblem& problem,
                                                   const ConstrainedOptions& options = {});

// The document a relaxed answer solves: `document` with the relaxed problem and the metadata
// accelmem_pipeline_depth_relaxed = "true" (so its own fingerprint).
DsaProblemDocument RelaxedDocument(const DsaProblemDocument& document,
                                   const RelaxedAnswer& relaxed);

// A solution document for `document` with the result's placements (fingerprint, status and
// costs as metadata).
DsaSolutionDocument MakeSolutionDocument(const DsaProblemDocument& document,
                                         const ConstrainedResult& result);

// A solution document for RelaxedDocument(document, *result.relaxed): the relaxed placement,
// its own fingerprint and status, the groups relaxed and the status of the problem as given.
DsaSolutionDocument MakeRelaxedSolutionDocument(const DsaProblemDocument& document,
                                                const ConstrainedResult& result);

}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_CONSTRAINED_PLANNER_H_
