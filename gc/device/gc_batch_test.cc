#include "gc/device/gc_batch.h"

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
using testing::Recycled;
using testing::Snapshot;
using testing::TakeSnapshot;
using testing::TestHeap;

// A table of heaps with cell sizes of 8..200 bytes; heap k gets `rounds[k]` random rounds (0: no
// garbage at all). Two tables built from the same seed hold identical histories.
struct Table {
  std::vector<std::unique_ptr<TestHeap>> heaps;
  std::vector<GcBatchEntry> entries;

  Table(uint64_t seed, const std::vector<int>& rounds, int order) {
    std::mt19937_64 rng(seed);
    const uint64_t sizes[] = {8, 16, 24, 64, 72, 200};
    for (size_t k = 0; k < rounds.size(); ++k) {
      heaps.push_back(std::make_unique<TestHeap>(sizes[k % 6], /*chunk_num_elements=*/256));
      TestHeap* h = heaps.back().get();
      h->scratch.order = order;
      for (int r = 0; r < rounds[k]; ++r) RandomRound(h, &rng, 300 + 97 * r, 0.4 + 0.1 * r);
      if (rounds[k] == 0) RandomRound(h, &rng, 100, 0.0);  // live cells, nothing recycled
    }
    for (auto& h : heaps) entries.push_back({&h->nm, &h->scratch, 0, 0});
  }
};

// The batch as a grid of `workers` workers of `lanes` lanes, simulated one after the other
// (lanes in reverse: lane 0, which clears the bitmap after the block barrier, runs last).
int CollectBatch(Table* t, int workers, int lanes) {
  const int n = static_cast<int>(t->entries.size());
  const int active = gc_batch_prepare(t->entries.data(), n, workers);
  for (int w = 0; w < workers; ++w) gc_batch_phase0(t->entries.data(), n, w, workers);
  gc_batch_phase1(t->entries.data(), n, 0, workers);
  for (int w = 0; w < workers; ++w) {
    for (int lane = lanes - 1; lane >= 0; --lane) {
      gc_batch_phase2(t->entries.data(), n, w, workers, lane, lanes);
    }
  }
  return active;
}

// Every manager of a batch is collected with every invariant (free multiset, zeroed recycled
// cells, live cells untouched, bitmap all-zero again), for every order and grid shape; managers
// without garbage are left exactly as they were (no epoch, no free-list change).
TEST(GcBatchTest, CollectsEveryManagerWithGarbageAndSkipsTheRest) {
  const std::vector<int> rounds = {2, 0, 1, 3, 0, 1, 2};
  for (int order : {kGcOrderAuto, kGcOrderSorted, kGcOrderRecycle}) {
    for (auto [workers, lanes] : {std::pair{1, 1}, {2, 1}, {3, 1}, {8, 1}, {13, 1}, {4, 3}}) {
      SCOPED_TRACE(::testing::Message()
                   << "order=" << order << " workers=" << workers << " lanes=" << lanes);
      Table t(/*seed=*/11 + workers, rounds, order);
      std::vector<Snapshot> before;
      std::vector<std::vector<int32_t>> free_before;
      for (auto& h : t.heaps) {
        before.push_back(TakeSnapshot(*h));
        free_before.push_back(FreeList(h->nm));
      }
      EXPECT_EQ(CollectBatch(&t, workers, lanes), 5);
      for (size_t k = 0; k < t.heaps.size(); ++k) {
        const TestHeap& h = *t.heaps[k];
        if (rounds[k] == 0) {
          EXPECT_EQ(t.entries[k].active, 0) << k;
          EXPECT_EQ(h.nm.gc_epoch, before[k].gc_epoch) << k;
          EXPECT_EQ(FreeList(h.nm), free_before[k]) << k;
        } else {
          EXPECT_EQ(t.entries[k].active, 1) << k;
          EXPECT_TRUE(CheckCollected(h, before[k])) << "heap " << k;
          EXPECT_TRUE(Recycled(h.nm).empty()) << k;
        }
      }
    }
  }
}

