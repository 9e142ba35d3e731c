// Static placement: //policy:lifetime_planner on the public instances of
// //third_party/placement_instances and on generated traces (//policy/testing:trace_generators),
// next to every textbook baseline of //policy/testing:reference_placers (TFLite's arena, TFLite
// Micro's first fit, XLA's GlobalDecreasingSizeBestFit spatial and temporal, by area, by start;
// O(n^2) each, so their times are not the point, their heights are).
//
// Counters: ratio = height / LOAD (1.0 is optimal), fits = 1 if the height is within the
// capacity (1 MiB for MiniMalloc A..K, unbounded otherwise), buffers, nodes (search), bound =
// the best lower bound search proved / LOAD.
//
//   bazel run -c opt //benchmarks:placement_bench                       # everything, 1 s search
//   bazel run -c opt //benchmarks:placement_bench -- --benchmark_filter='Greedy|Baseline'
//   PLACEMENT_BENCH_BUDGET_MS=10000 bazel run -c opt //benchmarks:placement_bench --
//       --benchmark_filter=Search_Minimalloc                   # (one line) the 10 s figures
//
// Speed bars: BM_Greedy_resnet50 (1,042 buffers), BM_Greedy_Y1Prefix20k (the first 20,000
// buffers of Y_1), BM_Greedy_Y_1 (62,185 buffers); one core. Growth: BM_GreedyGrowth_<family>/N
// for N = 10^3 .. 10^6 generated buffers; BM_GreedyOrder_Y1Prefix20k/<order>: each order alone.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "policy/lifetime_planner.h"
#include "policy/place_csv.h"
#include "policy/placement_checker.h"
#include "policy/testing/reference_placers.h"
#include "policy/testing/trace_generators.h"

