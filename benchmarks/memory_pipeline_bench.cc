// The memory pipeline (init-memref, memory-reuse, allocate-memory-addr) on generated programs of
// 1k, 10k and 100k tiles, against the baseline without memory-reuse (one slot per tile, the
// pipeline minus sharing). Counters per run: tiles, the Vec footprint (high-water mark
// of the planned addresses), LOAD (the largest total bytes live at once, a lower bound on any
// plan) and footprint / LOAD. Parsing is outside the timed region.
//
// The *_Greedy rows run allocate-memory-addr with the lifetime planner (PlacementStrategy::kGreedy)
// after memory-reuse, and the *_GreedyNoReuse rows with the planner alone; their footprint
// counters per space compare with the Default rows (reuse + sequential placement).
//
// The programs (passes/pipeline_corpus.h) mix straight-line element-wise chains over three tile
// sizes (512, 1024, 2048 bytes), row slices, a value kept live across blocks, and every 8th block a
// loop that carries an accumulator; about 10 tiles per block.
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "backends/backend.h"
#include "benchmark/benchmark.h"
#include "ir/memory_space.h"
#include "ir/parser.h"
#include "passes/allocate_memory_addr.h"
#include "passes/memory_pipeline.h"
#include "passes/pass_manager.h"
#include "passes/pipeline_corpus.h"
#include "passes/verify_memory_plan.h"

