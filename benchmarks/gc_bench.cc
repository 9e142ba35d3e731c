// gc_bench: what garbage collection of recycled sparse-runtime cells costs, against one memset
// and against upstream's serial GC.
//
// Each configuration is N recycled cells of `cell_bytes` scattered over a NodeManager of 2N cells
// (a random half recycled, in random order), N = 10^4 .. 10^6, cells of 16, 64, 256, 4096 bytes
// (at most 1 GiB of recycled bytes). Rows per configuration, all on the same memory:
//   ZeroCells_OneMemsetLimit           the limit: one memset of N * cell_bytes bytes
//   ZeroCells_MemsetPerCellRandomOrder baseline: one memset per cell, in recycling order
//   Gc_UpstreamSerial                  baseline: upstream's gc_serial (//benchmarks/baselines)
//                                      on the same cells, recycled in the same order
//   Gc_SerialAutoOrder                 gc/gc_serial in its default order (the runtime's GC)
//   Gc_SerialSorted                    gc/gc_serial, address order (bitmap), one thread
//   Gc_SerialRecycleOrder              gc/gc_serial in upstream's order (no sorting), one thread
//   Gc_RuntimeNodeManagerGcSerial      sparse_runtime's NodeManager::gc_serial (upstream algorithm)
//   Gc_ParallelSorted / _RecycleOrder  gc/gc_cpu_parallel with one worker per hardware thread
//   Gc_Interleaved                     the limit, Gc_UpstreamSerial and Gc_SerialAutoOrder
//                                      interleaved in one row, ratios per iteration (below)
//   Gc_StoreWidths                     Gc_SerialAutoOrder streaming 16-, 32- and 64-byte stores,
//                                      interleaved with the limit (cells of 64 B and up)
//   Gc_Cuda_*                          (only with --config=gpu) the device GC: gc_bench_cuda.cc
// Every GC row is a complete collection (phases 0-2: free-list compaction, bookkeeping, refill,
// zeroing); between iterations the state is restored in O(1) (the recycled list's lazy clear keeps
// its contents). Single-threaded rows report CPU time, the parallel rows wall time. Counters:
// items_per_second = cells/s, bytes_per_second = zeroed bytes/s, and vs_memset = this row's
// bandwidth / the memset limit row's bandwidth for the same bytes (the limit row runs first in each
// configuration; if it is filtered out, a memset timed at set-up), and vs_upstream = the
// Gc_UpstreamSerial row's time per collection / this row's (CPU time of one thread for the
// upstream row, this row's own time measure; missing if the upstream row was filtered out). The
// upstream manager is a second NodeManager of the same cells (2N from the same pool, faulted in),
// whose recycled list holds the same N indices in the same order.
//
// Without arguments the CPU suite takes under a minute.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "benchmarks/baselines/paired_timing.h"
#include "benchmarks/baselines/upstream_node_manager.h"
#include "gc/device/gc_scratch.h"
#include "gc/device/gc_serial.h"
#include "gc/device/phase2_refill_and_zero.h"
#include "gc/gc_cpu_parallel.h"
#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/device/runtime_memory.h"
#include "sparse_runtime/host_memory_pool.h"

namespace {

using accelmem::baselines::Contender;
using accelmem::baselines::RunInterleaved;
using accelmem::baselines::UpstreamAllocator;
using accelmem::baselines::UpstreamNodeManager;
using accelmem::baselines::WarmUp;
using accelmem::gc::CpuParallelGc;
using accelmem::gc::GcScratch;
using accelmem::sparse_runtime::HostMemoryPool;
using accelmem::sparse_runtime::NodeManager;
using accelmem::sparse_runtime::RuntimeMemory;

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// One configuration's heap, built once and shared by its rows (they run one after another).
struct Fixture {
  Fixture(int64_t cells, int64_t cell_bytes) : cells(cells), cell_bytes(cell_bytes) {
    pool.Attach(&memory);
    if (!nm.init(&memory, static_cast<uint64_t>(cell_bytes))) std::abort();
    std::vector<int32_t> all(static_cast<size_t>(2 * cells));
    if (!nm.allocate_indices(all.data(), static_cast<int32_t>(all.size()))) std::abort();
    for (int32_t index : all) std::memset(nm.get_cell(index), 1, nm.element_size);  // fault in
    std::mt19937_64 rng(42);
    std::shuffle(all.begin(), all.end(), rng);
    recycled.assign(all.begin(), all.begin() + cells);
    nm.recycle_indices(recycled.data(), static_cast<int32_t>(cells));
    for (int32_t index : recycled) recycled_cells.push_back(nm.get_cell(index));
    // The limit buffer comes from the same pool as the cells (same page size and huge-page
    // advice), so that the memset and the GC write the same kind of memory.
    limit_bytes = static_cast<size_t>(cells * cell_bytes);
    limit = static_cast<char*>(pool.Allocate(limit_bytes, 4096));
    if (limit == nullptr) std::abort();
    std::memset(limit, 1, limit_bytes);  // fault in
    memset_bytes_per_second = MeasureMemset();
  }

