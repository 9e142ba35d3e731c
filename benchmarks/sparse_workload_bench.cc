// sparse_workload_bench: what Taichi programs spend their time on with sparse grids -- struct-fors
// over the active cells, the list generation before each, and clearing plus collecting -- through
// the runtime's host API, on one and on two threads, against baselines in the same binary.
//
// The grid: root.pointer(i, 4096).dense(i, 4096) with places x and y (f32, side by side in a
// cell): 2^24 cells in blocks of 4,096; half of the blocks (a fixed random choice) are active.
// Rows (arguments: threads, and jit = 1 for the CPU JIT execution backend, whose kernels walk the
// tree themselves (no element lists) and visit a dense container per run, 0 for the native one):
//   BM_Copy    y[I] = x[I] over the active cells by runs (ParallelStructForRuns: one call per
//              dense container range), each struct-for after a structure change (one block
//              activated and deactivated, untimed), so it generates its lists. Interleaved
//              with memcpy of the same active bytes (x's 32 MiB into a buffer). Counters:
//              vs_memcpy = memcpy time / the loop's time (the struct-for less its list
//              generation: bandwidth for the same bytes), listgen_share = list generation / the
//              whole struct-for.
//   BM_CopyPerCell  the copy through the per-cell visitor (lists reused), interleaved with the
//              copy by runs: runs_vs_per_cell.
//   BM_Repeat  the same struct-for again with no change in between (lists reused), interleaved
//              with the upstream-equivalent struct-for (a runtime that generates its lists before
//              every struct-for, as upstream's runtime does). Counters: listgen_share (ours),
//              vs_upstream = upstream-equivalent time / ours.
//   BM_Particles  a particle-to-grid frame (see there) against a dense array and an
//              upstream-equivalent frame: vs_dense = our frame / the dense one's, vs_upstream.
//   BM_FillClear  activate every block and write x (fill), then deactivate every block and
//              collect (clear + GC). Counter: clear_gc_over_fill (upstream's users measured
//              about 28, taichi-dev/taichi #333).
//   BM_ManySNodesGc  garbage in 64 SNodes collected in one pass against one collection per
//              SNode (see there): per_snode_over_pass.
// Times are wall times (manual), medians over the iterations of a row.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "benchmarks/baselines/paired_timing.h"
#include "runtime/cpu/jit_backend.h"
#include "runtime/sparse_runtime.h"
#include "sparse_runtime/snode_tree.h"

