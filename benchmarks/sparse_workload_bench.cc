// sparse_workload_bench: what Taichi programs spend their time on with sparse grids -- struct-fors
// over the active cells, the list generation before each, and clearing plus collecting -- through
// the runtime's host API, on one and on two threads, against baselines in the same binary.
//
// The grid: root.pointer(i, 4096).dense(i, 4096) with places x and y (f32, side by side in a
// cell): 2^24 cells in blocks of 4,096; half of the blocks (a fixed random choice) are active.
// Rows (arguments: threads, and jit = 1 for the CPU JIT execution backend, whose kernels walk the
// tree themselves (no element lists) and visit a dense container per run, 0 for the native one):
//   BM_Copy    y[I] = x[I] over the active cells by the runtime's bulk copy (runtime::Copy of
//              runtime/bulk_ops.h, by runs: one call per dense container range), each struct-for
//              after a structure change (one block activated and deactivated, untimed), so it
//              generates its lists. Interleaved with memcpy of the same active bytes (x's 32 MiB
//              into a buffer) and with upstream's struct-for (UpstreamCopyGrid). Counters:
//              vs_memcpy = memcpy time / the loop's time (the struct-for less its list generation:
//              bandwidth for the same bytes), listgen_share = list generation / the whole
//              struct-for (native only: the JIT makes no lists), vs_upstream = upstream's
//              struct-for / ours, both whole.
//   BM_CopyPerCell  the copy through the per-cell visitor (lists reused), interleaved with the
//              copy by runs: runs_vs_per_cell.
//   BM_Repeat  the same struct-for again with no change in between (lists reused), interleaved
//              with upstream's struct-for (which generates its lists before every struct-for)
//              and, native only, with this runtime regenerating its lists before every
//              struct-for (UpstreamEmulation::reuse_struct_for_lists off). Counters:
//              listgen_share (native), vs_upstream, vs_regenerated_lists = reuse off / ours.
//   BM_Particles  a particle-to-grid frame (see there) against a dense array (vs_dense = our
//              frame / the dense one's), upstream's frame (vs_upstream) and this runtime with
//              a per-cell host visitor and lists regenerated (vs_per_cell_visitor).
//   BM_FillClear  activate every block and write x[I] = I by the runtime's bulk fill
//              (runtime::FillIndex, the Python row's fill_index) (fill), then deactivate every
//              block and collect (clear + GC). Counter: clear_gc_over_fill.
//   BM_ManySNodesGc  garbage in 64 SNodes collected in one pass against one collection per
//              SNode (see there): per_snode_over_pass.
// "Upstream" is Taichi's CPU struct-for re-implemented in //benchmarks/baselines
// (upstream_struct_for.h): clear_list and element_listgen_root / _nonroot for each level below
// the root, then parallel_struct_for over the leaf's element list on upstream's thread pool, the
// loop body a template functor inlined into the task; cells from UpstreamNodeManager.
// Every side of a row runs once untimed before the timed iterations (JIT compilation, first
// touch of memory), and what each baseline writes escapes (benchmark::DoNotOptimize /
// ClobberMemory), so no compiler drops it. Times are wall times (manual), medians over the
// iterations of a row.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "benchmarks/baselines/paired_timing.h"
#include "benchmarks/baselines/upstream_list_manager.h"
#include "benchmarks/baselines/upstream_node_manager.h"
#include "benchmarks/baselines/upstream_snodes.h"
#include "benchmarks/baselines/upstream_struct_for.h"
#include "benchmarks/baselines/upstream_thread_pool.h"
#include "benchmarks/baselines/upstream_tree.h"
#include "runtime/bulk_ops.h"
#include "runtime/cpu/jit_backend.h"
#include "runtime/sparse_runtime.h"
#include "runtime/sparse_runtime_test_peer.h"
#include "sparse_runtime/host_memory_pool.h"
#include "sparse_runtime/snode_tree.h"

namespace {

using accelmem::baselines::Median;
namespace up = accelmem::baselines;
using accelmem::runtime::SparseRuntime;
using accelmem::runtime::SparseRuntimeOptions;
using accelmem::runtime::SparseRuntimeTestPeer;
using accelmem::runtime::UpstreamEmulation;
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
  const SNode* y = nullptr;
  const SNode* blocks = nullptr;
  int64_t y_minus_x = 0;  // floats from x to y in a cell

