// libFuzzer target for the parser: any input must either fail with a `fuzz.tile:L:C: error:`
// diagnostic or parse into a program whose printed text parses back to a structurally equal
// program and prints to the same bytes (the printer's canonical form). The verifier must not crash
// either.
//
// `bazel run --config=fuzz //ir:parser_fuzzer` fuzzes it (docs/fuzzing.md); the same entry point
// runs under gcc in //ir:parser_fuzzer_regression_test.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "ir/verifier.h"

namespace {

[[noreturn]] void Die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "parser_fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accelmem::ir;  // NOLINT
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto program = ParseProgram(text, "fuzz.tile");
  if (!program.ok()) {
    if (!absl::StartsWith(program.status().message(), "fuzz.tile:")) {
      Die("diagnostic without location", std::string(program.status().message()));
    }
    return 0;
  }
  (void)VerifyProgram(**program, {"fuzz.tile"});
  const std::string printed = PrintProgram(**program);
  auto again = ParseProgram(printed, "printed.tile");
  if (!again.ok())
    Die("printed text does not parse", std::string(again.status().message()) + "\n" + printed);
  const std::string diff = FirstDifference(**program, **again);
  if (!diff.empty()) Die("reparse is not structurally equal", diff + "\n" + printed);
  if (StructuralHash(**program) != StructuralHash(**again)) Die("hash differs", printed);
  if (PrintProgram(**again) != printed) Die("print is not a fixed point", printed);
  // With comments kept (tile_fmt): the formatted text parses and formats to itself.
  Comments comments;
  ParseOptions with_comments;
  with_comments.comments = &comments;
  auto commented = ParseProgram(text, "fuzz.tile", with_comments);
  if (!commented.ok())
    Die("parse fails when collecting comments", std::string(commented.status().message()));
  const std::string formatted = PrintProgram(**commented, &comments);
  Comments comments2;
  ParseOptions with_comments2;
  with_comments2.comments = &comments2;
  auto reformatted = ParseProgram(formatted, "formatted.tile", with_comments2);
  if (!reformatted.ok())
    Die("formatted text does not parse",
        std::string(reformatted.status().message()) + "\n" + formatted);
  if (PrintProgram(**reformatted, &comments2) != formatted)
    Die("formatting is not a fixed point", formatted);
  if (!StructuralEqual(**commented, **reformatted))
    Die("formatting changed the program", formatted);
  return 0;
}
