#include "gc/device/phase1_swap_lists.h"

#include <vector>

#include "gc/device/gc_scratch.h"
#include "gc/device/phase0_compact_free_list.h"
#include "gc/gc_testing.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace gc {
namespace {

using testing::TestHeap;

// 100 cells; the free list holds 10 entries of which `used` were handed out; `recycled` recycled.
void Prepare(TestHeap* heap, int32_t used, const std::vector<int32_t>& recycled) {
  for (int i = 0; i < 100; ++i) ASSERT_EQ(heap->nm.allocate_index(), i);
  ASSERT_EQ(heap->nm.free_list.reserve_new_elements(10), 0);
  for (int k = 0; k < 10; ++k) heap->nm.free_list.get<int32_t>(k) = 90 + k;
  heap->nm.free_list_used = used;
  for (int32_t r : recycled) heap->nm.recycle_index(r);
}

// Recycling plan: free list shrunk to S - U plus room for every recycled entry, cursor reset,
// backup = recycled count, recycled list cleared lazily (entries still readable).
TEST(Phase1Test, RecyclingOrderBookkeeping) {
  TestHeap heap(16, 1024);
  heap.scratch.order = kGcOrderRecycle;
  Prepare(&heap, 4, {7, 3, 50});
  gc_phase0_compact_free_list(&heap.nm, &heap.scratch, 0, 1);
  gc_phase1_swap_lists(&heap.nm, &heap.scratch, 1);
  EXPECT_EQ(heap.nm.free_list_used, 0);
  EXPECT_EQ(heap.nm.recycle_list_size_backup, 3);
  EXPECT_EQ(heap.nm.recycled_list.size(), 0);
  EXPECT_EQ(heap.nm.recycled_list.get<int32_t>(2), 50);  // lazy clear keeps the contents
  EXPECT_EQ(heap.scratch.plan.order, kGcOrderRecycle);
  EXPECT_EQ(heap.scratch.plan.free_base, 6);
  EXPECT_EQ(heap.scratch.plan.num_refill, 3);
  EXPECT_EQ(heap.scratch.plan.free_ok, 1);
  EXPECT_EQ(heap.nm.free_list.size(), 9);  // 6 kept + 3 reserved for phase 2
  // One worker: the order-preserving shift of upstream gc_serial.
  const std::vector<int32_t> kept = {94, 95, 96, 97, 98, 99};
  for (int k = 0; k < 6; ++k) EXPECT_EQ(heap.nm.free_list.get<int32_t>(k), kept[k]);
}

// Cursor past the end (fresh allocations after the free list ran out): nothing is kept.
TEST(Phase1Test, CursorPastEnd) {
  TestHeap heap(16, 1024);
  Prepare(&heap, 25, {1});
  gc_phase0_compact_free_list(&heap.nm, &heap.scratch, 0, 1);
  gc_phase1_swap_lists(&heap.nm, &heap.scratch, 1);
  EXPECT_EQ(heap.scratch.plan.free_base, 0);
  EXPECT_EQ(heap.nm.free_list.size(), 1);
  EXPECT_EQ(heap.nm.free_list_used, 0);
}

// Sorted plan: bucket offsets are the prefix sums of the marked indices per bucket, and the
// reserved range counts each distinct recycled index once.
TEST(Phase1Test, SortedOffsets) {
  TestHeap heap(16, 1 << 14);
  for (int i = 0; i < 20000; ++i) ASSERT_EQ(heap.nm.allocate_index(), i);
  std::vector<int32_t> recycled;
  for (int i = 0; i < 20000; i += 3) recycled.push_back(i);
  recycled.push_back(9);  // a duplicate
  for (int32_t r : recycled) heap.nm.recycle_index(r);
  heap.scratch.order = kGcOrderSorted;
  const int workers = 3;
  ASSERT_TRUE(gc_scratch_reserve(&heap.scratch, &heap.nm, workers));
  for (int w = 0; w < workers; ++w)
    gc_phase0_compact_free_list(&heap.nm, &heap.scratch, w, workers);
  gc_phase1_swap_lists(&heap.nm, &heap.scratch, workers);
  const GcPlan& plan = heap.scratch.plan;
  ASSERT_EQ(plan.order, kGcOrderSorted);
  ASSERT_GT(plan.num_buckets, 1);
  EXPECT_EQ(plan.num_refill, static_cast<int32_t>(recycled.size()) - 1);
  EXPECT_EQ(heap.nm.recycle_list_size_backup, static_cast<int32_t>(recycled.size()));
  for (int32_t b = 0; b <= plan.num_buckets; ++b) {
    int64_t below = 0;  // distinct recycled indices in buckets < b
    for (int i = 0; i < 20000; i += 3) below += (i >> plan.bucket_shift) < b;
    EXPECT_EQ(heap.scratch.bucket_offset[b], below) << "bucket " << b;
  }
  EXPECT_EQ(heap.nm.free_list.size(), plan.num_refill);
}

// Phase 1 on several lanes (a GPU block: every lane counts its range of buckets, then each adds
// the totals below it while lane 0 does the bookkeeping) gives the one-lane result exactly: the
// same offsets, plan and free list, for any lane count (more lanes than buckets, and more than
// kMaxPhase1Lanes, whose extra lanes do nothing), on one-word buckets (the GPU's geometry) and
// on the CPU's, with a shared bitmap (many phase-0 workers) and private ones.
TEST(Phase1Test, LanesMatchOneLane) {
  // Histories with the same seed; recycles every third cell and some runs, one duplicate.
  auto make = [](TestHeap* heap, int32_t min_shift) {
    heap->scratch.order = kGcOrderSorted;
    heap->scratch.min_bucket_shift = min_shift;
    for (int i = 0; i < 30000; ++i) ASSERT_EQ(heap->nm.allocate_index(), i);
    for (int i = 0; i < 30000; i += 3) heap->nm.recycle_index(i);
    for (int i = 7001; i < 7400; ++i) heap->nm.recycle_index(i);
    heap->nm.recycle_index(9);
  };
  for (int32_t min_shift : {kCudaMinBucketShift, 8, 0}) {
    for (int workers : {1, 3, 64}) {
      TestHeap one(16, 1 << 12);
      make(&one, min_shift);
      ASSERT_TRUE(gc_scratch_reserve(&one.scratch, &one.nm, workers));
      for (int w = 0; w < workers; ++w) {
        gc_phase0_compact_free_list(&one.nm, &one.scratch, w, workers);
      }
      gc_phase1_swap_lists(&one.nm, &one.scratch, workers);
      ASSERT_EQ(one.scratch.plan.order, kGcOrderSorted);
      const int32_t buckets = one.scratch.plan.num_buckets;
      const std::vector<int32_t> offsets(one.scratch.bucket_offset,
                                         one.scratch.bucket_offset + buckets + 1);
      for (int lanes : {2, 3, 7, 64, 256, kMaxPhase1Lanes + 5}) {
        SCOPED_TRACE(::testing::Message() << "min_shift=" << min_shift << " workers=" << workers
                                          << " lanes=" << lanes << " buckets=" << buckets);
        TestHeap many(16, 1 << 12);
        make(&many, min_shift);
        ASSERT_TRUE(gc_scratch_reserve(&many.scratch, &many.nm, workers));
        for (int w = 0; w < workers; ++w) {
          gc_phase0_compact_free_list(&many.nm, &many.scratch, w, workers);
        }
        // Every lane's plan before any lane finishes (as each GPU lane takes it before the
        // barrier); the finishes in reverse, lane 0 (which changes the lists) last.
        const GcPlan plan = gc_make_plan(&many.nm, &many.scratch, workers);
        for (int lane = 0; lane < lanes; ++lane) gc_phase1_count(plan, &many.scratch, lane, lanes);
        for (int lane = lanes - 1; lane >= 0; --lane) {
          gc_phase1_finish(&many.nm, &many.scratch, plan, lane, lanes);
        }
        const GcPlan& got = many.scratch.plan;
        const GcPlan& want = one.scratch.plan;
        EXPECT_EQ(got.num_buckets, buckets);
        EXPECT_EQ(got.bucket_shift, want.bucket_shift);
        EXPECT_EQ(got.num_refill, want.num_refill);
        EXPECT_EQ(got.free_base, want.free_base);
        EXPECT_EQ(got.free_ok, want.free_ok);
        EXPECT_EQ(std::vector<int32_t>(many.scratch.bucket_offset,
                                       many.scratch.bucket_offset + buckets + 1),
                  offsets);
        EXPECT_EQ(many.nm.free_list.size(), one.nm.free_list.size());
        EXPECT_EQ(many.nm.recycle_list_size_backup, one.nm.recycle_list_size_backup);
        EXPECT_EQ(many.nm.gc_epoch, one.nm.gc_epoch);
      }
      if (min_shift == kCudaMinBucketShift && workers == 64) {
        EXPECT_EQ(one.scratch.plan.bucket_shift, kCudaMinBucketShift);
        EXPECT_EQ(buckets, (30000 + 63) / 64);
      }
    }
  }
}

// Recycling plan with out-of-range entries: they are reported and dropped from the backup.
TEST(Phase1Test, DropsOutOfRangeEntries) {
  TestHeap heap(16, 1024);
  heap.scratch.order = kGcOrderRecycle;
  Prepare(&heap, 10, {4, 100, -3, 8});
  gc_phase0_compact_free_list(&heap.nm, &heap.scratch, 0, 1);
  gc_phase1_swap_lists(&heap.nm, &heap.scratch, 1);
  EXPECT_EQ(heap.memory.error_code, sparse_runtime::kErrorIndexOutOfRange);
  EXPECT_EQ(heap.nm.recycle_list_size_backup, 2);
  EXPECT_EQ(heap.scratch.plan.num_refill, 2);
  EXPECT_EQ(heap.nm.recycled_list.get<int32_t>(0), 4);
  EXPECT_EQ(heap.nm.recycled_list.get<int32_t>(1), 8);
}

}  // namespace
}  // namespace gc
}  // namespace accelmem
