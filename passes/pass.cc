#include "passes/pass.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace accelmem {
namespace passes {

absl::StatusOr<ProgramResult> Pass::Run(const ir::ProgramPtr& program) const {
  ProgramResult result{program, false};
  for (size_t i = 0; i < program->functions.size(); ++i) {
    absl::StatusOr<FunctionResult> r = RunOnFunction(program->functions[i]);
    if (!r.ok()) return r.status();
    if (r->changed) {
      result.program = result.program->WithFunction(i, std::move(r->function));
      result.changed = true;
    }
  }
  return result;
}

absl::Status FunctionError(absl::string_view function, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("in function '", function, "': ", message));
}

}  // namespace passes
}  // namespace accelmem
