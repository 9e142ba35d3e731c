// allocate-memory-addr's planner seam: one memory space of one function in, a plan out.
//
// The pass (passes/allocate_memory_addr.cc) resolves the reserve buffers, builds the function's
// schema-v1 problem when a strategy or a hook needs it, and then asks PlanSpace for each planned
// space. PlanSpace runs the strategy of the options (one function per strategy, one row per
// strategy in kStrategies of space_planner.cc) and returns the root addresses, the aligned end,
// the method kept, its status and proven bound, and why nothing fits when the plan is over
// capacity. The pass then diagnoses a plan over capacity and writes the addresses.
//
// Where the backend keeps storage layouts apart in a space (SpacePlanOptions::separate_layouts),
// no plan of any strategy overlaps roots of two layout classes.
//
// Every strategy starts from the sequential placement (upstream's: roots one after another in
// the policy's order) and keeps another plan only when it is no worse: the lifetime planners
// when their high-water mark is not higher, the constrained and replayed plans after
// policy/dsa_validator accepted them, by the lexicographic choice "fits, least reuse cost, least
// peak".
#ifndef ACCELMEM_PASSES_INTERNAL_SPACE_PLANNER_H_
#define ACCELMEM_PASSES_INTERNAL_SPACE_PLANNER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ir/function.h"
#include "ir/memory_space.h"
#include "ir/memref.h"
#include "passes/memory_problem.h"
#include "policy/constrained_planner.h"
#include "policy/dsa_problem.h"
#include "policy/memory_allocator_policy.h"

namespace accelmem {
namespace passes {

// How allocate-memory-addr places the roots of a space (passes/allocate_memory_addr.h says what
// each does).
enum class PlacementStrategy { kSequential, kGreedy, kSearch, kConstrained, kReplay };

// "sequential", "greedy", "search", "constrained", "replay".
const char* PlacementStrategyName(PlacementStrategy s);
// Parses a name above; false for anything else.
bool ParsePlacementStrategy(absl::string_view name, PlacementStrategy* out);

namespace internal {

// Root addresses by root.
using RootAddresses = absl::flat_hash_map<const ir::MemRef*, int64_t>;

// The root MemRefs of a function and their slots: the largest offset + size over a root and its
// views, the bytes a root takes wherever it is placed; and the layout classes of its tiles.
class RootSlots {
 public:
  explicit RootSlots(const ir::Function& function);
  // The roots in the order their first definition is visited.
  const std::vector<ir::MemRefPtr>& roots() const { return roots_; }
  int64_t slot(const ir::MemRef* root) const { return slots_.at(root); }
  // Bit 1 << TileLayout of every layout the root's tiles state, an unstated one counting as ND
  // (backends::SeparatedLayout); used only where the space separates layouts. Normally one bit:
  // a root with two is planned in a range of its own and rejected by verify_memory_plan.
  int layouts(const ir::MemRef* root) const { return layouts_.at(root); }

 private:
  std::vector<ir::MemRefPtr> roots_;
  absl::flat_hash_map<const ir::MemRef*, int64_t> slots_;
  absl::flat_hash_map<const ir::MemRef*, int> layouts_;
};

// The constrained planner's plan of a function's problem (whose in-place pairs are
// exact_or_disjoint pairs, so its bounds and proofs hold for the function as they are).
struct ConstrainedPlan {
  absl::StatusOr<policy::ConstrainedResult> result = absl::UnknownError("not solved");
  std::vector<uint64_t> offsets;  // by buffer id; empty: no plan
};
ConstrainedPlan SolveFunctionProblem(const MemoryProblem& problem, absl::Duration budget);

// What every space of one function shares. `problem` is set for the strategies that plan by the
// function's problem (kConstrained, kReplay; `prepared` when it has pools) and when a hook asked
// for it (the plan then reports its reuse cost).
struct FunctionPlanning {
  const RootSlots* roots = nullptr;
  // Root lifetimes (liveness time, end exclusive) for the planner strategies; roots without one
  // hold no tile value.
  const absl::flat_hash_map<const ir::MemRef*, std::pair<int64_t, int64_t>>* life = nullptr;
  const MemoryProblem* problem = nullptr;
  bool prepared = false;           // PrepareFunctionPlanning ran (the problem has pools)
  ConstrainedPlan constrained;     // kConstrained
  std::vector<uint64_t> replayed;  // kReplay: offsets by buffer id
};

// Sets what `strategy` needs of `function` (whose `problem` must be set and have pools):
// kConstrained solves the problem, kReplay finds the solution document of the problem's instance
// in `replay` and checks it against the problem (fingerprint and every constraint). Errors
// (InvalidArgument, without the function's name) say why a replay or a solve is impossible.
absl::Status PrepareFunctionPlanning(
    PlacementStrategy strategy, absl::Duration budget,
    const std::map<std::string, policy::DsaSolutionDocument>* replay, FunctionPlanning* function);

struct SpacePlanOptions {
  PlacementStrategy strategy = PlacementStrategy::kSequential;
  absl::Duration budget = absl::Milliseconds(100);        // kSearch's planner budget
  const policy::MemoryAllocatorPolicy* policy = nullptr;  // required: order and alignment
  int64_t capacity = 0;                                   // 0: unknown
  // The backend keeps storage layouts apart in this space (backends::Backend::SeparatesLayouts):
  // the lifetime planners then plan each layout class (RootSlots::layouts) in an address range
  // of its own, one above the other (ND, then NZ), so that no ND root overlaps an NZ root even
  // with disjoint lifetimes. The sequential placement never overlaps roots; the constrained
  // planner gets the separations from the problem (passes/memory_problem.h).
  bool separate_layouts = false;
};

// The plan of one space.
struct SpacePlan {
  RootAddresses addr;                 // every root of the space
  int64_t end = 0;                    // aligned high-water mark (the start when the space is empty)
  std::string method = "sequential";  // the plan kept: a PlacementStrategyName
  std::string status = "heuristic";   // "optimal", "feasible", "heuristic", "replayed"
  uint64_t reuse_cost = 0;            // the problem's penalties the plan pays (with a problem)
  uint64_t reuse_lower_bound = 0;     // proven (kConstrained); 0 otherwise
  // Why nothing fits, for a plan over capacity: proven infeasible, or not found in the budget.
  std::string no_fit;
};

// Plans the roots `refs` of `space` (reordered by the policy's OrderMemRefs) above `start`.
// Errors (InvalidArgument, without the function's name): an address past the largest 64-bit
// one, replayed addresses the target cannot align, no valid plan at all.
absl::StatusOr<SpacePlan> PlanSpace(ir::MemorySpace space, std::vector<ir::MemRefPtr> refs,
                                    int64_t start, const FunctionPlanning& function,
                                    const SpacePlanOptions& options);

// `policy`'s alignment of `addr` in `space`, or nullopt when it does not fit in int64.
std::optional<int64_t> Align(const policy::MemoryAllocatorPolicy& policy, int64_t addr,
                             ir::MemorySpace space);
// `a + b` aligned by the policy, or nullopt on overflow.
std::optional<int64_t> AlignedEnd(const policy::MemoryAllocatorPolicy& policy, int64_t a, int64_t b,
                                  ir::MemorySpace space);

}  // namespace internal
}  // namespace passes
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_INTERNAL_SPACE_PLANNER_H_
