#include "gc/device/gc_serial.h"

#include <random>
#include <vector>

#include "gc/device/gc_scratch.h"
#include "gc/gc_test_util.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace gc {
namespace {

using testing::CheckCollected;
using testing::FreeList;
using testing::RandomRound;
using testing::Snapshot;
using testing::TakeSnapshot;
using testing::TestHeap;

// Randomized allocate/recycle histories: after each GC every invariant holds (free multiset,
// recycled cells zeroed, all other cells untouched, cursor/list sizes, bitmap clear), and the next
// round's allocations get zeroed cells, for each order and several cell sizes.
TEST(GcSerialTest, RandomHistories) {
  for (int32_t order : {kGcOrderAuto, kGcOrderSorted, kGcOrderRecycle}) {
    for (uint64_t node_size : {8u, 16u, 40u, 64u, 256u}) {
      TestHeap heap(node_size, 128);
      heap.scratch.order = order;
      std::mt19937_64 rng(order * 1000 + node_size);
      for (int round = 0; round < 12; ++round) {
        RandomRound(&heap, &rng, 50 + static_cast<int>(rng() % 400), (rng() % 100) / 100.0,
                    /*lifo=*/round % 4 == 3);
        const Snapshot before = TakeSnapshot(heap);
        ASSERT_TRUE(gc_serial(&heap.nm, &heap.scratch));
        ASSERT_TRUE(CheckCollected(heap, before))
            << "order " << order << " size " << node_size << " round " << round;
      }
    }
  }
}

// Upstream's test_node_allocator: 19 allocations, recycle the first 5, GC, allocate 5 more: the
// new ones are cells 0..4 in order (FIFO reuse), zeroed, and no fresh cell is reserved.
TEST(GcSerialTest, UpstreamNodeAllocatorSequence) {
  for (int32_t order : {kGcOrderAuto, kGcOrderRecycle}) {
    TestHeap heap(32, 1024);
    heap.scratch.order = order;
    for (int i = 0; i < 19; ++i) {
      ASSERT_EQ(heap.nm.allocate_index(), i);
      testing::FillCell(&heap.nm, i, 9);
    }
    for (int i = 0; i < 5; ++i) heap.nm.recycle_index(i);
    ASSERT_TRUE(gc_serial(&heap.nm, &heap.scratch));
    for (int i = 0; i < 5; ++i) EXPECT_EQ(heap.nm.allocate_index(), i);
    EXPECT_EQ(heap.nm.data_list.size(), 19);
    EXPECT_EQ(heap.nm.allocate_index(), 19);
  }
}

// The CPU order after a GC: unused old free entries first (original order), then recycled ones.
TEST(GcSerialTest, KeepsUnusedEntriesFirst) {
  TestHeap heap(16, 1024);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(heap.nm.allocate_index(), i);
  for (int i : {9, 8, 7, 6}) heap.nm.recycle_index(i);
  ASSERT_TRUE(gc_serial(&heap.nm, &heap.scratch));  // free: 9 8 7 6 (recycling order) or sorted
  ASSERT_EQ(heap.nm.allocate_index(), FreeList(heap.nm)[0]);  // one of them handed out
  heap.nm.recycle_index(2);
  const std::vector<int32_t> before = FreeList(heap.nm);
  std::vector<int32_t> unused(before.begin() + 1, before.end());
  ASSERT_TRUE(gc_serial(&heap.nm, &heap.scratch));
  std::vector<int32_t> expected = unused;
  expected.push_back(2);
  EXPECT_EQ(FreeList(heap.nm), expected);
}

// A GC with nothing recycled and nothing used changes nothing; a second GC right after another
// is a no-op as well.
TEST(GcSerialTest, IdempotentWhenNothingToDo) {
  TestHeap heap(64, 256);
  std::mt19937_64 rng(5);
  RandomRound(&heap, &rng, 500, 0.3);
  ASSERT_TRUE(gc_serial(&heap.nm, &heap.scratch));
  const Snapshot before = TakeSnapshot(heap);
  const std::vector<int32_t> free_before = FreeList(heap.nm);
  ASSERT_TRUE(gc_serial(&heap.nm, &heap.scratch));
  EXPECT_TRUE(CheckCollected(heap, before));
  EXPECT_EQ(FreeList(heap.nm), free_before);
}

// Out-of-range recycled indices (never cells of this manager) are reported and dropped; the
// valid ones are still collected (upstream indexes memory with them).
TEST(GcSerialTest, ReportsOutOfRangeIndices) {
  for (int32_t order : {kGcOrderSorted, kGcOrderRecycle}) {
    TestHeap heap(16, 64);
    heap.scratch.order = order;
    for (int i = 0; i < 100; ++i) {
      ASSERT_EQ(heap.nm.allocate_index(), i);
      testing::FillCell(&heap.nm, i, 3);
    }
    heap.nm.recycle_index(7);
    heap.nm.recycle_index(1000);
    heap.nm.recycle_index(-1);
    heap.nm.recycle_index(8);
    EXPECT_FALSE(gc_serial(&heap.nm, &heap.scratch));
    EXPECT_EQ(heap.memory.error_code, sparse_runtime::kErrorIndexOutOfRange);
    std::vector<int32_t> free_list = FreeList(heap.nm);
    std::sort(free_list.begin(), free_list.end());
    EXPECT_EQ(free_list, (std::vector<int32_t>{7, 8}));
    EXPECT_EQ(heap.nm.get_cell(7)[0], 0);
    EXPECT_EQ(heap.nm.get_cell(8)[15], 0);
    EXPECT_NE(heap.nm.get_cell(9)[0], 0);
  }
}

}  // namespace
}  // namespace gc
}  // namespace accelmem
