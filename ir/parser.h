// The parser: tile-IR text (grammar in docs/tile_ir.md) -> IR.
//
// It resolves names as it goes: a use must follow its definition in an enclosing scope (loop
// and branch bodies are scopes; loop and `if` results are defined after them), every name is
// assigned once per function, ops must be registered with a matching arity and keywords, and a
// `memref=NAME` must name a `tile.alloc` of the same function (allocs may follow their uses in
// parameter types, as InitMemRef puts them at the top of the body). Types are not checked
// here; ParseAndVerifyProgram runs the verifier too.
//
// Errors are `file:line:col: error: message`, pointing at the offending token; the first error
// ends the parse. The parser never crashes or hangs on any input: nesting is bounded
// (ParseOptions::max_nesting) and every step consumes input.
#ifndef ACCELMEM_IR_PARSER_H_
#define ACCELMEM_IR_PARSER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/op_registry.h"
#include "ir/program.h"

namespace accelmem {
namespace ir {

struct ParseOptions {
  const OpRegistry* registry = nullptr;  // null: OpRegistry::Global()
  int max_nesting = 200;                 // blocks plus brackets
  Comments* comments = nullptr;          // if set, receives the text's comments
};

// InvalidArgument with the diagnostic as message on error.
absl::StatusOr<ProgramPtr> ParseProgram(absl::string_view text,
                                        absl::string_view filename = "<input>",
                                        const ParseOptions& options = {});

// ParseProgram, then VerifyProgram (ir/verifier.h) with the same file name and registry.
absl::StatusOr<ProgramPtr> ParseAndVerifyProgram(absl::string_view text,
                                                 absl::string_view filename = "<input>",
                                                 const ParseOptions& options = {});

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_PARSER_H_
