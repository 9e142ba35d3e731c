#include "passes/pass_testing.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/memory_pipeline.h"
#include "passes/pass_manager.h"

namespace accelmem {
namespace passes {
namespace testing {

absl::StatusOr<ProgramResult> RunOnText(absl::string_view text, absl::string_view passes,
                                        const MemoryPipelineOptions& options) {
  absl::StatusOr<ir::ProgramPtr> program = ir::ParseProgram(text, "<test>");
  if (!program.ok()) return program.status();
  PassManagerOptions opts;
  opts.verifier = [](const ir::Program& p) { return VerifyWithActiveBackend(p, "<test>"); };
  PassManager pm(opts);
  if (absl::Status s = AddPasses(passes, &pm, options); !s.ok()) return s;
  return pm.Run(*program);
}

absl::StatusOr<std::string> RunToText(absl::string_view text, absl::string_view passes) {
  absl::StatusOr<ProgramResult> r = RunOnText(text, passes);
  if (!r.ok()) return r.status();
  return ir::PrintProgram(*r->program);
}

std::string Canonical(absl::string_view text) {
  absl::StatusOr<ir::ProgramPtr> program = ir::ParseProgram(text, "<expected>");
  if (!program.ok()) return absl::StrCat("<does not parse: ", program.status().message(), ">");
  return ir::PrintProgram(**program);
}

ir::ProgramPtr ParseOrDie(absl::string_view text) {
  absl::StatusOr<ir::ProgramPtr> program = ir::ParseProgram(text, "<test>");
  if (!program.ok()) {
    std::fprintf(stderr, "%s\n", std::string(program.status().message()).c_str());
    std::abort();
  }
  return *program;
}

}  // namespace testing
}  // namespace passes
}  // namespace accelmem
