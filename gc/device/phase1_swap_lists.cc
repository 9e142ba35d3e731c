// Freestanding implementation of GC phase 1 (see phase1_swap_lists.h).
#include "gc/device/phase1_swap_lists.h"

namespace accelmem {
namespace gc {

using sparse_runtime::atomic_store_release;
using sparse_runtime::block_barrier;
using sparse_runtime::max_of;
using sparse_runtime::min_of;

namespace {

// Lanes that count (the rest only wait at the barrier).
ACCELMEM_RT_INLINE i32 counting_lanes(i32 lanes) {
  return min_of(max_of(lanes, 1), kMaxPhase1Lanes);
}

// The sum of phase1_lane_total[0, n): eight loads issued before they are added (see
// gc_phase1_count).
ACCELMEM_RT_INLINE i64 sum_lane_totals(const GcScratch* scratch, i32 n) {
  const i32* totals = scratch->phase1_lane_total;
  i64 sum = 0;
  i32 l = 0;
  for (; l + 8 <= n; l += 8) {
    i32 x[8];
    for (i32 j = 0; j < 8; ++j) x[j] = totals[l + j];
    for (i32 j = 0; j < 8; ++j) sum += x[j];
  }
  for (; l < n; ++l) sum += totals[l];
  return sum;
}

}  // namespace

void gc_phase1_count(const GcPlan& plan, GcScratch* scratch, i32 lane, i32 lanes) {
  if (plan.order != kGcOrderSorted) return;
  lanes = counting_lanes(lanes);
  if (lane < 0 || lane >= lanes) return;
  i64 b0, b1;
  gc_slice(plan.num_buckets, lane, lanes, &b0, &b1);
  const i32 log2_words = plan.bucket_shift - 6;  // words per bucket, log2
  const i64 bucket_words_mask = (i64{1} << log2_words) - 1;
  const i64 w_end = min_of(b1 << log2_words, gc_bitmap_words(plan.num_indices));
  u64* bitmap = scratch->bitmap;
  i32* offsets = scratch->bucket_offset;
  i64 running = 0;
  i64 w = b0 << log2_words;
  auto count = [&](i64 word_index, u64 word) {
    // Every bucket of the range starts at a word of it (buckets are whole words).
    if ((word_index & bucket_words_mask) == 0) {
      offsets[word_index >> log2_words] = static_cast<i32>(running);
    }
    running += gc_popcount(word);
  };
  if (plan.num_bitmaps == 1) {
    // Eight words loaded before any is counted, without branches between the loads, so that
    // they overlap (on a GPU a word at a time waited a full memory latency per word).
    constexpr i32 kBatch = 8;
    for (; w + kBatch <= w_end; w += kBatch) {
      u64 x[kBatch];
      for (i32 j = 0; j < kBatch; ++j) x[j] = bitmap[w + j];
      for (i32 j = 0; j < kBatch; ++j) count(w + j, x[j]);
    }
  }
  for (; w < w_end; ++w) count(w, gc_marked_word(bitmap, plan, w, /*clear=*/false));
  scratch->phase1_lane_total[lane] = static_cast<i32>(running);
}

void gc_phase1_finish(NodeManager* nm, GcScratch* scratch, GcPlan plan, i32 lane, i32 lanes) {
  const bool sorted = plan.order == kGcOrderSorted;
  const i32 counted = counting_lanes(lanes);
  if (sorted && lane > 0 && lane < counted) {
    // This lane's offsets were relative to its range: add the totals of the ranges below.
    const i64 base = sum_lane_totals(scratch, lane);
    if (base != 0) {
      i64 b0, b1;
      gc_slice(plan.num_buckets, lane, counted, &b0, &b1);
      for (i64 b = b0; b < b1; ++b) scratch->bucket_offset[b] += static_cast<i32>(base);
    }
  }
  if (lane != 0) return;

  auto& free_list = nm->free_list;
  auto& recycled_list = nm->recycled_list;
  const i32 keep = max_of(free_list.size() - nm->free_list_used, 0);
  free_list.resize(keep);
  atomic_store_release(&nm->free_list_used, 0);
  ++nm->gc_epoch;  // NodeCache reservations made before this GC are stale now
  plan.free_base = keep;

  i64 refill = 0;
  if (sorted) {
    refill = sum_lane_totals(scratch, counted);
    scratch->bucket_offset[plan.num_buckets] = static_cast<i32>(refill);
  } else {
    i64 invalid = 0;
    for (i32 w = 0; w < plan.num_workers; ++w) invalid += scratch->invalid[w];
    if (invalid > 0) {  // error path (reported by phase 0): keep only the valid entries
      const u32 limit = static_cast<u32>(plan.num_indices);
      i32 out = 0;
      for (i32 r = 0; r < plan.num_recycled; ++r) {
        const i32 index = recycled_list.get<i32>(r);
        if (static_cast<u32>(index) < limit) recycled_list.get<i32>(out++) = index;
      }
      plan.num_recycled = out;
    }
    refill = plan.num_recycled;
  }
  nm->recycle_list_size_backup = plan.num_recycled;
  recycled_list.clear();

  plan.num_refill = static_cast<i32>(refill);
  plan.free_ok = 1;
  if (refill > 0) {
    const i32 first = free_list.reserve_new_elements(plan.num_refill);
    if (first != keep) {  // out of chunks (error recorded): zero the cells, do not list them
      free_list.resize(keep);
      plan.free_ok = 0;
    }
  }
  scratch->plan = plan;
  atomic_store_release(&scratch->next_bucket, 0);
}

void gc_phase1_swap_lists(NodeManager* nm, GcScratch* scratch, i32 num_workers) {
  const GcPlan plan = gc_make_plan(nm, scratch, num_workers);
  gc_phase1_count(plan, scratch, 0, 1);
  gc_phase1_finish(nm, scratch, plan, 0, 1);
}

void gc_phase1_swap_lists_block(NodeManager* nm, GcScratch* scratch, i32 num_workers, i32 lane,
                                i32 lanes) {
  const GcPlan plan = gc_make_plan(nm, scratch, num_workers);
  gc_phase1_count(plan, scratch, lane, lanes);
  block_barrier();  // every lane's range is counted (bar.sync orders the lanes' global writes)
  gc_phase1_finish(nm, scratch, plan, lane, lanes);
}

}  // namespace gc
}  // namespace accelmem
