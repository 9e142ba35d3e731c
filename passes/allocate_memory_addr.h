// allocate-memory-addr (the upstream compiler's AllocateMemoryAddr): gives every root MemRef of a
// planned memory space an address, in place.
//
// Per function (Orchestration functions are skipped), with the allocator policy of the backend
// in the options (the default policy without one):
// 1. Reserve buffers: every `system.reserve_buffer(name=, size=, base=)` in statement order takes
//    [base, align(base + size)) of the function's reserve space (Mat in AIC functions, Vec
//    otherwise); base=-1 or no base (AUTO) takes the next free address after the previous ones.
//    Overlapping ranges are an error ("overlapping reserve_buffer ranges in function 'F':
//    [2048, 3072) overlaps with [0, 4096)"). Tiles of that space start at the aligned end of the
//    highest range. The resolved base is written back as `base=`.
// 2. Per space the policy allocates (ShouldAllocate): roots are ordered by OrderMemRefs; each
//    root and its views form one slot as large as the largest `offset + size` among them; slots
//    are placed one after another from the start address, next = AlignAddress(start + slot).
// 3. Each root's address is written into its `tile.alloc` and into every type that holds the
//    root or one of its views (a view's address is its root's plus its offset).
// Slotted roots (`tile.alloc(..., slots=N)`, ir/memref.h) are one block of N slots: first the slot
// size is padded to the space's alignment (so the root grows to N x the padded size), then the
// block is placed like any root, and slot k lies at the root's address + k x the slot size. The
// planner strategies see a root whose slots rotate with a pipelined loop busy over the whole loop
// (passes/liveness.h), so nothing shares its bytes while the loop's iterations are in flight.
// 4. With a backend in the options, a space whose aligned high-water mark exceeds the backend's
//    capacity is an error: "in function 'F': Vec buffer usage (N bytes) exceeds platform limit
//    (L bytes)", plus ". The first R bytes of that space are reserved by system.reserve_buffer,
//    so tiles are allocated above them" when reserve buffers pushed the tiles up.
// Placement strategy (AllocateMemoryAddrOptions; the default is upstream's, unchanged):
// - kSequential: step 2 above.
// - kGreedy / kSearch: first, on an unplanned function where a root holds two values that
//   conflict (init-memref alone puts a loop's carried value in its init's root even when the
//   init is read after the loop) or a yield copies into its carried root, memory-reuse's carry
//   fix-ups run (ApplyCarryFixups: fresh roots for such carried values with a tile.move of the
//   init, yielded values merged into the carried root or moved into it); memory-reuse's own
//   output needs none. So init-memref -> allocate-memory-addr is safe without memory-reuse.
//   Then, per space, each root gets its lifetime from passes/liveness.h, the model memory-reuse
//   uses too (ComputeRootLifetimes: first def to last use, views with their root, loop extension,
//   yield copies), and policy::PlanPlacement (that mode, the policy's alignment, `budget` for
//   search) places the slots above the same start address, so roots whose lifetimes are disjoint
//   share addresses without memory-reuse. The pass also computes the sequential placement and keeps
//   the planner's only when its aligned high-water mark is not higher (and every address passes the
//   policy's alignment), so a planner strategy never uses more memory than upstream's.
// - kConstrained: the function's schema-v1 problem (passes/memory_problem.h: a pool per space with
//   the backend's capacity and the reserve ranges, a buffer per root over its lifetime hull,
//   cross-pipe reuse penalties) is solved by policy::SolveConstrained with the objective "fit,
//   then the least reuse cost, then the least peak". The in-place rule (a buffer may take the
//   bytes of one dying at its definition only at the same address) is in the problem as
//   exact_or_disjoint pairs, which the planner honours and the validator checks, so the planner's
//   bounds and proofs hold for the function as they are. Per space the plan kept is the best
//   under the objective among that plan, the greedy plan and the sequential one, each validated
//   by policy/dsa_validator, so it fits wherever greedy fits and its reuse cost is never above
//   greedy's. The status (optimal, feasible with a lower bound, proven infeasible, no fit within
//   the budget) is reported through `on_stats` and in the capacity error.
// - kReplay: the solution document in `replay` whose instance is the function's name is checked
//   against the function's problem (fingerprint and every constraint) and its offsets written.
// Over capacity, the error also names the program point of the peak, LOAD there against the
// capacity, the five largest buffers live there, and whether no fit is proven.
// The pass is idempotent: on an already planned function it computes the same addresses and
// reports no change (kGreedy, kSearch and kConstrained keep a plan that is still valid and fits;
// a budget cut makes a search's own result timing-dependent). To re-plan, reset the addresses.
#ifndef ACCELMEM_PASSES_ALLOCATE_MEMORY_ADDR_H_
#define ACCELMEM_PASSES_ALLOCATE_MEMORY_ADDR_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "backends/backend.h"
#include "ir/memory_space.h"
#include "passes/internal/space_planner.h"  // PlacementStrategy
#include "passes/pass.h"
#include "policy/dsa_problem.h"

