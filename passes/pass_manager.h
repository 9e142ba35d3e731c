// PassManager: runs passes in order over a program, verifying the IR between passes and
// optionally printing it after each pass (like mlir-opt's --print-after-all).
//
// The verifier (ir::VerifyProgram unless replaced) runs on the input and after every pass that
// changed the program; it is on by default, tests and tile_opt keep it on. A verifier failure after
// pass P is reported as "IR verification failed after pass 'P': <verifier message>", so a pass that
// produces broken IR is caught where it happens. Pass errors are returned unchanged ("in function
// 'F': ...").
#ifndef ACCELMEM_PASSES_PASS_MANAGER_H_
#define ACCELMEM_PASSES_PASS_MANAGER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "ir/program.h"
#include "passes/pass.h"

namespace accelmem {
namespace passes {

// ir::VerifyProgram(program) with default options.
absl::Status DefaultVerifier(const ir::Program& program);

struct PassManagerOptions {
  // Checks a program; OK when well formed. The default is ir::VerifyProgram with default
  // options (tools pass one that knows the input file and the backend's tile sizes, see
  // passes/memory_pipeline.h); null means no verification.
  std::function<absl::Status(const ir::Program&)> verifier = DefaultVerifier;
  bool verify = true;  // run `verifier` on the input and after each changing pass
  // Called after each pass with its name and the resulting program (print-after-all).
  std::function<void(absl::string_view pass_name, const ir::Program&)> after_pass;
  // Called after each pass with the time the pass itself took (verification not included).
  std::function<void(absl::string_view pass_name, absl::Duration elapsed)> on_pass_time;
};

class PassManager {
 public:
  explicit PassManager(PassManagerOptions options = {}) : options_(std::move(options)) {}

  void AddPass(PassPtr pass) { passes_.push_back(std::move(pass)); }
  const std::vector<PassPtr>& passes() const { return passes_; }
  std::vector<std::string> PassNames() const;
  PassManagerOptions& options() { return options_; }

  // Runs every pass in order. The result's `changed` is true if any pass changed the program.
  absl::StatusOr<ProgramResult> Run(const ir::ProgramPtr& program) const;

 private:
  PassManagerOptions options_;
  std::vector<PassPtr> passes_;
};

}  // namespace passes
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_PASS_MANAGER_H_
