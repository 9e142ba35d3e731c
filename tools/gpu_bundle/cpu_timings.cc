#include "tools/gpu_bundle/cpu_timings.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "absl/strings/str_format.h"
#include "gc/device/gc_scratch.h"
#include "gc/gc_cpu_parallel.h"
#include "runtime/sparse_runtime.h"
#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/device/runtime_memory.h"
#include "sparse_runtime/host_memory_pool.h"
#include "sparse_runtime/snode_tree.h"

namespace accelmem {
namespace tools {
namespace {

using Clock = std::chrono::steady_clock;
using sparse_runtime::NodeManager;

double Microseconds(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// A NodeManager on the host pool, as the CPU runtime has it.
struct Heap {
  explicit Heap(uint64_t cell_bytes) {
    pool.Attach(&memory);
    ok = nm.init(&memory, cell_bytes);
  }
  sparse_runtime::HostMemoryPool pool;
  sparse_runtime::RuntimeMemory memory{};
  NodeManager nm{};
  gc::GcScratch scratch{};
  bool ok = false;
};

// Runs body(t) on `threads` threads (the caller is thread 0); returns the wall time in us.
template <typename Body>
double OnThreads(int threads, const Body& body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      body(t);
    });
  }
  while (ready.load() < threads - 1) std::this_thread::yield();
  const Clock::time_point start = Clock::now();
  go.store(true);
  body(0);
  for (std::thread& thread : pool) thread.join();
  return Microseconds(start);
}

// Allocates `n` cells in blocks of NodeManager::kCellBlock (as a NodeCache refills), split over
// `threads`; returns the cells.
std::vector<uint8_t*> AllocateCells(NodeManager* nm, int64_t n, int threads, double* us) {
  std::vector<uint8_t*> cells(n);
  *us = OnThreads(threads, [&](int t) {
    const int64_t begin = n * t / threads, end = n * (t + 1) / threads;
    for (int64_t k = begin; k < end; k += NodeManager::kCellBlock) {
      const int32_t m = static_cast<int32_t>(std::min<int64_t>(NodeManager::kCellBlock, end - k));
      nm->allocate_cells(cells.data() + k, m);
    }
  });
  return cells;
}

double RecycleCells(NodeManager* nm, const std::vector<uint8_t*>& cells, int threads) {
  const int64_t n = static_cast<int64_t>(cells.size());
  return OnThreads(threads, [&](int t) {
    const int64_t begin = n * t / threads, end = n * (t + 1) / threads;
    for (int64_t k = begin; k < end; k += NodeManager::kCellBlock) {
      const int32_t m = static_cast<int32_t>(std::min<int64_t>(NodeManager::kCellBlock, end - k));
      nm->recycle_cells(cells.data() + k, m);
    }
  });
}

std::string Rate(const char* what, int threads, int64_t cells, double us) {
  return absl::StrFormat("%s threads=%d cells=%d: %.0f us (%.3f G cells/s)", what, threads, cells,
                         us, cells / us / 1e3);
}

// GC, allocation and recycling at `threads`: the fastest of `rounds` rounds, each allocating the
// cells, dirtying them, recycling them and collecting them.
void HeapRows(const CpuTimingOptions& o, int threads, std::vector<std::string>* rows) {
  Heap heap(o.cell_bytes);
  if (!heap.ok) {
    rows->push_back("error: NodeManager init failed");
    return;
  }
  gc::CpuParallelGc collector(threads, /*min_parallel_bytes=*/0);
  double best_gc = 1e30, best_allocate = 1e30, best_recycle = 1e30;
  for (int round = 0; round < o.rounds; ++round) {
    double allocate_us = 0;
    const std::vector<uint8_t*> cells = AllocateCells(&heap.nm, o.cells, threads, &allocate_us);
    for (uint8_t* cell : cells) std::memset(cell, 0xab, o.cell_bytes);
    const double recycle_us = RecycleCells(&heap.nm, cells, threads);
    const Clock::time_point start = Clock::now();
    const absl::Status status = collector.Collect(&heap.nm, &heap.scratch);
    const double gc_us = Microseconds(start);
    if (!status.ok()) {
      rows->push_back("error: cpu_gc: " + std::string(status.message()));
      return;
    }
    // Round 0 allocates fresh cells; later rounds reuse the collected ones (the common case).
    if (round > 0 || o.rounds == 1) best_allocate = std::min(best_allocate, allocate_us);
    best_recycle = std::min(best_recycle, recycle_us);
    best_gc = std::min(best_gc, gc_us);
  }
  const double bytes = static_cast<double>(o.cells) * o.cell_bytes;
  rows->push_back(
      absl::StrFormat("cpu_gc threads=%d cells=%d cell_bytes=%d: %.0f us (%.2f GB/s "
                      "zeroed)",
                      threads, o.cells, o.cell_bytes, best_gc, bytes / best_gc / 1e3));
  rows->push_back(Rate("cpu_allocate", threads, o.cells, best_allocate));
  rows->push_back(Rate("cpu_recycle", threads, o.cells, best_recycle));
}

// ParallelStructFor over o.cells active cells of a pointer -> dense -> place tree.
void StructForRow(const CpuTimingOptions& o, int threads, std::vector<std::string>* rows) {
  constexpr int kDense = 256;
  const int pointers = static_cast<int>((o.cells + kDense - 1) / kDense);
  sparse_runtime::SNodeTree tree;
  const sparse_runtime::Axis i(0);
  tree.root().pointer(i, pointers).dense(i, kDense).place<float>("x");
  if (!tree.Finalize().ok()) {
    rows->push_back("error: cpu_struct_for: the tree does not finalize");
    return;
  }
  runtime::SparseRuntimeOptions options;
  options.num_threads = threads;
  auto rt = runtime::SparseRuntime::Create(tree, options);
  if (!rt.ok()) {
    rows->push_back("error: cpu_struct_for: " + std::string(rt.status().message()));
    return;
  }
  const sparse_runtime::SNode& x = *tree.FindPlace("x");
  for (int p = 0; p < pointers; ++p) {
    const int32_t index[1] = {p * kDense};
    if (!(*rt)->Activate(*x.parent(), index).ok()) {
      rows->push_back("error: cpu_struct_for: activation failed");
      return;
    }
  }
  double best = 1e30;
  int64_t visited = 0;
  for (int round = 0; round < o.rounds; ++round) {
    std::vector<int64_t> per_worker(256, 0);
    const Clock::time_point start = Clock::now();
    const absl::Status status =
        (*rt)->ParallelStructFor(x, [&](absl::Span<const int32_t>, void* cell, int worker) {
          *static_cast<float*>(cell) += 1.0f;
          ++per_worker[worker & 255];
        });
    best = std::min(best, Microseconds(start));
    if (!status.ok()) {
      rows->push_back("error: cpu_struct_for: " + std::string(status.message()));
      return;
    }
    visited = 0;
    for (int64_t v : per_worker) visited += v;
  }
  rows->push_back(Rate("cpu_struct_for", threads, visited, best));
}

}  // namespace

std::vector<std::string> RunCpuTimings(const CpuTimingOptions& options) {
  std::vector<std::string> rows;
  for (int threads : options.threads) {
    HeapRows(options, threads, &rows);
    StructForRow(options, threads, &rows);
  }
  return rows;
}

}  // namespace tools
}  // namespace accelmem
