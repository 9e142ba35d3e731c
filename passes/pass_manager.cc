#include "passes/pass_manager.h"

#include "absl/strings/str_cat.h"
#include "ir/verifier.h"

namespace accelmem {
namespace passes {

absl::Status DefaultVerifier(const ir::Program& program) { return ir::VerifyProgram(program); }

std::vector<std::string> PassManager::PassNames() const {
  std::vector<std::string> names;
  for (const PassPtr& p : passes_) names.push_back(p->Name());
  return names;
}

absl::StatusOr<ProgramResult> PassManager::Run(const ir::ProgramPtr& program) const {
  const bool verify = options_.verify && options_.verifier != nullptr;
  if (verify) {
    absl::Status s = options_.verifier(*program);
    if (!s.ok()) return s;
  }
  ProgramResult result{program, false};
  for (const PassPtr& pass : passes_) {
    const absl::Time begin = absl::Now();
    absl::StatusOr<ProgramResult> r = pass->Run(result.program);
    if (options_.on_pass_time) options_.on_pass_time(pass->Name(), absl::Now() - begin);
    if (!r.ok()) return r.status();
    if (r->changed) {
      result.program = r->program;
      result.changed = true;
      if (verify) {
        absl::Status s = options_.verifier(*result.program);
        if (!s.ok()) {
          return absl::Status(s.code(), absl::StrCat("IR verification failed after pass '",
                                                     pass->Name(), "': ", s.message()));
        }
      }
    }
    if (options_.after_pass) options_.after_pass(pass->Name(), *result.program);
  }
  return result;
}

}  // namespace passes
}  // namespace accelmem
