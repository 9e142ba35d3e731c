// The SoC-table allocator policy of the Ascend 910B (A2/A3) SoC (backend "ascend910b-soc-aligned").
//
// Default filter (skip DDR) and order (by id), with the SoC's per-space alignment table instead
// of a flat 32 bytes: Vec (UB) 128, Mat (L1) 128, Left (L0A) 64, Right (L0B) 64, Acc (L0C) 128,
// Bias 64 bytes, as the SoC's memory descriptors give them (pypto's
// src/backend/common/soc.cpp, Create910BSoC). The upstream
// allocator does not apply this table and aligns every space to 32 bytes, and so does the
// default "ascend910b" backend; this policy is the stricter option. Every value is a multiple
// of 32.
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
