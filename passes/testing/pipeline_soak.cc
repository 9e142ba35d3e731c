// pipeline_soak: the property checks of memory_pipeline_property_test over many more programs.
//
//   bazel run //passes/testing:pipeline_soak -- --programs=100000 --seed=1
//   bazel run //passes/testing:pipeline_soak -- --seconds=600 --configs=ascend910b
//   bazel run //passes/testing:pipeline_soak -- --check="$PWD/case.tile"   # one file, all configs
//
// For each program (seeds seed, seed+1, ...) and each pipeline configuration whose name contains
// --configs, it runs pipeline_check's CheckProgram. It prints, per configuration, how many
// programs passed, failed and ended with a clean capacity error, then per failure signature how
// often it happened, and for the first --show failures of each signature its seed, the config
// and the shrunk reproducer. Per program it also compares what the configurations that planned it
// compute (the simulator's output traces): a difference is a "values-differ" failure of the
// program. Exit status 1 if anything failed.
#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "passes/testing/pipeline_check.h"
#include "passes/testing/program_generator.h"

ABSL_FLAG(int64_t, programs, 1000, "number of generated programs");
ABSL_FLAG(uint64_t, seed, 1, "first seed");
ABSL_FLAG(double, seconds, 0, "stop after this many seconds (0: no limit)");
ABSL_FLAG(std::string, configs, "", "only configurations whose name contains this");
ABSL_FLAG(int, show, 2, "shrunk reproducers printed per failure signature");
ABSL_FLAG(int, over_capacity_percent, 3, "programs with an over-capacity tile or reserve");
ABSL_FLAG(bool, shrink, true, "shrink the reproducers");
ABSL_FLAG(bool, with_unsafe_sequential, false,
          "also run init-memref,allocate-memory-addr with the sequential placement");
ABSL_FLAG(std::string, check, "",
          "check this tile file (unplanned input) under the configurations instead of generating");
ABSL_FLAG(bool, input_trace, false,
          "also compare each program's planned values with its unplanned program's (slower)");
ABSL_FLAG(bool, dump, false, "print each generated program (to look at a seed)");
ABSL_FLAG(int64_t, report_every, 500, "print the counts every N programs too (0: only at the end)");
ABSL_FLAG(bool, slices_of_views, true, "generate slices and reshapes of views");
ABSL_FLAG(bool, acc_slices, true, "generate slices of Acc tiles");