  Grid(int threads, bool reuse_lists, bool jit) {
    const Axis i(0);
    SNode& pointer = tree.root().pointer(i, kBlocks);
    pointer.dense(i, kBlockCells).place<float>("x").place<float>("y");
    Check(tree.Finalize());
    x = tree.FindPlace("x");
    y = tree.FindPlace("y");
    blocks = &pointer;
    y_minus_x = (static_cast<int64_t>(tree.FindPlace("y")->offset_in_parent_cell()) -
                 static_cast<int64_t>(x->offset_in_parent_cell())) /
                static_cast<int64_t>(sizeof(float));
    SparseRuntimeOptions options;
    options.num_threads = threads;
    options.auto_collect = false;
    if (jit) options.kernel_backend = accelmem::runtime::cpu::JitBackend::Factory();
    UpstreamEmulation upstream;
    upstream.reuse_struct_for_lists = reuse_lists;
    rt = Check(SparseRuntimeTestPeer::Create(tree, options, upstream));
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
  // y[I] = x[I] by the runtime's bulk copy (runtime/bulk_ops.h: by runs of cells, one call per
  // dense container range), as accelmem.sparse's Runtime.copy runs it.
  void CopyXToY() { Check(accelmem::runtime::Copy(*rt, *x, *y)); }
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

// Upstream's tree root -> pointer(PointerAxes) -> dense(DenseAxes) of kCellBytes-byte cells, from
// the baselines: the pointer's container and ambient element (UpstreamTree), its cells (each a
// dense container) from an UpstreamNodeManager with upstream's chunk size (16 Ki cells, halved
// until a chunk is at most 128 MiB), the three element lists, and a thread pool of `threads`
// workers; all memory from one HostMemoryPool, as accelmem's runtime gets its memory.
template <typename PointerAxes, typename DenseAxes, std::size_t kCellBytes>
struct UpstreamGrid {
  using PointerS = up::UpstreamPointerSNode<PointerAxes>;
  using DenseS = up::UpstreamDenseSNode<DenseAxes, kCellBytes>;
  static constexpr int64_t kNumBlocks = PointerAxes::kNumElements;
  static constexpr int64_t kNumCells = DenseAxes::kNumElements;
  static constexpr std::size_t kBlockBytes = kCellBytes * static_cast<std::size_t>(kNumCells);

  static int32_t ChunkElements() {
    int32_t n = up::UpstreamNodeManager::kRuntimeChunkNumElements;
    while (n > 1 && static_cast<uint64_t>(n) * kBlockBytes > (uint64_t{128} << 20)) n /= 2;
    return n;
  }

  explicit UpstreamGrid(int num_threads)
      : tree(kBlockBytes, kNumBlocks, up::UpstreamPointerContainerBytes(kNumBlocks), 0),
        pool(num_threads),
        threads(num_threads) {
    const up::UpstreamAllocator allocator{
        &accelmem::sparse_runtime::HostMemoryPool::AllocateCallback, &tree.pool};
    nm = std::make_unique<up::UpstreamNodeManager>(kBlockBytes, ChunkElements(), allocator);
    tree.rt->node_allocators[0] = nm.get();
    root_list.reset(up::NewUpstreamElementList(allocator));
    pointer_list.reset(up::NewUpstreamElementList(allocator));
    dense_list.reset(up::NewUpstreamElementList(allocator));
    pointer.ambient = tree.ambient();
    up::UpstreamInitRootList(root_list.get(), root());
  }
  up::Ptr root() const { return tree.node; }  // the root cell: the pointer's container
  void Activate(int32_t b) { PointerS::Inlined::activate(root(), b, nm.get()); }
  void Deactivate(int32_t b) { up::UpstreamPointer_deactivate(tree.m(), root(), b); }
  up::Ptr Block(int32_t b) const { return pointer.lookup_element(root(), b); }

  // One struct-for over the dense leaf: the clear_list and listgen tasks of the two levels, then
  // the parallel struct-for; task(element, lower, upper, thread) is the compiled body.
  template <typename Task>
  void StructFor(const Task& task) {
    const auto a = Clock::now();
    pointer_list->clear();
    up::UpstreamElementListgenRoot(up::UpstreamRootSNode{}, *root_list, pointer,
                                   pointer_list.get());
    dense_list->clear();
    up::UpstreamElementListgenNonroot(pointer, *pointer_list, DenseS{}, dense_list.get());
    listgen_seconds += Seconds(a, Clock::now());
    up::UpstreamParallelStructFor(&pool, threads, *dense_list,
                                  up::UpstreamStructForShapeOf(kNumCells, kNumBlocks), task);
  }
  // The same with body(cell, coordinates) for every cell (UpstreamStructForCells).
  template <typename Body>
  void StructForCells(const Body& body) {
    const DenseS leaf;
    StructFor([&](const up::UpstreamElement& e, int32_t lower, int32_t upper, int) {
      up::UpstreamStructForCells(leaf, e, lower, upper, body);
    });
  }

  up::UpstreamTree tree;
  std::unique_ptr<up::UpstreamNodeManager> nm;
  std::unique_ptr<up::UpstreamListManager> root_list, pointer_list, dense_list;
  up::UpstreamThreadPool pool;
  int threads;
  PointerS pointer;
  double listgen_seconds = 0;  // spent in clear_list + listgen so far
};

// The copy grid on upstream's runtime: the same active blocks, x[I] = I (by a struct-for).
struct UpstreamCopyGrid {
  UpstreamGrid<up::UpstreamAxes<kBlocks>, up::UpstreamAxes<kBlockCells>, 2 * sizeof(float)> grid;

  explicit UpstreamCopyGrid(int threads) : grid(threads) {
    for (int b : ActiveBlocks()) grid.Activate(b);
    grid.StructForCells([](up::Ptr cell, const up::UpstreamPhysicalCoordinates& coord) {
      reinterpret_cast<float*>(cell)[0] = static_cast<float>(coord.val[0]);
    });
  }
  // y[I] = x[I]: y is the cell's second float.
  void CopyXToY() {
    grid.StructForCells([](up::Ptr cell, const up::UpstreamPhysicalCoordinates&) {
      float* v = reinterpret_cast<float*>(cell);
      v[1] = v[0];
    });
    benchmark::ClobberMemory();
  }
  // y at the first and last active cell (a check that the copy ran).
  bool Copied() const {
    const std::vector<int> blocks = ActiveBlocks();
    for (int b : {blocks.front(), blocks.back()}) {
      const float* v = reinterpret_cast<const float*>(grid.Block(b));
      const int c = kBlockCells - 1;
      if (v[2 * c + 1] != static_cast<float>(b * kBlockCells + c)) return false;
    }
    return true;
  }
};

void BM_Copy(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const bool jit = state.range(1) != 0;
  Grid grid(threads, /*reuse_lists=*/true, jit);
  UpstreamCopyGrid upstream(threads);
  std::vector<float> src(kActiveBytes / sizeof(float), 1.0f), dst(src.size(), 0.0f);
  auto copy_bytes = [&] {
    std::memcpy(dst.data(), src.data(), kActiveBytes);
    // dst escapes: without it clang drops the memcpy (dst is never read).
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  };
  // Untimed: JIT compilation, first touch of every buffer.
  grid.Touch();
  grid.CopyXToY();
  copy_bytes();
  upstream.CopyXToY();
  if (!upstream.Copied()) std::abort();
  std::vector<double> loop, listgen, whole, memcpy_s, upstream_s, upstream_listgen;
  int64_t n = 0;
  for (auto _ : state) {
    state.PauseTiming();
    grid.Touch();
    if (++n % 64 == 0) Check(grid.rt->CollectGarbage());
    state.ResumeTiming();
    const double lists_before = SparseRuntimeTestPeer::list_generation_seconds(*grid.rt);
    const double upstream_lists_before = upstream.grid.listgen_seconds;
    const auto a = Clock::now();
    grid.CopyXToY();
    const auto b = Clock::now();
    const double lists = SparseRuntimeTestPeer::list_generation_seconds(*grid.rt) - lists_before;
    copy_bytes();
    const auto c = Clock::now();
    upstream.CopyXToY();
    const auto d = Clock::now();
    whole.push_back(Seconds(a, b));
    listgen.push_back(lists);
    loop.push_back(Seconds(a, b) - lists);
    memcpy_s.push_back(Seconds(b, c));
    upstream_s.push_back(Seconds(c, d));
    upstream_listgen.push_back(upstream.grid.listgen_seconds - upstream_lists_before);
    state.SetIterationTime(Seconds(a, b));
  }
  state.counters["vs_memcpy"] = Median(memcpy_s) / Median(loop);
  // The JIT backend makes no lists: its share would be 0 by construction.
  if (!jit) state.counters["listgen_share"] = Median(listgen) / Median(whole);
  state.counters["vs_upstream"] = Median(upstream_s) / Median(whole);
  state.counters["upstream_listgen_share"] = Median(upstream_listgen) / Median(upstream_s);
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
  grid.CopyXToYPerCell(threads);  // untimed: compilation, lists
  grid.CopyXToY();
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
  UpstreamCopyGrid upstream(threads);
  // This runtime generating its lists before every struct-for (native only: the JIT has none).
  std::unique_ptr<Grid> regenerated;
  if (!jit) regenerated = std::make_unique<Grid>(threads, /*reuse_lists=*/false, jit);
  ours.CopyXToY();  // untimed: the lists exist, JIT compilation
  upstream.CopyXToY();
  if (regenerated) regenerated->CopyXToY();
  std::vector<double> listgen, whole, upstream_s, upstream_listgen, regenerated_s;
  for (auto _ : state) {
    const double lists_before = SparseRuntimeTestPeer::list_generation_seconds(*ours.rt);
    const double upstream_lists_before = upstream.grid.listgen_seconds;
    const auto a = Clock::now();
    ours.CopyXToY();
    const auto b = Clock::now();
    const double lists = SparseRuntimeTestPeer::list_generation_seconds(*ours.rt) - lists_before;
    upstream.CopyXToY();
    const auto c = Clock::now();
    if (regenerated) regenerated->CopyXToY();
    const auto d = Clock::now();
    whole.push_back(Seconds(a, b));
    listgen.push_back(lists);
    upstream_s.push_back(Seconds(b, c));
    upstream_listgen.push_back(upstream.grid.listgen_seconds - upstream_lists_before);
    regenerated_s.push_back(Seconds(c, d));
    state.SetIterationTime(Seconds(a, b));
  }
  if (!jit) {
    state.counters["listgen_share"] = Median(listgen) / Median(whole);
    state.counters["vs_regenerated_lists"] = Median(regenerated_s) / Median(whole);
  }
  state.counters["vs_upstream"] = Median(upstream_s) / Median(whole);
  state.counters["upstream_listgen_share"] = Median(upstream_listgen) / Median(upstream_s);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kActiveBytes));
}
BENCHMARK(BM_Repeat)
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->ArgNames({"threads", "jit"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// m = m / (1 + m) over n contiguous cells: whole groups of 8 cells (vectorized at -O2, like the
// dense baseline's loop), then the rest: the dense and upstream sides' loop, the same as
// runtime::Transform's over contiguous values.
inline void NormaliseContiguous(float* f, int32_t n) {
  int32_t k = 0;
  for (; k + 8 <= n; k += 8) {
    for (int32_t j = 0; j < 8; ++j) f[k + j] = f[k + j] / (1.0f + f[k + j]);
  }
  for (; k < n; ++k) f[k] = f[k] / (1.0f + f[k]);
}

// Aborts unless cell(x, y) equals the dense baseline's value at the first 4,096 particles.
template <typename Cell>
void VerifyParticles(const std::vector<int32_t>& px, const std::vector<int32_t>& py,
                     const std::vector<float>& expect, const Cell& cell) {
  constexpr size_t kSide = 4096;
  for (size_t p = 0; p < 4096; ++p) {
    const uint32_t x = static_cast<uint32_t>(px[p]), y = static_cast<uint32_t>(py[p]);
    if (cell(x, y) != expect[x * kSide + y]) {
      std::fprintf(stderr, "particle frame: m[%u, %u] differs from the dense array's\n", x, y);
      std::abort();
    }
  }
}

// A particle-to-grid frame on a 4096^2 domain: pointer(64 x 64 blocks) -> dense(64 x 64) of f32
// m. Each frame: activate the blocks the 2^20 particles (fixed random positions) fall in,
// scatter-add 1 per particle into its cell (through the cells' addresses, as a kernel would: a
// run visit gives each block's first cell), normalise every active cell (m / (1 + m)) by the
// runtime's bulk transform (runtime::Transform), deactivate every block and collect. Interleaved in
// the same row: the dense baseline (a 4096^2 array: clear, scatter-add, normalise every cell),
// upstream's frame (UpstreamParticleGrid) and this runtime visiting cell by cell with lists
// regenerated before every struct-for (per_cell_visitor). With two threads, each side scatters (and
// the dense array also clears and normalises) on two threads, each its half of the rows.
struct ParticleGrid {
  static constexpr int kSide = 4096;
  static constexpr int kBlock = 64;
  static constexpr int kBlocksPerSide = kSide / kBlock;
  SNodeTree tree;
  std::unique_ptr<SparseRuntime> rt;
  const SNode* m = nullptr;
  const SNode* blocks = nullptr;
  int threads = 1;
  bool per_cell = false;
  std::vector<float*> base;  // per block: its cell (0, 0), while active

  ParticleGrid(int num_threads, bool per_cell_visitor, bool jit)
      : threads(num_threads), per_cell(per_cell_visitor) {
    const Axis i(0), j(1);
    SNode& pointer = tree.root().pointer({i, j}, {kBlocksPerSide, kBlocksPerSide});
    pointer.dense({i, j}, {kBlock, kBlock}).place<float>("m");
    Check(tree.Finalize());
    m = tree.FindPlace("m");
    blocks = &pointer;
    SparseRuntimeOptions options;
    options.num_threads = threads;
    options.auto_collect = false;
    if (jit) options.kernel_backend = accelmem::runtime::cpu::JitBackend::Factory();
    UpstreamEmulation upstream;
    upstream.reuse_struct_for_lists = !per_cell;
    rt = Check(SparseRuntimeTestPeer::Create(tree, options, upstream));
    base.assign(kBlocksPerSide * kBlocksPerSide, nullptr);
  }

  // expect: if given, the dense baseline's array after its frame, which the first particles'
  // cells must match after the normalisation.
  void Frame(const std::vector<int32_t>& px, const std::vector<int32_t>& py,
             const std::vector<int32_t>& touched, const std::vector<float>* expect = nullptr) {
    for (int32_t b : touched)
      Check(rt->Activate(*blocks, {b / kBlocksPerSide, b % kBlocksPerSide}));
    // Each active block's first cell (cells of a block are row-major, 64 floats a row).
    auto record = [&](absl::Span<const int32_t> first, void* cell) {
      if (first[0] % kBlock == 0 && first[1] % kBlock == 0) {
        base[(first[0] / kBlock) * kBlocksPerSide + first[1] / kBlock] = static_cast<float*>(cell);
      }
    };
    if (per_cell) {
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
    if (per_cell) {
      Check(rt->ParallelStructFor(*m, [](absl::Span<const int32_t>, void* v, int) {
        float* f = static_cast<float*>(v);
        *f = *f / (1.0f + *f);
      }));
    } else {
      // m / (1 + m) = (1 m + 0) / (1 m + 1): the runtime's bulk transform (by runs; contiguous
      // values in blocks of 8, as NormaliseContiguous).
      Check(accelmem::runtime::Transform(*rt, *m, 1.0, 0.0, 1.0, 1.0));
    }
    if (expect != nullptr) {
      VerifyParticles(px, py, *expect, [&](uint32_t x, uint32_t y) {
        return base[(x / kBlock) * kBlocksPerSide + y / kBlock][(x % kBlock) * kBlock + y % kBlock];
      });
    }
    for (int32_t b : touched) {
      Check(rt->Deactivate(*blocks, {b / kBlocksPerSide, b % kBlocksPerSide}));
    }
    Check(rt->CollectGarbage());
  }
};

// The same frame as upstream's compiled kernels run it: the scatter as a kernel's m[x, y] += 1
// (the pointer level's activation test and lookup inlined, then the dense cell's offset; each
// thread its slice of rows, as ours, so that the scatters differ only in how the cell is found),
// which activates the blocks; the normalisation as upstream's struct-for (lists generated, the
// body inlined over each task's contiguous cells); Pointer_deactivate of every touched block
// (the recycle's linear ptr2index scan); the serial GC (gc_serial: zero every recycled block).
struct UpstreamParticleGrid {
  static constexpr int kSide = ParticleGrid::kSide;
  static constexpr int kBlock = ParticleGrid::kBlock;
  static constexpr int kBlocksPerSide = ParticleGrid::kBlocksPerSide;
  using Tree = UpstreamGrid<up::UpstreamAxes<kBlocksPerSide, kBlocksPerSide>,
                            up::UpstreamAxes<kBlock, kBlock>, sizeof(float)>;
  Tree grid;
  int threads;

  explicit UpstreamParticleGrid(int num_threads) : grid(num_threads), threads(num_threads) {}

  void Frame(const std::vector<int32_t>& px, const std::vector<int32_t>& py,
             const std::vector<int32_t>& touched, const std::vector<float>* expect = nullptr) {
    const up::Ptr root = grid.root();
    up::UpstreamNodeManager* nm = grid.nm.get();
    const Tree::PointerS pointer = grid.pointer;
    OnThreads(threads, [&](int t) {
      const int32_t lo = kSide * t / threads, hi = kSide * (t + 1) / threads;
      for (size_t p = 0; p < px.size(); ++p) {
        if (px[p] < lo || px[p] >= hi) continue;
        const uint32_t x = static_cast<uint32_t>(px[p]), y = static_cast<uint32_t>(py[p]);
        const int32_t b = static_cast<int32_t>((x / kBlock) * kBlocksPerSide + y / kBlock);
        Tree::PointerS::Inlined::activate(root, b, nm);
        float* block = reinterpret_cast<float*>(pointer.lookup_element(root, b));
        block[(x % kBlock) * kBlock + y % kBlock] += 1.0f;
      }
    });
    grid.StructFor([](const up::UpstreamElement& e, int32_t lower, int32_t upper, int) {
      NormaliseContiguous(reinterpret_cast<float*>(Tree::DenseS::lookup_element(e.element, lower)),
                          upper - lower);
    });
    benchmark::ClobberMemory();
    if (expect != nullptr) {
      VerifyParticles(px, py, *expect, [&](uint32_t x, uint32_t y) {
        const int32_t b = static_cast<int32_t>((x / kBlock) * kBlocksPerSide + y / kBlock);
        return reinterpret_cast<const float*>(grid.Block(b))[(x % kBlock) * kBlock + y % kBlock];
      });
    }
    for (int32_t b : touched) grid.Deactivate(b);
    grid.nm->gc_serial();
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
  ParticleGrid ours(threads, /*per_cell_visitor=*/false, jit);
  ParticleGrid per_cell(threads, /*per_cell_visitor=*/true, jit);
  UpstreamParticleGrid upstream(threads);
  std::vector<float> dense(static_cast<size_t>(kSide) * kSide);
  // Thread t clears, scatters into and normalises its slice of rows.
  auto dense_frame = [&] {
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
    benchmark::ClobberMemory();
  };
  // Untimed: JIT compilation, first touch of every side's memory, and a check of each side
  // against the dense array.
  dense_frame();
  ours.Frame(px, py, touched, &dense);
  upstream.Frame(px, py, touched, &dense);
  per_cell.Frame(px, py, touched, &dense);
  std::vector<double> ours_s, upstream_s, dense_s, per_cell_s;
  for (auto _ : state) {
    const auto a = Clock::now();
    ours.Frame(px, py, touched);
    const auto b = Clock::now();
    dense_frame();
    const auto c = Clock::now();
    upstream.Frame(px, py, touched);
    const auto d = Clock::now();
    per_cell.Frame(px, py, touched);
    const auto e = Clock::now();
    ours_s.push_back(Seconds(a, b));
    dense_s.push_back(Seconds(b, c));
    upstream_s.push_back(Seconds(c, d));
    per_cell_s.push_back(Seconds(d, e));
    state.SetIterationTime(Seconds(a, b));
  }
  state.counters["vs_dense"] = Median(ours_s) / Median(dense_s);
  state.counters["vs_upstream"] = Median(upstream_s) / Median(ours_s);
  state.counters["vs_per_cell_visitor"] = Median(per_cell_s) / Median(ours_s);
  state.counters["frame_ms"] = 1e3 * Median(ours_s);
  state.counters["dense_ms"] = 1e3 * Median(dense_s);
  state.counters["upstream_ms"] = 1e3 * Median(upstream_s);
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
  // Run-time values, as the Python call passes them (volatile reads: the compiler cannot fold
  // them; libbenchmark 1.7.1's DoNotOptimize on a double ("+m,r") garbles it with gcc 12).
  volatile double scale_in = 1.0, offset_in = 0.0;
  const double scale = scale_in, offset = offset_in;
  auto fill = [&] {
    for (int b = 0; b < kBlocks / 4; ++b) Check(rt->Activate(pointer, {b}));
    // x[I] = I[0] * scale + offset: the runtime's bulk fill (Runtime.fill_index from Python).
    Check(accelmem::runtime::FillIndex(*rt, x, 0, scale, offset));
  };
  auto clear = [&] {
    for (int blk = 0; blk < kBlocks / 4; ++blk) Check(rt->Deactivate(pointer, {blk}));
    Check(rt->CollectGarbage());
  };
  fill();  // untimed: JIT compilation, first touch of the cells
  const float got = Check(rt->Read<float>(x, {kBlockCells + 3}));
  if (got != static_cast<float>(kBlockCells + 3)) {
    std::fprintf(stderr, "fill_index wrote %g at %d\n", got, kBlockCells + 3);
    std::abort();
  }
  clear();
  std::vector<double> fill_s, clear_s;
  for (auto _ : state) {
    const auto a = Clock::now();
    fill();
    const auto b = Clock::now();
    clear();
    const auto c = Clock::now();
    fill_s.push_back(Seconds(a, b));
    clear_s.push_back(Seconds(b, c));
    state.SetIterationTime(Seconds(a, c));
  }
  state.counters["clear_gc_over_fill"] = Median(clear_s) / Median(fill_s);
  state.counters["fill_ms"] = 1e3 * Median(fill_s);
  state.counters["clear_gc_ms"] = 1e3 * Median(clear_s);
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
// threshold; n = 256: 32 MiB). One pass (the runtime's way) against one collection per
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
    UpstreamEmulation upstream;
    upstream.one_pass_gc = one_pass;
    return Check(SparseRuntimeTestPeer::Create(tree, options, upstream));
  };
  std::unique_ptr<SparseRuntime> pass = make(true), per_snode = make(false);
  auto dirty = [&](SparseRuntime* rt) {
    for (const SNode* p : pointers) {
      for (int b = 0; b < kBlocksPer; ++b) Check(rt->Activate(*p, {b}));
      for (int b = 0; b < kBlocksPer; b += 2) Check(rt->Deactivate(*p, {b}));
    }
  };
  // Untimed: the first collection of each runtime (its first garbage, its first GC scratch).
  for (SparseRuntime* rt : {pass.get(), per_snode.get()}) {
    dirty(rt);
    Check(rt->CollectGarbage());
  }
  const int64_t pass_passes_before = pass->num_gc_passes();
  const int64_t per_snode_passes_before = per_snode->num_gc_passes();
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
      static_cast<double>(pass->num_gc_passes() - pass_passes_before) /
      static_cast<double>(state.iterations());
  state.counters["per_snode_passes_per_gc"] =
      static_cast<double>(per_snode->num_gc_passes() - per_snode_passes_before) /
      static_cast<double>(state.iterations());
}
BENCHMARK(BM_ManySNodesGc)
    ->ArgsProduct({{1, 2}, {16, 256}})
    ->ArgNames({"threads", "cell_floats"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
