#include "passes/carry_fixups.h"

#include "passes/internal/memory_reuse_steps.h"

namespace accelmem {
namespace passes {

FunctionResult ApplyCarryFixups(const ir::FunctionPtr& function, const backends::Backend* backend) {
  return internal::Reuse(function, /*share=*/false, backend);
}

}  // namespace passes
}  // namespace accelmem
