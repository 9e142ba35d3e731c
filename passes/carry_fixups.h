// carry-fixups: memory-reuse's first step alone, for allocate-memory-addr's planner strategies.
#ifndef ACCELMEM_PASSES_CARRY_FIXUPS_H_
#define ACCELMEM_PASSES_CARRY_FIXUPS_H_

#include "backends/backend.h"
#include "ir/function.h"
#include "passes/pass.h"

namespace accelmem {
namespace passes {

// Memory-reuse's step 1 alone (carry splits, yield merges and moves), without step 2's sharing, and
// step 3 for the roots step 1 merged: afterwards no root holds two values that conflict (a carried
// value and a value still live, a yielded value and the carried value it replaces), so placing
// every root by the hull of its values' lifetimes is safe. allocate-memory-addr's planner
// strategies run it on unplanned functions, which makes memory-reuse optional in their pipeline.
// Same skips as the pass (Orchestration, planned, no MemRefs: unchanged).
// Where `backend` separates storage layouts, roots of two layout classes are never merged (the
// yielded value is moved instead).
FunctionResult ApplyCarryFixups(const ir::FunctionPtr& function,
                                const backends::Backend* backend = nullptr);

}  // namespace passes
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_CARRY_FIXUPS_H_
