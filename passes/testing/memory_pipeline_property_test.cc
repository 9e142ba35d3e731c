// Generated programs through every configuration of the memory pipeline (backends none,
// ascend910b, ascend950; with and without memory-reuse; every placement strategy): the pipeline
// accepts them, the plan_simulator oracle finds nothing in the plans, printing is a fixed point
// and a planned program comes back unchanged from a second run. A failure prints its seed, the
// configuration and the program shrunk to a small passes/testdata case.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "passes/testing/pipeline_check.h"
#include "passes/testing/program_generator.h"

namespace accelmem {
namespace passes_testing {
namespace {

constexpr int kProgramsPerConfig = 150;
constexpr int kShrinkCalls = 200;

// Failure signatures already shrunk and printed by this process (shrinking is the slow part, and
// one reproducer per signature is enough; the list of seeds names every failing program).
std::set<std::string>& Shrunk() {
  static std::set<std::string>* s = new std::set<std::string>();
  return *s;
}

class MemoryPipelinePropertyTest : public ::testing::TestWithParam<int> {};

// Every generated program passes every check under this configuration.
TEST_P(MemoryPipelinePropertyTest, GeneratedProgramsPlanSafely) {
  const PipelineConfig config = AllPipelineConfigs()[GetParam()];
  GeneratorOptions gen;
  gen.over_capacity_percent = 3;
  std::vector<uint64_t> failing;
  int capacity_errors = 0;
  for (int i = 0; i < kProgramsPerConfig; ++i) {
    const uint64_t seed = 1000u * static_cast<uint64_t>(GetParam()) + static_cast<uint64_t>(i);
    const GeneratedProgram p = GenerateProgram(seed, gen);
    const CheckResult r = CheckProgram(p.text, config, p.may_exceed_capacity);
    if (r.capacity_error) ++capacity_errors;
    if (r.failures.empty()) continue;
    failing.push_back(seed);
    for (const CheckFailure& f : r.failures) {
      const std::string sig = f.Signature();
      if (!Shrunk().insert(sig).second) continue;
      const std::string shrunk =
          ShrinkFailure(p.text, config, sig, p.may_exceed_capacity, kShrinkCalls);
      ADD_FAILURE() << FailureReport(
          seed, config, CheckProgram(shrunk, config, p.may_exceed_capacity).failures, shrunk);
    }
  }
  EXPECT_TRUE(failing.empty()) << config.Name() << ": " << failing.size() << " of "
                               << kProgramsPerConfig << " programs fail, seeds "
                               << absl::StrJoin(failing, ", ");
  // Over-capacity programs are rare; most programs must plan.
  EXPECT_LE(capacity_errors, kProgramsPerConfig / 10);
}

INSTANTIATE_TEST_SUITE_P(AllConfigs, MemoryPipelinePropertyTest,
                         ::testing::Range(0, static_cast<int>(AllPipelineConfigs().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           std::string name = AllPipelineConfigs()[info.param].Name();
                           for (char& c : name) {
                             if (c == ':' || c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace passes_testing
}  // namespace accelmem
