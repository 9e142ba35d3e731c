// MemoryAllocatorPolicy: the three decisions allocate-memory-addr delegates.
//
// Which memory spaces get addresses (ShouldAllocate), how an address is aligned in a space
// (AlignAddress) and in which order the roots of a space are laid out (OrderMemRefs). The pass
// itself only walks the IR and packs slots one after another; a backend changes placement by
// returning its own policy from Backend::CreateMemoryAllocatorPolicy(), without touching the pass.
// verify_memory_plan reads the same policy to check alignment (AlignAddress(a, s) == a).
#ifndef ACCELMEM_POLICY_MEMORY_ALLOCATOR_POLICY_H_
#define ACCELMEM_POLICY_MEMORY_ALLOCATOR_POLICY_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/memory_space.h"
#include "ir/memref.h"

namespace accelmem {
namespace policy {

class MemoryAllocatorPolicy {
 public:
  virtual ~MemoryAllocatorPolicy() = default;

  // True if roots in `space` get planned addresses (the default policy skips DDR).
  virtual bool ShouldAllocate(ir::MemorySpace space) const = 0;
  // The smallest address >= `addr` that is aligned for `space`. Must be monotone and idempotent:
  // AlignAddress(AlignAddress(a)) == AlignAddress(a).
  virtual uint64_t AlignAddress(uint64_t addr, ir::MemorySpace space) const = 0;
  // Reorders `refs` (the roots of one space) into placement order; must be deterministic.
  // (A reference parameter, as in the upstream interface, so existing policies port unchanged.)
  virtual void OrderMemRefs(std::vector<ir::MemRefPtr>& refs) const = 0;  // NOLINT
};

using MemoryAllocatorPolicyPtr = std::unique_ptr<MemoryAllocatorPolicy>;

// Rounds `addr` up to a multiple of `alignment` (a power of two or any value >= 1).
inline uint64_t AlignUp(uint64_t addr, uint64_t alignment) {
  if (alignment <= 1) return addr;
  const uint64_t rem = addr % alignment;
  return rem == 0 ? addr : addr + (alignment - rem);
}

// True if `policy` leaves `addr` where it is in `space`.
inline bool IsAligned(const MemoryAllocatorPolicy& policy, uint64_t addr, ir::MemorySpace space) {
  return policy.AlignAddress(addr, space) == addr;
}

}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_MEMORY_ALLOCATOR_POLICY_H_
