// gc_bench: what garbage collection of recycled sparse-runtime cells costs.
//
// Until the GC phases land (gc/), this measures the two baselines every GC variant is judged by:
// zeroing N scattered cells one memset at a time, in the order they were recycled (random), and
// the limit, one memset of the same number of bytes.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"

namespace {

// Cells live in a pool twice the size of the recycled set so that they are scattered.
struct ScatteredCells {
  ScatteredCells(int64_t cells, int64_t cell_bytes)
      : cell_bytes(cell_bytes), pool(static_cast<size_t>(cells * 2 * cell_bytes), 1) {
    std::vector<int64_t> all(cells * 2);
    std::iota(all.begin(), all.end(), 0);
    std::mt19937_64 rng(42);
    std::shuffle(all.begin(), all.end(), rng);
    recycled.assign(all.begin(), all.begin() + cells);
  }
  int64_t cell_bytes;
  std::vector<char> pool;
  std::vector<int64_t> recycled;
};

void SetCounters(benchmark::State& state, int64_t cells, int64_t cell_bytes) {
  state.SetItemsProcessed(state.iterations() * cells);
  state.SetBytesProcessed(state.iterations() * cells * cell_bytes);
}

// Baseline: one memset per recycled cell, in recycling (random) order.
void BM_ZeroCells_MemsetPerCellRandomOrder(benchmark::State& state) {
  const int64_t cells = state.range(0), cell_bytes = state.range(1);
  ScatteredCells data(cells, cell_bytes);
  for (auto _ : state) {
    for (int64_t index : data.recycled) {
      std::memset(data.pool.data() + index * cell_bytes, 0, cell_bytes);
    }
    benchmark::ClobberMemory();
  }
  SetCounters(state, cells, cell_bytes);
}

// The limit: one memset of the same number of bytes.
void BM_ZeroCells_OneMemsetLimit(benchmark::State& state) {
  const int64_t cells = state.range(0), cell_bytes = state.range(1);
  std::vector<char> block(static_cast<size_t>(cells * cell_bytes), 1);
  for (auto _ : state) {
    std::memset(block.data(), 0, block.size());
    benchmark::DoNotOptimize(block.data());
    benchmark::ClobberMemory();
  }
  SetCounters(state, cells, cell_bytes);
}

void CellGrid(benchmark::internal::Benchmark* b) {
  for (int64_t cells : {10'000, 100'000, 1'000'000}) {
    for (int64_t bytes : {16, 64, 256, 4096}) {
      if (cells * bytes > (int64_t{1} << 30)) continue;  // keep the pool within 2 GiB
      b->Args({cells, bytes});
    }
  }
  b->ArgNames({"cells", "cell_bytes"})->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_ZeroCells_MemsetPerCellRandomOrder)->Apply(CellGrid);
BENCHMARK(BM_ZeroCells_OneMemsetLimit)->Apply(CellGrid);

}  // namespace
