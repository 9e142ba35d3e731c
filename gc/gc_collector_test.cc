#include "gc/gc_collector.h"

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "gc/gc_testing.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace gc {
namespace {

using testing::CheckCollected;
using testing::RandomRound;
using testing::Snapshot;
using testing::TakeSnapshot;
using testing::TestHeap;

// Only managers with recycled cells are collected; the others are left exactly as they were
// (their cursor included).
TEST(GcCollectorTest, CollectsOnlyManagersWithRecycledCells) {
  TestHeap heap(32, 256);
  NodeManager other{};
  ASSERT_TRUE(other.init(&heap.memory, 64, 8, 256));  // same runtime memory
  for (int i = 0; i < 10; ++i) ASSERT_EQ(other.allocate_index(), i);
  std::mt19937_64 rng(1);
  RandomRound(&heap, &rng, 500, 0.5);
  GcCollector collector;
  EXPECT_TRUE(GcCollector::NeedsCollection(heap.nm));
  EXPECT_FALSE(GcCollector::NeedsCollection(other));
  const Snapshot before = TakeSnapshot(heap);
  const int32_t other_used = other.free_list_used;
  NodeManager* managers[] = {&other, nullptr, &heap.nm};
  absl::StatusOr<int> ran = collector.CollectAll(managers);
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_EQ(*ran, 1);
  EXPECT_TRUE(CheckCollected(heap, before));
  EXPECT_EQ(other.free_list_used, other_used);  // untouched
  EXPECT_EQ(collector.num_collections(), 1);
  // Nothing recycled any more: a second pass collects nothing.
  ran = collector.CollectAll(managers);
  ASSERT_TRUE(ran.ok());
  EXPECT_EQ(*ran, 0);
}

// Repeated batches through a parallel collector keep every invariant.
TEST(GcCollectorTest, ParallelBatches) {
  GcCollectorOptions options;
  options.num_workers = 2;
  options.min_parallel_bytes = 0;
  GcCollector collector(options);
  TestHeap heap(48, 512);
  std::mt19937_64 rng(2);
  for (int round = 0; round < 8; ++round) {
    RandomRound(&heap, &rng, 400, 0.4);
    const Snapshot before = TakeSnapshot(heap);
    absl::StatusOr<bool> ran = collector.CollectIfNeeded(&heap.nm);
    ASSERT_TRUE(ran.ok()) << ran.status();
    EXPECT_TRUE(*ran);
    ASSERT_TRUE(CheckCollected(heap, before));
  }
}

// Managers of another runtime memory are refused (the scratch lives in the first one).
TEST(GcCollectorTest, RefusesAnotherRuntimeMemory) {
  TestHeap a(16, 64), b(16, 64);
  ASSERT_EQ(a.nm.allocate_index(), 0);
  ASSERT_EQ(b.nm.allocate_index(), 0);
  a.nm.recycle_index(0);
  b.nm.recycle_index(0);
  GcCollector collector;
  ASSERT_TRUE(collector.CollectIfNeeded(&a.nm).ok());
  absl::StatusOr<bool> ran = collector.CollectIfNeeded(&b.nm);
  EXPECT_EQ(ran.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(b.nm.recycled_list.size(), 1);
}

// Many managers of one runtime memory (cell sizes shared and not) are collected in one pass:
// every one with garbage ends with no recycled cells and its cells free, the others untouched.
TEST(GcCollectorTest, CollectAllIsOnePass) {
  for (int workers : {1, 2}) {
    GcCollectorOptions options;
    options.num_workers = workers;
    options.min_parallel_bytes = 0;
    GcCollector collector(options);
    TestHeap heap(32, 256);
    std::vector<std::unique_ptr<NodeManager>> managers;
    std::vector<NodeManager*> table;
    const uint64_t sizes[] = {64, 32, 64, 128, 32, 64, 8, 64};
    for (size_t k = 0; k < 8; ++k) {
      managers.push_back(std::make_unique<NodeManager>());
      ASSERT_TRUE(managers.back()->init(&heap.memory, sizes[k], 8, 256));
      table.push_back(managers.back().get());
    }
    for (int pass = 0; pass < 3; ++pass) {
      for (size_t k = 0; k < 8; ++k) {
        NodeManager* nm = table[k];
        std::vector<int32_t> cells;
        for (int i = 0; i < 300; ++i) cells.push_back(nm->allocate_index());
        for (int32_t c : cells) std::memset(nm->get_cell(c), 0x5A, nm->element_size);
        if (k % 3 == 1) continue;  // keeps its cells: no garbage
        for (size_t i = 0; i < cells.size(); i += 2) nm->recycle_index(cells[i]);
      }
      absl::StatusOr<int> ran = collector.CollectAll(table);
      ASSERT_TRUE(ran.ok()) << ran.status();
      EXPECT_EQ(*ran, 5);  // k = 1, 4, 7 have no garbage
      EXPECT_EQ(collector.num_passes(), pass + 1);
      EXPECT_EQ(collector.num_collections(), 5 * (pass + 1));
      for (size_t k = 0; k < 8; ++k) {
        const NodeManager* nm = table[k];
        EXPECT_EQ(nm->num_recycled(), 0) << k;
        EXPECT_EQ(nm->num_in_use(), k % 3 == 1 ? 300 * (pass + 1) : 150 * (pass + 1)) << k;
        EXPECT_EQ(nm->gc_epoch, k % 3 == 1 ? 0u : static_cast<uint32_t>(pass + 1)) << k;
      }
    }
    // Freed cells are zero when handed out again.
    const int32_t again = table[0]->allocate_index();
    for (uint64_t b = 0; b < table[0]->element_size; ++b) {
      ASSERT_EQ(table[0]->get_cell(again)[b], 0) << b;
    }
  }
}

// A table with a manager of another runtime memory is refused before anything is collected.
TEST(GcCollectorTest, CollectAllRefusesAMixedTableWhole) {
  TestHeap a(16, 64), b(16, 64);
  ASSERT_EQ(a.nm.allocate_index(), 0);
  ASSERT_EQ(b.nm.allocate_index(), 0);
  a.nm.recycle_index(0);
  b.nm.recycle_index(0);
  GcCollector collector;
  NodeManager* table[] = {&a.nm, &b.nm};
  EXPECT_EQ(collector.CollectAll(table).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(a.nm.num_recycled(), 1);
  EXPECT_EQ(collector.num_collections(), 0);
}

}  // namespace
}  // namespace gc
}  // namespace accelmem
