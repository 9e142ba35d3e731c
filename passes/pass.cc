#include "passes/pass.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace accelmem {
namespace passes {

absl::StatusOr<ProgramResult> Pass::Run(const ir::ProgramPtr& program) const {
  // The new function list is built once (copied on the first change), so a pass over n
  // functions costs O(n) whatever number of them changes.
  std::vector<ir::FunctionPtr> functions;
  for (size_t i = 0; i < program->functions.size(); ++i) {
    absl::StatusOr<FunctionResult> r = RunOnFunction(program->functions[i]);
    if (!r.ok()) return r.status();
    if (!r->changed) continue;
    if (functions.empty()) functions = program->functions;
    functions[i] = std::move(r->function);
  }
  if (functions.empty()) return ProgramResult{program, false};
  return ProgramResult{std::make_shared<const ir::Program>(std::move(functions)), true};
}

absl::Status FunctionError(absl::string_view function, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("in function '", function, "': ", message));
}

}  // namespace passes
}  // namespace accelmem