  // Restores the pre-GC state: nothing on the free list, the same N recycled indices.
  void Reset() {
    nm.free_list.resize(0);
    nm.free_list_used = 0;
    ++nm.gc_epoch;  // as a GC does (no NodeCache here holds a reservation)
    nm.recycled_list.resize(static_cast<int32_t>(cells));
  }

  // Upstream's NodeManager over 2N cells of the same size from the same pool (built on first
  // use): the same indices recycled in the same order.
  UpstreamNodeManager& Upstream() {
    if (upstream == nullptr) {
      upstream = std::make_unique<UpstreamNodeManager>(
          nm.element_size, UpstreamNodeManager::kRuntimeChunkNumElements,
          UpstreamAllocator{&HostMemoryPool::AllocateCallback, &pool});
      for (int64_t k = 0; k < 2 * cells; ++k) {
        std::memset(upstream->allocate(), 1, upstream->element_size);  // fault in
      }
      for (int32_t index : recycled) upstream->recycled_list->push_back(index);
    }
    return *upstream;
  }
  void ResetUpstream() {
    upstream->free_list->resize(0);
    upstream->free_list_used = 0;
    upstream->recycled_list->resize(static_cast<int32_t>(cells));
  }

  double MeasureMemset() {
    double best = 1e30;
    for (int k = 0; k < 5; ++k) {
      const double start = ThreadCpuSeconds();
      std::memset(limit, 0, limit_bytes);
      benchmark::ClobberMemory();
      best = std::min(best, ThreadCpuSeconds() - start);
    }
    return static_cast<double>(limit_bytes) / best;
  }