namespace {

using accelmem::baselines::Median;
using accelmem::runtime::SparseRuntime;
using accelmem::runtime::SparseRuntimeOptions;
using accelmem::sparse_runtime::Axis;
using accelmem::sparse_runtime::SNode;
using accelmem::sparse_runtime::SNodeTree;
using Clock = std::chrono::steady_clock;

constexpr int kBlocks = 4096;
constexpr int kBlockCells = 4096;

template <typename T>
T Check(absl::StatusOr<T> v) {
  if (!v.ok()) {
    std::fprintf(stderr, "%s\n", std::string(v.status().message()).c_str());
    std::abort();
  }
  return std::move(v).value();
}
void Check(const absl::Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    std::abort();
  }
}

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Runs fn(t) for t in [0, threads), the caller being thread 0 (the host-side loops of a frame
// that a kernel would run on every thread; the same for the dense baseline).
template <typename F>
void OnThreads(int threads, const F& fn) {
  std::vector<std::thread> others;
  for (int t = 1; t < threads; ++t) others.emplace_back([&fn, t] { fn(t); });
  fn(0);
  for (std::thread& other : others) other.join();
}

// The half of the blocks that is active (fixed seed), and a block never used (to cause a
// structure change).
std::vector<int> ActiveBlocks() {
  std::vector<int> blocks(kBlocks - 1);
  for (int b = 0; b < kBlocks - 1; ++b) blocks[b] = b;
  std::mt19937 rng(2024);
  std::shuffle(blocks.begin(), blocks.end(), rng);
  blocks.resize(kBlocks / 2);
  std::sort(blocks.begin(), blocks.end());
  return blocks;
}
constexpr int kSpareBlock = kBlocks - 1;

// One runtime over the grid, its active half filled (x[I] = I).
struct Grid {
  SNodeTree tree;
  std::unique_ptr<SparseRuntime> rt;
  const SNode* x = nullptr;
  const SNode* blocks = nullptr;
  int64_t y_minus_x = 0;  // floats from x to y in a cell

  Grid(int threads, bool reuse_lists, bool jit) {
    const Axis i(0);
    SNode& pointer = tree.root().pointer(i, kBlocks);
    pointer.dense(i, kBlockCells).place<float>("x").place<float>("y");
    Check(tree.Finalize());
    x = tree.FindPlace("x");
    blocks = &pointer;
    y_minus_x = (static_cast<int64_t>(tree.FindPlace("y")->offset_in_parent_cell()) -
                 static_cast<int64_t>(x->offset_in_parent_cell())) /
                static_cast<int64_t>(sizeof(float));
    SparseRuntimeOptions options;
    options.num_threads = threads;
    options.auto_collect = false;
    options.reuse_struct_for_lists = reuse_lists;
    if (jit) options.kernel_backend = accelmem::runtime::cpu::JitBackend::Factory();
    rt = Check(SparseRuntime::Create(tree, options));
    for (int b : ActiveBlocks()) Check(rt->Activate(*blocks, {b}));
    Copy(threads, [](float* v, int64_t index, int64_t) { v[0] = static_cast<float>(index); });
  }

  // A struct-for over x calling f(x value, index, y_minus_x), on `threads` threads.
  template <typename F>
  void Copy(int threads, const F& f) {
    const int64_t dy = y_minus_x;
    if (threads <= 1) {
      Check(rt->StructFor(*x, [&](absl::Span<const int32_t> idx, void* v) {
        f(static_cast<float*>(v), idx[0], dy);
      }));
    } else {
      Check(rt->ParallelStructFor(*x, [&](absl::Span<const int32_t> idx, void* v, int) {
        f(static_cast<float*>(v), idx[0], dy);
      }));
    }
  }
  // y[I] = x[I] by runs of cells (ParallelStructForRuns): one call per dense container range.
  void CopyXToY() {
    const int64_t dy = y_minus_x;
    Check(rt->ParallelStructForRuns(
        *x, [dy](absl::Span<const int32_t>, void* first, int32_t count, uint64_t stride, int) {
          float* v = static_cast<float*>(first);
          const int64_t s = static_cast<int64_t>(stride / sizeof(float));
          for (int32_t k = 0; k < count; ++k) v[k * s + dy] = v[k * s];
        }));
  }
  // The same through the per-cell visitor.
  void CopyXToYPerCell(int threads) {
    Copy(threads, [](float* v, int64_t, int64_t dy) { v[dy] = v[0]; });
  }
  // A structure change that leaves the active set as it was.
  void Touch() {
    Check(rt->Activate(*blocks, {kSpareBlock}));
    Check(rt->Deactivate(*blocks, {kSpareBlock}));
  }
};

constexpr size_t kActiveBytes = size_t{kBlocks} / 2 * kBlockCells * sizeof(float);

void BM_Copy(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  Grid grid(threads, /*reuse_lists=*/true, /*jit=*/state.range(1) != 0);
  std::vector<float> src(kActiveBytes / sizeof(float), 1.0f), dst(src.size(), 0.0f);
  std::vector<double> loop, listgen, whole, memcpy_s;
  int64_t n = 0;
  for (auto _ : state) {
    state.PauseTiming();
    grid.Touch();
    if (++n % 64 == 0) Check(grid.rt->CollectGarbage());
    state.ResumeTiming();
    const double lists_before = grid.rt->list_generation_seconds();
    const auto a = Clock::now();
    grid.CopyXToY();
    const auto b = Clock::now();
    const double lists = grid.rt->list_generation_seconds() - lists_before;
    std::memcpy(dst.data(), src.data(), kActiveBytes);
    benchmark::ClobberMemory();
    const auto c = Clock::now();
    whole.push_back(Seconds(a, b));
    listgen.push_back(lists);
    loop.push_back(Seconds(a, b) - lists);
    memcpy_s.push_back(Seconds(b, c));
    state.SetIterationTime(Seconds(a, b));
  }
  state.counters["vs_memcpy"] = Median(memcpy_s) / Median(loop);
  state.counters["listgen_share"] = Median(listgen) / Median(whole);
  state.counters["loop_GBps"] = 1e-9 * kActiveBytes / Median(loop);
  state.counters["memcpy_GBps"] = 1e-9 * kActiveBytes / Median(memcpy_s);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kActiveBytes));
}
BENCHMARK(BM_Copy)
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->ArgNames({"threads", "jit"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// BM_Copy's struct-for through the per-cell visitor (an indirect call and an index per cell),
// lists reused: what the runs save.
void BM_CopyPerCell(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  Grid grid(threads, /*reuse_lists=*/true, /*jit=*/state.range(1) != 0);
  std::vector<double> runs, cells;
  for (auto _ : state) {
    const auto a = Clock::now();
    grid.CopyXToYPerCell(threads);
    const auto b = Clock::now();
    grid.CopyXToY();
    const auto c = Clock::now();
    cells.push_back(Seconds(a, b));
    runs.push_back(Seconds(b, c));
    state.SetIterationTime(Seconds(a, b));
  }
  state.counters["runs_vs_per_cell"] = Median(cells) / Median(runs);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kActiveBytes));
}
BENCHMARK(BM_CopyPerCell)
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->ArgNames({"threads", "jit"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void BM_Repeat(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const bool jit = state.range(1) != 0;
  Grid ours(threads, /*reuse_lists=*/true, jit);
  Grid upstream(threads, /*reuse_lists=*/false, jit);
  ours.CopyXToY();  // the lists exist
  std::vector<double> listgen, whole, upstream_s;
  for (auto _ : state) {
    const double lists_before = ours.rt->list_generation_seconds();
    const auto a = Clock::now();
    ours.CopyXToY();
    const auto b = Clock::now();
    const double lists = ours.rt->list_generation_seconds() - lists_before;
    upstream.CopyXToY();
    const auto c = Clock::now();
    whole.push_back(Seconds(a, b));
    listgen.push_back(lists);
    upstream_s.push_back(Seconds(b, c));
    state.SetIterationTime(Seconds(a, b));
  }
  state.counters["listgen_share"] = Median(listgen) / Median(whole);
  state.counters["vs_upstream"] = Median(upstream_s) / Median(whole);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kActiveBytes));
}
BENCHMARK(BM_Repeat)
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->ArgNames({"threads", "jit"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// A particle-to-grid frame on a 4096^2 domain: pointer(64 x 64 blocks) -> dense(64 x 64) of f32
// m. Each frame: activate the blocks the 2^20 particles (fixed random positions) fall in,
// scatter-add 1 per particle into its cell (through the cells' addresses, as a kernel would: a
// run visit gives each block's first cell), normalise every active cell (m / (1 + m)) by a
// struct-for, deactivate every block and collect. Interleaved in the same row: the dense
// baseline (a 4096^2 array: clear, scatter-add, normalise every cell) and the upstream-equivalent
// frame (a runtime that generates lists before every struct-for and visits cell by cell). With
// two threads, both scatter (and the dense array also clears and normalises) on two threads, each
// its half of the rows.
struct ParticleGrid {
  static constexpr int kSide = 4096;
  static constexpr int kBlock = 64;
  static constexpr int kBlocksPerSide = kSide / kBlock;
  SNodeTree tree;
  std::unique_ptr<SparseRuntime> rt;
  const SNode* m = nullptr;
  const SNode* blocks = nullptr;
  int threads = 1;
  bool upstream = false;
  std::vector<float*> base;  // per block: its cell (0, 0), while active

  ParticleGrid(int num_threads, bool upstream_equivalent, bool jit)
      : threads(num_threads), upstream(upstream_equivalent) {
    const Axis i(0), j(1);
    SNode& pointer = tree.root().pointer({i, j}, {kBlocksPerSide, kBlocksPerSide});
    pointer.dense({i, j}, {kBlock, kBlock}).place<float>("m");
    Check(tree.Finalize());
    m = tree.FindPlace("m");
    blocks = &pointer;
    SparseRuntimeOptions options;
    options.num_threads = threads;
    options.auto_collect = false;
    options.reuse_struct_for_lists = !upstream;
    if (jit) options.kernel_backend = accelmem::runtime::cpu::JitBackend::Factory();
    rt = Check(SparseRuntime::Create(tree, options));
    base.assign(kBlocksPerSide * kBlocksPerSide, nullptr);
  }

  void Frame(const std::vector<int32_t>& px, const std::vector<int32_t>& py,
             const std::vector<int32_t>& touched) {
    for (int32_t b : touched)
      Check(rt->Activate(*blocks, {b / kBlocksPerSide, b % kBlocksPerSide}));
    // Each active block's first cell (cells of a block are row-major, 64 floats a row).
    auto record = [&](absl::Span<const int32_t> first, void* cell) {
      if (first[0] % kBlock == 0 && first[1] % kBlock == 0) {
        base[(first[0] / kBlock) * kBlocksPerSide + first[1] / kBlock] = static_cast<float*>(cell);
      }
    };
    if (upstream) {
      Check(rt->ParallelStructFor(
          *m, [&](absl::Span<const int32_t> idx, void* v, int) { record(idx, v); }));
    } else {
      Check(rt->ParallelStructForRuns(*m, [&](absl::Span<const int32_t> first, void* v, int32_t,
                                              uint64_t, int) { record(first, v); }));
    }
    // Thread t adds the particles of its slice of rows (no two threads write one cell).
    OnThreads(threads, [&](int t) {
      const int32_t lo = kSide * t / threads, hi = kSide * (t + 1) / threads;
      for (size_t p = 0; p < px.size(); ++p) {
        if (px[p] < lo || px[p] >= hi) continue;
        // Coordinates are non-negative: unsigned division and remainder are shifts and masks.
        const uint32_t x = static_cast<uint32_t>(px[p]), y = static_cast<uint32_t>(py[p]);
        float* b = base[(x / kBlock) * kBlocksPerSide + y / kBlock];
        b[(x % kBlock) * kBlock + y % kBlock] += 1.0f;
      }
    });
    if (upstream) {
      Check(rt->ParallelStructFor(*m, [](absl::Span<const int32_t>, void* v, int) {
        float* f = static_cast<float*>(v);
        *f = *f / (1.0f + *f);
      }));
    } else {
      Check(rt->ParallelStructForRuns(
          *m, [](absl::Span<const int32_t>, void* v, int32_t n, uint64_t stride, int) {
            float* f = static_cast<float*>(v);
            if (stride == sizeof(float)) {
              // Contiguous, as a kernel compiled for this layout knows: whole groups of 8 cells
              // (vectorized at -O2, like the dense baseline's loop), then the rest.
              int32_t k = 0;
              for (; k + 8 <= n; k += 8) {
                for (int32_t j = 0; j < 8; ++j) f[k + j] = f[k + j] / (1.0f + f[k + j]);
              }
              for (; k < n; ++k) f[k] = f[k] / (1.0f + f[k]);
              return;
            }
            const int64_t s = static_cast<int64_t>(stride / sizeof(float));
            for (int32_t k = 0; k < n; ++k) f[k * s] = f[k * s] / (1.0f + f[k * s]);
          }));
    }
    for (int32_t b : touched) {
      Check(rt->Deactivate(*blocks, {b / kBlocksPerSide, b % kBlocksPerSide}));
    }
    Check(rt->CollectGarbage());
  }
};

void BM_Particles(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  constexpr int kParticles = 1 << 20;
  constexpr int kSide = ParticleGrid::kSide;
  std::mt19937 rng(7);
  std::vector<int32_t> px(kParticles), py(kParticles);
  for (int p = 0; p < kParticles; ++p) {
    px[p] = static_cast<int32_t>(rng() % kSide);
    py[p] = static_cast<int32_t>(rng() % kSide);
  }
  std::vector<char> seen(ParticleGrid::kBlocksPerSide * ParticleGrid::kBlocksPerSide, 0);
  std::vector<int32_t> touched;
  for (int p = 0; p < kParticles; ++p) {
    const int32_t b = (px[p] / ParticleGrid::kBlock) * ParticleGrid::kBlocksPerSide +
                      py[p] / ParticleGrid::kBlock;
    if (!seen[b]) touched.push_back(b);
    seen[b] = 1;
  }
  const bool jit = state.range(1) != 0;
  ParticleGrid ours(threads, false, jit), upstream(threads, true, jit);
  std::vector<float> dense(static_cast<size_t>(kSide) * kSide);
  std::vector<double> ours_s, upstream_s, dense_s;
  for (auto _ : state) {
    const auto a = Clock::now();
    ours.Frame(px, py, touched);
    const auto b = Clock::now();
    // Thread t clears, scatters into and normalises its slice of rows.
    OnThreads(threads, [&](int t) {
      const int32_t lo = kSide * t / threads, hi = kSide * (t + 1) / threads;
      float* rows = dense.data() + static_cast<size_t>(lo) * kSide;
      const size_t n = static_cast<size_t>(hi - lo) * kSide;
      std::memset(rows, 0, n * sizeof(float));
      for (int p = 0; p < kParticles; ++p) {
        if (px[p] >= lo && px[p] < hi) dense[static_cast<size_t>(px[p]) * kSide + py[p]] += 1.0f;
      }
      for (size_t k = 0; k < n; ++k) rows[k] = rows[k] / (1.0f + rows[k]);
    });
    benchmark::DoNotOptimize(dense.data());
    const auto c = Clock::now();
    upstream.Frame(px, py, touched);
    const auto d = Clock::now();
    ours_s.push_back(Seconds(a, b));
    dense_s.push_back(Seconds(b, c));
    upstream_s.push_back(Seconds(c, d));
    state.SetIterationTime(Seconds(a, b));
  }
  state.counters["vs_dense"] = Median(ours_s) / Median(dense_s);
  state.counters["vs_upstream"] = Median(upstream_s) / Median(ours_s);
  state.counters["frame_ms"] = 1e3 * Median(ours_s);
  state.counters["dense_ms"] = 1e3 * Median(dense_s);
}
BENCHMARK(BM_Particles)
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->ArgNames({"threads", "jit"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void BM_FillClear(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  SNodeTree tree;
  const Axis i(0);
  SNode& pointer = tree.root().pointer(i, kBlocks / 4);
  pointer.dense(i, kBlockCells).place<float>("x");
  Check(tree.Finalize());
  const SNode& x = *tree.FindPlace("x");
  SparseRuntimeOptions options;
  options.num_threads = threads;
  options.auto_collect = false;
  if (state.range(1) != 0) options.kernel_backend = accelmem::runtime::cpu::JitBackend::Factory();
  auto rt = Check(SparseRuntime::Create(tree, options));
  std::vector<double> fill, clear;
  for (auto _ : state) {
    const auto a = Clock::now();
    for (int b = 0; b < kBlocks / 4; ++b) Check(rt->Activate(pointer, {b}));
    if (threads <= 1) {
      Check(rt->StructFor(x, [](absl::Span<const int32_t> idx, void* v) {
        *static_cast<float*>(v) = static_cast<float>(idx[0]);
      }));
    } else {
      Check(rt->ParallelStructFor(x, [](absl::Span<const int32_t> idx, void* v, int) {
        *static_cast<float*>(v) = static_cast<float>(idx[0]);
      }));
    }
    const auto b = Clock::now();
    for (int blk = 0; blk < kBlocks / 4; ++blk) Check(rt->Deactivate(pointer, {blk}));
    Check(rt->CollectGarbage());
    const auto c = Clock::now();
    fill.push_back(Seconds(a, b));
    clear.push_back(Seconds(b, c));
    state.SetIterationTime(Seconds(a, c));
  }
  state.counters["clear_gc_over_fill"] = Median(clear) / Median(fill);
  state.counters["fill_ms"] = 1e3 * Median(fill);
  state.counters["clear_gc_ms"] = 1e3 * Median(clear);
}
BENCHMARK(BM_FillClear)
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->ArgNames({"threads", "jit"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// Many SNodes with garbage (taichi-dev/taichi #6594): 64 pointer SNodes, each pointer(1024) ->
// dense(n) of f32 (cells of 4n bytes, all 64 allocators of one cell size; arguments: threads, n);
// each iteration activates every block and deactivates every other one in each SNode (untimed),
// then collects: 512 recycled cells per SNode (n = 16: 2 MiB in all, under the GC pool's
// threshold; n = 256: 32 MiB). One pass (one_pass_gc, the default) against one collection per
// allocator (upstream's GC per SNode) in a second runtime of the same tree, interleaved;
// gc_workers = threads. Counter: per_snode_over_pass = per-allocator time / pass time.
void BM_ManySNodesGc(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const int cell_floats = static_cast<int>(state.range(1));
  constexpr int kSNodes = 64;
  constexpr int kBlocksPer = 1024;
  SNodeTree tree;
  std::vector<const SNode*> pointers;
  for (int k = 0; k < kSNodes; ++k) {
    SNode& p = tree.root().pointer(Axis(0), kBlocksPer);
    p.dense(Axis(0), cell_floats).place<float>("m" + std::to_string(k));
    pointers.push_back(&p);
  }
  Check(tree.Finalize());
  auto make = [&](bool one_pass) {
    SparseRuntimeOptions options;
    options.num_threads = threads;
    options.gc_workers = threads;
    options.auto_collect = false;
    options.one_pass_gc = one_pass;
    return Check(SparseRuntime::Create(tree, options));
  };
  std::unique_ptr<SparseRuntime> pass = make(true), per_snode = make(false);
  auto dirty = [&](SparseRuntime* rt) {
    for (const SNode* p : pointers) {
      for (int b = 0; b < kBlocksPer; ++b) Check(rt->Activate(*p, {b}));
      for (int b = 0; b < kBlocksPer; b += 2) Check(rt->Deactivate(*p, {b}));
    }
  };
  std::vector<double> pass_s, per_snode_s;
  int64_t round = 0;
  for (auto _ : state) {
    // Alternate which runtime is dirtied last and collected first (its cells are hottest).
    const bool pass_first = round++ % 2 == 0;
    SparseRuntime* first = pass_first ? pass.get() : per_snode.get();
    SparseRuntime* second = pass_first ? per_snode.get() : pass.get();
    dirty(second);
    dirty(first);
    const auto a = Clock::now();
    Check(first->CollectGarbage());
    const auto b = Clock::now();
    Check(second->CollectGarbage());
    const auto c = Clock::now();
    pass_s.push_back(pass_first ? Seconds(a, b) : Seconds(b, c));
    per_snode_s.push_back(pass_first ? Seconds(b, c) : Seconds(a, b));
    state.SetIterationTime(pass_s.back());
  }
  state.counters["per_snode_over_pass"] = Median(per_snode_s) / Median(pass_s);
  state.counters["pass_ms"] = 1e3 * Median(pass_s);
  state.counters["per_snode_ms"] = 1e3 * Median(per_snode_s);
  state.counters["passes_per_gc"] =
      static_cast<double>(pass->num_gc_passes()) / static_cast<double>(state.iterations());
  state.counters["per_snode_passes_per_gc"] =
      static_cast<double>(per_snode->num_gc_passes()) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_ManySNodesGc)
    ->ArgsProduct({{1, 2}, {16, 256}})
    ->ArgNames({"threads", "cell_floats"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
