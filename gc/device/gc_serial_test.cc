#include "gc/device/gc_serial.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "gc/device/gc_scratch.h"
#include "gc/gc_testing.h"
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

// The pool's allocator behind RefuseUpTo, which refuses requests of up to `refuse_up_to` bytes.
sparse_runtime::HostAllocateFn pool_allocate = nullptr;
uint64_t refuse_up_to = 0;
void* RefuseUpTo(void* pool, uint64_t size, uint64_t alignment) {
  return size <= refuse_up_to ? nullptr : pool_allocate(pool, size, alignment);
}

// A recycled index refused for want of memory (the recycled list's next chunk) leaves a hole in
// the list; a later recycle may succeed behind it once memory is back. The GC collects the
// entries before the hole only: the hole's content (a fresh chunk's zero) is not taken for cell
// 0, which is in use. The cells recycled at and after the hole leak (the refusal was reported).
TEST(GcSerialTest, RecycledListHoleIsNotCollected) {
  for (int32_t order : {kGcOrderSorted, kGcOrderRecycle}) {
    TestHeap heap(16, 1024);  // index lists of 4096 entries (16 KiB) a chunk
    heap.scratch.order = order;
    for (int i = 0; i < 5000; ++i) {
      ASSERT_EQ(heap.nm.allocate_index(), i);
      testing::FillCell(&heap.nm, i, 5);
    }
    for (int i = 100; i < 100 + 4096; ++i) heap.nm.recycle_index(i);  // fills chunk 0
    pool_allocate = heap.memory.host_allocate;
    heap.memory.host_allocate = RefuseUpTo;
    refuse_up_to = 16384;
    heap.nm.recycle_index(4196);  // entry 4096: chunk 1 refused
    refuse_up_to = 0;
    heap.nm.recycle_index(4197);  // entry 4097: chunk 1 allocated now; entry 4096 stays 0
    heap.memory.host_allocate = pool_allocate;
    ASSERT_EQ(heap.memory.error_code, sparse_runtime::kErrorOutOfMemory);
    heap.memory.error_code = sparse_runtime::kRuntimeOk;
    EXPECT_EQ(heap.nm.recycled_list.size(), 4098);
    EXPECT_EQ(heap.nm.num_recycled(), 4096);
    ASSERT_TRUE(gc_serial(&heap.nm, &heap.scratch));
    std::vector<int32_t> free_list = FreeList(heap.nm);
    std::sort(free_list.begin(), free_list.end());
    std::vector<int32_t> expected(4096);
    std::iota(expected.begin(), expected.end(), 100);
    EXPECT_EQ(free_list, expected) << order;
    for (int i : {0, 99, 4196, 4197, 4999}) {
      EXPECT_EQ(heap.nm.get_cell(i)[0], testing::PatternByte(i, 5, 0)) << "cell " << i;
    }
    EXPECT_EQ(heap.nm.get_cell(100)[0], 0);
  }
}

// Collections whose data list grows from one to the next: the bitmap is regrown (new memory,
// all-zero) and left all-zero by each collection, the last over 2^18 cells (a 4096-word bitmap,
// 64 times the first's), a quarter of them recycled.
TEST(GcSerialTest, BitmapAcrossGrowingCollections) {
  TestHeap heap(16, 1 << 14);
  std::mt19937_64 rng(12);
  int64_t last_words = 0;
  for (int allocs : {3000, 20000, 70000}) {
    RandomRound(&heap, &rng, allocs, 0.5);
    ASSERT_TRUE(gc_scratch_reserve(&heap.scratch, &heap.nm, 1));
    ASSERT_EQ(gc_make_plan(&heap.nm, &heap.scratch, 1).order, kGcOrderSorted) << allocs;
    EXPECT_GT(heap.scratch.bitmap_words, last_words);
    last_words = heap.scratch.bitmap_words;
    const Snapshot before = TakeSnapshot(heap);
    ASSERT_TRUE(gc_serial(&heap.nm, &heap.scratch));
    ASSERT_TRUE(CheckCollected(heap, before)) << allocs;
  }
  constexpr int32_t kCells = int32_t{1} << 18;
  while (heap.nm.num_free() > 0) heap.live.push_back(heap.nm.allocate_index());
  while (heap.nm.num_reserved() < kCells) {
    const int32_t index = heap.nm.allocate_index();
    testing::FillCell(&heap.nm, index, heap.generation);
    heap.live.push_back(index);
  }
  ASSERT_EQ(heap.nm.num_reserved(), kCells);
  std::shuffle(heap.live.begin(), heap.live.end(), rng);
  const size_t keep = heap.live.size() - kCells / 4;
  for (size_t k = keep; k < heap.live.size(); ++k) heap.nm.recycle_index(heap.live[k]);
  heap.live.resize(keep);
  ASSERT_TRUE(gc_scratch_reserve(&heap.scratch, &heap.nm, 1));
  ASSERT_EQ(gc_make_plan(&heap.nm, &heap.scratch, 1).order, kGcOrderSorted);
  const Snapshot before = TakeSnapshot(heap);
  ASSERT_TRUE(gc_serial(&heap.nm, &heap.scratch));
  EXPECT_TRUE(CheckCollected(heap, before));
}

}  // namespace
}  // namespace gc
}  // namespace accelmem
