// The struct-for engine on its own: trees materialized here (the runtime context, the metas and
// the allocators, as SparseRuntime::Init makes them), cells (de)activated through the kinds'
// functions, the engine's struct-fors checked against the cells made active. The host-API suites
// (runtime/sparse_runtime_list_cache_test_suite.cc) test the same engine through SparseRuntime,
// against a model, while the tree changes.
#include "runtime/internal/struct_for.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/internal/snode_kinds.h"
#include "runtime/internal/thread_state.h"
#include "sparse_runtime/device/runtime_context.h"
#include "sparse_runtime/host_memory_pool.h"
#include "sparse_runtime/snode_tree.h"

namespace accelmem {
namespace runtime {
namespace internal {
namespace {

using sparse_runtime::Axis;
using sparse_runtime::HostMemoryPool;
using sparse_runtime::Ptr;
using sparse_runtime::RuntimeContext;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;
using sparse_runtime::SNodeType;

const Axis i(0);

// A finalized tree's runtime state, as SparseRuntime::Init makes it, and an engine over it.
class Materialized {
 public:
  explicit Materialized(SNodeTree& tree, StructForOptions options = {}) {
    EXPECT_TRUE(tree.Finalize().ok());
    std::memset(&context_, 0, sizeof(context_));
    pool_.Attach(&context_.memory);
    context_.memory.error_record = &RouteError;
    EXPECT_TRUE(runtime_context_init(&context_, tree.num_snodes(), tree.root_size()));
    metas_.resize(tree.num_snodes());
    std::vector<Ptr> metas;
    for (int id = 0; id < tree.num_snodes(); ++id) {
      const SNode& s = tree.snode(id);
      Meta& m = metas_[id];
      std::memset(&m, 0, sizeof(m));
      m.base.snode_id = id;
      m.base.element_size = s.type() == SNodeType::kPlace ? s.container_size() : s.cell_size();
      m.base.max_num_elements = s.num_cells_per_container();
      m.base.context = &context_;
      m.base.offset_in_parent_cell = s.offset_in_parent_cell();
      WithKind(s.type(), [&](auto kind) {
        m.base.lookup_element = decltype(kind)::kLookupElement;
        m.base.is_active = decltype(kind)::kIsActive;
        m.base.get_num_elements = decltype(kind)::kGetNumElements;
      });
      if (s.type() == SNodeType::kDynamic) {
        DynamicMeta_set_chunking(&m.dynamic, static_cast<i32>(s.chunk_size()), s.cell_alignment());
      }
      if (HasAllocator(s.type())) {
        EXPECT_TRUE(runtime_initialize_snode_allocator(&context_, id, s.allocator_node_size(),
                                                       s.allocator_alignment(), 1024, 1024));
      }
      if (s.type() == SNodeType::kPointer) {
        Pointer_bind_cells(&m.pointer, runtime_node_manager(&context_, id));
      }
      metas.push_back(meta(s));
    }
    engine_ = std::make_unique<StructForEngine>(tree, &context_, std::move(metas), options);
  }

  StructForEngine& engine() { return *engine_; }
  RuntimeContext* context() { return &context_; }
  Ptr meta(const SNode& s) { return reinterpret_cast<Ptr>(&metas_[s.id()]); }

  // The cell of `s` holding `index` (for a place: its parent's cell), activating the path (pointer
  // cells through `cache` when given).
  Ptr Activate(const SNode& s, std::vector<int32_t> index, NodeCache* cache = nullptr) {
    std::vector<int32_t> cell_index(s.path().size());
    CellIndices(s, index.data(), index.size(), cell_index.data());
    Ptr cell = context_.root;
    const size_t depth = s.path().size() - (s.type() == SNodeType::kPlace ? 1 : 0);
    for (size_t p = 1; p < depth; ++p) {
      const SNode& level = *s.path()[p];
      const Ptr container = cell + level.offset_in_parent_cell();
      WithKind(level.type(), [&](auto kind) {
        decltype(kind)::Activate(meta(level), container, cell_index[p], cache);
      });
      cell = LookupCell(level, meta(level), container, cell_index[p]);
    }
    return cell;
  }
  void Deactivate(const SNode& s, int32_t container_cell, NodeCache* cache = nullptr) {
    const Ptr container = context_.root + s.offset_in_parent_cell();
    WithKind(s.type(), [&](auto kind) {
      decltype(kind)::Deactivate(meta(s), container, container_cell, cache);
    });
  }

