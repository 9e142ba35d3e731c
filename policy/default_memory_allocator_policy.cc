#include "policy/default_memory_allocator_policy.h"

#include <algorithm>

namespace accelmem {
namespace policy {

bool DefaultMemoryAllocatorPolicy::ShouldAllocate(ir::MemorySpace space) const {
  return space != ir::MemorySpace::kDDR;
}

uint64_t DefaultMemoryAllocatorPolicy::AlignAddress(uint64_t addr, ir::MemorySpace) const {
  return AlignUp(addr, kDefaultAlignment);
}

void DefaultMemoryAllocatorPolicy::OrderMemRefs(std::vector<ir::MemRefPtr>& refs) const {
  OrderMemRefsById(&refs);
}

void OrderMemRefsById(std::vector<ir::MemRefPtr>* refs) {
  std::stable_sort(refs->begin(), refs->end(), [](const ir::MemRefPtr& a, const ir::MemRefPtr& b) {
    if (a->id() != b->id()) return a->id() < b->id();
    return a->name() < b->name();
  });
}

}  // namespace policy
}  // namespace accelmem
