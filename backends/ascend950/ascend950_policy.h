// The SoC-table allocator policy of the Ascend 950 (A5) SoC (backend "ascend950-soc-aligned").
//
// Default filter (skip DDR) and order (by id), with the SoC's per-space alignment table instead
// of a flat 32 bytes: Vec (UB) 128, Mat (L1) 128, Left (L0A) 64, Right (L0B) 64, Acc (L0C) 128,
// Bias 64 bytes, as the SoC's memory descriptors give them (pypto's src/backend/common/soc.cpp,
// Create950SoC). The upstream allocator does not apply this table and aligns every space to 32
// bytes, and so does the default "ascend950" backend; this policy is the stricter option.
// Every value is a multiple of 32.
#ifndef ACCELMEM_BACKENDS_ASCEND950_ASCEND950_POLICY_H_
#define ACCELMEM_BACKENDS_ASCEND950_ASCEND950_POLICY_H_

#include "policy/aligned_memory_allocator_policy.h"
#include "policy/memory_allocator_policy.h"

namespace accelmem {
namespace backends {

// Alignment per space in bytes (DDR: none, it is never planned by this policy).
policy::AlignmentTable Ascend950AlignmentTable();

class Ascend950MemoryAllocatorPolicy final : public policy::AlignedMemoryAllocatorPolicy {
 public:
  Ascend950MemoryAllocatorPolicy() : AlignedMemoryAllocatorPolicy(Ascend950AlignmentTable()) {}
};

}  // namespace backends
}  // namespace accelmem

#endif  // ACCELMEM_BACKENDS_ASCEND950_ASCEND950_POLICY_H_
