// Runs one tile program through one configuration of the memory pipeline and checks the result
// with properties that need no expected output:
// - the pipeline accepts a valid program (no verifier error between passes, no pass error; a
//   program marked may_exceed_capacity may instead fail with a clean error);
// - the plan_simulator oracle finds nothing in the planned program, nor in its printed text
//   parsed again;
// - printing is a fixed point (print -> parse -> print gives the same text) and the printed plan
//   parses and verifies;
// - the planned program run through the same pipeline again comes back unchanged;
// - the re-parsed plan computes the same values (output trace) as the in-memory one.
// - on a backend that keeps storage layouts apart (ascend950: Vec, by a table of our own), no ND
//   tile and NZ tile share a byte, whatever their lifetimes ("layout-share"; the simulator's
//   layout-share finding sees the same at the writes of its paths).
// CheckResult::output_trace is what the planned program computes (plan_simulator's value
// fingerprints): it must be the same under every configuration (ValuesDiffer).
// Failures carry a signature (kind plus the error text without numbers and names) so that the
// shrinker keeps the same failure while it simplifies the program.
#ifndef ACCELMEM_PASSES_TESTING_PIPELINE_CHECK_H_
#define ACCELMEM_PASSES_TESTING_PIPELINE_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "passes/allocate_memory_addr.h"
#include "passes/testing/plan_simulator.h"

namespace accelmem {
namespace passes_testing {

struct PipelineConfig {
  std::string backend = "none";  // "none", "ascend910b", "ascend950"
  bool reuse = true;             // memory-reuse between init-memref and allocate-memory-addr
  passes::PlacementStrategy strategy = passes::PlacementStrategy::kSequential;

  // "init-memref,memory-reuse,allocate-memory-addr" or without memory-reuse.
  std::string Passes() const;
  // e.g. "ascend910b:reuse:greedy" / "none:no-reuse:constrained".
  std::string Name() const;
  // The directives of a passes/testdata case (`# passes:`, `# backend:`, `# planner:`).
  std::string TestdataHeader() const;
};

// Every backend x {with, without memory-reuse} x every placement strategy. The sequential
// strategy without memory-reuse is left out: the sequential placement does not apply the carry
// fix-ups (passes/README.md), so init-memref,allocate-memory-addr alone is not a safe pipeline;
// `with_unsafe_sequential` adds it (the soak's --with_unsafe_sequential, to measure it).
std::vector<PipelineConfig> AllPipelineConfigs(bool with_unsafe_sequential = false);

struct CheckFailure {
  std::string kind;    // "input-rejected", "pipeline-error", "unexpected-error",
                       // "verifier-after-pass",
                       // "sim:<finding kind>", "sim-reparsed:<finding kind>",
                       // "print-not-fixed-point", "reparse-error",
                       // "rerun-error", "rerun-changed", "trace-reparsed-differs",
                       // "layout-share"
  std::string detail;  // the message (finding, error, first differing line)
  // kind plus the detail with digits and quoted names removed.
  std::string Signature() const;
};

struct CheckResult {
  std::vector<CheckFailure> failures;
  bool capacity_error = false;  // a may_exceed_capacity program failed cleanly
  std::string error;            // that error's message
  std::string planned;          // the planned text, when the pipeline succeeded
  OutputTrace output_trace;     // what the planned program computes, when it succeeded
};

// With may_exceed_capacity, a pipeline error is accepted only when it contains one of
// `accepted_errors` (any error when that is empty); else it is an "unexpected-error" failure.
CheckResult CheckProgram(const std::string& text, const PipelineConfig& config,
                         bool may_exceed_capacity = false,
                         const std::vector<std::string>& accepted_errors = {});

// Shrinks `text` while CheckProgram still fails with `signature`.
// `max_calls` bounds the pipeline runs (see ShrinkOptions).
std::string ShrinkFailure(const std::string& text, const PipelineConfig& config,
                          const std::string& signature, bool may_exceed_capacity = false,
                          int max_calls = 4000,
                          const std::vector<std::string>& accepted_errors = {});

// A report to paste: seed, config, failures, then the shrunk program as a testdata case.
std::string FailureReport(uint64_t seed, const PipelineConfig& config,
                          const std::vector<CheckFailure>& failures, const std::string& shrunk);

// Where `a` and `b`, both passing every check on `text`, compute different values (their
// output traces differ); "" when they agree or either fails. The unplanned program means the
// same under every configuration, so a difference is a bug in a pass (or in the simulator).
std::string ValuesDiffer(const std::string& text, const PipelineConfig& a, const PipelineConfig& b,
                         bool may_exceed_capacity = false,
                         const std::vector<std::string>& accepted_errors = {});

// What the unplanned program `text` computes: the simulator's trace without a plan (its
// findings, all about the missing plan, are dropped). Every correct plan computes the same.
OutputTrace InputTrace(const std::string& text);

// Shrinks `text` while ValuesDiffer(a, b) still reports a difference.
std::string ShrinkDisagreement(const std::string& text, const PipelineConfig& a,
                               const PipelineConfig& b, bool may_exceed_capacity = false,
                               int max_calls = 4000,
                               const std::vector<std::string>& accepted_errors = {});

// A report to paste: seed, both configs, the difference, then the shrunk (unplanned) program.
std::string DisagreementReport(uint64_t seed, const PipelineConfig& a, const PipelineConfig& b,
                               const std::string& difference, const std::string& shrunk);

}  // namespace passes_testing
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_TESTING_PIPELINE_CHECK_H_
