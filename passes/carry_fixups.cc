#include "passes/carry_fixups.h"

#include "passes/internal/memory_reuse_steps.h"

namespace accelmem {
namespace passes {

FunctionResult ApplyCarryFixups(const ir::FunctionPtr& function) {
  return internal::Reuse(function, /*share=*/false);
}

}  // namespace passes
}  // namespace accelmem
