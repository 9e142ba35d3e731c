#include "gc/device/gc_scratch.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "gc/gc_testing.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace gc {
namespace {

using testing::TestHeap;

// Allocates `total` cells and recycles the first `recycled` of them.
void Populate(TestHeap* heap, int total, int recycled) {
  for (int i = 0; i < total; ++i) ASSERT_EQ(heap->nm.allocate_index(), i);
  for (int i = 0; i < recycled; ++i) heap->nm.recycle_index(i);
}

// Auto order: a dense recycled set (scan <= kAutoMaxBitmapWordsPerCell words per cell) is sorted.
TEST(GcScratchTest, AutoSortsDenseRecycledSets) {
  TestHeap heap(64, 1024);
  Populate(&heap, 10000, 5000);
  ASSERT_TRUE(gc_scratch_reserve(&heap.scratch, &heap.nm, 2));
  GcPlan plan = gc_make_plan(&heap.nm, &heap.scratch, 2);
  EXPECT_EQ(plan.order, kGcOrderSorted);
  EXPECT_EQ(plan.num_recycled, 5000);
  EXPECT_EQ(plan.num_indices, 10000);
  EXPECT_GE(heap.scratch.bitmap_words, gc_bitmap_words(10000));
  // Buckets cover every index and respect the per-worker cap.
  EXPECT_GE(static_cast<int64_t>(plan.num_buckets) << plan.bucket_shift, 10000);
  EXPECT_LE(plan.num_buckets, kBucketsPerWorker * 2);
  EXPECT_GE(plan.bucket_shift, kMinBucketShift);
}

// The smallest bucket follows scratch.min_bucket_shift (a GPU's one-word buckets: a collection of
// 10^4 cells among 2 * 10^4 gets 313 buckets instead of 5); 0 keeps the target's default (4096
// indices on the CPU); values outside [6, 30] are clamped.
TEST(GcScratchTest, MinBucketShiftSetsTheGeometry) {
  for (int32_t shift : {0, kCudaMinBucketShift, 9, 3, 40}) {
    TestHeap heap(64, 1024);
    heap.scratch.min_bucket_shift = shift;
    Populate(&heap, 20000, 10000);
    ASSERT_TRUE(gc_scratch_reserve(&heap.scratch, &heap.nm, kMaxGcWorkers));
    const GcPlan plan = gc_make_plan(&heap.nm, &heap.scratch, kMaxGcWorkers);
    ASSERT_EQ(plan.order, kGcOrderSorted) << shift;
    const int32_t want = shift == 0 ? kMinBucketShift : std::clamp(shift, 6, 30);
    EXPECT_EQ(plan.bucket_shift, want) << shift;
    EXPECT_EQ(plan.num_buckets, (20000 + (int64_t{1} << want) - 1) >> want) << shift;
  }
  const GcScratch defaults{};
  EXPECT_EQ(gc_min_bucket_shift(&defaults), kMinBucketShift);  // a CPU build
}

// Auto order: a very sparse recycled set stays in recycling order and allocates no bitmap.
TEST(GcScratchTest, AutoKeepsRecyclingOrderForSparseSets) {
  TestHeap heap(16, 1 << 14);
  Populate(&heap, 1 << 16, 2);
  ASSERT_TRUE(gc_scratch_reserve(&heap.scratch, &heap.nm, 1));
  EXPECT_EQ(heap.scratch.bitmap, nullptr);
  EXPECT_EQ(gc_make_plan(&heap.nm, &heap.scratch, 1).order, kGcOrderRecycle);
}

// Explicit orders are obeyed; Sorted without a reserved bitmap falls back to recycling order.
TEST(GcScratchTest, ExplicitOrders) {
  TestHeap heap(16, 1 << 14);
  Populate(&heap, 1 << 16, 2);
  heap.scratch.order = kGcOrderSorted;
  EXPECT_EQ(gc_make_plan(&heap.nm, &heap.scratch, 1).order, kGcOrderRecycle);  // no capacity
  ASSERT_TRUE(gc_scratch_reserve(&heap.scratch, &heap.nm, 1));
  EXPECT_EQ(gc_make_plan(&heap.nm, &heap.scratch, 1).order, kGcOrderSorted);
  // More workers need more bucket counters than reserved for one.
  EXPECT_EQ(gc_make_plan(&heap.nm, &heap.scratch, 64).order, kGcOrderRecycle);
  heap.scratch.order = kGcOrderRecycle;
  EXPECT_EQ(gc_make_plan(&heap.nm, &heap.scratch, 1).order, kGcOrderRecycle);
}

// Nothing recycled: recycling order (nothing to sort) and no scratch memory.
TEST(GcScratchTest, EmptyRecycledList) {
  TestHeap heap(32, 1024);
  Populate(&heap, 100, 0);
  ASSERT_TRUE(gc_scratch_reserve(&heap.scratch, &heap.nm, 4));
  EXPECT_EQ(heap.scratch.bitmap, nullptr);
  GcPlan plan = gc_make_plan(&heap.nm, &heap.scratch, 4);
  EXPECT_EQ(plan.order, kGcOrderRecycle);
  EXPECT_EQ(plan.num_recycled, 0);
}

// gc_popcount counts set bits exactly (the SWAR form GCC builds), on edges and random words.
TEST(GcScratchTest, PopcountMatchesBitLoop) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> words = {0,
                                 1,
                                 ~uint64_t{0},
                                 uint64_t{1} << 63,
                                 0x8000000000000001ull,
                                 0x5555555555555555ull,
                                 0xF0F0F0F0F0F0F0F0ull};
  for (int i = 0; i < 1000; ++i) words.push_back(rng() & rng());
  for (uint64_t w : words) {
    int expected = 0;
    for (int b = 0; b < 64; ++b) expected += static_cast<int>((w >> b) & 1);
    EXPECT_EQ(gc_popcount(w), expected) << w;
  }
}

// gc_slice partitions [0, n) into contiguous, ordered, balanced pieces.
TEST(GcScratchTest, SlicesPartition) {
  for (int64_t n : {0, 1, 7, 64, 1001}) {
    for (int32_t workers : {1, 2, 3, 8}) {
      int64_t expected_begin = 0;
      for (int32_t w = 0; w < workers; ++w) {
        int64_t b, e;
        gc_slice(n, w, workers, &b, &e);
        EXPECT_EQ(b, expected_begin);
        EXPECT_LE(e - b, n / workers + 1);
        expected_begin = e;
      }
      EXPECT_EQ(expected_begin, n);
    }
  }
}

}  // namespace
}  // namespace gc
}  // namespace accelmem