namespace accelmem {
namespace passes {

// What allocate-memory-addr did in one planned space of one function (AllocateMemoryAddrOptions::
// on_stats). Reuse cost counts the problem's cross-pipe penalties (passes/memory_problem.h) that
// the plan pays.
struct SpacePlanStats {
  std::string function;
  ir::MemorySpace space = ir::MemorySpace::kVec;
  int64_t peak = 0;      // aligned high-water mark, reserves included
  int64_t load = 0;      // LOAD: the most bytes live at one time, reserves included
  int64_t capacity = 0;  // 0: unknown
  uint64_t reuse_cost = 0;
  uint64_t reuse_lower_bound = 0;  // proven (kConstrained); 0 otherwise
  std::string status;  // "optimal", "feasible", "heuristic" (no proof sought), "replayed"
  std::string method;  // the plan kept: "constrained", "greedy", "search", "sequential", "replay"
};

struct AllocateMemoryAddrOptions {
  // The target: its allocator policy (order, alignment, spaces planned) and capacities. Null:
  // the default policy and no capacity check.
  backends::BackendPtr backend;
  PlacementStrategy strategy = PlacementStrategy::kSequential;
  absl::Duration budget =
      absl::Milliseconds(100);  // kSearch: per space; kConstrained: per function
  // kReplay: solution documents by instance (the function's name).
  std::shared_ptr<const std::map<std::string, policy::DsaSolutionDocument>> replay;
  // Called with each function's problem before it is planned (any strategy).
  std::function<void(const policy::DsaProblemDocument&)> on_problem;
  // Only build the problems (for on_problem): no addresses are assigned, nothing is checked
  // against the capacities (tile_opt --emit=dsa-json, so that a function that does not fit can
  // be tried with an outside planner).
  bool export_only = false;
  // Called once per planned space of each function that is planned successfully.
  std::function<void(const SpacePlanStats&)> on_stats;
};

class AllocateMemoryAddrPass final : public Pass {
 public:
  static constexpr const char* kName = "allocate-memory-addr";
  explicit AllocateMemoryAddrPass(AllocateMemoryAddrOptions options = {})
      : options_(std::move(options)) {}
  std::string Name() const override { return kName; }
  absl::StatusOr<FunctionResult> RunOnFunction(const ir::FunctionPtr& function) const override;

 private:
  AllocateMemoryAddrOptions options_;
};

PassPtr CreateAllocateMemoryAddrPass(const AllocateMemoryAddrOptions& options = {});

// The space `system.reserve_buffer` reserves in a function of type `t`: Mat for AIC, else Vec.
ir::MemorySpace ReserveSpace(ir::FunctionType t);

}  // namespace passes
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_ALLOCATE_MEMORY_ADDR_H_
