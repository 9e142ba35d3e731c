#include "gc/device/phase0_compact_free_list.h"

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gc/device/gc_scratch.h"
#include "gc/device/phase1_swap_lists.h"
#include "gc/gc_testing.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace gc {
namespace {

using testing::FreeList;
using testing::TestHeap;

// Free list f0..f(S-1) = 100..100+S-1 with the first `used` handed out.
void SetFreeList(TestHeap* heap, int32_t size, int32_t used) {
  if (size > 0) {
    ASSERT_EQ(heap->nm.free_list.reserve_new_elements(size), 0);
  }
  for (int32_t k = 0; k < size; ++k) heap->nm.free_list.get<int32_t>(k) = 100 + k;
  heap->nm.free_list_used = used;
}

// Upstream's parallel result (upstream runtime.cpp): a shift when 2U > S, otherwise the
// tail [S-U, S) moved into the hole [0, U) and [U, S-U) left in place. One worker: always the
// order-preserving shift of upstream gc_serial.
std::vector<int32_t> Expected(int32_t size, int32_t used, int32_t workers = 2) {
  std::vector<int32_t> out;
  if (used >= size) return out;
  if (2 * used > size || workers == 1) {
    for (int32_t k = used; k < size; ++k) out.push_back(100 + k);
  } else {
    for (int32_t k = 0; k < size - used; ++k) {
      out.push_back(100 + (k < used ? size - used + k : k));
    }
  }
  return out;
}

// Runs phase 0 with `workers` workers one after another (forward or reverse), then phase 1.
std::vector<int32_t> Compact(int32_t size, int32_t used, int32_t workers, bool reverse) {
  TestHeap heap(16, 1024);
  SetFreeList(&heap, size, used);
  for (int32_t k = 0; k < workers; ++k) {
    const int32_t w = reverse ? workers - 1 - k : k;
    gc_phase0_compact_free_list(&heap.nm, &heap.scratch, w, workers);
  }
  gc_phase1_swap_lists(&heap.nm, &heap.scratch, workers);
  EXPECT_EQ(heap.nm.free_list_used, 0);
  return FreeList(heap.nm);
}

void ExpectCompacts(int32_t size, int32_t used) {
  for (int32_t workers : {1, 2, 3, 8}) {
    for (bool reverse : {false, true}) {
      EXPECT_EQ(Compact(size, used, workers, reverse), Expected(size, used, workers))
          << "S=" << size << " U=" << used << " workers=" << workers << " reverse=" << reverse;
    }
  }
}

// Compaction without overlap: src [6, 8), dst [0, 2) are disjoint; the tail is shifted.
TEST(Phase0Test, SeedFigureNoOverlap) {
  ExpectCompacts(8, 6);
  EXPECT_EQ(Expected(8, 6), (std::vector<int32_t>{106, 107}));
}

// Compaction with overlap: src [3, 8) and dst [0, 5) overlap (3 and 4 are in both); only
// [5, 8) moves into [0, 3), giving the rotated order [f5, f6, f7, f3, f4], in any worker order.
TEST(Phase0Test, SeedFigureOverlap) {
  ExpectCompacts(8, 3);
  EXPECT_EQ(Expected(8, 3), (std::vector<int32_t>{105, 106, 107, 103, 104}));
  EXPECT_EQ(Compact(8, 3, 2, true), (std::vector<int32_t>{105, 106, 107, 103, 104}));
  // The serial GC keeps upstream gc_serial's order instead.
  EXPECT_EQ(Compact(8, 3, 1, false), (std::vector<int32_t>{103, 104, 105, 106, 107}));
}

// The boundary 2U == S takes the overlap branch (U items move, nothing stays in between).
TEST(Phase0Test, HalfUsed) { ExpectCompacts(8, 4); }

// Edge: an empty free list stays empty (with and without a nonzero cursor).
TEST(Phase0Test, EmptyFreeList) {
  ExpectCompacts(0, 0);
  ExpectCompacts(0, 5);
  EXPECT_TRUE(Compact(0, 5, 2, false).empty());
}

// Edge: every entry used, or the cursor past the end (allocation fell through to fresh cells).
TEST(Phase0Test, AllUsed) {
  ExpectCompacts(8, 8);
  ExpectCompacts(8, 20);
  EXPECT_TRUE(Compact(8, 8, 3, true).empty());
}

// Edge: nothing used leaves the free list as it was.
TEST(Phase0Test, NoneUsed) {
  ExpectCompacts(8, 0);
  EXPECT_EQ(Compact(8, 0, 2, false), Expected(8, 0));
  EXPECT_EQ(Expected(8, 0).size(), 8u);
}

// Every (S, U) up to 40, and free lists spanning several list chunks (4096 entries each).
TEST(Phase0Test, ExhaustiveSmallAndMultiChunk) {
  for (int32_t size = 0; size <= 40; ++size) {
    for (int32_t used = 0; used <= size + 1; ++used) ExpectCompacts(size, used);
  }
  for (int32_t used : {1, 4000, 5000, 9000, 9999}) ExpectCompacts(10000, used);
}

// Phase 0 marks recycled indices in the bitmap (sorted plan), a duplicate setting the same bit,
// and leaves every other bit clear, whichever worker runs first: one worker, private bitmaps
// (2, 3 workers) and the shared, atomically marked bitmap (more than kMaxPrivateBitmaps).
TEST(Phase0Test, MarksRecycledIndices) {
  for (int workers : {1, 2, 3, kMaxPrivateBitmaps + 5}) {
    TestHeap heap(16, 1024);
    for (int i = 0; i < 300; ++i) ASSERT_EQ(heap.nm.allocate_index(), i);
    for (int i : {5, 70, 5, 299, 64}) heap.nm.recycle_index(i);
    heap.scratch.order = kGcOrderSorted;
    ASSERT_TRUE(gc_scratch_reserve(&heap.scratch, &heap.nm, workers));
    GcPlan plan = gc_make_plan(&heap.nm, &heap.scratch, workers);
    ASSERT_EQ(plan.order, kGcOrderSorted);
    for (int w = workers - 1; w >= 0; --w) {
      gc_phase0_compact_free_list(&heap.nm, &heap.scratch, w, workers);
    }
    EXPECT_EQ(plan.num_bitmaps, workers <= kMaxPrivateBitmaps ? workers : 1);
    auto word = [&](int64_t w) { return gc_marked_word(heap.scratch.bitmap, plan, w, false); };
    EXPECT_EQ(word(0), (uint64_t{1} << 5)) << workers;
    EXPECT_EQ(word(1), (uint64_t{1} << 0) | (uint64_t{1} << 6)) << workers;
    EXPECT_EQ(word(2), 0u) << workers;
    EXPECT_EQ(word(3), 0u) << workers;
    EXPECT_EQ(word(4), uint64_t{1} << (299 - 256)) << workers;
    // Clearing through gc_marked_word zeroes every bitmap.
    for (int64_t w = 0; w < plan.bitmap_stride; ++w)
      gc_marked_word(heap.scratch.bitmap, plan, w, true);
    for (int64_t w = 0; w < heap.scratch.bitmap_words; ++w) EXPECT_EQ(heap.scratch.bitmap[w], 0u);
  }
}

// Out-of-range entries are reported, and the valid ones marked, in every marking mode.
TEST(Phase0Test, ReportsOutOfRangeInEveryMarkingMode) {
  for (int workers : {1, 2, kMaxPrivateBitmaps + 5}) {
    TestHeap heap(16, 1024);
    for (int i = 0; i < 100; ++i) ASSERT_EQ(heap.nm.allocate_index(), i);
    for (int i : {5, 1000, 7}) heap.nm.recycle_index(i);
    heap.scratch.order = kGcOrderSorted;
    ASSERT_TRUE(gc_scratch_reserve(&heap.scratch, &heap.nm, workers));
    GcPlan plan = gc_make_plan(&heap.nm, &heap.scratch, workers);
    for (int w = 0; w < workers; ++w)
      gc_phase0_compact_free_list(&heap.nm, &heap.scratch, w, workers);
    EXPECT_EQ(heap.memory.error_code, sparse_runtime::kErrorIndexOutOfRange) << workers;
    EXPECT_NE(std::string(heap.memory.error_message).find("1000"), std::string::npos);
    EXPECT_EQ(gc_marked_word(heap.scratch.bitmap, plan, 0, false),
              (uint64_t{1} << 5) | (uint64_t{1} << 7));
  }
}

// The single-worker marking loop takes four indices per step: a step holding an invalid index
// (too large or negative) still marks its valid ones, drops the invalid ones and reports the
// first invalid index in recycling order.
TEST(Phase0Test, MarksInStepsOfFourAroundInvalidIndices) {
  TestHeap heap(16, 1024);
  for (int i = 0; i < 200; ++i) ASSERT_EQ(heap.nm.allocate_index(), i);
  const std::vector<int32_t> recycled = {3, 64, 65, 130, 9, 5000, 10, 11, 12, -4, 199, 0, 1, 2};
  for (int32_t i : recycled) heap.nm.recycled_list.push_back(i);
  heap.scratch.order = kGcOrderSorted;
  ASSERT_TRUE(gc_scratch_reserve(&heap.scratch, &heap.nm, 1));
  GcPlan plan = gc_make_plan(&heap.nm, &heap.scratch, 1);
  gc_phase0_compact_free_list(&heap.nm, &heap.scratch, 0, 1);
  EXPECT_EQ(heap.memory.error_code, sparse_runtime::kErrorIndexOutOfRange);
  EXPECT_NE(std::string(heap.memory.error_message).find("5000"), std::string::npos);
  std::vector<uint64_t> expected(4, 0);
  for (int32_t i : recycled) {
    if (i >= 0 && i < 200) expected[i >> 6] |= uint64_t{1} << (i & 63);
  }
  for (int w = 0; w < 4; ++w) {
    EXPECT_EQ(gc_marked_word(heap.scratch.bitmap, plan, w, false), expected[w]) << w;
  }
}

// One worker marks four indices a step, with a checked path for any step holding an invalid one;
// the workers of a shared bitmap (a GPU grid) load eight a step: for index counts on and off word
// boundaries and random recycled sets (duplicates, invalid entries of both signs, lists whose
// length is not a multiple of four or eight), the bitmap equals a std::set of the valid indices.
TEST(Phase0Test, MarkingMatchesASetOfIndices) {
  std::mt19937_64 rng(11);
  for (int32_t cells : {1, 63, 64, 65, 200, 4096, 5000}) {
    for (int trial = 0; trial < 8; ++trial) {
      const int workers = trial < 4 ? 1 : kMaxPrivateBitmaps + 3;  // shared bitmap from trial 4
      TestHeap heap(16, 1024);
      for (int32_t i = 0; i < cells; ++i) ASSERT_EQ(heap.nm.allocate_index(), i);
      const int32_t recycled = std::max<int32_t>(1, cells / (1 + trial % 4));
      std::set<int32_t> expected;
      bool any_invalid = false;
      for (int32_t k = 0; k < recycled; ++k) {
        int32_t index = static_cast<int32_t>(rng() % static_cast<uint64_t>(cells));
        if (trial % 4 == 3 && k % 97 == 5) {  // out of range, both signs
          index = k % 2 == 0 ? cells + static_cast<int32_t>(rng() % 100) : -1 - k;
          any_invalid = true;
        } else {
          expected.insert(index);
        }
        heap.nm.recycled_list.push_back(index);
      }
      heap.scratch.order = kGcOrderSorted;
      ASSERT_TRUE(gc_scratch_reserve(&heap.scratch, &heap.nm, workers));
      const GcPlan plan = gc_make_plan(&heap.nm, &heap.scratch, workers);
      ASSERT_EQ(plan.order, kGcOrderSorted) << cells << " cells, " << recycled << " recycled";
      ASSERT_EQ(plan.num_bitmaps, 1);  // one worker's own, or the shared one
      for (int w = 0; w < workers; ++w) {
        gc_phase0_compact_free_list(&heap.nm, &heap.scratch, w, workers);
      }
      EXPECT_EQ(heap.memory.error_code != 0, any_invalid) << cells;
      for (int64_t w = 0; w < plan.bitmap_stride; ++w) {
        uint64_t want = 0;
        for (int b = 0; b < 64; ++b) {
          if (expected.count(static_cast<int32_t>(w * 64 + b)) != 0) want |= uint64_t{1} << b;
        }
        ASSERT_EQ(gc_marked_word(heap.scratch.bitmap, plan, w, false), want)
            << cells << " cells, trial " << trial << ", word " << w;
      }
    }
  }
}

}  // namespace
}  // namespace gc
}  // namespace accelmem