namespace accelmem {
namespace {

using policy::PlacementBuffer;

constexpr char kDir[] = "third_party/placement_instances/";

std::vector<PlacementBuffer> Load(const std::string& file) {
  auto text = policy::ReadTextFile(kDir + file);
  if (!text.ok()) return {};
  auto buffers = policy::ParseInstanceCsv(*text, file);
  return buffers.ok() ? *buffers : std::vector<PlacementBuffer>{};
}

int64_t SearchBudgetMs() {
  const char* env = std::getenv("PLACEMENT_BENCH_BUDGET_MS");
  return env != nullptr ? std::max(0L, std::strtol(env, nullptr, 10)) : 1000;
}

// PLACEMENT_BENCH_SEARCH_THREADS: PlannerOptions::search_threads (default 0, automatic).
int SearchThreads() {
  const char* env = std::getenv("PLACEMENT_BENCH_SEARCH_THREADS");
  return env != nullptr ? static_cast<int>(std::max(0L, std::strtol(env, nullptr, 10))) : 0;
}

void Report(benchmark::State& state, const std::vector<PlacementBuffer>& buffers,
            const std::vector<int64_t>& offsets, int64_t capacity) {
  const int64_t height = policy::PlacementHeight(buffers, offsets);
  const int64_t load = policy::ComputeLoad(buffers);
  if (!policy::CheckPlacement(buffers, offsets).ok()) state.SkipWithError("invalid placement");
  state.counters["ratio"] = load > 0 ? static_cast<double>(height) / load : 1.0;
  state.counters["fits"] = capacity == 0 || height <= capacity ? 1 : 0;
  state.counters["buffers"] = static_cast<double>(buffers.size());
}

void Greedy(benchmark::State& state, const std::vector<PlacementBuffer>& buffers,
            int64_t capacity) {
  if (buffers.empty()) return state.SkipWithError("instance not found (run with bazel run)");
  std::vector<int64_t> offsets;
  std::string method;
  for (auto _ : state) {
    auto plan = policy::PlanPlacement(buffers);
    offsets = plan->offsets;
    method = plan->method;
    benchmark::DoNotOptimize(offsets.data());
  }
  Report(state, buffers, offsets, capacity);
  state.SetLabel(method);
}

void Search(benchmark::State& state, const std::vector<PlacementBuffer>& buffers,
            int64_t capacity) {
  if (buffers.empty()) return state.SkipWithError("instance not found (run with bazel run)");
  policy::PlannerOptions options;
  options.mode = policy::PlannerMode::kSearch;
  options.capacity = capacity;
  options.budget = absl::Milliseconds(SearchBudgetMs());
  options.search_threads = SearchThreads();
  std::vector<int64_t> offsets;
  int64_t nodes = 0;
  int64_t bound = 0;
  int64_t load = 1;
  std::string method;
  for (auto _ : state) {
    auto plan = policy::PlanPlacement(buffers, options);
    offsets = plan->offsets;
    nodes = plan->search_nodes;
    bound = plan->lower_bound;
    load = std::max<int64_t>(plan->load, 1);
    method = plan->method;
  }
  Report(state, buffers, offsets, capacity);
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["bound"] = static_cast<double>(bound) / static_cast<double>(load);
  state.counters["budget_ms"] = static_cast<double>(SearchBudgetMs());
  state.counters["threads"] = SearchThreads();
  state.SetLabel(method);
}

// One textbook rule (O(n^2)); the label names it.
void Baseline(benchmark::State& state, const std::vector<PlacementBuffer>& buffers,
              int64_t capacity, policy_testing::ReferenceRule rule) {
  if (buffers.empty()) return state.SkipWithError("instance not found (run with bazel run)");
  std::vector<int64_t> offsets;
  for (auto _ : state) {
    offsets = policy_testing::ReferencePlace(buffers, rule);
    benchmark::DoNotOptimize(offsets.data());
  }
  Report(state, buffers, offsets, capacity);
  state.SetLabel(policy_testing::ReferenceRuleName(rule));
}

struct Instance {
  std::string name;
  std::string file;  // Empty: generated by `family`.
  int64_t capacity = 0;
  size_t prefix = 0;  // Use only the first `prefix` buffers (0: all).
  std::string family;
  int generated = 0;  // Buffers to generate.
};

const std::vector<Instance>& Instances() {
  static const auto* instances = new std::vector<Instance>{
      {"Minimalloc_A", "minimalloc/A.1048576.csv", 1048576},
      {"Minimalloc_B", "minimalloc/B.1048576.csv", 1048576},
      {"Minimalloc_C", "minimalloc/C.1048576.csv", 1048576},
      {"Minimalloc_D", "minimalloc/D.1048576.csv", 1048576},
      {"Minimalloc_E", "minimalloc/E.1048576.csv", 1048576},
      {"Minimalloc_F", "minimalloc/F.1048576.csv", 1048576},
      {"Minimalloc_G", "minimalloc/G.1048576.csv", 1048576},
      {"Minimalloc_H", "minimalloc/H.1048576.csv", 1048576},
      {"Minimalloc_I", "minimalloc/I.1048576.csv", 1048576},
      {"Minimalloc_J", "minimalloc/J.1048576.csv", 1048576},
      {"Minimalloc_K", "minimalloc/K.1048576.csv", 1048576},
      {"Minimalloc_input12", "minimalloc/input.12.csv", 12},
      {"G_1", "idealloc/G_1.csv", 0},
      {"resnet50", "idealloc/resnet50.csv", 0},
      {"Y1Prefix20k", "idealloc/Y_1.csv", 0, 20000},
      {"Y_1", "idealloc/Y_1.csv", 0},
      // Generated traces of the families real compiler exports come from (seed 1).
      {"Gen_somas_20k", "", 0, 0, "somas", 20000},
      {"Gen_iopddl_20k", "", 0, 0, "iopddl", 20000},
      {"Gen_training_20k", "", 0, 0, "training", 20000},
      {"Gen_skip_connections_20k", "", 0, 0, "skip_connections", 20000},
      {"Gen_power_law_20k", "", 0, 0, "power_law", 20000},
  };
  return *instances;
}

const int kRegistered = [] {
  for (const Instance& instance : Instances()) {
    auto* buffers = new std::vector<PlacementBuffer>();
    auto load = [buffers, instance]() -> const std::vector<PlacementBuffer>& {
      if (buffers->empty()) {
        if (instance.file.empty()) {
          *buffers =
              policy_testing::FindTraceFamily(instance.family).generate(1, instance.generated);
        } else {
          *buffers = Load(instance.file);
        }
        if (instance.prefix > 0 && buffers->size() > instance.prefix) {
          buffers->resize(instance.prefix);
        }
      }
      return *buffers;
    };
    const bool large = instance.prefix > 0 || instance.name == "Y_1" || instance.generated > 0;
    benchmark::RegisterBenchmark(
        ("BM_Greedy_" + instance.name).c_str(),
        [load, instance](benchmark::State& state) { Greedy(state, load(), instance.capacity); })
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(
        ("BM_Search_" + instance.name).c_str(),
        [load, instance](benchmark::State& state) { Search(state, load(), instance.capacity); })
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
    for (policy_testing::ReferenceRule rule : policy_testing::AllReferenceRules()) {
      auto* baseline = benchmark::RegisterBenchmark(
          ("BM_Baseline_" + instance.name + "/" + policy_testing::ReferenceRuleName(rule)).c_str(),
          [load, instance, rule](benchmark::State& state) {
            Baseline(state, load(), instance.capacity, rule);
          });
      baseline->Unit(benchmark::kMillisecond);
      if (large) baseline->Iterations(1);  // Seconds each.
    }
  }
  // One greedy order alone on the 20k prefix of Y_1 (full pass, no early stop): where the
  // portfolio's time goes.
  for (policy::GreedyOrder order : policy::PlannerOptions().orders) {
    benchmark::RegisterBenchmark(
        (std::string("BM_GreedyOrder_Y1Prefix20k/") + policy::GreedyOrderName(order)).c_str(),
        [order](benchmark::State& state) {
          static const auto* buffers = [] {
            auto* b = new std::vector<PlacementBuffer>(Load("idealloc/Y_1.csv"));
            if (b->size() > 20000) b->resize(20000);
            return b;
          }();
          if (buffers->empty()) return state.SkipWithError("instance not found");
          std::vector<int64_t> offsets;
          for (auto _ : state) {
            offsets = policy::GreedyBestFit(*buffers, 1, order);
            benchmark::DoNotOptimize(offsets.data());
          }
          Report(state, *buffers, offsets, 0);
        })
        ->Unit(benchmark::kMillisecond);
  }
  // Growth of greedy with the buffer count, on generated traces.
  for (const char* family : {"iopddl", "somas"}) {
    benchmark::RegisterBenchmark((std::string("BM_GreedyGrowth_") + family).c_str(),
                                 [family](benchmark::State& state) {
                                   const std::vector<PlacementBuffer> buffers =
                                       policy_testing::FindTraceFamily(family).generate(
                                           1, static_cast<int>(state.range(0)));
                                   Greedy(state, buffers, 0);
                                 })
        ->Unit(benchmark::kMillisecond)
        ->Arg(1000)
        ->Arg(10000)
        ->Arg(100000)
        ->Arg(1000000)
        ->Iterations(1);
  }
  return 0;
}();

}  // namespace
}  // namespace accelmem