// A batch collects each manager exactly as collecting it alone does (gc_serial per manager on a
// twin table with the same history): same free list, same bytes in every cell.
TEST(GcBatchTest, SerialBatchMatchesOneCollectionPerManager) {
  const std::vector<int> rounds = {1, 2, 0, 3, 1};
  Table batch(5, rounds, kGcOrderAuto), alone(5, rounds, kGcOrderAuto);
  EXPECT_EQ(gc_batch_serial(batch.entries.data(), static_cast<int>(batch.entries.size())), 4);
  for (auto& h : alone.heaps) {
    if (h->nm.recycled_list.valid_size() > 0) ASSERT_TRUE(gc_serial(&h->nm, &h->scratch));
  }
  for (size_t k = 0; k < rounds.size(); ++k) {
    EXPECT_EQ(FreeList(batch.heaps[k]->nm), FreeList(alone.heaps[k]->nm)) << k;
    EXPECT_EQ(batch.heaps[k]->nm.free_list_used, alone.heaps[k]->nm.free_list_used) << k;
    EXPECT_EQ(AllCells(batch.heaps[k]->nm), AllCells(alone.heaps[k]->nm)) << k;
  }
}

// A batch on a GPU's geometry (one-word buckets; phase 2 on blocks of 64 lanes, a few lanes a
// cell) collects each manager exactly as gc_serial alone does on a twin table: the same free list
// entry for entry, the same bytes in every cell.
TEST(GcBatchTest, GpuShapedBatchMatchesOneCollectionPerManager) {
  const std::vector<int> rounds = {1, 2, 0, 3, 1, 2};
  for (auto [workers, lanes] : {std::pair{24, 64}, {3, 32}, {40, 5}}) {
    SCOPED_TRACE(::testing::Message() << "workers=" << workers << " lanes=" << lanes);
    Table batch(21, rounds, kGcOrderAuto), alone(21, rounds, kGcOrderAuto);
    for (auto& h : batch.heaps) h->scratch.min_bucket_shift = kCudaMinBucketShift;
    EXPECT_EQ(CollectBatch(&batch, workers, lanes), 5);
    for (auto& h : alone.heaps) {
      if (h->nm.recycled_list.valid_size() > 0) ASSERT_TRUE(gc_serial(&h->nm, &h->scratch));
    }
    for (size_t k = 0; k < rounds.size(); ++k) {
      EXPECT_EQ(FreeList(batch.heaps[k]->nm), FreeList(alone.heaps[k]->nm)) << k;
      EXPECT_EQ(batch.heaps[k]->nm.free_list_used, alone.heaps[k]->nm.free_list_used) << k;
      EXPECT_TRUE(AllCells(batch.heaps[k]->nm) == AllCells(alone.heaps[k]->nm)) << k;
      if (rounds[k] > 0) {
        EXPECT_EQ(batch.heaps[k]->scratch.plan.order, kGcOrderSorted) << k;
        EXPECT_EQ(batch.heaps[k]->scratch.plan.bucket_shift, kCudaMinBucketShift) << k;
      }
    }
  }
}

// Repeated batches keep working (the scratches keep their all-zero bitmaps between batches) and
// an empty table, or one whose managers have no garbage, does nothing.
TEST(GcBatchTest, RepeatedAndEmptyBatches) {
  Table t(9, {1, 1, 1}, kGcOrderSorted);
  std::mt19937_64 rng(3);
  for (int round = 0; round < 5; ++round) {
    std::vector<Snapshot> before;
    for (auto& h : t.heaps) before.push_back(TakeSnapshot(*h));
    EXPECT_EQ(CollectBatch(&t, 4, 1), 3);
    for (size_t k = 0; k < t.heaps.size(); ++k) EXPECT_TRUE(CheckCollected(*t.heaps[k], before[k]));
    EXPECT_EQ(CollectBatch(&t, 4, 1), 0);  // nothing recycled since
    for (auto& h : t.heaps) RandomRound(h.get(), &rng, 200, 0.5);
  }
  EXPECT_EQ(gc_batch_prepare(nullptr, 0, 4), 0);
  GcBatchEntry null_entry{nullptr, nullptr, 1, 0};
  EXPECT_EQ(gc_batch_serial(&null_entry, 1), 0);
  EXPECT_EQ(null_entry.active, 0);
}

}  // namespace
}  // namespace gc
}  // namespace accelmem
