// The allocator policy of the Ascend 910B (A2/A3) SoC.
//
// Default filter (skip DDR) and order (by id), with the SoC's per-space alignment table instead
// of a flat 32 bytes. Source of the table: the memory descriptors of pypto's
// src/backend/common/soc.cpp (Create910BSoC, commit e2d0f78a), exposed there as
// Backend::GetMemAlignment — study pypto-memory-passes.md §3.1, column "SoC alignment field":
// Vec (UB) 128, Mat (L1) 128, Left (L0A) 64, Right (L0B) 64, Acc (L0C) 128, Bias 64 bytes.
// Upstream's allocator ignores the table and aligns to 32 (study §3.2); accelmem's issue 4 asks the
// backend policy to honour it. Every value is a multiple of 32, so plans stay 32-byte aligned.
#ifndef ACCELMEM_BACKENDS_ASCEND910B_ASCEND910B_POLICY_H_
#define ACCELMEM_BACKENDS_ASCEND910B_ASCEND910B_POLICY_H_

#include "policy/aligned_memory_allocator_policy.h"
#include "policy/memory_allocator_policy.h"

namespace accelmem {
namespace backends {

// Alignment per space in bytes (DDR: none, it is never planned by this policy).
policy::AlignmentTable Ascend910bAlignmentTable();

class Ascend910bMemoryAllocatorPolicy final : public policy::AlignedMemoryAllocatorPolicy {
 public:
  Ascend910bMemoryAllocatorPolicy() : AlignedMemoryAllocatorPolicy(Ascend910bAlignmentTable()) {}
};

}  // namespace backends
}  // namespace accelmem

#endif  // ACCELMEM_BACKENDS_ASCEND910B_ASCEND910B_POLICY_H_