 private:
  union Meta {
    StructMeta base;
    RootMeta root;
    DenseMeta dense;
    BitmaskedMeta bitmasked;
    PointerMeta pointer;
    DynamicMeta dynamic;
  };
  HostMemoryPool pool_;
  RuntimeContext context_;
  std::vector<Meta> metas_;
  std::unique_ptr<StructForEngine> engine_;
};

// Tasks on `threads` std::threads claiming task indices from one counter, and a call from inside
// a task inline on its worker, as ThreadPool does; records every outermost call's size and grain.
thread_local int tls_test_worker = -1;
class TestPool : public TaskPool {
 public:
  explicit TestPool(int threads) : threads_(threads) {}
  int num_threads() const override { return threads_; }
  void ParallelFor(int64_t n, absl::FunctionRef<void(int64_t, int)> fn, int64_t grain) override {
    if (tls_test_worker >= 0) {
      for (int64_t k = 0; k < n; ++k) fn(k, tls_test_worker);
      return;
    }
    calls.emplace_back(n, grain);
    std::atomic<int64_t> next{0};
    auto work = [&](int worker) {
      tls_test_worker = worker;
      for (int64_t t; (t = next.fetch_add(grain)) < n;) {
        for (int64_t k = t; k < std::min(n, t + grain); ++k) fn(k, worker);
      }
      tls_test_worker = -1;
    };
    std::vector<std::thread> others;
    for (int w = 1; w < threads_; ++w) others.emplace_back(work, w);
    work(0);
    for (std::thread& t : others) t.join();
  }
  std::vector<std::pair<int64_t, int64_t>> calls;  // (n, grain)

