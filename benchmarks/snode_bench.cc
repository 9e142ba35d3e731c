// snode_bench: the sparse runtime's SNode operations against plain baselines.
//
//   * Pointer activation (cells recycled and collected between rounds, so every activation takes
//     a free-list cell, as in steady state), activation of already-active cells, and lookup in
//     sequential and random order — the runtime functions kernels call (Pointer_activate /
//     Pointer_lookup_element), plus the host API's Write for its per-call overhead.
//   * Dynamic append (Dynamic_allocate + store) against std::vector::push_back on one thread,
//     and two threads appending to one list against a std::mutex-guarded vector.
//   * Pointer activation from ParallelStructFor workers, with and without the per-worker
//     NodeCaches, on 1 and 2 threads.
//   * Struct-for visit rate (StructFor / ParallelStructFor over a fully active
//     pointer(1024).dense(1024) of f32) against a plain loop over a dense float array.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/sparse_runtime.h"

namespace {

using namespace accelmem::sparse_runtime;  // NOLINT: benchmark brevity

constexpr int32_t kCells = 1 << 20;

// root.pointer(i, 2^20).place<int32>("x"): one NodeManager cell (8 B) per active pointer cell.
struct PointerTree {
  PointerTree() {
    tree.root().pointer(Axis(0), kCells).place<int32_t>("x");
    if (!tree.Finalize().ok()) std::abort();
    rt = std::move(SparseRuntime::Create(tree)).value();
    ptr = tree.FindPlace("x")->parent();
    meta = rt->meta(*ptr);
    node = rt->context()->root + ptr->offset_in_parent_cell();
  }
  void DeactivateAllAndCollect() {
    for (int32_t i = 0; i < kCells; ++i) Pointer_deactivate(meta, node, i);
    if (!rt->CollectGarbage().ok()) std::abort();
  }
  SNodeTree tree;
  std::unique_ptr<SparseRuntime> rt;
  const SNode* ptr;
  Ptr meta;
  Ptr node;
};

void BM_Pointer_Activate_AfterGc(benchmark::State& state) {
  PointerTree t;
  for (int32_t i = 0; i < kCells; ++i) Pointer_activate(t.meta, t.node, i);
  t.DeactivateAllAndCollect();
  for (auto _ : state) {
    for (int32_t i = 0; i < kCells; ++i) Pointer_activate(t.meta, t.node, i);
    state.PauseTiming();
    t.DeactivateAllAndCollect();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}

void BM_Pointer_Activate_AlreadyActive(benchmark::State& state) {
  PointerTree t;
  for (int32_t i = 0; i < kCells; ++i) Pointer_activate(t.meta, t.node, i);
  for (auto _ : state) {
    for (int32_t i = 0; i < kCells; ++i) Pointer_activate(t.meta, t.node, i);
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}

void BM_Pointer_Deactivate(benchmark::State& state) {
  const bool random = state.range(0) != 0;
  PointerTree t;
  std::vector<int32_t> order(kCells);
  std::iota(order.rbegin(), order.rend(), 0);
  if (random) std::shuffle(order.begin(), order.end(), std::mt19937(7));
  for (auto _ : state) {
    state.PauseTiming();
    for (int32_t i = 0; i < kCells; ++i) Pointer_activate(t.meta, t.node, i);
    state.ResumeTiming();
    for (int32_t i : order) Pointer_deactivate(t.meta, t.node, i);
    state.PauseTiming();
    if (!t.rt->CollectGarbage().ok()) std::abort();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}

void BM_Pointer_Lookup(benchmark::State& state) {
  const bool random = state.range(0) != 0;
  PointerTree t;
  for (int32_t i = 0; i < kCells; ++i) Pointer_activate(t.meta, t.node, i);
  std::vector<int32_t> order(kCells);
  std::iota(order.begin(), order.end(), 0);
  if (random) std::shuffle(order.begin(), order.end(), std::mt19937(7));
  int64_t sum = 0;
  for (auto _ : state) {
    for (int32_t i : order)
      sum += *reinterpret_cast<int32_t*>(Pointer_lookup_element(t.meta, t.node, i));
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations() * kCells);
}

// The host API on the same tree: index checks, shared lock, walk, activation, store; 1 or 2
// threads writing disjoint halves.
template <typename Fn>
void RunThreads(int threads, Fn&& fn);

void BM_HostApi_Write(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  PointerTree t;
  const SNode& x = *t.tree.FindPlace("x");
  for (auto _ : state) {
    RunThreads(threads, [&](int w) {
      const int32_t per = kCells / threads;
      for (int32_t i = w * per; i < (w + 1) * per; ++i) {
        if (!t.rt->Write<int32_t>(x, {i}, i).ok()) std::abort();
      }
    });
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}

// Baseline for lookups: a plain array of the same values.
void BM_DenseArray_Lookup(benchmark::State& state) {
  const bool random = state.range(0) != 0;
  std::vector<int32_t> values(kCells, 1);
  std::vector<int32_t> order(kCells);
  std::iota(order.begin(), order.end(), 0);
  if (random) std::shuffle(order.begin(), order.end(), std::mt19937(7));
  int64_t sum = 0;
  for (auto _ : state) {
    for (int32_t i : order) sum += values[i];
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations() * kCells);
}

// ---------------------------------------------------------------------------------------------
// Dynamic append: root.dynamic(i, 2^22, chunk 4096).place<int32>.
constexpr int32_t kAppends = 1 << 20;

struct DynamicTree {
  DynamicTree() {
    tree.root().dynamic(Axis(0), 4 * kAppends, 4096).place<int32_t>("d");
    if (!tree.Finalize().ok()) std::abort();
    rt = std::move(SparseRuntime::Create(tree)).value();
    dyn = tree.FindPlace("d")->parent();
    meta = rt->meta(*dyn);
    node = rt->context()->root + dyn->offset_in_parent_cell();
  }
  SNodeTree tree;
  std::unique_ptr<SparseRuntime> rt;
  const SNode* dyn;
  Ptr meta;
  Ptr node;
};

template <typename Fn>
void RunThreads(int threads, Fn&& fn) {
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back([&, t] { fn(t); });
  fn(0);
  for (auto& th : pool) th.join();
}

void BM_Dynamic_Append(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  DynamicTree t;
  auto round = [&] {
    RunThreads(threads, [&](int) {
      for (int32_t k = 0; k < kAppends / threads; ++k) {
        int32_t len;
        *reinterpret_cast<int32_t*>(Dynamic_allocate(t.meta, t.node, &len)) = k;
      }
    });
  };
  round();
  for (auto _ : state) {
    state.PauseTiming();
    Dynamic_deactivate(t.meta, t.node);
    if (!t.rt->CollectGarbage().ok()) std::abort();
    state.ResumeTiming();
    round();
  }
  state.SetItemsProcessed(state.iterations() * kAppends);
}

void BM_StdVector_PushBack(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  std::vector<int32_t> v;
  std::mutex mu;
  for (auto _ : state) {
    state.PauseTiming();
    v.clear();
    v.shrink_to_fit();
    state.ResumeTiming();
    if (threads == 1) {
      for (int32_t k = 0; k < kAppends; ++k) v.push_back(k);
    } else {
      RunThreads(threads, [&](int) {
        for (int32_t k = 0; k < kAppends / threads; ++k) {
          std::lock_guard<std::mutex> lock(mu);
          v.push_back(k);
        }
      });
    }
  }
  state.SetItemsProcessed(state.iterations() * kAppends);
}

// ---------------------------------------------------------------------------------------------
// Struct-for over a fully active pointer(1024).dense(1024) of f32.
struct StructForTree {
  explicit StructForTree(int threads) {
    tree.root().pointer(Axis(0), 1024).dense(Axis(0), 1024).place<float>("v");
    if (!tree.Finalize().ok()) std::abort();
    SparseRuntimeOptions options;
    options.num_threads = threads;
    rt = std::move(SparseRuntime::Create(tree, options)).value();
    v = tree.FindPlace("v");
    for (int32_t i = 0; i < kCells; ++i) {
      if (!rt->Write<float>(*v, {i}, 1.0f).ok()) std::abort();
    }
  }
  SNodeTree tree;
  std::unique_ptr<SparseRuntime> rt;
  const SNode* v;
};

void BM_StructFor_Visit(benchmark::State& state) {
  StructForTree t(1);
  double sum = 0;
  for (auto _ : state) {
    if (!t.rt->StructFor(*t.v, [&](absl::Span<const int32_t> index,
                                   void* value) { sum += *static_cast<float*>(value) + index[0]; })
             .ok()) {
      std::abort();
    }
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations() * kCells);
}

void BM_ParallelStructFor_Visit(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  StructForTree t(threads);
  std::vector<double> sums(threads * 8);
  for (auto _ : state) {
    if (!t.rt->ParallelStructFor(*t.v,
                                 [&](absl::Span<const int32_t> index, void* value, int w) {
                                   sums[w * 8] += *static_cast<float*>(value) + index[0];
                                 })
             .ok()) {
      std::abort();
    }
  }
  benchmark::DoNotOptimize(sums.data());
  state.SetItemsProcessed(state.iterations() * kCells);
}

// Pointer activation from ParallelStructFor workers: a dense(4096) driver (4 struct-for tasks)
// whose visitor activates 64 pointer cells each (2^18 in all, through the host API), with the
// per-worker NodeCaches
// (/caches:1, the default) or straight from the NodeManager (/caches:0, one shared atomic per
// cell, as upstream); everything is deactivated and collected between iterations, untimed.
void BM_ParallelStructFor_Activate(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  SNodeTree tree;
  constexpr int32_t kActivated = 1 << 18;  // the two axes' index space must fit in 2^31
  SNode& driver = tree.root().dense(Axis(0), 4096);
  driver.place<int32_t>("d");
  SNode& ptr = tree.root().pointer(Axis(1), kActivated);
  ptr.place<int32_t>("x");
  if (!tree.Finalize().ok()) std::abort();
  SparseRuntimeOptions options;
  options.num_threads = threads;
  options.worker_caches = state.range(1) != 0;
  options.auto_collect = false;
  auto rt = std::move(SparseRuntime::Create(tree, options)).value();
  for (auto _ : state) {
    if (!rt->ParallelStructFor(driver, [&](absl::Span<const int32_t> index, void*, int) {
             for (int32_t m = 0; m < 64; ++m) {
               if (!rt->Activate(ptr, {index[0] * 64 + m}).ok()) std::abort();
             }
           }).ok()) {
      std::abort();
    }
    state.PauseTiming();
    Ptr meta = rt->meta(ptr);
    Ptr node = rt->context()->root + ptr.offset_in_parent_cell();
    for (int32_t i = 0; i < kActivated; ++i) Pointer_deactivate(meta, node, i);
    if (!rt->CollectGarbage().ok()) std::abort();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kActivated);
}

void BM_DenseLoop_Visit(benchmark::State& state) {
  std::vector<float> values(kCells, 1.0f);
  double sum = 0;
  for (auto _ : state) {
    for (int32_t i = 0; i < kCells; ++i) sum += values[i] + i;
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}

BENCHMARK(BM_Pointer_Activate_AfterGc)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Pointer_Activate_AlreadyActive)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Pointer_Deactivate)->ArgName("random")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Pointer_Lookup)->ArgName("random")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DenseArray_Lookup)->ArgName("random")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HostApi_Write)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Dynamic_Append)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_StdVector_PushBack)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_StructFor_Visit)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParallelStructFor_Visit)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ParallelStructFor_Activate)
    ->ArgNames({"threads", "caches"})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Args({2, 0})
    ->Args({2, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_DenseLoop_Visit)->Unit(benchmark::kMillisecond);

}  // namespace
