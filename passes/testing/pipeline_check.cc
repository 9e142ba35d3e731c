#include "passes/testing/pipeline_check.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "backends/backend.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/types.h"
#include "ir/visitor.h"
#include "passes/memory_pipeline.h"
#include "passes/pass_manager.h"
#include "passes/testing/plan_simulator.h"
#include "passes/testing/program_generator.h"

namespace accelmem {
namespace passes_testing {

std::string PipelineConfig::Passes() const {
  return reuse ? "init-memref,memory-reuse,allocate-memory-addr"
               : "init-memref,allocate-memory-addr";
}

std::string PipelineConfig::Name() const {
  return absl::StrCat(backend, ":", reuse ? "reuse" : "no-reuse", ":",
                      passes::PlacementStrategyName(strategy));
}

std::string PipelineConfig::TestdataHeader() const {
  std::string s = absl::StrCat("# passes: ", reuse ? "default" : Passes(), "\n");
  if (backend != "none") absl::StrAppend(&s, "# backend: ", backend, "\n");
  if (strategy != passes::PlacementStrategy::kSequential) {
    absl::StrAppend(&s, "# planner: ", passes::PlacementStrategyName(strategy), "\n");
  }
  return s;
}

std::vector<PipelineConfig> AllPipelineConfigs(bool with_unsafe_sequential) {
  std::vector<PipelineConfig> out;
  for (const char* backend : {"none", "ascend910b", "ascend950"}) {
    for (bool reuse : {true, false}) {
      for (passes::PlacementStrategy s :
           {passes::PlacementStrategy::kSequential, passes::PlacementStrategy::kGreedy,
            passes::PlacementStrategy::kSearch, passes::PlacementStrategy::kConstrained}) {
        if (!reuse && s == passes::PlacementStrategy::kSequential && !with_unsafe_sequential) {
          continue;
        }
        PipelineConfig c;
        c.backend = backend;
        c.reuse = reuse;
        c.strategy = s;
        out.push_back(c);
      }
    }
  }
  return out;
}

std::string CheckFailure::Signature() const {
  std::string s = kind + ":";
  if (absl::StartsWith(kind, "sim:") || absl::StartsWith(kind, "sim-reparsed:")) return s;
  bool quoted = false;
  for (char c : detail) {
    if (c == '\'') {
      quoted = !quoted;
      continue;
    }
    if (quoted || std::isdigit(static_cast<unsigned char>(c))) continue;
    s += c;
  }
  return s;
}

namespace {

// Selects a backend for the lifetime of the object.
class BackendScope {
 public:
  explicit BackendScope(const std::string& name) {
    absl::Status s = backends::BackendConfig::SetByName(name == "none" ? "" : name);
    (void)s;
  }
  ~BackendScope() { backends::BackendConfig::Reset(); }
};

absl::StatusOr<passes::ProgramResult> RunPipeline(const ir::ProgramPtr& program,
                                                  const PipelineConfig& config) {
  passes::PassManagerOptions opts;
  opts.verifier = [](const ir::Program& p) { return passes::VerifyWithActiveBackend(p); };
  passes::PassManager pm(opts);
  passes::MemoryPipelineOptions mo;
  mo.allocate.strategy = config.strategy;
  // The constrained planner proves most generated programs optimal in well under this; where
  // it does not, its incumbent (never worse than greedy's plan) is what is checked.
  mo.allocate.budget = absl::Milliseconds(10);
  if (absl::Status s = passes::AddPasses(config.Passes(), &pm, mo); !s.ok()) return s;
  return pm.Run(program);
}

// Storage layouts, checked on the plan as a whole (the simulator sees only the bytes its paths
// write): where `backend` keeps layouts apart (our own table, like the simulator's: Vec on
// ascend950), no ND tile's bytes and NZ tile's bytes overlap, whatever their lifetimes. A tile
// stating no layout is ND. One failure per function at most.
std::vector<CheckFailure> LayoutShares(const ir::Program& program, const std::string& backend) {
  std::vector<CheckFailure> out;
  if (backend != "ascend950") return out;
  struct Bytes {
    int64_t lo, hi;
    bool nz;
    std::string name;
  };
  for (const ir::FunctionPtr& f : program.functions) {
    std::vector<Bytes> tiles;
    ir::ForEachDef(*f, [&](const ir::Var& v) {
      const ir::TileType* t = ir::AsTile(v.type);
      if (t == nullptr || t->memref == nullptr || t->space != ir::MemorySpace::kVec) return;
      const std::optional<int64_t> size = ir::StaticTileBytes(t->shape, t->dtype);
      if (!size || *size <= 0 || t->memref->addr() < 0) return;
      tiles.push_back(
          {t->memref->addr(), t->memref->addr() + *size, t->layout == ir::TileLayout::kNZ, v.name});
    });
    std::sort(tiles.begin(), tiles.end(),
              [](const Bytes& a, const Bytes& b) { return a.lo < b.lo; });
    const Bytes* reach[2] = {nullptr, nullptr};  // furthest-reaching earlier tile per class
    for (const Bytes& b : tiles) {
      const Bytes* other = reach[b.nz ? 0 : 1];
      if (other != nullptr && other->hi > b.lo) {
        out.push_back(
            {"layout-share", absl::StrCat("function '", f->name, "': '", other->name, "' (",
                                          other->nz ? "NZ" : "ND", ") at Vec [", other->lo, ", ",
                                          other->hi, ") and '", b.name, "' (", b.nz ? "NZ" : "ND",
                                          ") at [", b.lo, ", ", b.hi, ") share bytes")});
        break;
      }
      const Bytes*& mine = reach[b.nz ? 1 : 0];
      if (mine == nullptr || mine->hi < b.hi) mine = &b;
    }
  }
  return out;
}

// Declared allocations (`declared=1`) are closed: a tile the input computes afresh (an op that is
// neither a view nor writes into an argument; loop and if results are not assignments) and did
// not place in one itself must not live in one after the pipeline. Memory-reuse may move a
// carried value into a declared carry, but only through a tile.move of its own (a new name).
// Our own list of the view and write-into ops, not the op registry's.
class FreshTiles final : public ir::IRVisitor {
 public:
  void VisitAssign(const ir::AssignStmt& a) override {
    static const std::set<std::string>* derived =
        new std::set<std::string>{"tile.slice", "tile.reshape", "tile.matmul_acc"};
    const ir::Call* c = ir::AsCall(a.value.get());
    const ir::TileType* t = ir::AsTile(a.var->type);
    if (c != nullptr && t != nullptr && t->memref == nullptr && !derived->count(c->op)) {
      names.insert(a.var->name);
    }
  }
  std::set<std::string> names;  // unplaced tiles the input computes afresh
};

std::vector<CheckFailure> DeclaredIntruders(const ir::Program& input, const ir::Program& out) {
  std::vector<CheckFailure> failures;
  for (size_t i = 0; i < input.functions.size() && i < out.functions.size(); ++i) {
    FreshTiles collect;
    collect.VisitFunction(*input.functions[i]);
    const std::set<std::string>& fresh = collect.names;
    ir::ForEachDef(*out.functions[i], [&](const ir::Var& v) {
      const ir::TileType* t = ir::AsTile(v.type);
      if (t == nullptr || t->memref == nullptr || !t->memref->declared() || !fresh.count(v.name)) {
        return;
      }
      if (failures.empty()) {
        failures.push_back(
            {"declared-intruder",
             absl::StrCat("function '", out.functions[i]->name, "': '", v.name,
                          "' was given the declared allocation '", t->memref->name(), "'")});
      }
    });
  }
  return failures;
}

std::string FirstDifference(const std::string& a, const std::string& b) {
  std::vector<std::string> la = absl::StrSplit(a, '\n'), lb = absl::StrSplit(b, '\n');
  for (size_t i = 0; i < la.size() || i < lb.size(); ++i) {
    const std::string x = i < la.size() ? la[i] : "<end>";
    const std::string y = i < lb.size() ? lb[i] : "<end>";
    if (x != y) return absl::StrCat("line ", i + 1, ": `", x, "` became `", y, "`");
  }
  return "texts differ";
}

}  // namespace

CheckResult CheckProgram(const std::string& text, const PipelineConfig& config,
                         bool may_exceed_capacity,
                         const std::vector<std::string>& accepted_errors) {
  CheckResult result;
  BackendScope backend(config.backend);
  absl::StatusOr<ir::ProgramPtr> input = ir::ParseProgram(text, "<input>");
  if (!input.ok()) {
    result.failures.push_back({"input-rejected", std::string(input.status().message())});
    return result;
  }
  if (absl::Status s = passes::VerifyWithActiveBackend(**input); !s.ok()) {
    result.failures.push_back({"input-rejected", std::string(s.message())});
    return result;
  }
  absl::StatusOr<passes::ProgramResult> planned = RunPipeline(*input, config);
  if (!planned.ok()) {
    const std::string msg(planned.status().message());
    if (absl::StrContains(msg, "IR verification failed")) {
      result.failures.push_back({"verifier-after-pass", msg});
    } else if (may_exceed_capacity) {
      bool injected = accepted_errors.empty();
      for (const std::string& a : accepted_errors) injected = injected || absl::StrContains(msg, a);
      if (injected) {
        result.capacity_error = true;
        result.error = msg;
      } else {
        result.failures.push_back({"unexpected-error", msg});
      }
    } else {
      result.failures.push_back({"pipeline-error", msg});
    }
    return result;
  }
  const ir::Program& out = *planned->program;
  SimulatorOptions so;
  so.backend = config.backend;
  Simulation sim = SimulateAndTrace(out, so);
  for (const Finding& f : sim.findings) {
    result.failures.push_back({absl::StrCat("sim:", FindingKindName(f.kind)), f.ToString()});
  }
  result.output_trace = std::move(sim.trace);
  for (CheckFailure& f : LayoutShares(out, config.backend)) result.failures.push_back(std::move(f));
  for (CheckFailure& f : DeclaredIntruders(**input, out)) result.failures.push_back(std::move(f));
  const std::string printed = ir::PrintProgram(out);
  result.planned = printed;
  absl::StatusOr<ir::ProgramPtr> reparsed = ir::ParseProgram(printed, "<planned>");
  if (!reparsed.ok()) {
    result.failures.push_back({"reparse-error", std::string(reparsed.status().message())});
    return result;
  }
  if (absl::Status s = passes::VerifyWithActiveBackend(**reparsed, "<planned>"); !s.ok()) {
    result.failures.push_back({"reparse-error", std::string(s.message())});
  }
  // The printed plan is what a user keeps: a MemRef or address the printer drops or changes must
  // not hide behind the in-memory program's correct plan.
  Simulation resim = SimulateAndTrace(**reparsed, so);
  for (const Finding& f : resim.findings) {
    result.failures.push_back(
        {absl::StrCat("sim-reparsed:", FindingKindName(f.kind)), f.ToString()});
  }
  if (std::string d = TraceDifference(result.output_trace, resim.trace); !d.empty()) {
    result.failures.push_back({"trace-reparsed-differs", d});
  }
  const std::string again = ir::PrintProgram(**reparsed);
  if (again != printed) {
    result.failures.push_back({"print-not-fixed-point", FirstDifference(printed, again)});
  }
  absl::StatusOr<passes::ProgramResult> rerun = RunPipeline(*reparsed, config);
  if (!rerun.ok()) {
    result.failures.push_back({"rerun-error", std::string(rerun.status().message())});
  } else {
    const std::string third = ir::PrintProgram(*rerun->program);
    if (third != printed) {
      result.failures.push_back({"rerun-changed", FirstDifference(printed, third)});
    }
  }
  return result;
}

std::string ShrinkFailure(const std::string& text, const PipelineConfig& config,
                          const std::string& signature, bool may_exceed_capacity, int max_calls,
                          const std::vector<std::string>& accepted_errors) {
  ShrinkOptions options;
  options.max_predicate_calls = max_calls;
  return ShrinkProgram(
      text,
      [&](const std::string& candidate) {
        CheckResult r = CheckProgram(candidate, config, may_exceed_capacity, accepted_errors);
        for (const CheckFailure& f : r.failures) {
          if (f.Signature() == signature) return true;
        }
        return false;
      },
      options);
}

std::string FailureReport(uint64_t seed, const PipelineConfig& config,
                          const std::vector<CheckFailure>& failures, const std::string& shrunk) {
  std::string s =
      absl::StrCat("seed ", seed, ", config ", config.Name(), " (--passes=", config.Passes(),
                   " --backend=", config.backend,
                   " --planner=", passes::PlacementStrategyName(config.strategy), ")\n");
  for (const CheckFailure& f : failures) absl::StrAppend(&s, "  ", f.kind, ": ", f.detail, "\n");
  absl::StrAppend(&s, "shrunk reproducer (a passes/testdata case):\n", config.TestdataHeader(),
                  shrunk);
  return s;
}

std::string ValuesDiffer(const std::string& text, const PipelineConfig& a, const PipelineConfig& b,
                         bool may_exceed_capacity,
                         const std::vector<std::string>& accepted_errors) {
  const CheckResult ra = CheckProgram(text, a, may_exceed_capacity, accepted_errors);
  if (!ra.failures.empty() || ra.capacity_error) return "";
  const CheckResult rb = CheckProgram(text, b, may_exceed_capacity, accepted_errors);
  if (!rb.failures.empty() || rb.capacity_error) return "";
  return TraceDifference(ra.output_trace, rb.output_trace);
}

OutputTrace InputTrace(const std::string& text) {
  absl::StatusOr<ir::ProgramPtr> input = ir::ParseProgram(text, "<input>");
  if (!input.ok()) return {};
  return SimulateAndTrace(**input).trace;
}

std::string ShrinkDisagreement(const std::string& text, const PipelineConfig& a,
                               const PipelineConfig& b, bool may_exceed_capacity, int max_calls,
                               const std::vector<std::string>& accepted_errors) {
  ShrinkOptions options;
  options.max_predicate_calls = max_calls;
  return ShrinkProgram(
      text,
      [&](const std::string& candidate) {
        return !ValuesDiffer(candidate, a, b, may_exceed_capacity, accepted_errors).empty();
      },
      options);
}

std::string DisagreementReport(uint64_t seed, const PipelineConfig& a, const PipelineConfig& b,
                               const std::string& difference, const std::string& shrunk) {
  auto flags = [](const PipelineConfig& c) {
    return absl::StrCat(c.Name(), " (--passes=", c.Passes(), " --backend=", c.backend,
                        " --planner=", passes::PlacementStrategyName(c.strategy), ")");
  };
  // Which one computes what the unplanned program does (the other is the wrong one).
  const OutputTrace input = InputTrace(shrunk);
  auto verdict = [&](const PipelineConfig& c) {
    const CheckResult r = CheckProgram(shrunk, c);
    return absl::StrCat(c.Name(),
                        TraceDifference(input, r.output_trace).empty() ? " agrees" : " disagrees");
  };
  return absl::StrCat("seed ", seed, ": configs ", flags(a), " and ", flags(b),
                      " compute different values (values-differ)\n  ", difference, "\n  ",
                      verdict(a), ", ", verdict(b), " with the unplanned program",
                      "\nshrunk reproducer (the unplanned input; run it under both):\n", shrunk);
}

}  // namespace passes_testing
}  // namespace accelmem