 private:
  int threads_;
};

// Index -> the value address, for every cell a struct-for visits (a repeat is an error).
std::map<int32_t, Ptr> SerialCells(StructForEngine& engine, const SNode& snode) {
  std::map<int32_t, Ptr> cells;
  engine.StructFor(snode, [&](absl::Span<const int32_t> index, void* cell) {
    EXPECT_TRUE(cells.emplace(index[0], static_cast<Ptr>(cell)).second) << index[0];
  });
  return cells;
}

std::set<int32_t> Range(int32_t lo, int32_t hi) {
  std::set<int32_t> out;
  for (int32_t c = lo; c < hi; ++c) out.insert(c);
  return out;
}
template <typename Map>
std::set<int32_t> Keys(const Map& m) {
  std::set<int32_t> out;
  for (const auto& [k, v] : m) out.insert(k);
  return out;
}

// A list names each active container once, with its cells and its parent cell's coordinates;
// the serial struct-for visits their cells in layout order, at the place's offset.
TEST(StructForEngineTest, ListsNameTheActiveContainers) {
  SNodeTree tree;
  SNode& blocks = tree.root().pointer(i, 8);
  blocks.dense(i, 8).place<int32_t>("x").place<int32_t>("y");
  Materialized m(tree);
  const SNode& y = *tree.FindPlace("y");
  const Ptr cell42 = m.Activate(y, {42});  // block 5, its cell 2
  m.Activate(blocks, {1});
  const auto list = m.engine().ListGen(*y.parent());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].base[0], 1);
  EXPECT_EQ((*list)[1].base[0], 5);
  EXPECT_EQ((*list)[1].container, cell42 - 2 * y.parent()->cell_size());
  for (const ListElement& e : *list) EXPECT_EQ(e.num_cells, 8);
  std::vector<int32_t> order;
  std::map<int32_t, Ptr> cells;
  m.engine().StructFor(y, [&](absl::Span<const int32_t> index, void* cell) {
    order.push_back(index[0]);
    cells[index[0]] = static_cast<Ptr>(cell);
  });
  std::set<int32_t> expected = Range(8, 16);
  for (int32_t c : Range(40, 48)) expected.insert(c);
  EXPECT_EQ(std::set<int32_t>(order.begin(), order.end()), expected);
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
  EXPECT_EQ(cells[42], cell42 + y.offset_in_parent_cell());
}

// Lists are reused while nothing they depend on changed structure, and made again after a change
// of a level above the leaf (or of a dynamic leaf's length); with reuse off, every time.
TEST(StructForEngineTest, ListsAreReusedUntilTheStructureChanges) {
  for (bool reuse : {true, false}) {
    SCOPED_TRACE(reuse);
    SNodeTree tree;
    SNode& blocks = tree.root().pointer(i, 4);
    SNode& dynamic = blocks.dynamic(Axis(1), 64, 8);
    dynamic.place<int32_t>("d");
    StructForOptions options;
    options.reuse_lists = reuse;
    Materialized m(tree, options);
    StructForEngine& engine = m.engine();
    const bool reuses = engine.reuses_lists();
    EXPECT_TRUE(reuse || !reuses);
    const Ptr block = m.Activate(blocks, {2});
    auto first = engine.ListGen(dynamic);
    ASSERT_EQ(first->size(), 1u);
    EXPECT_EQ(first->front().num_cells, 0);
    EXPECT_EQ(engine.list_generations(), 1);
    auto again = engine.ListGen(dynamic);
    EXPECT_EQ(engine.list_generations(), reuses ? 1 : 2);
    EXPECT_EQ(again == first, reuses);
    // An append lengthens the leaf's container: a new list with the new length.
    i32 position = -1;
    ASSERT_NE(Dynamic_allocate(m.meta(dynamic), block + dynamic.offset_in_parent_cell(), &position),
              nullptr);
    EXPECT_EQ(position, 0);
    const int64_t before = engine.list_generations();
    EXPECT_EQ(engine.ListGen(dynamic)->front().num_cells, 1);
    EXPECT_EQ(engine.list_generations(), before + 1);
    // A block activated above the leaf: a new list with both containers.
    m.Activate(blocks, {0});
    EXPECT_EQ(engine.ListGen(dynamic)->size(), 2u);
    EXPECT_EQ(engine.list_generations(), before + 2);
    EXPECT_GT(engine.list_generation_seconds(), 0.0);
  }
}

// The parallel struct-for splits each container into tasks of at most 1024 cells (ceiling splits:
// none skipped) and visits every cell once; by runs a dense container's task range is one run at
// the cell stride.
TEST(StructForEngineTest, ParallelTasksSplitContainersAndRunsCoverThem) {
  SNodeTree tree;
  SNode& blocks = tree.root().pointer(i, 2);
  blocks.dense(i, 2500).place<float>("x");
  Materialized m(tree);
  const SNode& x = *tree.FindPlace("x");
  m.Activate(blocks, {0});
  m.Activate(blocks, {1});
  const std::map<int32_t, Ptr> serial = SerialCells(m.engine(), x);
  ASSERT_EQ(Keys(serial), Range(0, 5000));
  TestPool pool(2);
  std::mutex mu;
  std::map<int32_t, Ptr> parallel;
  std::set<int> workers;
  EXPECT_FALSE(m.engine().ParallelStructFor(
      x, pool, nullptr, [&](absl::Span<const int32_t> index, void* cell, int worker) {
        std::lock_guard<std::mutex> guard(mu);
        EXPECT_TRUE(parallel.emplace(index[0], static_cast<Ptr>(cell)).second);
        workers.insert(worker);
      }));
  EXPECT_EQ(parallel, serial);
  ASSERT_EQ(pool.calls.size(), 1u);
  EXPECT_EQ(pool.calls[0], std::make_pair(int64_t{6}, int64_t{1}));  // ceil(2500 / 1024) each
  for (int w : workers) EXPECT_TRUE(w == 0 || w == 1) << w;

  struct Run {
    int32_t first_index;
    Ptr first;
    int32_t count;
    uint64_t stride;
  };
  std::vector<Run> runs;
  m.engine().ParallelStructForRuns(
      x, pool, nullptr,
      [&](absl::Span<const int32_t> first_index, void* first, int32_t count, uint64_t stride, int) {
        std::lock_guard<std::mutex> guard(mu);
        runs.push_back({first_index[0], static_cast<Ptr>(first), count, stride});
      });
  std::sort(runs.begin(), runs.end(),
            [](const Run& a, const Run& b) { return a.first_index < b.first_index; });
  ASSERT_EQ(runs.size(), 2u);  // 2500 cells fit one run task (65536)
  for (const Run& r : runs) {
    EXPECT_EQ(r.count, 2500);
    EXPECT_EQ(r.stride, x.parent()->cell_size());
    EXPECT_EQ(r.first, serial.at(r.first_index));
  }
  EXPECT_EQ(runs[0].first_index, 0);
  EXPECT_EQ(runs[1].first_index, 2500);
}

// A non-dense leaf gives runs of one cell, only of active cells.
TEST(StructForEngineTest, RunsOfASparseLeafAreSingleCells) {
  SNodeTree tree;
  SNode& bits = tree.root().dense(i, 4).bitmasked(i, 16);
  bits.place<int32_t>("x");
  Materialized m(tree);
  const SNode& x = *tree.FindPlace("x");
  for (int32_t c : {3, 17, 18, 63}) m.Activate(bits, {c});
  TestPool pool(2);
  std::mutex mu;
  std::set<int32_t> seen;
  m.engine().ParallelStructForRuns(
      x, pool, nullptr,
      [&](absl::Span<const int32_t> first_index, void*, int32_t count, uint64_t, int) {
        EXPECT_EQ(count, 1);
        std::lock_guard<std::mutex> guard(mu);
        seen.insert(first_index[0]);
      });
  EXPECT_EQ(seen, (std::set<int32_t>{3, 17, 18, 63}));
}

// The backend regime: ceiling splits of the extent (1024 parts; runs: 16 per thread) that cover
// it once, each task marked as holding the runtime; the first failure is the result.
TEST(StructForEngineTest, ExtentTasksCoverTheExtentAndReportAFailure) {
  SNodeTree tree;
  tree.root().dense(i, 8).place<int32_t>("x");
  Materialized m(tree);
  for (bool runs : {false, true}) {
    SCOPED_TRACE(runs);
    TestPool pool(2);
    std::mutex mu;
    std::vector<std::pair<int64_t, int64_t>> ranges;
    absl::Status status =
        m.engine().ParallelExtent(5000, runs, pool, nullptr, [&](int64_t begin, int64_t end, int) {
          EXPECT_EQ(tls_locked_runtime, m.context());
          std::lock_guard<std::mutex> guard(mu);
          ranges.emplace_back(begin, end);
          return begin <= 2600 && 2600 < end ? absl::DataLossError("task") : absl::OkStatus();
        });
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
    std::sort(ranges.begin(), ranges.end());
    ASSERT_EQ(ranges.size(), runs ? 32u : 1024u);
    int64_t next = 0;
    for (const auto& [begin, end] : ranges) {
      EXPECT_EQ(begin, next);
      EXPECT_LT(begin, end);
      next = end;
    }
    EXPECT_EQ(next, 5000);
    EXPECT_EQ(tls_locked_runtime, nullptr);
  }
}

// Pointer cells (de)activated by a parallel struct-for's workers go through the worker's own
// cache (none outside a struct-for, none for other kinds); the outermost struct-for flushes them
// and says whether recycled cells are waiting for a collection. Off: no caches.
TEST(StructForEngineTest, WorkerCachesServeWorkersAndAreFlushed) {
  for (bool caches : {true, false}) {
    SCOPED_TRACE(caches);
    SNodeTree tree;
    SNode& driver = tree.root().dense(i, 4096);
    driver.place<int32_t>("d");
    SNode& ptr = tree.root().pointer(Axis(1), 4096);
    ptr.place<int32_t>("x");
    StructForOptions options;
    options.worker_caches = caches;
    Materialized m(tree, options);
    StructForEngine& engine = m.engine();
    TestPool pool(2);
    engine.InitWorkerCaches(pool.num_threads());
    EXPECT_EQ(engine.WorkerCache(ptr), nullptr);  // not a worker
    std::atomic<int> with_cache{0};
    // Activate every pointer cell from the workers, then deactivate the even ones. (The first
    // flush may hand back free cells a cache took ahead: recycled, so no assertion on it.)
    const bool first = engine.ParallelStructFor(
        driver, pool, nullptr, [&](absl::Span<const int32_t> index, void*, int worker) {
          EXPECT_EQ(tls_worker_runtime, m.context());
          EXPECT_EQ(tls_worker, worker);
          EXPECT_EQ(engine.WorkerCache(driver), nullptr);
          NodeCache* cache = engine.WorkerCache(ptr);
          with_cache += cache != nullptr;
          m.Activate(ptr, {index[0]}, cache);
        });
    if (!caches) EXPECT_FALSE(first);
    EXPECT_EQ(with_cache.load(), caches ? 4096 : 0);
    EXPECT_EQ(runtime_node_manager(m.context(), ptr.id())->num_in_use(), 4096);
    const bool recycled = engine.ParallelStructFor(
        driver, pool, nullptr, [&](absl::Span<const int32_t> index, void*, int) {
          if (index[0] % 2 == 0) m.Deactivate(ptr, index[0], engine.WorkerCache(ptr));
        });
    EXPECT_EQ(recycled, caches);
    const NodeManager* nm = runtime_node_manager(m.context(), ptr.id());
    EXPECT_EQ(nm->num_in_use(), 2048);
    EXPECT_GE(nm->num_recycled(), 2048);
    EXPECT_EQ(SerialCells(engine, *tree.FindPlace("x")).size(), 2048u);
  }
}

// A parallel struct-for run inline from a task (nested) leaves the caches to the outer one, and
// the thread marks are restored afterwards.
TEST(StructForEngineTest, NestedStructForsLeaveTheFlushToTheOuterOne) {
  SNodeTree tree;
  SNode& driver = tree.root().dense(i, 2);
  driver.place<int32_t>("d");
  SNode& ptr = tree.root().pointer(Axis(1), 64);
  ptr.place<int32_t>("x");
  Materialized m(tree);
  StructForEngine& engine = m.engine();
  TestPool pool(2);
  engine.InitWorkerCaches(pool.num_threads());
  for (int32_t c = 0; c < 64; ++c) m.Activate(ptr, {c});
  std::atomic<int> inner_recycled{0};
  const bool recycled = engine.ParallelStructFor(
      driver, pool, nullptr, [&](absl::Span<const int32_t> index, void*, int) {
        const bool r = engine.ParallelStructFor(
            driver, pool, nullptr, [&](absl::Span<const int32_t> inner, void*, int) {
              if (inner[0] == 0) m.Deactivate(ptr, index[0], engine.WorkerCache(ptr));
            });
        inner_recycled += r;
        EXPECT_EQ(tls_worker_runtime, m.context());  // the outer task's mark again
      });
  EXPECT_EQ(inner_recycled.load(), 0);
  EXPECT_TRUE(recycled);
  EXPECT_EQ(tls_worker_runtime, nullptr);
  EXPECT_EQ(tls_locked_runtime, nullptr);
  EXPECT_EQ(runtime_node_manager(m.context(), ptr.id())->num_recycled(), 2);
}

}  // namespace
}  // namespace internal
}  // namespace runtime
}  // namespace accelmem
