#include "passes/memory_reuse.h"

#include <memory>

#include "passes/internal/memory_reuse_steps.h"

namespace accelmem {
namespace passes {

absl::StatusOr<FunctionResult> MemoryReusePass::RunOnFunction(
    const ir::FunctionPtr& function) const {
  return internal::Reuse(function, /*share=*/true);
}

PassPtr CreateMemoryReusePass() { return std::make_unique<MemoryReusePass>(); }

}  // namespace passes
}  // namespace accelmem
