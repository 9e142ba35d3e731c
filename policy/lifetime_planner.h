// Lifetime-aware static placement planner: gives every buffer of a placement instance (see
// policy/placement_checker.h) a byte offset so that buffers live at the same time never overlap,
// aiming for a height (highest offset + size) close to LOAD, the lower bound.
//
// Two modes:
//  - kGreedy: the lowest of several greedy placements, one per GreedyOrder: the textbook rules of
//    TFLite, TFLite Micro and XLA with their exact tie-breaks, by area and by start, so greedy
//    mode is never higher than any of them (docs/placement.md). Each buffer goes into the smallest
//    free address gap that stays free over its whole lifetime (first fit for kSizeFirstFit). The
//    gaps come from a segment tree over time whose nodes keep the merged (coalesced) address
//    intervals of the buffers stored there, so a query merges ~10 short sorted lists instead of
//    scanning every overlapping buffer; the start order is an allocator sweep (O(n log n)) and
//    runs first, and every order stops as soon as it can no longer win.
//  - kSearch: starts from the greedy result and spends the rest of `budget` improving it. Up to
//    4,000 buffers, a complete branch and bound over canonical placements (buffers placed
//    bottom-up at the lowest offset they can take; section load bounds, dominance pruning and
//    dynamic decomposition into independent time ranges, after MiniMalloc, ASPLOS 2023) runs
//    several preorders concurrently, first to fit under the capacity, then under lower targets
//    down to LOAD; targets it exhausts raise PlacementPlan::lower_bound, and it stops as soon as
//    a placement reaches the bound. Larger instances (or more than 2M overlapping pairs) get a
//    large-neighbourhood search that re-packs the buffers of time windows around the peak.
//    Never returns a higher placement than greedy mode.
//
// Sizes are rounded up to the alignment internally, so offsets are always aligned. Buffers with
// size 0 or an empty lifetime conflict with nothing and get offset 0. The planner is deterministic
// for a given instance, options and seed except for where the time budget cuts the search.
#ifndef ACCELMEM_POLICY_LIFETIME_PLANNER_H_
#define ACCELMEM_POLICY_LIFETIME_PLANNER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "policy/greedy_order.h"
#include "policy/placement_checker.h"

namespace accelmem {
namespace policy {

enum class PlannerMode { kGreedy, kSearch };

// GreedyOrder and GreedyOrderName() are declared in policy/greedy_order.h.

struct PlannerOptions {
  PlannerMode mode = PlannerMode::kGreedy;
  int64_t alignment = 1;  // Offsets are multiples of this (>= 1).
  int64_t capacity = 0;   // 0: unbounded. Search first tries to fit under it; never an error.
  absl::Duration budget = absl::Seconds(1);  // Search mode: wall-clock budget after greedy.
  std::vector<GreedyOrder> orders = {GreedyOrder::kSize,          GreedyOrder::kArea,
                                     GreedyOrder::kLifetime,      GreedyOrder::kStart,
                                     GreedyOrder::kWholeThenSize, GreedyOrder::kSizeFirstFit};
  uint64_t seed = 1;  // Search mode: seed of the hill climb's perturbations.
  // Search mode threads. The branch and bound has four preorders (MiniMalloc's three, each
  // re-ranked at every decomposition, and the first one never re-ranked). 0 (default): one
  // thread per hardware thread, at least 2 and at most 4, each running one preorder without
  // restarts until one succeeds; instances under 64 buffers use 1 instead. 2 to 4: that many
  // preorders concurrently. 1: one thread trying the three re-ranked preorders in turn with node
  // limits that double each round (restarts repeat work), as MiniMalloc does.
  int search_threads = 0;
};

struct PlacementPlan {
  std::vector<int64_t> offsets;  // One per input buffer, same order.
  int64_t height = 0;            // max(offset + size), see PlacementHeight().
  int64_t load = 0;              // ComputeLoad() of the instance.
  bool within_capacity = true;   // height <= capacity (always true without a capacity).
  std::string method;            // What produced the result, e.g. "greedy:size", "search".
  int64_t search_nodes = 0;      // Branch-and-bound nodes explored (search mode).
  // The best lower bound on the height known: LOAD, raised in search mode (alignment 1) when the
  // branch and bound proves that no placement fits under a target.
  int64_t lower_bound = 0;
  bool proven_optimal = false;  // height == lower_bound: no lower height exists.
};

// Places `buffers` according to `options`. Fails only for an invalid instance or options
// (ValidateInstance); a result above the capacity is returned with within_capacity == false.
absl::StatusOr<PlacementPlan> PlanPlacement(absl::Span<const PlacementBuffer> buffers,
                                            const PlannerOptions& options = {});

// One greedy best-fit pass in `order`; returns one offset per buffer. The instance must be valid
// (ValidateInstance) for `alignment`.
std::vector<int64_t> GreedyBestFit(absl::Span<const PlacementBuffer> buffers, int64_t alignment,
                                   GreedyOrder order);

}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_LIFETIME_PLANNER_H_
