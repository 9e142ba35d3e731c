// The constrained placement strategy against the greedy one on generated programs: wherever greedy
// fits, constrained fits, and in every function and space its plan pays no more cross-pipe reuse
// cost than greedy's plan of the same program (both measured by allocate-memory-addr's stats
// over the same problem). The simulator-checked safety of both plans is the property test's job
// (//passes/testing:memory_pipeline_property_test).
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "backends/backend.h"
#include "gtest/gtest.h"
#include "passes/allocate_memory_addr.h"
#include "passes/memory_pipeline.h"
#include "passes/pass_testing.h"
#include "passes/testing/program_generator.h"
#include "policy/constrained_planner.h"
#include "policy/dsa_problem.h"

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

// A double-buffered matmul loop (passes/testdata/pipeline_double_buffered_matmul_*.tile) plans
// with its stages apart on 910B and 950, its exported problem carries a pipeline group per
// slotted root (depth 2, both stages kept), and the constrained planner solves the exported
// problem to the reuse cost the pipeline reports.
TEST(ConstrainedVsGreedyTest, DoubleBufferedMatmulExportSolvesToThePipelinesCost) {
  const std::string kMatmul = testing::DoubleBufferedMatmul(64);
  for (const char* backend : {"ascend910b", "ascend950"}) {
    ASSERT_TRUE(backends::BackendConfig::SetByName(backend).ok());
    MemoryPipelineOptions o;
    o.allocate.strategy = PlacementStrategy::kConstrained;
    std::optional<policy::DsaProblemDocument> doc;
    uint64_t pipeline_cost = 0;
    o.allocate.on_problem = [&doc](const policy::DsaProblemDocument& d) { doc = d; };
    o.allocate.on_stats = [&pipeline_cost](const SpacePlanStats& st) {
      pipeline_cost += st.reuse_cost;
    };
    absl::StatusOr<std::string> planned =
        testing::RunToText(kMatmul, "init-memref,memory-reuse,allocate-memory-addr");
    ASSERT_TRUE(planned.ok()) << backend << ": " << planned.status();
    EXPECT_NE(planned->find("tile.alloc(Mat, 0, 16384, 3, slots=2)"), std::string::npos)
        << *planned;
    ASSERT_TRUE(
        testing::RunOnText(kMatmul, "init-memref,memory-reuse,allocate-memory-addr", o).ok());
    ASSERT_TRUE(doc.has_value());
    const policy::DsaProblem& p = doc->problem;
    ASSERT_TRUE(p.pypto_structure.has_value());
    ASSERT_EQ(p.pypto_structure->pipeline_groups.size(), 4u) << backend;  // am, bm, al, br
    for (const policy::DsaPipelineGroup& g : p.pypto_structure->pipeline_groups) {
      EXPECT_EQ(g.depth, 2u);
      EXPECT_EQ(g.effective_depth, 2u);
      EXPECT_EQ(p.buffers[g.members[0].buffer].size, 2 * g.slot_size);
    }
    absl::StatusOr<policy::ConstrainedResult> solved = policy::SolveConstrained(p);
    ASSERT_TRUE(solved.ok()) << solved.status();
    EXPECT_EQ(solved->status, policy::ConstrainedStatus::kOptimal);
    EXPECT_EQ(solved->reuse_cost, pipeline_cost) << backend;
  }
  backends::BackendConfig::Reset();
}

}  // namespace
}  // namespace passes
}  // namespace accelmem
