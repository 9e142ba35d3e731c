// DefaultMemoryAllocatorPolicy: the policy the passes use when no backend is configured, and
// the one Backend::CreateMemoryAllocatorPolicy() returns unless a backend overrides it.
//
// The upstream compiler's default behaviour: skip DDR (its addresses are managed outside the
// core), align every on-chip address up to 32 bytes, order the roots of a space by their numeric
// id ascending (definition order), so plans are deterministic and match the
// upstream pass's documented examples.
#ifndef ACCELMEM_POLICY_DEFAULT_MEMORY_ALLOCATOR_POLICY_H_
#define ACCELMEM_POLICY_DEFAULT_MEMORY_ALLOCATOR_POLICY_H_

#include <cstdint>
#include <vector>

#include "ir/memory_space.h"
#include "ir/memref.h"
#include "policy/memory_allocator_policy.h"

namespace accelmem {
namespace policy {

inline constexpr uint64_t kDefaultAlignment = 32;

class DefaultMemoryAllocatorPolicy : public MemoryAllocatorPolicy {
 public:
  bool ShouldAllocate(ir::MemorySpace space) const override;
  uint64_t AlignAddress(uint64_t addr, ir::MemorySpace space) const override;
  void OrderMemRefs(std::vector<ir::MemRefPtr>& refs) const override;  // NOLINT
};

// Sorts by id ascending, then name (ids are unique per function, the name only breaks ties
// between MemRefs of different functions). Shared by policies that keep the default order.
void OrderMemRefsById(std::vector<ir::MemRefPtr>* refs);

}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_DEFAULT_MEMORY_ALLOCATOR_POLICY_H_
