// Generated programs, each through every configuration of the memory pipeline (backends none,
// ascend910b, ascend950; with and without memory-reuse; every placement strategy): the pipeline
// accepts them, the plan_simulator oracle finds nothing in the plans, printing is a fixed point
// and a planned program comes back unchanged from a second run; every configuration that plans a
// program computes the same values (the simulator's output traces are equal). The generator states
// ND and NZ layouts on some Vec tiles; on ascend950, in every configuration, no ND tile and NZ
// tile share a byte whatever their lifetimes (pipeline_check's layout-share over the whole plan,
// the simulator's at every write). Some loops are pipelined (`pipeline=2` or `3`): their tiles get
// slotted MemRefs, and the simulator rotates the slots and checks that no value is written over
// one of an iteration still in flight. Some top-level loads sit in declared allocations
// (`declared=1`): no other root may overlap one (the simulator's declared-share) and no tile the
// program computes afresh may be put in one (pipeline_check's declared-intruder). A failure prints
// its seed, the configuration(s) and the program shrunk to a small passes/testdata case.
#include <cstdint>
#include <map>
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

constexpr int kPrograms = 150;
constexpr int kBlocks = 10;  // test cases (shardable), each kPrograms / kBlocks programs
constexpr int kShrinkCalls = 200;

// Failure signatures already shrunk and printed by this process (shrinking is the slow part, and
// one reproducer per signature is enough; the list of seeds names every failing program).
std::set<std::string>& Shrunk() {
  static std::set<std::string>* s = new std::set<std::string>();
  return *s;
}

class MemoryPipelinePropertyTest : public ::testing::TestWithParam<int> {};

// Every generated program of the block passes every check under every configuration, and the
// configurations agree where they must: a planner strategy (greedy, search, constrained) fits
// wherever the sequential placement fits on the same backend, the constrained planner fits
// wherever the greedy one does, and all that plan compute the same values.
TEST_P(MemoryPipelinePropertyTest, GeneratedProgramsPlanSafelyEverywhere) {
  const std::vector<PipelineConfig> configs = AllPipelineConfigs();
  GeneratorOptions gen;
  gen.over_capacity_percent = 3;
  std::vector<std::string> failing;
  int capacity_errors = 0;
  for (int i = GetParam() * (kPrograms / kBlocks); i < (GetParam() + 1) * (kPrograms / kBlocks);
       ++i) {
    const uint64_t seed = 1 + static_cast<uint64_t>(i);
    const GeneratedProgram p = GenerateProgram(seed, gen);
    std::map<std::string, bool> fits;       // by configuration name
    const PipelineConfig* first = nullptr;  // the first configuration that planned, and its trace
    OutputTrace first_trace;
    bool differs = false;
    for (const PipelineConfig& config : configs) {
      const CheckResult r = CheckProgram(p.text, config, p.may_exceed_capacity, p.accepted_errors);
      if (r.capacity_error) ++capacity_errors;
      fits[config.Name()] = r.failures.empty() && !r.capacity_error;
      if (fits[config.Name()] && first == nullptr) {
        first = &config;
        first_trace = r.output_trace;
      } else if (fits[config.Name()] && !differs) {
        const std::string d = TraceDifference(first_trace, r.output_trace);
        if (!d.empty()) {
          differs = true;  // one report per program
          failing.push_back(absl::StrCat(seed, " ", first->Name(), " vs ", config.Name()));
          const std::string shrunk =
              Shrunk().insert("values-differ").second
                  ? ShrinkDisagreement(p.text, *first, config, p.may_exceed_capacity, kShrinkCalls,
                                       p.accepted_errors)
                  : absl::StrCat("(one is shrunk above; reproduce with pipeline_soak --seed=", seed,
                                 " --programs=1)\n");
          ADD_FAILURE() << DisagreementReport(seed, *first, config, d, shrunk);
        }
      }
      if (r.failures.empty()) continue;
      failing.push_back(absl::StrCat(seed, " ", config.Name()));
      for (const CheckFailure& f : r.failures) {
        const std::string sig = f.Signature();
        if (!Shrunk().insert(sig).second) continue;
        const std::string shrunk = ShrinkFailure(p.text, config, sig, p.may_exceed_capacity,
                                                 kShrinkCalls, p.accepted_errors);
        ADD_FAILURE() << FailureReport(
            seed, config,
            CheckProgram(shrunk, config, p.may_exceed_capacity, p.accepted_errors).failures,
            shrunk);
      }
    }
    for (const PipelineConfig& c : configs) {
      if (c.strategy == passes::PlacementStrategy::kSequential) continue;
      PipelineConfig base = c;
      base.strategy = passes::PlacementStrategy::kSequential;
      base.reuse = true;
      auto seq = fits.find(base.Name());
      if (seq != fits.end() && seq->second && c.reuse) {
        EXPECT_TRUE(fits[c.Name()])
            << "seed " << seed << ": " << base.Name() << " fits, " << c.Name() << " does not";
      }
      if (c.strategy == passes::PlacementStrategy::kConstrained) {
        PipelineConfig greedy = c;
        greedy.strategy = passes::PlacementStrategy::kGreedy;
        EXPECT_TRUE(!fits[greedy.Name()] || fits[c.Name()])
            << "seed " << seed << ": " << greedy.Name() << " fits, " << c.Name() << " does not";
      }
    }
  }
  EXPECT_TRUE(failing.empty()) << failing.size() << " program x configuration runs fail: "
                               << absl::StrJoin(failing, ", ");
  // Over-capacity programs are rare; most programs must plan.
  EXPECT_LE(capacity_errors, static_cast<int>(configs.size()) * kPrograms / kBlocks / 5);
}

INSTANTIATE_TEST_SUITE_P(ProgramBlocks, MemoryPipelinePropertyTest, ::testing::Range(0, kBlocks));

}  // namespace
}  // namespace passes_testing
}  // namespace accelmem
