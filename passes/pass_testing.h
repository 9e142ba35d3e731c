// Test helpers for the memory passes: run a pipeline on program text, canonicalise text.
#ifndef ACCELMEM_PASSES_PASS_TESTING_H_
#define ACCELMEM_PASSES_PASS_TESTING_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/program.h"
#include "passes/memory_pipeline.h"
#include "passes/pass.h"

namespace accelmem {
namespace passes {
namespace testing {

// Parses and verifies `text`, runs the comma-separated passes with the IR verifier between
// them (the configured backend's sizes), returns the result.
absl::StatusOr<ProgramResult> RunOnText(absl::string_view text, absl::string_view passes,
                                        const MemoryPipelineOptions& options = {});
// Like RunOnText, but returns the printed program.
absl::StatusOr<std::string> RunToText(absl::string_view text, absl::string_view passes);
// Parse + print: the canonical text of a program (an error message if it does not parse).
std::string Canonical(absl::string_view text);
ir::ProgramPtr ParseOrDie(absl::string_view text);
// A double-buffered matmul (passes/testdata/pipeline_double_buffered_matmul_*.tile) on n x n
// tiles: a prologue matmul, then a `pipeline=2` loop of Mat loads, moves into Left and Right and
// matmul_acc into the carried Acc tile; a is [n, 4n], b [4n, n].
std::string DoubleBufferedMatmul(int n);

}  // namespace testing
}  // namespace passes
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_PASS_TESTING_H_
