// Runs only with --config=gpu on a machine with an NVIDIA GPU (tag "gpu"); skips with a message
// when no device is visible, or fails when ACCELMEM_REQUIRE_GPU=1 (gpu_testing.h). A
// NodeManager in device memory is allocated from, filled, partly recycled and collected by the
// GC kernels (a batch of one); the result must match the serial CPU GC on the same history: the
// same multiset of free indices, every recycled cell zeroed, nothing else touched, and the recycled
// cells reused before fresh ones.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "gc/device/gc_batch.h"
#include "gc/device/gc_scratch.h"
#include "gc/device/gc_serial.h"
#include "gtest/gtest.h"
#include "runtime/cuda/gc_cuda.h"
#include "runtime/cuda/gpu_testing.h"
#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/device/runtime_memory.h"
#include "sparse_runtime/host_memory_pool.h"

namespace accelmem {
namespace runtime {
namespace cuda {
namespace {

using gc::gc_serial;
using gc::GcScratch;
using sparse_runtime::NodeManager;

struct Shape {
  uint64_t cell_bytes;
  int32_t cells;
  int grid_dim;  // 0: the default saturating grid
  double recycle_fraction;
};

class CudaGcGpuTest : public ::testing::TestWithParam<Shape> {
 protected:
  void SetUp() override { ACCELMEM_OPEN_GPU_OR_SKIP(driver_); }
  std::unique_ptr<CudaDriver> driver_;
};

// The serial CPU GC's free list after the same history (indices 0..n-1 allocated, `recycled`
// recycled in that order), sorted.
std::vector<int32_t> SerialGcFreeList(uint64_t cell_bytes, int32_t n,
                                      const std::vector<int32_t>& recycled) {
  sparse_runtime::HostMemoryPool pool;
  sparse_runtime::RuntimeMemory memory{};
  pool.Attach(&memory);
  NodeManager nm{};
  EXPECT_TRUE(nm.init(&memory, cell_bytes, 8, 4096));
  for (int32_t i = 0; i < n; ++i) EXPECT_EQ(nm.allocate_index(), i);
  for (int32_t index : recycled) nm.recycle_index(index);
  GcScratch scratch{};
  EXPECT_TRUE(gc_serial(&nm, &scratch));
  std::vector<int32_t> free_list;
  for (int32_t i = nm.free_list_used; i < nm.free_list.size(); ++i) {
    free_list.push_back(nm.free_list.get<int32_t>(i));
  }
  std::sort(free_list.begin(), free_list.end());
  return free_list;
}

// A device collection frees exactly the recycled cells, zeroes them and leaves the rest intact;
// the free list equals the serial GC's; the next allocations reuse the recycled cells.
TEST_P(CudaGcGpuTest, CollectMatchesSerialGc) {
  const Shape shape = GetParam();
  CudaGcLaunch launch;
  launch.grid_dim = shape.grid_dim;
  auto gc = CudaGc::Create(driver_.get(), launch);
  ASSERT_TRUE(gc.ok()) << gc.status();
  const uint64_t pool_bytes = CudaNodeManager::PoolBytesFor(shape.cell_bytes, shape.cells, 4096);
  auto nm = CudaNodeManager::Create(gc->get(), shape.cell_bytes, pool_bytes, 4096);
  ASSERT_TRUE(nm.ok()) << nm.status();
  CudaNodeManager& m = **nm;

  auto cells = m.Allocate(shape.cells);
  ASSERT_TRUE(cells.ok()) << cells.status();
  std::vector<int32_t> sorted = *cells;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int32_t> iota(shape.cells);
  std::iota(iota.begin(), iota.end(), 0);
  ASSERT_EQ(sorted, iota) << "a fresh device NodeManager hands out 0..n-1, each once";
  ASSERT_TRUE(m.Fill(*cells, 0xab).ok());

  std::mt19937_64 rng(shape.cells * 31 + shape.grid_dim);
  std::vector<int32_t> order = *cells;
  std::shuffle(order.begin(), order.end(), rng);
  const size_t num_recycled = static_cast<size_t>(shape.cells * shape.recycle_fraction);
  std::vector<int32_t> recycled(order.begin(), order.begin() + num_recycled);
  std::vector<int32_t> kept(order.begin() + num_recycled, order.end());
  ASSERT_TRUE(m.Recycle(recycled).ok());
  auto before = m.GetStats();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(before->recycled, static_cast<int32_t>(num_recycled));

  ASSERT_TRUE(m.Collect().ok());
  auto after = m.GetStats();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->error_code, 0);
  EXPECT_EQ(after->recycled, 0);
  EXPECT_EQ(after->free, static_cast<int32_t>(num_recycled));
  EXPECT_EQ(after->in_use, static_cast<int32_t>(kept.size()));
  EXPECT_EQ(after->reserved, shape.cells);