namespace accelmem {
namespace {

// The benchmarks plan for no backend (default policy, sizes, no capacity check), given to the
// passes explicitly.
passes::MemoryPipelineOptions NoBackend() {
  passes::MemoryPipelineOptions o;
  o.backend = nullptr;
  return o;
}

passes::MemoryPipelineOptions Strategy(passes::PlacementStrategy s) {
  passes::MemoryPipelineOptions o = NoBackend();
  o.allocate.strategy = s;
  return o;
}

// Footprint (high-water mark) and LOAD of every planned space, as counters "<Space>_footprint".
void SpaceCounters(benchmark::State& state, const passes::MemoryPlanReport& report) {
  for (const passes::SpaceUsage& u : report.spaces) {
    const std::string name(ir::MemorySpaceName(u.space));
    state.counters[name + "_footprint"] = static_cast<double>(u.high_water);
    state.counters[name + "_load"] = static_cast<double>(u.load);
  }
}

// Runs the pipeline `spec` on `text` (only the passes are timed), proves the output plan safe and
// sets the per-space counters. nullopt after SkipWithError.
std::optional<passes::MemoryPlanReport> RunText(
    benchmark::State& state, const std::string& text, const char* spec = "default",
    const passes::MemoryPipelineOptions& options = NoBackend()) {
  backends::BackendConfig::Reset();
  absl::StatusOr<ir::ProgramPtr> program = ir::ParseProgram(text);
  if (!program.ok()) {
    state.SkipWithError(std::string(program.status().message()).c_str());
    return std::nullopt;
  }
  passes::PassManagerOptions opts;
  opts.verify = false;  // time the passes, not the IR verifier
  passes::PassManager pm(opts);
  if (!passes::AddPasses(spec, &pm, options).ok()) {
    state.SkipWithError("bad pipeline");
    return std::nullopt;
  }
  ir::ProgramPtr out;
  for (auto _ : state) {
    absl::StatusOr<passes::ProgramResult> r = pm.Run(*program);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return std::nullopt;
    }
    // Dropping the previous output (freeing a whole program) is not part of planning.
    state.PauseTiming();
    out = r->program;
    r = absl::InternalError("released");
    state.ResumeTiming();
  }
  absl::StatusOr<passes::MemoryPlanReport> report = passes::AnalyzeMemoryPlan(*out->functions[0]);
  if (!report.ok()) {
    state.SkipWithError("no plan");
    return std::nullopt;
  }
  if (absl::Status safe = passes::VerifyMemoryPlan(*out); !safe.ok()) {
    state.SkipWithError(std::string(safe.message()).c_str());
    return std::nullopt;
  }
  SpaceCounters(state, *report);
  state.SetItemsProcessed(state.iterations() * state.range(0));
  return *std::move(report);
}

// The block programs of range(0) tiles, with the Vec space's counters.
void Run(benchmark::State& state, const char* passes,
         const passes::MemoryPipelineOptions& options = NoBackend()) {
  std::optional<passes::MemoryPlanReport> report =
      RunText(state, passes::BlockProgram(static_cast<int>(state.range(0))), passes, options);
  if (!report.has_value()) return;
  if (report->spaces.empty()) {
    state.SkipWithError("no plan");
    return;
  }
  const passes::SpaceUsage& vec = report->spaces[0];
  state.counters["tiles"] = static_cast<double>(report->buffers.size());
  state.counters["vec_footprint"] = static_cast<double>(vec.high_water);
  state.counters["vec_load"] = static_cast<double>(vec.load);
  state.counters["footprint/load"] = static_cast<double>(vec.high_water) / vec.load;
}

// The whole pipeline.
void BM_MemoryPipeline_Default(benchmark::State& state) {
  Run(state, "init-memref,memory-reuse,allocate-memory-addr");
}
BENCHMARK(BM_MemoryPipeline_Default)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

// Baseline: no sharing, one slot per tile.
void BM_MemoryPipeline_NoReuse(benchmark::State& state) {
  Run(state, "init-memref,allocate-memory-addr");
}
BENCHMARK(BM_MemoryPipeline_NoReuse)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

// memory-reuse, then the lifetime planner (greedy) instead of sequential placement.
void BM_MemoryPipeline_Greedy(benchmark::State& state) {
  Run(state, "init-memref,memory-reuse,allocate-memory-addr",
      Strategy(passes::PlacementStrategy::kGreedy));
}
BENCHMARK(BM_MemoryPipeline_Greedy)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

// The lifetime planner (greedy) alone, without memory-reuse.
void BM_MemoryPipeline_GreedyNoReuse(benchmark::State& state) {
  Run(state, "init-memref,allocate-memory-addr", Strategy(passes::PlacementStrategy::kGreedy));
}
BENCHMARK(BM_MemoryPipeline_GreedyNoReuse)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

// The checker alone, on the planned output (how expensive is proving a plan safe).
void BM_VerifyMemoryPlan_Default(benchmark::State& state) {
  backends::BackendConfig::Reset();
  absl::StatusOr<ir::ProgramPtr> program =
      ir::ParseProgram(passes::BlockProgram(static_cast<int>(state.range(0))));
  passes::PassManager pm;
  (void)passes::AddPasses("default", &pm, NoBackend());
  absl::StatusOr<passes::ProgramResult> r = pm.Run(*program);
  if (!r.ok()) {
    state.SkipWithError("pipeline failed");
    return;
  }
  for (auto _ : state) {
    absl::Status s = passes::VerifyMemoryPlan(*r->program);
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_VerifyMemoryPlan_Default)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

// Adversarial shapes (passes/pipeline_corpus.h): n loops each carrying the previous loop's result,
// and n tiles all live at once.
void BM_MemoryPipeline_ChainedLoops(benchmark::State& state) {
  RunText(state, passes::ChainedLoopsProgram(static_cast<int>(state.range(0))));
}
BENCHMARK(BM_MemoryPipeline_ChainedLoops)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_MemoryPipeline_AllLive(benchmark::State& state) {
  RunText(state, passes::AllLiveProgram(static_cast<int>(state.range(0))));
}
BENCHMARK(BM_MemoryPipeline_AllLive)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_MemoryPipeline_ChainedLoopsGreedy(benchmark::State& state) {
  RunText(state, passes::ChainedLoopsProgram(static_cast<int>(state.range(0))), "default",
          Strategy(passes::PlacementStrategy::kGreedy));
}
BENCHMARK(BM_MemoryPipeline_ChainedLoopsGreedy)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_MemoryPipeline_ChainedLoopsGreedyNoReuse(benchmark::State& state) {
  RunText(state, passes::ChainedLoopsProgram(static_cast<int>(state.range(0))),
          "init-memref,allocate-memory-addr", Strategy(passes::PlacementStrategy::kGreedy));
}
BENCHMARK(BM_MemoryPipeline_ChainedLoopsGreedyNoReuse)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_MemoryPipeline_AllLiveGreedy(benchmark::State& state) {
  RunText(state, passes::AllLiveProgram(static_cast<int>(state.range(0))), "default",
          Strategy(passes::PlacementStrategy::kGreedy));
}
BENCHMARK(BM_MemoryPipeline_AllLiveGreedy)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_MemoryPipeline_AllLiveGreedyNoReuse(benchmark::State& state) {
  RunText(state, passes::AllLiveProgram(static_cast<int>(state.range(0))),
          "init-memref,allocate-memory-addr", Strategy(passes::PlacementStrategy::kGreedy));
}
BENCHMARK(BM_MemoryPipeline_AllLiveGreedyNoReuse)->Arg(1000)->Unit(benchmark::kMillisecond);

// Many functions through the default pipeline with the IR verifier between passes, as
// `tile_opt --pipeline=default` runs it; the baseline is the verifier alone on the same input
// (a pipeline cannot be cheaper than reading its input once per pass). Both must grow linearly.
ir::ProgramPtr ParsedOrSkip(benchmark::State& state, const std::string& text) {
  absl::StatusOr<ir::ProgramPtr> program = ir::ParseProgram(text);
  if (!program.ok()) {
    state.SkipWithError(std::string(program.status().message()).c_str());
    return nullptr;
  }
  return *program;
}

void BM_MemoryPipeline_ManyFunctions(benchmark::State& state) {
  backends::BackendConfig::Reset();
  ir::ProgramPtr program =
      ParsedOrSkip(state, passes::ManyFunctionsProgram(static_cast<int>(state.range(0))));
  if (program == nullptr) return;
  passes::PassManager pm;  // verifier on
  (void)passes::AddPasses("default", &pm, NoBackend());
  for (auto _ : state) {
    absl::StatusOr<passes::ProgramResult> r = pm.Run(program);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    state.PauseTiming();
    r = absl::InternalError("released");
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_MemoryPipeline_ManyFunctions)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(20000)
    ->Unit(benchmark::kMillisecond);

void BM_VerifyProgram_ManyFunctions(benchmark::State& state) {
  ir::ProgramPtr program =
      ParsedOrSkip(state, passes::ManyFunctionsProgram(static_cast<int>(state.range(0))));
  if (program == nullptr) return;
  for (auto _ : state) benchmark::DoNotOptimize(passes::DefaultVerifier(*program));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_VerifyProgram_ManyFunctions)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(20000)
    ->Unit(benchmark::kMillisecond);

// allocate-memory-addr on one function with n reserve buffers (the overlap check is O(n log n));
// baseline: the same pass on the same function without its reserves.
void RunAllocate(benchmark::State& state, const std::string& text) {
  backends::BackendConfig::Reset();
  ir::ProgramPtr program = ParsedOrSkip(state, text);
  if (program == nullptr) return;
  passes::PassManagerOptions opts;
  opts.verify = false;
  passes::PassManager pm(opts);
  (void)passes::AddPasses("init-memref,allocate-memory-addr", &pm, NoBackend());
  for (auto _ : state) {
    absl::StatusOr<passes::ProgramResult> r = pm.Run(program);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_AllocateMemoryAddr_ManyReserves(benchmark::State& state) {
  RunAllocate(state, passes::ManyReservesProgram(static_cast<int>(state.range(0))));
}
BENCHMARK(BM_AllocateMemoryAddr_ManyReserves)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(20000)
    ->Unit(benchmark::kMillisecond);

void BM_AllocateMemoryAddr_NoReserves(benchmark::State& state) {
  RunAllocate(state, passes::ManyReservesProgram(0));
}
BENCHMARK(BM_AllocateMemoryAddr_NoReserves)->Arg(0)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace accelmem
