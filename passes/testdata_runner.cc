// Runs one IR-in/IR-out case of passes/testdata (the file named by the test's first argument).
//
// File format (see testdata/README.md): directive comments, the input program, a separator line
// `# ==== expected ====`, then the expected program (or nothing when `# error:` is given).
//   # passes: init-memref,memory-reuse      (required; "default" = the whole pipeline)
//   # backend: ascend910b                   (optional; none by default)
//   # error: <substring of the error>       (optional; the pipeline must fail with it)
//   # unchanged                             (optional; the pipeline must report no change)
//   # planner: greedy                       (optional; allocate-memory-addr's strategy)
//   # fits only after memory-reuse          (optional; memory-reuse sheds a pipeline depth, so the
//                                           planning checks skip the pipeline without it)
// The output is compared with the expected program by canonical text (names, addresses and
// sizes included); the output, planned by allocate-memory-addr if the case did not plan it,
// must pass verify_memory_plan.
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "backends/backend.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "passes/allocate_memory_addr.h"
#include "passes/memory_pipeline.h"
#include "passes/pass_testing.h"
#include "passes/testing/plan_simulator.h"
#include "passes/verify_memory_plan.h"
#include "policy/constrained_planner.h"
#include "policy/dsa_problem.h"

namespace accelmem {
namespace passes {
namespace {

std::string g_path;

struct Case {
  std::string passes, backend, error, input, expected, planner;
  bool unchanged = false;
  bool has_expected = false;
  bool needs_reuse = false;
};

Case ReadCase(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  Case c;
  bool after = false;
  for (absl::string_view line : absl::StrSplit(ss.str(), '\n')) {
    absl::string_view t = absl::StripAsciiWhitespace(line);
    if (t == "# ==== expected ====") {
      after = true;
      c.has_expected = true;
      continue;
    }
    if (!after && absl::ConsumePrefix(&t, "# passes:"))
      c.passes = std::string(absl::StripAsciiWhitespace(t));
    if (!after && absl::ConsumePrefix(&t, "# backend:"))
      c.backend = std::string(absl::StripAsciiWhitespace(t));
    if (!after && absl::ConsumePrefix(&t, "# error:"))
      c.error = std::string(absl::StripAsciiWhitespace(t));
    if (!after && absl::ConsumePrefix(&t, "# planner:"))
      c.planner = std::string(absl::StripAsciiWhitespace(t));
    if (!after && t == "# unchanged") c.unchanged = true;
    if (!after && t == "# fits only after memory-reuse") c.needs_reuse = true;
    std::string& dst = after ? c.expected : c.input;
    dst.append(line.data(), line.size());
    dst.push_back('\n');
  }
  return c;
}

// The pipeline of a case with allocate-memory-addr at its end, and without memory-reuse.
std::vector<std::string> PlanningSpecs(const Case& c) {
  std::string spec =
      c.passes == "default" ? "init-memref,memory-reuse,allocate-memory-addr" : c.passes;
  if (!absl::StrContains(spec, "allocate-memory-addr")) spec += ",allocate-memory-addr";
  std::vector<std::string> specs = {spec};
  if (absl::StrContains(spec, "memory-reuse,") && !c.needs_reuse) {
    specs.push_back(absl::StrReplaceAll(spec, {{"memory-reuse,", ""}}));
  }
  return specs;
}

// The case file's pipeline output equals its expected program, or fails with its error.
TEST(TestdataCase, MatchesExpected) {
  ASSERT_FALSE(g_path.empty()) << "usage: <test> path/to/case.tile";
  Case c = ReadCase(g_path);
  ASSERT_FALSE(c.passes.empty()) << "missing '# passes:' in " << g_path;
  ASSERT_TRUE(backends::BackendConfig::SetByName(c.backend).ok()) << c.backend;
  MemoryPipelineOptions options;
  if (!c.planner.empty()) {
    ASSERT_TRUE(ParsePlacementStrategy(c.planner, &options.allocate.strategy)) << c.planner;
  }
  absl::StatusOr<ProgramResult> r = testing::RunOnText(c.input, c.passes, options);
  if (!c.error.empty()) {
    ASSERT_FALSE(r.ok()) << "expected an error containing: " << c.error << "\ngot:\n"
                         << ir::PrintProgram(*r->program);
    EXPECT_TRUE(absl::StrContains(r.status().message(), c.error))
        << "error: " << r.status().message() << "\nexpected to contain: " << c.error;
    return;
  }
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(c.has_expected) << "missing '# ==== expected ====' in " << g_path;
  const std::string actual = ir::PrintProgram(*r->program);
  EXPECT_EQ(actual, testing::Canonical(c.expected)) << "actual output:\n" << actual;
  // Structurally too (MemRef sharing and addresses included), not only as text.
  ir::ProgramPtr expected = testing::ParseOrDie(c.expected);
  EXPECT_TRUE(ir::StructuralEqual(*r->program, *expected))
      << ir::FirstDifference(*r->program, *expected);
  if (c.unchanged) {
    EXPECT_FALSE(r->changed);
  } else {
    EXPECT_TRUE(r->changed);
  }
  // Every function planned from this output is safe: plan it (if the case did not) and check.
  absl::StatusOr<ProgramResult> planned = testing::RunOnText(actual, "allocate-memory-addr");
  ASSERT_TRUE(planned.ok()) << planned.status();
  absl::Status safe = VerifyMemoryPlan(*planned->program);
  EXPECT_TRUE(safe.ok()) << safe;
  // And the independent simulator finds nothing in it (the expected output itself when the case
  // ends with allocate-memory-addr).
  passes_testing::SimulatorOptions sim;
  sim.backend = c.backend.empty() ? "none" : c.backend;
  for (const passes_testing::Finding& f :
       passes_testing::SimulatePlannedProgram(*planned->program, sim)) {
    ADD_FAILURE() << "simulator: " << f.ToString();
  }
  backends::BackendConfig::Reset();
}

// Every planner strategy of allocate-memory-addr plans the case's input safely, with and without
// memory-reuse (without it, init-memref alone can leave a carried value and a value still live in
// one root; the planner path then runs memory-reuse's carry fix-ups first, sequential does not),
// and its high-water mark per space is never above the sequential one when that one is safe.
TEST(TestdataCase, PlannerStrategiesPlanSafely) {
  Case c = ReadCase(g_path);
  if (!c.error.empty()) GTEST_SKIP() << "an error case";
  ASSERT_TRUE(backends::BackendConfig::SetByName(c.backend).ok()) << c.backend;
  for (const std::string& s : PlanningSpecs(c)) {
    absl::StatusOr<ProgramResult> seq = testing::RunOnText(c.input, s);
    ASSERT_TRUE(seq.ok()) << s << ": " << seq.status();
    const bool seq_safe = VerifyMemoryPlan(*seq->program).ok();
    for (PlacementStrategy st : {PlacementStrategy::kGreedy, PlacementStrategy::kSearch}) {
      MemoryPipelineOptions o;
      o.allocate.strategy = st;
      o.allocate.budget = absl::Milliseconds(5);
      absl::StatusOr<ProgramResult> r = testing::RunOnText(c.input, s, o);
      ASSERT_TRUE(r.ok()) << s << " " << PlacementStrategyName(st) << ": " << r.status();
      absl::Status safe = VerifyMemoryPlan(*r->program);
      EXPECT_TRUE(safe.ok()) << s << " " << PlacementStrategyName(st) << ": " << safe << "\n"
                             << ir::PrintProgram(*r->program);
      if (!seq_safe) continue;
      for (size_t f = 0; f < r->program->functions.size(); ++f) {
        absl::StatusOr<MemoryPlanReport> a = AnalyzeMemoryPlan(*r->program->functions[f]);
        absl::StatusOr<MemoryPlanReport> b = AnalyzeMemoryPlan(*seq->program->functions[f]);
        if (!a.ok() || !b.ok()) continue;  // unplanned (the case's passes stop earlier)
        ASSERT_EQ(a->spaces.size(), b->spaces.size());
        for (size_t k = 0; k < a->spaces.size(); ++k) {
          EXPECT_LE(a->spaces[k].high_water, b->spaces[k].high_water) << s;
        }
      }
    }
  }
  backends::BackendConfig::Reset();
}

// Reuse cost per "function/space" of a run, from allocate-memory-addr's stats.
using CostMap = std::map<std::string, uint64_t>;

absl::StatusOr<ProgramResult> RunWithStats(const std::string& text, const std::string& spec,
                                           PlacementStrategy strategy, CostMap* costs) {
  MemoryPipelineOptions o;
  o.allocate.strategy = strategy;
  o.allocate.budget = absl::Milliseconds(20);
  o.allocate.on_stats = [costs](const SpacePlanStats& st) {
    (*costs)[absl::StrCat(st.function, "/", ir::MemorySpaceName(st.space))] = st.reuse_cost;
  };
  return testing::RunOnText(text, spec, o);
}

// --planner=constrained on the case's input: it fits wherever greedy fits, its plan is safe
// (verify_memory_plan and the independent simulator), its reuse cost is never above greedy's,
// and the exported problems are valid and solved by the constrained planner.
TEST(TestdataCase, ConstrainedPlannerFitsWhereGreedyDoes) {
  Case c = ReadCase(g_path);
  ASSERT_TRUE(backends::BackendConfig::SetByName(c.backend).ok()) << c.backend;
  for (const std::string& s : PlanningSpecs(c)) {
    CostMap greedy_cost, constrained_cost;
    absl::StatusOr<ProgramResult> greedy =
        RunWithStats(c.input, s, PlacementStrategy::kGreedy, &greedy_cost);
    absl::StatusOr<ProgramResult> r =
        RunWithStats(c.input, s, PlacementStrategy::kConstrained, &constrained_cost);
    if (!greedy.ok()) {
      // Errors that are not about capacity (bad reserves, overflows) are the same for both.
      if (!r.ok()) continue;
    } else {
      ASSERT_TRUE(r.ok()) << s << ": greedy fits but constrained fails: " << r.status();
    }
    absl::Status safe = VerifyMemoryPlan(*r->program);
    EXPECT_TRUE(safe.ok()) << s << ": " << safe << "\n" << ir::PrintProgram(*r->program);
    passes_testing::SimulatorOptions sim;
    sim.backend = c.backend.empty() ? "none" : c.backend;
    for (const passes_testing::Finding& f :
         passes_testing::SimulatePlannedProgram(*r->program, sim)) {
      ADD_FAILURE() << s << ": simulator: " << f.ToString() << "\n"
                    << ir::PrintProgram(*r->program);
    }
    for (const auto& [key, cost] : constrained_cost) {
      auto g = greedy_cost.find(key);
      if (g != greedy_cost.end()) {
        EXPECT_LE(cost, g->second) << s << " " << key;
      }
    }
    // The exported problems: valid, and the planner returns a status for each.
    MemoryPipelineOptions o;
    o.allocate.export_only = true;
    std::vector<policy::DsaProblemDocument> problems;
    o.allocate.on_problem = [&problems](const policy::DsaProblemDocument& d) {
      problems.push_back(d);
    };
    ASSERT_TRUE(testing::RunOnText(c.input, s, o).ok()) << s;
    for (const policy::DsaProblemDocument& d : problems) {
      const std::vector<std::string> errors = policy::ValidateDsaProblem(d.problem);
      EXPECT_TRUE(errors.empty()) << d.instance << ": " << errors[0];
      policy::ConstrainedOptions co;
      co.budget = absl::Milliseconds(20);
      EXPECT_TRUE(policy::SolveConstrained(d.problem, co).ok()) << d.instance;
      // Canonical JSON round trip keeps the fingerprint.
      absl::StatusOr<policy::DsaProblemDocument> back =
          policy::ParseDsaProblemJson(policy::WriteDsaProblemJson(d));
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(policy::DsaProblemFingerprint(*back), policy::DsaProblemFingerprint(d));
    }
  }
  backends::BackendConfig::Reset();
}

}  // namespace
}  // namespace passes
}  // namespace accelmem

// gtest_main runs the tests; the case path is the first non-flag argument.
namespace {
struct PathFromArgs {
  PathFromArgs() {
    std::ifstream cmdline("/proc/self/cmdline");
    std::string arg;
    std::vector<std::string> args;
    while (std::getline(cmdline, arg, '\0')) args.push_back(arg);
    for (size_t i = 1; i < args.size(); ++i) {
      if (!args[i].empty() && args[i][0] != '-') accelmem::passes::g_path = args[i];
    }
  }
} path_from_args;
}  // namespace