namespace {

using accelmem::passes_testing::CheckFailure;
using accelmem::passes_testing::CheckResult;
using accelmem::passes_testing::PipelineConfig;

struct Counts {
  int64_t passed = 0, failed = 0, capacity = 0;
};

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  namespace pt = accelmem::passes_testing;
  const auto start = std::chrono::steady_clock::now();
  const double budget = absl::GetFlag(FLAGS_seconds);
  std::vector<PipelineConfig> configs;
  for (const PipelineConfig& c :
       pt::AllPipelineConfigs(absl::GetFlag(FLAGS_with_unsafe_sequential))) {
    if (absl::StrContains(c.Name(), absl::GetFlag(FLAGS_configs))) configs.push_back(c);
  }
  if (!absl::GetFlag(FLAGS_check).empty()) {
    std::ifstream in(absl::GetFlag(FLAGS_check));
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bool failed = false;
    for (const PipelineConfig& c : configs) {
      const CheckResult r = pt::CheckProgram(text, c);
      std::cout << c.Name() << ": " << (r.failures.empty() ? "ok" : "FAIL") << "\n";
      for (const CheckFailure& f : r.failures)
        std::cout << "  " << f.kind << ": " << f.detail << "\n";
      failed = failed || !r.failures.empty();
    }
    return failed ? 1 : 0;
  }
  pt::GeneratorOptions gen;
  gen.over_capacity_percent = absl::GetFlag(FLAGS_over_capacity_percent);
  gen.slices_of_views = absl::GetFlag(FLAGS_slices_of_views);
  gen.acc_slices = absl::GetFlag(FLAGS_acc_slices);
  std::map<std::string, Counts> per_config;
  std::map<std::string, int64_t> per_signature;
  std::map<std::string, int> shown;
  int64_t programs = 0;
  int64_t compared = 0, disagreements = 0;  // programs with >= 2 planned configs; differing ones
  const uint64_t first = absl::GetFlag(FLAGS_seed);
  auto Summary = [&](int64_t programs) {
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "\n==== " << programs << " programs (seeds " << first << ".."
              << first + static_cast<uint64_t>(programs) - 1 << "), " << configs.size()
              << " configurations, " << secs << " s\n";
    std::cout << "per configuration: passed / failed / clean capacity error\n";
    bool any = false;
    for (const auto& kv : per_config) {
      std::cout << "  " << kv.first << ": " << kv.second.passed << " / " << kv.second.failed
                << " / " << kv.second.capacity << "\n";
      any = any || kv.second.failed > 0;
    }
    std::cout << "values: " << compared << " programs compared across configurations, "
              << disagreements << " compute different values (values-differ)\n";
    any = any || disagreements > 0;
    std::cout << "per failure signature (program x configuration runs; (clean error): the "
                 "accepted error of an over-capacity program):\n";
    for (const auto& kv : per_signature) {
      std::cout << "  " << kv.second << "  " << kv.first << "\n";
    }
    std::cout << std::flush;
    return any;
  };
  for (int64_t i = 0; i < absl::GetFlag(FLAGS_programs); ++i) {
    if (budget > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > budget) {
      break;
    }
    const uint64_t seed = first + static_cast<uint64_t>(i);
    const pt::GeneratedProgram p = pt::GenerateProgram(seed, gen);
    const int64_t every = absl::GetFlag(FLAGS_report_every);
    if (every > 0 && programs > 0 && programs % every == 0) Summary(programs);
    ++programs;
    if (absl::GetFlag(FLAGS_dump)) {
      std::cout << "==== program " << seed
                << (p.may_exceed_capacity ? " (may exceed capacity)" : "") << "\n"
                << p.text;
    }
    const PipelineConfig* planned = nullptr;  // the first configuration that planned it
    pt::OutputTrace planned_trace;
    int planned_count = 0;
    bool differs = false;
    for (const PipelineConfig& c : configs) {
      CheckResult r = pt::CheckProgram(p.text, c, p.may_exceed_capacity, p.accepted_errors);
      Counts& n = per_config[c.Name()];
      if (r.failures.empty()) {
        ++(r.capacity_error ? n.capacity : n.passed);
        if (!r.capacity_error && ++planned_count == 1) {
          planned = &c;
          planned_trace = r.output_trace;
          if (absl::GetFlag(FLAGS_input_trace)) {
            const std::string d = pt::TraceDifference(pt::InputTrace(p.text), planned_trace);
            if (!d.empty()) {
              ++per_signature["values-differ-from-input"];
              ++disagreements;
              std::cout << "==== failure values-differ-from-input: seed " << seed << ", "
                        << c.Name() << ": " << d << "\n";
            }
          }
        } else if (!r.capacity_error && !differs) {
          if (planned_count == 2) ++compared;
          const std::string d = pt::TraceDifference(planned_trace, r.output_trace);
          if (!d.empty()) {
            differs = true;
            ++disagreements;
            ++per_signature["values-differ"];
            if (shown["values-differ"] < absl::GetFlag(FLAGS_show)) {
              ++shown["values-differ"];
              const std::string shrunk =
                  absl::GetFlag(FLAGS_shrink)
                      ? pt::ShrinkDisagreement(p.text, *planned, c, p.may_exceed_capacity, 4000,
                                               p.accepted_errors)
                      : p.text;
              const std::string again =
                  pt::ValuesDiffer(shrunk, *planned, c, p.may_exceed_capacity, p.accepted_errors);
              std::cout << "==== failure values-differ\n"
                        << pt::DisagreementReport(seed, *planned, c, again.empty() ? d : again,
                                                  shrunk)
                        << std::flush;
            }
          }
        }
        if (r.capacity_error)
          ++per_signature["(clean error) " + CheckFailure{"", r.error}.Signature()];
        continue;
      }
      ++n.failed;
      std::map<std::string, bool> here;
      for (const CheckFailure& f : r.failures) here[f.Signature()] = true;
      for (const auto& kv : here) {
        ++per_signature[kv.first];
        if (shown[kv.first] >= absl::GetFlag(FLAGS_show)) continue;
        ++shown[kv.first];
        const std::string shrunk =
            absl::GetFlag(FLAGS_shrink)
                ? pt::ShrinkFailure(p.text, c, kv.first, p.may_exceed_capacity, 4000,
                                    p.accepted_errors)
                : p.text;
        std::vector<CheckFailure> again =
            pt::CheckProgram(shrunk, c, p.may_exceed_capacity, p.accepted_errors).failures;
        std::cout << "==== failure " << kv.first << "\n"
                  << pt::FailureReport(seed, c, again, shrunk) << std::flush;
      }
    }
  }
  const bool any = Summary(programs);
  return any ? 1 : 0;
}