  const int64_t cells, cell_bytes;
  HostMemoryPool pool;
  RuntimeMemory memory{};
  NodeManager nm{};
  GcScratch scratch{};
  std::vector<int32_t> recycled;
  std::vector<uint8_t*> recycled_cells;
  char* limit = nullptr;  // limit_bytes from `pool`
  size_t limit_bytes = 0;
  // Fallback when the limit row is filtered out: best of 5 memsets at set-up (CPU time).
  double memset_bytes_per_second = 0;
  // Measured by the limit row (CPU time), used by the rows after it.
  double limit_bytes_per_second = 0;
  std::unique_ptr<UpstreamNodeManager> upstream;
  // CPU seconds per collection of the upstream row (0: it did not run).
  double upstream_seconds = 0;
};

Fixture& GetFixture(int64_t cells, int64_t cell_bytes) {
  static std::unique_ptr<Fixture> fixture;
  if (!fixture || fixture->cells != cells || fixture->cell_bytes != cell_bytes) {
    fixture.reset();  // free the previous configuration first
    fixture = std::make_unique<Fixture>(cells, cell_bytes);
  }
  return *fixture;
}

CpuParallelGc& ParallelGc() {
  static CpuParallelGc gc(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  return gc;
}

void SetCounters(benchmark::State& state, const Fixture& f) {
  const double bytes = static_cast<double>(f.cells * f.cell_bytes);
  state.SetItemsProcessed(state.iterations() * f.cells);
  state.SetBytesProcessed(state.iterations() * f.cells * f.cell_bytes);
  // Seconds the memset limit needs for the same bytes, as a rate: = memset time / our time.
  const double limit =
      f.limit_bytes_per_second > 0 ? f.limit_bytes_per_second : f.memset_bytes_per_second;
  state.counters["vs_memset"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * bytes / limit, benchmark::Counter::kIsRate);
  // Seconds upstream's GC needs for as many collections, as a rate: = upstream time / our time.
  if (f.upstream_seconds > 0) {
    state.counters["vs_upstream"] = benchmark::Counter(
        static_cast<double>(state.iterations()) * f.upstream_seconds, benchmark::Counter::kIsRate);
  }
  state.counters["workers"] = 1;
}

// The limit: one memset of the same number of bytes.
void BM_ZeroCells_OneMemsetLimit(benchmark::State& state) {
  Fixture& f = GetFixture(state.range(0), state.range(1));
  const double start = ThreadCpuSeconds();
  for (auto _ : state) {
    std::memset(f.limit, 0, f.limit_bytes);
    benchmark::DoNotOptimize(f.limit);
    benchmark::ClobberMemory();
  }
  const double seconds = ThreadCpuSeconds() - start;
  if (seconds > 0) {
    f.limit_bytes_per_second =
        static_cast<double>(state.iterations()) * static_cast<double>(f.limit_bytes) / seconds;
  }
  SetCounters(state, f);
}

// Baseline: one memset per recycled cell, in recycling (random) order.
void BM_ZeroCells_MemsetPerCellRandomOrder(benchmark::State& state) {
  Fixture& f = GetFixture(state.range(0), state.range(1));
  const size_t bytes = f.nm.element_size;
  for (auto _ : state) {
    for (uint8_t* cell : f.recycled_cells) std::memset(cell, 0, bytes);
    benchmark::ClobberMemory();
  }
  SetCounters(state, f);
}

// Baseline: upstream's gc_serial (recycling order, one memset per cell, one atomic push per index).
void BM_Gc_UpstreamSerial(benchmark::State& state) {
  Fixture& f = GetFixture(state.range(0), state.range(1));
  UpstreamNodeManager& upstream = f.Upstream();
  const double start = ThreadCpuSeconds();
  for (auto _ : state) {
    f.ResetUpstream();
    upstream.gc_serial();
    benchmark::ClobberMemory();
  }
  const double seconds = ThreadCpuSeconds() - start;
  f.upstream_seconds = seconds / static_cast<double>(state.iterations());
  if (upstream.free_list->size() != f.cells) state.SkipWithError("upstream GC lost cells");
  SetCounters(state, f);
  state.counters.erase("vs_upstream");
}

void SerialGc(benchmark::State& state, int32_t order) {
  Fixture& f = GetFixture(state.range(0), state.range(1));
  f.scratch.order = order;
  for (auto _ : state) {
    f.Reset();
    if (!accelmem::gc::gc_serial(&f.nm, &f.scratch)) state.SkipWithError(f.memory.error_message);
    benchmark::ClobberMemory();
  }
  SetCounters(state, f);
  state.counters["sorted"] = f.scratch.plan.order == accelmem::gc::kGcOrderSorted;
}

// gc/gc_serial in its default order (kGcOrderAuto: what GcCollector and the runtime run).
void BM_Gc_SerialAutoOrder(benchmark::State& state) { SerialGc(state, accelmem::gc::kGcOrderAuto); }

// gc/gc_serial in address order (bitmap buckets, runs merged).
void BM_Gc_SerialSorted(benchmark::State& state) { SerialGc(state, accelmem::gc::kGcOrderSorted); }

// gc/gc_serial in upstream's recycling order (no sorting; adjacent indices still merged).
void BM_Gc_SerialRecycleOrder(benchmark::State& state) {
  SerialGc(state, accelmem::gc::kGcOrderRecycle);
}

// sparse_runtime's own NodeManager::gc_serial (upstream's algorithm, recycling order).
void BM_Gc_RuntimeNodeManagerGcSerial(benchmark::State& state) {
  Fixture& f = GetFixture(state.range(0), state.range(1));
  for (auto _ : state) {
    f.Reset();
    f.nm.gc_serial();
    benchmark::ClobberMemory();
  }
  SetCounters(state, f);
}

void ParallelGc(benchmark::State& state, int32_t order) {
  Fixture& f = GetFixture(state.range(0), state.range(1));
  CpuParallelGc& gc = ParallelGc();
  f.scratch.order = order;
  for (auto _ : state) {
    f.Reset();
    absl::Status status = gc.Collect(&f.nm, &f.scratch);
    if (!status.ok()) state.SkipWithError(std::string(status.message()).c_str());
    benchmark::ClobberMemory();
  }
  SetCounters(state, f);
  state.counters["workers"] = gc.num_workers();
  state.counters["sorted"] = f.scratch.plan.order == accelmem::gc::kGcOrderSorted;
}

// gc/gc_cpu_parallel, one worker per hardware thread, address order.
void BM_Gc_ParallelSorted(benchmark::State& state) {
  ParallelGc(state, accelmem::gc::kGcOrderSorted);
}

// gc/gc_cpu_parallel in recycling order.
void BM_Gc_ParallelRecycleOrder(benchmark::State& state) {
  ParallelGc(state, accelmem::gc::kGcOrderRecycle);
}

// The limit as a contender of an interleaved row: one memset of the N * cell_bytes buffer.
Contender MemsetLimit(Fixture& f) {
  return {"memset", [&f] {
            std::memset(f.limit, 0, f.limit_bytes);
            benchmark::ClobberMemory();
          }};
}

// The limit, upstream's serial GC and gc/gc_serial (default order) interleaved in one row: each
// iteration runs one memset of the N * cell_bytes limit buffer, one upstream collection and one
// accelmem collection, in an order rotated per iteration (benchmarks/baselines/paired_timing.h),
// so each contender finds its memory as its own previous round left it, with the other two
// contenders' rounds in between: the same for all three. `vs_memset` = the median over
// iterations of memset time / accelmem time, `vs_upstream` = upstream time / accelmem time,
// `upstream_vs_memset` = memset time / upstream time. Why: the paired rows above run seconds
// apart, and this VM's speed drifts between them (the 64-byte 10^4-cell collection took half as
// long again or more in some processes as in others, against the same memset). Their repeated
// rounds also keep each row's memory as warm as a 2 MiB L2 allows, which favours whichever row fits
// it. What is not the same for the three is the round just before: accelmem's round follows
// upstream's in two iterations of three (memset's in one of three; paired_timing.h), and a
// collection right after upstream's, whose per-cell memsets leave the caches full of dirty
// lines, is slower, while memset hardly is. So the row also reports `<name>_after_<other>_ns`, the
// median of `name`'s rounds that ran right after `other`'s.
void BM_Gc_Interleaved(benchmark::State& state) {
  Fixture& f = GetFixture(state.range(0), state.range(1));
  UpstreamNodeManager& upstream = f.Upstream();
  f.scratch.order = accelmem::gc::kGcOrderAuto;
  bool lost = false;
  // Warmed up first: a first round over 10^6 cells took long enough to end the row with that one
  // cold iteration, which read less than half of the steady state against memset.
  const std::vector<Contender> contenders = {MemsetLimit(f),
                                             {"upstream",
                                              [&upstream] {
                                                upstream.gc_serial();
                                                benchmark::ClobberMemory();
                                              },
                                              [&f] { f.ResetUpstream(); }},
                                             {"accelmem",
                                              [&f, &lost] {
                                                lost |= !accelmem::gc::gc_serial(&f.nm, &f.scratch);
                                                benchmark::ClobberMemory();
                                              },
                                              [&f] { f.Reset(); }}};
  WarmUp(contenders);
  RunInterleaved(state, static_cast<double>(f.cells), contenders, "accelmem",
                 {{"vs_memset", "memset", "accelmem"},
                  {"vs_upstream", "upstream", "accelmem"},
                  {"upstream_vs_memset", "memset", "upstream"}},
                 /*per_predecessor=*/true);
  if (lost) state.SkipWithError(f.memory.error_message);
  if (upstream.free_list->size() != f.cells) state.SkipWithError("upstream GC lost cells");
  if (f.nm.free_list.size() != f.cells) state.SkipWithError("GC lost cells");
}

// gc/gc_serial (default order) with each width of non-temporal store for the streamed lines,
// interleaved in one row as Gc_Interleaved: `store16`, `store32` and `store64` are collections with
// GcScratch::streaming_store_bytes = 16, 32, 64, all streaming (a width the CPU lacks falls back to
// the widest it has: counters `store<N>_bytes`; `default_bytes` is what a collection uses
// unasked), and `memset` the limit. Counters: `w32_vs_w16`, `w64_vs_w32` = the
// narrower form's time / the wider one's (> 1: the wider stores are faster), and `vs_memset` of
// each form. Registered for the cell sizes that stream whole lines (64 B and up).
void BM_Gc_StoreWidths(benchmark::State& state) {
  Fixture& f = GetFixture(state.range(0), state.range(1));
  f.scratch.order = accelmem::gc::kGcOrderAuto;
  bool lost = false;
  auto collection = [&f, &lost] {
    lost |= !accelmem::gc::gc_serial(&f.nm, &f.scratch);
    benchmark::ClobberMemory();
  };
  // Every form streams, also where the default threshold would store (10^4 x 64 B on a 2 MiB L2).
  auto width = [&f](uint32_t bytes) {
    return [&f, bytes] {
      f.Reset();
      f.scratch.streaming_store_bytes = bytes;
      f.scratch.streaming_zero_bytes = 1;
    };
  };
  const std::vector<Contender> contenders = {MemsetLimit(f),
                                             {"store16", collection, width(16)},
                                             {"store32", collection, width(32)},
                                             {"store64", collection, width(64)}};
  WarmUp(contenders);
  RunInterleaved(state, static_cast<double>(f.cells), contenders, "store64",
                 {{"w32_vs_w16", "store16", "store32"},
                  {"w64_vs_w32", "store32", "store64"},
                  {"store16_vs_memset", "memset", "store16"},
                  {"store32_vs_memset", "memset", "store32"},
                  {"store64_vs_memset", "memset", "store64"}});
  f.scratch.streaming_store_bytes = 0;
  f.scratch.streaming_zero_bytes = 0;
  // The widths the three forms got (a width the CPU lacks falls back to the widest it has) and
  // the one a collection uses by default.
  accelmem::gc::GcScratch asked{};
  for (uint32_t bytes : {16u, 32u, 64u, 0u}) {
    asked.streaming_store_bytes = bytes;
    const std::string name = bytes == 0 ? "default" : "store" + std::to_string(bytes);
    state.counters[name + "_bytes"] = accelmem::gc::gc_streaming_store_bytes(&asked);
  }
  if (lost) state.SkipWithError(f.memory.error_message);
  if (f.nm.free_list.size() != f.cells) state.SkipWithError("GC lost cells");
}

// Registers every row configuration-major, so that each configuration's heap is built once.
struct Registrar {
  Registrar() {
    for (int64_t cells : {10'000, 100'000, 1'000'000}) {
      for (int64_t bytes : {16, 64, 256, 4096}) {
        if (cells * bytes > (int64_t{1} << 30)) continue;  // keep the heap within 2 GiB
        // Single-threaded rows report CPU time (robust to the VM descheduling us); the
        // parallel rows must report wall time.
        auto add = [&](const char* name, void (*fn)(benchmark::State&), bool wall = false) {
          auto* b = benchmark::RegisterBenchmark(name, fn)
                        ->Args({cells, bytes})
                        ->ArgNames({"cells", "cell_bytes"})
                        ->Unit(benchmark::kMicrosecond)
                        ->MinTime(0.05);
          if (wall) b->UseRealTime();
          return b;
        };
        add("BM_ZeroCells_OneMemsetLimit", BM_ZeroCells_OneMemsetLimit);
        add("BM_ZeroCells_MemsetPerCellRandomOrder", BM_ZeroCells_MemsetPerCellRandomOrder);
        add("BM_Gc_UpstreamSerial", BM_Gc_UpstreamSerial);
        add("BM_Gc_SerialAutoOrder", BM_Gc_SerialAutoOrder);
        add("BM_Gc_SerialSorted", BM_Gc_SerialSorted);
        add("BM_Gc_SerialRecycleOrder", BM_Gc_SerialRecycleOrder);
        add("BM_Gc_RuntimeNodeManagerGcSerial", BM_Gc_RuntimeNodeManagerGcSerial);
        add("BM_Gc_ParallelSorted", BM_Gc_ParallelSorted, /*wall=*/true);
        add("BM_Gc_ParallelRecycleOrder", BM_Gc_ParallelRecycleOrder, /*wall=*/true);
        // At least 0.1 s of the timed contender's rounds: six or more iterations at 10^6 cells,
        // so that one slow moment of the VM does not decide the median.
        add("BM_Gc_Interleaved", BM_Gc_Interleaved)->UseManualTime()->MinTime(0.1);
        if (bytes % 64 == 0) {
          add("BM_Gc_StoreWidths", BM_Gc_StoreWidths)->UseManualTime()->MinTime(0.1);
        }
      }
    }
  }
} registrar;

}  // namespace
