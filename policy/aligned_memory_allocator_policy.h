// AlignedMemoryAllocatorPolicy: the default policy with a per-memory-space alignment table.
//
// Why: SoCs align buffers differently per on-chip space (Ascend: 128 bytes in UB/L1/L0C, 64 in
// L0A/L0B/bias table). A backend builds one of these from its table instead of writing a policy
// class; DDR is skipped and roots are ordered by id, as in the default policy.
#ifndef ACCELMEM_POLICY_ALIGNED_MEMORY_ALLOCATOR_POLICY_H_
#define ACCELMEM_POLICY_ALIGNED_MEMORY_ALLOCATOR_POLICY_H_

#include <array>
#include <cstdint>
#include <vector>

#include "ir/memory_space.h"
#include "ir/memref.h"
#include "policy/default_memory_allocator_policy.h"

namespace accelmem {
namespace policy {

// Alignment in bytes per space, indexed by static_cast<int>(MemorySpace); 0 or 1 means none.
using AlignmentTable = std::array<uint64_t, ir::kNumMemorySpaces>;

class AlignedMemoryAllocatorPolicy : public DefaultMemoryAllocatorPolicy {
 public:
  explicit AlignedMemoryAllocatorPolicy(const AlignmentTable& table) : table_(table) {}
  uint64_t AlignAddress(uint64_t addr, ir::MemorySpace space) const override;
  uint64_t Alignment(ir::MemorySpace space) const { return table_[static_cast<int>(space)]; }

 private:
  AlignmentTable table_;
};

}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_ALIGNED_MEMORY_ALLOCATOR_POLICY_H_
