#include "passes/memory_reuse.h"

#include <memory>
#include <utility>

#include "passes/internal/memory_reuse_steps.h"

namespace accelmem {
namespace passes {

absl::StatusOr<FunctionResult> MemoryReusePass::RunOnFunction(
    const ir::FunctionPtr& function) const {
  return internal::Reuse(function, /*share=*/true, options_.backend.get());
}

PassPtr CreateMemoryReusePass(MemoryReuseOptions options) {
  return std::make_unique<MemoryReusePass>(std::move(options));
}

}  // namespace passes
}  // namespace accelmem