  auto free_list = m.FreeIndices();
  ASSERT_TRUE(free_list.ok()) << free_list.status();
  std::vector<int32_t> device_free = *free_list;
  std::sort(device_free.begin(), device_free.end());
  std::vector<int32_t> expected = recycled;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(device_free, expected);
  EXPECT_EQ(device_free, SerialGcFreeList(shape.cell_bytes, shape.cells, recycled));

  auto dirty = m.CountNonZeroBytes(recycled);
  ASSERT_TRUE(dirty.ok()) << dirty.status();
  EXPECT_EQ(*dirty, 0u) << "every recycled cell is zeroed";
  auto intact = m.CountNonZeroBytes(kept);
  ASSERT_TRUE(intact.ok()) << intact.status();
  EXPECT_EQ(*intact, kept.size() * m.element_size()) << "live cells are not touched";

  auto reused = m.Allocate(static_cast<int32_t>(num_recycled));
  ASSERT_TRUE(reused.ok()) << reused.status();
  std::vector<int32_t> reused_sorted = *reused;
  std::sort(reused_sorted.begin(), reused_sorted.end());
  EXPECT_EQ(reused_sorted, expected) << "recycled cells are reused before fresh ones";
  auto last = m.GetStats();
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->reserved, shape.cells);
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaGcGpuTest,
                         ::testing::Values(Shape{64, 100000, 0, 0.6}, Shape{64, 100000, 1, 0.5},
                                           Shape{16, 50000, 7, 0.9}, Shape{256, 20000, 0, 0.3},
                                           Shape{4096, 5000, 0, 1.0}, Shape{64, 1000, 0, 0.01}));

// Two collections in a row: the scratch is reused and the second frees only the new garbage.
TEST_F(CudaGcGpuTest, RepeatedCollections) {
  auto gc = CudaGc::Create(driver_.get());
  ASSERT_TRUE(gc.ok()) << gc.status();
  auto nm = CudaNodeManager::Create(gc->get(), 64, uint64_t{128} << 20, 4096);
  ASSERT_TRUE(nm.ok()) << nm.status();
  CudaNodeManager& m = **nm;
  auto cells = m.Allocate(20000);
  ASSERT_TRUE(cells.ok()) << cells.status();
  std::vector<int32_t> first(cells->begin(), cells->begin() + 5000);
  ASSERT_TRUE(m.Recycle(first).ok());
  ASSERT_TRUE(m.Collect().ok());
  std::vector<int32_t> second(cells->begin() + 5000, cells->begin() + 8000);
  ASSERT_TRUE(m.Recycle(second).ok());
  ASSERT_TRUE(m.Collect().ok());
  auto stats = m.GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->free, 8000);
  EXPECT_EQ(stats->in_use, 12000);
  EXPECT_EQ(stats->recycled, 0);
}

// CudaGc::Collect of raw device addresses (a batch of one over the CudaGc's own one-entry table):
// alternating between two managers rewrites the table each time, and collecting the same manager
// twice reuses it; each collection frees exactly its manager's new garbage.
TEST_F(CudaGcGpuTest, CollectByAddressAlternatesManagers) {
  auto gc = CudaGc::Create(driver_.get());
  ASSERT_TRUE(gc.ok()) << gc.status();
  auto a = CudaNodeManager::Create(gc->get(), 64, uint64_t{128} << 20, 4096);
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = CudaNodeManager::Create(gc->get(), 16, uint64_t{128} << 20, 4096);
  ASSERT_TRUE(b.ok()) << b.status();
  auto a_cells = (*a)->Allocate(6000);
  auto b_cells = (*b)->Allocate(4000);
  ASSERT_TRUE(a_cells.ok() && b_cells.ok());
  ASSERT_TRUE((*a)->Fill(*a_cells, 0x5a).ok());
  ASSERT_TRUE((*b)->Fill(*b_cells, 0x5a).ok());
  // (manager, first recycled cell, count) in collection order: a, b, a, a.
  struct Round {
    CudaNodeManager* m;
    const std::vector<int32_t>* cells;
    int begin, count;
  };
  const Round rounds[] = {{a->get(), &*a_cells, 0, 1000},
                          {b->get(), &*b_cells, 0, 3000},
                          {a->get(), &*a_cells, 1000, 500},
                          {a->get(), &*a_cells, 1500, 0}};
  int32_t a_free = 0, b_free = 0;
  for (const Round& r : rounds) {
    std::vector<int32_t> garbage(r.cells->begin() + r.begin, r.cells->begin() + r.begin + r.count);
    ASSERT_TRUE(r.m->Recycle(garbage).ok());
    ASSERT_TRUE((*gc)->Collect(r.m->node_manager(), r.m->scratch()).ok());
    (r.m == a->get() ? a_free : b_free) += r.count;
    for (CudaNodeManager* m : {a->get(), b->get()}) {
      auto stats = m->GetStats();
      ASSERT_TRUE(stats.ok()) << stats.status();
      EXPECT_EQ(stats->error_code, 0);
      EXPECT_EQ(stats->recycled, 0);
      EXPECT_EQ(stats->free, m == a->get() ? a_free : b_free);
    }
    EXPECT_EQ(*r.m->CountNonZeroBytes(garbage), 0u);
  }
  EXPECT_EQ(*(*a)->CountNonZeroBytes(std::vector<int32_t>(a_cells->begin() + 1500, a_cells->end())),
            4500u * 64);
  EXPECT_EQ(*(*b)->CountNonZeroBytes(std::vector<int32_t>(b_cells->begin() + 3000, b_cells->end())),
            1000u * 16);
}

// One pass over a table of managers (CollectBatch): each manager with garbage ends as its own
// serial collection would (same free multiset, recycled cells zeroed, live cells intact); the
// one without garbage is untouched.
TEST_F(CudaGcGpuTest, BatchCollectsEveryManagerInOnePass) {
  auto gc = CudaGc::Create(driver_.get());
  ASSERT_TRUE(gc.ok()) << gc.status();
  const uint64_t sizes[] = {64, 16, 64, 256};
  const int32_t counts[] = {30000, 50000, 1000, 8000};
  const double fractions[] = {0.5, 0.9, 0.0, 0.3};
  std::vector<std::unique_ptr<CudaNodeManager>> managers;
  std::vector<std::vector<int32_t>> recycled(4), live(4);
  std::vector<gc::GcBatchEntry> table;
  std::mt19937 rng(5);
  for (int k = 0; k < 4; ++k) {
    auto nm = CudaNodeManager::Create(
        gc->get(), sizes[k], CudaNodeManager::PoolBytesFor(sizes[k], counts[k], 4096), 4096);
    ASSERT_TRUE(nm.ok()) << nm.status();
    auto cells = (*nm)->Allocate(counts[k]);
    ASSERT_TRUE(cells.ok()) << cells.status();
    ASSERT_TRUE((*nm)->Fill(*cells, 0xC3).ok());
    std::shuffle(cells->begin(), cells->end(), rng);
    const size_t r = static_cast<size_t>(fractions[k] * counts[k]);
    recycled[k].assign(cells->begin(), cells->begin() + r);
    live[k].assign(cells->begin() + r, cells->end());
    ASSERT_TRUE((*nm)->Recycle(recycled[k]).ok());
    gc::GcBatchEntry entry{};
    entry.nm = reinterpret_cast<NodeManager*>((*nm)->node_manager());
    entry.scratch = reinterpret_cast<GcScratch*>((*nm)->scratch());
    table.push_back(entry);
    managers.push_back(std::move(*nm));
  }
  auto device_table = driver_->Allocate(table.size() * sizeof(gc::GcBatchEntry));
  ASSERT_TRUE(device_table.ok()) << device_table.status();
  ASSERT_TRUE(
      driver_->CopyToDevice(*device_table, table.data(), table.size() * sizeof(gc::GcBatchEntry))
          .ok());
  ASSERT_TRUE((*gc)->CollectBatch(*device_table, 4).ok());
  for (int k = 0; k < 4; ++k) {
    SCOPED_TRACE(k);
    CudaNodeManager& m = *managers[k];
    auto stats = m.GetStats();
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->error_code, 0);
    EXPECT_EQ(stats->recycled, 0);
    EXPECT_EQ(stats->in_use, static_cast<int32_t>(live[k].size()));
    auto free_list = m.FreeIndices();
    ASSERT_TRUE(free_list.ok());
    std::sort(free_list->begin(), free_list->end());
    EXPECT_EQ(*free_list, SerialGcFreeList(sizes[k], counts[k], recycled[k]));
    EXPECT_EQ(*m.CountNonZeroBytes(recycled[k]), 0u);
    EXPECT_EQ(*m.CountNonZeroBytes(live[k]), live[k].size() * sizes[k]);
  }
  driver_->Free(*device_table).IgnoreError();
}

}  // namespace
}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem
