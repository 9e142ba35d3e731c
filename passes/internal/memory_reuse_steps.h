// The steps of memory-reuse (passes/memory_reuse.h says what they do), shared by the pass and by
// the carry fix-ups that allocate-memory-addr's planner strategies run (passes/carry_fixups.h).
#ifndef ACCELMEM_PASSES_INTERNAL_MEMORY_REUSE_STEPS_H_
#define ACCELMEM_PASSES_INTERNAL_MEMORY_REUSE_STEPS_H_

#include "backends/backend.h"
#include "ir/function.h"
#include "passes/pass.h"

namespace accelmem {
namespace passes {
namespace internal {

// Steps 1 and 3, and step 2 (sharing) when `share`, on an unplanned, non-Orchestration function
// with MemRefs; any other function comes back unchanged. Where `backend` (may be null) separates
// storage layouts in a space, no merge or sharing puts roots of different layout classes
// (backends::SeparatedLayout) into one.
FunctionResult Reuse(const ir::FunctionPtr& function, bool share, const backends::Backend* backend);

}  // namespace internal
}  // namespace passes
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_INTERNAL_MEMORY_REUSE_STEPS_H_
