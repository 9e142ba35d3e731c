// Pass: a function-level transformation of the tile IR with a stable kebab-case name.
//
// A pass runs on every function of a program independently (RunOnFunction) and reports whether
// it changed anything. User errors (a dynamic shape, overlapping reserve buffers, a space over
// its capacity) come back as absl::Status whose message starts with "in function 'F': "; a pass
// never aborts on bad input. Passes are stateless and const, so one object can run on many
// programs (on several threads if the configured backend is not changed meanwhile).
#ifndef ACCELMEM_PASSES_PASS_H_
#define ACCELMEM_PASSES_PASS_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/function.h"
#include "ir/program.h"

namespace accelmem {
namespace passes {

struct FunctionResult {
  ir::FunctionPtr function;  // the input object itself when nothing changed
  bool changed = false;
};

struct ProgramResult {
  ir::ProgramPtr program;  // the input object itself when nothing changed
  bool changed = false;
};

class Pass {
 public:
  virtual ~Pass() = default;
  // Stable kebab-case name used by pipelines and tools, e.g. "init-memref".
  virtual std::string Name() const = 0;
  virtual absl::StatusOr<FunctionResult> RunOnFunction(const ir::FunctionPtr& function) const = 0;
  // Runs RunOnFunction on every function, in program order; stops at the first error.
  absl::StatusOr<ProgramResult> Run(const ir::ProgramPtr& program) const;
};

using PassPtr = std::unique_ptr<Pass>;

// "in function 'F': <message>" as InvalidArgument: the form of every pass error.
absl::Status FunctionError(absl::string_view function, absl::string_view message);

}  // namespace passes
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_PASS_H_
