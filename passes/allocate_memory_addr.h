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
// The pass is idempotent: on an already planned function it computes the same addresses and
// reports no change (under kSearch only when the search ends within its budget; a budget cut
// makes the planner's result timing-dependent).
#ifndef ACCELMEM_PASSES_ALLOCATE_MEMORY_ADDR_H_
#define ACCELMEM_PASSES_ALLOCATE_MEMORY_ADDR_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "backends/backend.h"
#include "ir/memory_space.h"
#include "passes/pass.h"

namespace accelmem {
namespace passes {

enum class PlacementStrategy { kSequential, kGreedy, kSearch };

// "sequential", "greedy", "search".
const char* PlacementStrategyName(PlacementStrategy s);
// Parses a name above; false for anything else.
bool ParsePlacementStrategy(absl::string_view name, PlacementStrategy* out);

struct AllocateMemoryAddrOptions {
  // The target: its allocator policy (order, alignment, spaces planned) and capacities. Null:
  // the default policy and no capacity check.
  backends::BackendPtr backend;
  PlacementStrategy strategy = PlacementStrategy::kSequential;
  absl::Duration budget = absl::Milliseconds(100);  // kSearch: per space and function
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
