#include "gc/gc_collector.h"

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

}  // namespace
}  // namespace gc
}  // namespace accelmem
