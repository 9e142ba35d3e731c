// libFuzzer target for the schema-v1 problem reader (policy/dsa_problem.h) and, on what it reads,
// the constrained planner (policy/constrained_planner.h) and the independent validator
// (policy/dsa_validator.h), as `place PROBLEM.json` uses them. Malformed JSON or an invalid problem
// must give an error; a crash, hang, leak or sanitizer report is a finding, and so is a placement
// the validator rejects, a lower bound above the cost found, or a canonical text that does not
// read back to itself.
//
// Input: a problem document. Problems of more than kMaxBuffers buffers are only parsed, so that
// each input runs quickly; the planner gets a 5 ms budget.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "policy/constrained_planner.h"
#include "policy/dsa_problem.h"
#include "policy/dsa_validator.h"

namespace {

constexpr size_t kMaxBuffers = 64;

[[noreturn]] void Die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "dsa_json_fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accelmem::policy;
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<DsaProblemDocument> document = ParseDsaProblemJson(text, "fuzz.json");
  if (!document.ok()) {
    if (document.status().message().empty()) Die("an error without a message", text);
    return 0;
  }
  // The canonical text reads back to the same canonical text.
  const std::string canonical = WriteDsaProblemJson(*document);
  absl::StatusOr<DsaProblemDocument> again = ParseDsaProblemJson(canonical, "canonical.json");
  if (!again.ok() || WriteDsaProblemJson(*again) != canonical) {
    Die("the canonical text does not round-trip", canonical);
  }
  if (document->problem.buffers.size() > kMaxBuffers) return 0;
  ConstrainedOptions options;
  options.budget = absl::Milliseconds(5);
  absl::StatusOr<ConstrainedResult> result = SolveConstrained(document->problem, options);
  if (!result.ok()) {
    // Invalid or unsupported problem: an error, as it must be. An internal error is the
    // library's own validator rejecting a placement the planner found: a planner bug.
    if (result.status().code() == absl::StatusCode::kInternal) {
      Die("the planner's placement fails the validator", std::string(result.status().message()));
    }
    return 0;
  }
  if (result->reuse_lower_bound > result->reuse_cost && !result->placements.empty()) {
    Die("a reuse lower bound above the cost found", canonical);
  }
  if (result->placements.empty()) return 0;
  const DsaSolutionCheck check = CheckDsaSolution(document->problem, result->placements);
  if (!check.ok()) Die("the validator rejects the planner's placement", check.errors.front());
  if (check.reuse_cost != result->reuse_cost || check.total_peak != result->total_peak) {
    Die("the planner's reuse cost or peak differs from the validator's", canonical);
  }
  return 0;
}
