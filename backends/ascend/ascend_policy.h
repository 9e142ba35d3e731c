// The SoC-table allocator policy of an Ascend SoC (the "<soc>-soc-aligned" backends).
//
// Default filter (skip DDR) and order (by id), with the SoC row's per-space alignment table
// (AscendSoc::alignment) instead of a flat 32 bytes. The upstream allocator does not apply this
// table and aligns every space to 32 bytes, and so do the default "<soc>" backends; this policy
// is the stricter option. Every value in the table is a multiple of 32.
#ifndef ACCELMEM_BACKENDS_ASCEND_ASCEND_POLICY_H_
#define ACCELMEM_BACKENDS_ASCEND_ASCEND_POLICY_H_

#include "backends/ascend/ascend_soc.h"
#include "policy/aligned_memory_allocator_policy.h"
#include "policy/memory_allocator_policy.h"

namespace accelmem {
namespace backends {

class AscendMemoryAllocatorPolicy final : public policy::AlignedMemoryAllocatorPolicy {
 public:
  explicit AscendMemoryAllocatorPolicy(const AscendSoc& soc);
};

}  // namespace backends
}  // namespace accelmem

#endif  // ACCELMEM_BACKENDS_ASCEND_ASCEND_POLICY_H_
