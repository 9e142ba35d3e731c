// The constrained placement strategy against the greedy one on generated programs: wherever greedy
// fits, constrained fits, and in every function and space its plan pays no more cross-pipe reuse
// cost than greedy's plan of the same program (both measured by allocate-memory-addr's stats
// over the same problem). The simulator-checked safety of both plans is the property test's job
// (//passes/testing:memory_pipeline_property_test).
#include <cstdint>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "backends/backend.h"
#include "gtest/gtest.h"
#include "passes/allocate_memory_addr.h"
#include "passes/memory_pipeline.h"
#include "passes/pass_testing.h"
#include "passes/testing/program_generator.h"

namespace accelmem {
namespace passes {
namespace {

struct PlanRun {
  bool ok = false;
  std::map<std::string, uint64_t> reuse;  // "function/space" -> reuse cost
  std::map<std::string, std::string> status;
};

PlanRun Plan(const std::string& text, const std::string& spec, PlacementStrategy strategy) {
  MemoryPipelineOptions o;
  o.allocate.strategy = strategy;
  o.allocate.budget = absl::Milliseconds(10);
  PlanRun run;
  o.allocate.on_stats = [&run](const SpacePlanStats& st) {
    const std::string key = absl::StrCat(st.function, "/", ir::MemorySpaceName(st.space));
    run.reuse[key] = st.reuse_cost;
    run.status[key] = st.status;
  };
  run.ok = testing::RunOnText(text, spec, o).ok();
  return run;
}

TEST(ConstrainedVsGreedyTest, FitsWhereGreedyFitsAndNeverPaysMore) {
  passes_testing::GeneratorOptions gen;
  gen.over_capacity_percent = 3;
  int compared = 0, cheaper = 0, optimal = 0, spaces = 0;
  for (const char* backend : {"none", "ascend910b", "ascend950"}) {
    ASSERT_TRUE(backends::BackendConfig::SetByName(backend).ok());
    for (const char* spec :
         {"init-memref,memory-reuse,allocate-memory-addr", "init-memref,allocate-memory-addr"}) {
      for (uint64_t seed = 1; seed <= 60; ++seed) {
        const std::string text = passes_testing::GenerateProgram(seed, gen).text;
        const PlanRun greedy = Plan(text, spec, PlacementStrategy::kGreedy);
        const PlanRun constrained = Plan(text, spec, PlacementStrategy::kConstrained);
        if (!greedy.ok) continue;
        ASSERT_TRUE(constrained.ok) << backend << " " << spec << " seed " << seed;
        ++compared;
        for (const auto& [key, cost] : constrained.reuse) {
          ++spaces;
          optimal += constrained.status.at(key) == "optimal";
          auto g = greedy.reuse.find(key);
          ASSERT_NE(g, greedy.reuse.end()) << key;
          EXPECT_LE(cost, g->second) << backend << " " << spec << " seed " << seed << " " << key;
          cheaper += cost < g->second;
        }
      }
    }
  }
  backends::BackendConfig::Reset();
  EXPECT_GE(compared, 300);
  // Penalties exist in generated programs, and the constrained plans avoid some that greedy pays.
  EXPECT_GT(cheaper, 0);
  std::printf("%d programs compared, %d spaces, %d cheaper than greedy, %d proven optimal\n",
              compared, spaces, cheaper, optimal);
}

}  // namespace
}  // namespace passes
}  // namespace accelmem
