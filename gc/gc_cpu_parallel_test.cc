#include "gc/gc_cpu_parallel.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "gc/device/gc_scratch.h"
#include "gc/device/gc_serial.h"
#include "gc/gc_testing.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace gc {
namespace {

using testing::AllCells;
using testing::CheckCollected;
using testing::FreeList;
using testing::RandomRound;
using testing::Snapshot;
using testing::TakeSnapshot;
using testing::TestHeap;

std::vector<int32_t> Sorted(std::vector<int32_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Serial and parallel GC of identical randomized histories give the same multiset of free
// indices and byte-identical cell memory, and each satisfies every invariant, for 1, 2 and 8
// workers and each order, over several rounds that reuse the collected cells.
TEST(GcCpuParallelTest, MatchesSerial) {
  for (int workers : {1, 2, 8}) {
    CpuParallelGc gc(workers, /*min_parallel_bytes=*/0);
    EXPECT_EQ(gc.num_workers(), workers);
    for (int32_t order : {kGcOrderAuto, kGcOrderSorted, kGcOrderRecycle}) {
      for (uint64_t node_size : {16u, 64u, 136u}) {
        TestHeap serial(node_size, 512), parallel(node_size, 512);
        serial.scratch.order = parallel.scratch.order = order;
        std::mt19937_64 rng_serial(workers * 100 + order * 10 + node_size);
        std::mt19937_64 rng_parallel = rng_serial;
        for (int round = 0; round < 6; ++round) {
          const int allocs = 200 + round * 700;
          const double fraction = 0.1 + 0.15 * round;
          RandomRound(&serial, &rng_serial, allocs, fraction, round == 4);
          RandomRound(&parallel, &rng_parallel, allocs, fraction, round == 4);
          ASSERT_EQ(Sorted(testing::Recycled(serial.nm)), Sorted(testing::Recycled(parallel.nm)));
          const Snapshot before = TakeSnapshot(parallel);
          ASSERT_TRUE(gc_serial(&serial.nm, &serial.scratch));
          ASSERT_TRUE(gc.Collect(&parallel.nm, &parallel.scratch).ok());
          ASSERT_TRUE(CheckCollected(parallel, before))
              << "workers " << workers << " order " << order << " round " << round;
          EXPECT_EQ(Sorted(FreeList(serial.nm)), Sorted(FreeList(parallel.nm)));
          EXPECT_TRUE(AllCells(serial.nm) == AllCells(parallel.nm)) << "cell memory differs";
          // Same allocation sequence afterwards: both hand out zeroed cells.
          ASSERT_EQ(serial.live.size(), parallel.live.size());
        }
      }
    }
  }
}

// With the sorted order the parallel free list is not just the same multiset but the same
// sequence as the serial one (bucket offsets make the refill deterministic).
TEST(GcCpuParallelTest, SortedOrderIsDeterministic) {
  for (int workers : {2, 8}) {
    CpuParallelGc gc(workers, /*min_parallel_bytes=*/0);
    TestHeap serial(32, 1024), parallel(32, 1024);
    serial.scratch.order = parallel.scratch.order = kGcOrderSorted;
    std::mt19937_64 rng_serial(77), rng_parallel(77);
    RandomRound(&serial, &rng_serial, 20000, 0.6);
    RandomRound(&parallel, &rng_parallel, 20000, 0.6);
    ASSERT_TRUE(gc_serial(&serial.nm, &serial.scratch));
    ASSERT_TRUE(gc.Collect(&parallel.nm, &parallel.scratch).ok());
    EXPECT_EQ(FreeList(serial.nm), FreeList(parallel.nm));
  }
}

// More workers than kMaxPrivateBitmaps share one bitmap, marked atomically; same result.
TEST(GcCpuParallelTest, ManyWorkersMarkAtomically) {
  CpuParallelGc gc(20, /*min_parallel_bytes=*/0);
  TestHeap serial(24, 256), parallel(24, 256);
  serial.scratch.order = parallel.scratch.order = kGcOrderSorted;
  std::mt19937_64 rng_serial(11), rng_parallel(11);
  for (int round = 0; round < 3; ++round) {
    RandomRound(&serial, &rng_serial, 3000, 0.5);
    RandomRound(&parallel, &rng_parallel, 3000, 0.5);
    const Snapshot before = TakeSnapshot(parallel);
    ASSERT_TRUE(gc_serial(&serial.nm, &serial.scratch));
    ASSERT_TRUE(gc.Collect(&parallel.nm, &parallel.scratch).ok());
    ASSERT_TRUE(CheckCollected(parallel, before));
    EXPECT_EQ(FreeList(serial.nm), FreeList(parallel.nm));
  }
}

// Guard bytes: the unreserved tail of the last data chunk and the free-list slots past the
// refilled range are never written, by the serial or the parallel GC, in any order (streaming
// stores included).
TEST(GcCpuParallelTest, GuardBytesPastTheListsUntouched) {
  constexpr uint8_t kGuard = 0xAB;
  constexpr int32_t kGuardIndex = 0x5A5A5A5A;
  for (int workers : {1, 2}) {
    for (int32_t order : {kGcOrderSorted, kGcOrderRecycle}) {
      for (uint64_t streaming : {uint64_t{0}, uint64_t{1}}) {
        CpuParallelGc gc(workers, /*min_parallel_bytes=*/0);
        TestHeap heap(64, 1024);
        heap.scratch.order = order;
        heap.scratch.streaming_zero_bytes = streaming;
        std::mt19937_64 rng(workers * 10 + order);
        RandomRound(&heap, &rng, 1500, 0.5);  // 1500 of the second chunk's 2048 slots reserved
        const int32_t reserved = heap.nm.data_list.size();
        uint8_t* tail = heap.nm.get_cell(reserved - 1) + heap.nm.element_size;
        const size_t tail_bytes = (2048 - reserved) * heap.nm.element_size;
        std::memset(tail, kGuard, tail_bytes);
        const int32_t free_capacity = heap.nm.free_list.max_num_elements_per_chunk;
        const int32_t expected_free = static_cast<int32_t>(TakeSnapshot(heap).expected_free.size());
        ASSERT_TRUE(heap.nm.free_list.touch_chunk(0));
        for (int32_t i = expected_free; i < free_capacity; ++i) {
          heap.nm.free_list.get<int32_t>(i) = kGuardIndex;
        }
        const Snapshot before = TakeSnapshot(heap);
        ASSERT_TRUE(gc.Collect(&heap.nm, &heap.scratch).ok());
        ASSERT_TRUE(CheckCollected(heap, before));
        EXPECT_TRUE(std::all_of(tail, tail + tail_bytes, [](uint8_t b) { return b == kGuard; }))
            << "workers " << workers << " order " << order << " streaming " << streaming;
        for (int32_t i = expected_free; i < free_capacity; ++i) {
          ASSERT_EQ(heap.nm.free_list.get<int32_t>(i), kGuardIndex) << i;
        }
        std::memset(tail, 0, tail_bytes);  // fresh cells must be zero for later allocations
      }
    }
  }
}

// One pool serves several NodeManagers and many collections in a row.
TEST(GcCpuParallelTest, ReusesThePool) {
  CpuParallelGc gc(2, /*min_parallel_bytes=*/0);
  TestHeap a(16, 256), b(512, 64);
  std::mt19937_64 rng(3);
  for (int round = 0; round < 20; ++round) {
    for (TestHeap* heap : {&a, &b}) {
      RandomRound(heap, &rng, 100, 0.5);
      const Snapshot before = TakeSnapshot(*heap);
      ASSERT_TRUE(gc.Collect(&heap->nm, &heap->scratch).ok());
      ASSERT_TRUE(CheckCollected(*heap, before));
    }
  }
}

// A runtime error during the collection comes back as a status with the runtime's message.
TEST(GcCpuParallelTest, ReportsRuntimeErrors) {
  for (uint64_t min_parallel_bytes : {uint64_t{0}, CpuParallelGc::kDefaultMinParallelBytes}) {
    CpuParallelGc gc(2, min_parallel_bytes);
    TestHeap heap(16, 64);
    for (int i = 0; i < 10; ++i) ASSERT_EQ(heap.nm.allocate_index(), i);
    heap.nm.recycle_index(3);
    heap.nm.recycle_index(12345);
    absl::Status status = gc.Collect(&heap.nm, &heap.scratch);
    EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
    EXPECT_NE(status.message().find("out of range"), absl::string_view::npos) << status;
    EXPECT_EQ(FreeList(heap.nm), (std::vector<int32_t>{3}));
  }
}

// Collections below the size threshold run on the caller alone, with the same effect; above it
// (4 MiB of 4 KiB cells here) the pool runs them.
TEST(GcCpuParallelTest, SmallCollectionsRunSerially) {
  CpuParallelGc gc(2);
  for (int allocs : {100, 3000}) {
    TestHeap heap(4096, 256);
    std::mt19937_64 rng(allocs);
    RandomRound(&heap, &rng, allocs, 0.5);
    const Snapshot before = TakeSnapshot(heap);
    ASSERT_TRUE(gc.Collect(&heap.nm, &heap.scratch).ok());
    ASSERT_TRUE(CheckCollected(heap, before));
  }
}

// A batch on the pool (real threads) collects every manager with garbage with every invariant,
// byte for byte as serial collections of twin heaps do, and skips the others; for 2 and 8
// workers, cell sizes 8..4096, several rounds reusing the collected cells, all managers on the
// pool or only the big ones.
TEST(GcCpuParallelTest, BatchMatchesSerialPerManager) {
  const uint64_t sizes[] = {8, 48, 48, 136, 4096, 48};
  // min_parallel_bytes 0: every manager on the pool; 20000: the big-cell managers on the pool,
  // the small ones serially, in the same batch.
  for (auto [workers, min_parallel_bytes] : {std::pair{2, 0}, {8, 0}, {2, 20000}}) {
    CpuParallelGc gc(workers, min_parallel_bytes);
    std::vector<std::unique_ptr<TestHeap>> batch, alone;
    for (uint64_t size : sizes) {
      batch.push_back(std::make_unique<TestHeap>(size, 256));
      alone.push_back(std::make_unique<TestHeap>(size, 256));
    }
    std::mt19937_64 rng(workers);
    for (int round = 0; round < 4; ++round) {
      std::vector<GcBatchEntry> entries;
      std::vector<Snapshot> before;
      for (size_t k = 0; k < batch.size(); ++k) {
        // Heap k has no garbage in round k (and at most once).
        const double fraction = k == static_cast<size_t>(round) ? 0.0 : 0.3 + 0.1 * round;
        std::mt19937_64 twin = rng;
        RandomRound(batch[k].get(), &rng, 150 + 50 * round, fraction);
        RandomRound(alone[k].get(), &twin, 150 + 50 * round, fraction);
        before.push_back(TakeSnapshot(*batch[k]));
        entries.push_back({&batch[k]->nm, &batch[k]->scratch, 0, 0});
      }
      absl::StatusOr<int> collected =
          gc.CollectBatch(entries.data(), static_cast<int>(entries.size()));
      ASSERT_TRUE(collected.ok()) << collected.status();
      EXPECT_EQ(*collected, 5);  // heap `round` had no garbage
      for (size_t k = 0; k < batch.size(); ++k) {
        if (alone[k]->nm.recycled_list.valid_size() > 0) {
          ASSERT_TRUE(gc_serial(&alone[k]->nm, &alone[k]->scratch));
        }
        if (k == static_cast<size_t>(round)) {
          EXPECT_EQ(batch[k]->nm.gc_epoch, before[k].gc_epoch) << "skipped, heap " << k;
        } else {
          ASSERT_TRUE(CheckCollected(*batch[k], before[k]))
              << "workers " << workers << " round " << round << " heap " << k;
        }
        EXPECT_EQ(Sorted(FreeList(batch[k]->nm)), Sorted(FreeList(alone[k]->nm))) << k;
        EXPECT_TRUE(AllCells(batch[k]->nm) == AllCells(alone[k]->nm)) << "heap " << k;
      }
    }
  }
}

// A batch reports the runtime error of any of its managers.
TEST(GcCpuParallelTest, BatchReportsRuntimeErrors) {
  for (int workers : {1, 2}) {
    CpuParallelGc gc(workers, /*min_parallel_bytes=*/0);
    TestHeap good(32, 64), bad(32, 64);
    ASSERT_EQ(good.nm.allocate_index(), 0);
    ASSERT_EQ(bad.nm.allocate_index(), 0);
    good.nm.recycle_index(0);
    bad.nm.recycle_index(0);
    bad.nm.recycle_index(12345);  // never a valid cell
    GcBatchEntry entries[] = {{&good.nm, &good.scratch, 0, 0}, {&bad.nm, &bad.scratch, 0, 0}};
    absl::StatusOr<int> collected = gc.CollectBatch(entries, 2);
    EXPECT_EQ(collected.status().code(), absl::StatusCode::kInternal) << workers;
    EXPECT_NE(collected.status().message().find("out of range"), absl::string_view::npos);
    EXPECT_EQ(FreeList(good.nm), (std::vector<int32_t>{0}));  // both were collected
    EXPECT_EQ(FreeList(bad.nm), (std::vector<int32_t>{0}));
  }
}

// Many managers, none with enough garbage for the pool alone but together enough: whole
// collections spread over the workers, each byte for byte as its serial twin, every invariant.
TEST(GcCpuParallelTest, SmallManagersSpreadOverTheWorkers) {
  for (int workers : {2, 3}) {
    CpuParallelGc gc(workers, /*min_parallel_bytes=*/200000);
    std::vector<std::unique_ptr<TestHeap>> batch, alone;
    std::vector<GcBatchEntry> entries;
    std::vector<Snapshot> before;
    std::mt19937_64 rng(40 + workers);
    for (int k = 0; k < 7; ++k) {
      const uint64_t size = k % 2 == 0 ? 64 : 24;
      batch.push_back(std::make_unique<TestHeap>(size, 1024));
      alone.push_back(std::make_unique<TestHeap>(size, 1024));
      std::mt19937_64 twin = rng;
      // 64-byte heaps: about 1500 recycled cells, 96 KB each, under the threshold alone.
      RandomRound(batch.back().get(), &rng, 3000 + 100 * k, 0.5);
      RandomRound(alone.back().get(), &twin, 3000 + 100 * k, 0.5);
      before.push_back(TakeSnapshot(*batch.back()));
      entries.push_back({&batch.back()->nm, &batch.back()->scratch, 0, 0});
    }
    absl::StatusOr<int> collected =
        gc.CollectBatch(entries.data(), static_cast<int>(entries.size()));
    ASSERT_TRUE(collected.ok()) << collected.status();
    EXPECT_EQ(*collected, 7);
    for (size_t k = 0; k < batch.size(); ++k) {
      ASSERT_TRUE(gc_serial(&alone[k]->nm, &alone[k]->scratch));
      ASSERT_TRUE(CheckCollected(*batch[k], before[k])) << "workers " << workers << " heap " << k;
      EXPECT_EQ(FreeList(batch[k]->nm), FreeList(alone[k]->nm)) << k;
      EXPECT_TRUE(AllCells(batch[k]->nm) == AllCells(alone[k]->nm)) << "heap " << k;
    }
  }
}

}  // namespace
}  // namespace gc
}  // namespace accelmem
