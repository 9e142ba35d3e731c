// allocate-memory-addr (the seed pass): gives every root MemRef of a planned memory space an
// address, in place (contract §3).
//
// Per function (Orchestration functions are skipped), with the configured backend's allocator
// policy (the default policy without one):
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
// 4. With a backend configured, a space whose aligned high-water mark exceeds the backend's
//    capacity is an error: "in function 'F': Vec buffer usage (N bytes) exceeds platform limit
//    (L bytes)", plus ". The first R bytes of that space are reserved by system.reserve_buffer,
//    so tiles are allocated above them" when reserve buffers pushed the tiles up.
// The pass is idempotent: on an already planned function it computes the same addresses and
// reports no change.
#ifndef ACCELMEM_PASSES_ALLOCATE_MEMORY_ADDR_H_
#define ACCELMEM_PASSES_ALLOCATE_MEMORY_ADDR_H_

#include <array>
#include <cstdint>
#include <string>

#include "ir/memory_space.h"
#include "passes/pass.h"

namespace accelmem {
namespace passes {

class AllocateMemoryAddrPass final : public Pass {
 public:
  static constexpr const char* kName = "allocate-memory-addr";
  std::string Name() const override { return kName; }
  absl::StatusOr<FunctionResult> RunOnFunction(const ir::FunctionPtr& function) const override;
};

PassPtr CreateAllocateMemoryAddrPass();

// The space `system.reserve_buffer` reserves in a function of type `t`: Mat for AIC, else Vec.
ir::MemorySpace ReserveSpace(ir::FunctionType t);

}  // namespace passes
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_ALLOCATE_MEMORY_ADDR_H_
