#include "policy/aligned_memory_allocator_policy.h"

namespace accelmem {
namespace policy {

uint64_t AlignedMemoryAllocatorPolicy::AlignAddress(uint64_t addr, ir::MemorySpace space) const {
  return AlignUp(addr, table_[static_cast<int>(space)]);
}

}  // namespace policy
}  // namespace accelmem
