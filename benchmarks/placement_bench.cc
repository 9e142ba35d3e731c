// Static placement: //policy:lifetime_planner on the public instances of
// //third_party/placement_instances, against a naive O(n^2) best-fit-by-size baseline (the
// TFLite/XLA greedy without an interval structure).
//
// Counters: ratio = height / LOAD (1.0 is optimal), fits = 1 if the height is within the
// capacity (1 MiB for MiniMalloc A..K, unbounded otherwise), buffers, nodes (search).
//
//   bazel run -c opt //benchmarks:placement_bench                       # everything, 1 s search
//   bazel run -c opt //benchmarks:placement_bench -- --benchmark_filter=Greedy
//   PLACEMENT_BENCH_BUDGET_MS=10000 bazel run -c opt //benchmarks:placement_bench --
//       --benchmark_filter=Search_Minimalloc                   # (one line) the 10 s figures
//
// Speed bars: BM_Greedy_resnet50 (1,042 buffers), BM_Greedy_Y1Prefix20k (the first 20,000
// buffers of Y_1), BM_Greedy_Y_1 (62,185 buffers); one core.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "policy/lifetime_planner.h"
#include "policy/placement_checker.h"
#include "tools/place_csv.h"

namespace accelmem {
namespace {

using policy::PlacementBuffer;

constexpr char kDir[] = "third_party/placement_instances/";

std::vector<PlacementBuffer> Load(const std::string& file) {
  auto text = tools::ReadTextFile(kDir + file);
  if (!text.ok()) return {};
  auto buffers = tools::ParseInstanceCsv(*text, file);
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
  for (auto _ : state) {
    auto plan = policy::PlanPlacement(buffers);
    offsets = plan->offsets;
    benchmark::DoNotOptimize(offsets.data());
  }
  Report(state, buffers, offsets, capacity);
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
  for (auto _ : state) {
    auto plan = policy::PlanPlacement(buffers, options);
    offsets = plan->offsets;
    nodes = plan->search_nodes;
  }
  Report(state, buffers, offsets, capacity);
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["budget_ms"] = static_cast<double>(SearchBudgetMs());
  state.counters["threads"] = SearchThreads();
}

// Baseline: best fit by size, scanning every placed buffer for each new one.
void NaiveBestFit(benchmark::State& state, const std::vector<PlacementBuffer>& buffers,
                  int64_t capacity) {
  if (buffers.empty()) return state.SkipWithError("instance not found (run with bazel run)");
  std::vector<int64_t> offsets;
  for (auto _ : state) {
    const size_t n = buffers.size();
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return buffers[a].size > buffers[b].size; });
    offsets.assign(n, 0);
    std::vector<size_t> placed;
    std::vector<std::pair<int64_t, int64_t>> occupied;
    for (size_t i : order) {
      const PlacementBuffer& b = buffers[i];
      occupied.clear();
      for (size_t j : placed) {
        if (policy::LifetimesIntersect(b, buffers[j])) {
          occupied.push_back({offsets[j], offsets[j] + buffers[j].size});
        }
      }
      std::sort(occupied.begin(), occupied.end());
      int64_t best = -1, best_gap = INT64_MAX, covered = 0;
      for (const auto& [lo, hi] : occupied) {
        if (lo - covered >= b.size && lo - covered < best_gap) {
          best_gap = lo - covered;
          best = covered;
        }
        covered = std::max(covered, hi);
      }
      offsets[i] = best >= 0 ? best : covered;
      if (b.size > 0 && b.start < b.end) placed.push_back(i);
    }
    benchmark::DoNotOptimize(offsets.data());
  }
  Report(state, buffers, offsets, capacity);
}

struct Instance {
  std::string name;
  std::string file;
  int64_t capacity;
  size_t prefix = 0;  // Use only the first `prefix` buffers (0: all).
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
  };
  return *instances;
}

const int kRegistered = [] {
  for (const Instance& instance : Instances()) {
    auto* buffers = new std::vector<PlacementBuffer>();
    auto load = [buffers, instance]() -> const std::vector<PlacementBuffer>& {
      if (buffers->empty()) {
        *buffers = Load(instance.file);
        if (instance.prefix > 0 && buffers->size() > instance.prefix) {
          buffers->resize(instance.prefix);
        }
      }
      return *buffers;
    };
    benchmark::RegisterBenchmark(
        ("BM_Greedy_" + instance.name).c_str(),
        [load, instance](benchmark::State& state) { Greedy(state, load(), instance.capacity); })
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(
        ("BM_Search_" + instance.name).c_str(),
        [load, instance](benchmark::State& state) { Search(state, load(), instance.capacity); })
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
    auto* naive = benchmark::RegisterBenchmark(("BM_NaiveBestFit_" + instance.name).c_str(),
                                               [load, instance](benchmark::State& state) {
                                                 NaiveBestFit(state, load(), instance.capacity);
                                               });
    naive->Unit(benchmark::kMillisecond);
    if (instance.prefix > 0 || instance.name == "Y_1") naive->Iterations(1);  // Seconds each.
  }
  return 0;
}();

}  // namespace
}  // namespace accelmem
