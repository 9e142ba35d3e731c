// Freestanding implementation of GC phase 2 (see phase2_refill_and_zero.h).
#include "gc/phase2_refill_and_zero.h"

namespace accelmem {
namespace gc {
namespace {

using sparse_runtime::atomic_add;
using sparse_runtime::block_barrier;
using sparse_runtime::ListManager;
using sparse_runtime::mem_zero;
using sparse_runtime::min_of;
using sparse_runtime::uptr;

// Zeroes the cells [begin, end) of the data list (a run inside one chunk or spanning several) and,
// on lane 0 when `list` is set, writes begin, begin + 1, ... to free-list slots pos, pos + 1, ...
struct RunSink {
  NodeManager* nm;
  i32 lane;
  i32 lanes;
  bool list;
  i64 pos;  // next free-list slot

  ACCELMEM_RT_INLINE void zero(i64 begin, i64 end) {
    const ListManager& data = nm->data_list;
    const i64 chunk = data.max_num_elements_per_chunk;
    while (begin < end) {
      i64 stop = min_of((begin | (chunk - 1)) + 1, end);
      Ptr p = data.get_element_ptr(static_cast<i32>(begin));
      const u64 bytes = data.element_size * static_cast<u64>(stop - begin);
      if (lanes == 1) {
        mem_zero(p, bytes);
      } else {
        gc_zero_cooperative(p, bytes, lane, lanes);
      }
      begin = stop;
    }
  }

  ACCELMEM_RT_INLINE void sorted_run(i64 begin, i64 end) {
    zero(begin, end);
    if (list && lane == 0) {
      gc_for_each_segment<i32>(nm->free_list, pos, pos + (end - begin),
                               [&](i32* slots, i64 first, i64 n) {
                                 const i32 value = static_cast<i32>(begin + (first - pos));
                                 for (i64 k = 0; k < n; ++k) slots[k] = value + static_cast<i32>(k);
                               });
    }
    pos += end - begin;
  }
};

void sorted_bucket(NodeManager* nm, GcScratch* scratch, const GcPlan& plan, i32 bucket,
                   RunSink* sink) {
  const i64 words = gc_bitmap_words(plan.num_indices);
  const i64 w0 = (static_cast<i64>(bucket) << plan.bucket_shift) >> 6;
  const i64 w1 = min_of(((static_cast<i64>(bucket) + 1) << plan.bucket_shift) >> 6, words);
  u64* bitmap = scratch->bitmap;
  sink->pos = static_cast<i64>(plan.free_base) + scratch->bucket_offset[bucket];
  i64 run_begin = 0, run_end = -1;  // current run [run_begin, run_end); none when run_end < 0
  for (i64 w = w0; w < w1; ++w) {
    u64 word = bitmap[w];
    if (word == 0) continue;
    if (sink->lanes == 1) bitmap[w] = 0;
    const i64 base = w << 6;
    while (word != 0) {
      const i32 tz = __builtin_ctzll(word);
      const u64 shifted = ~(word >> tz);
      const i32 len = shifted == 0 ? 64 - tz : __builtin_ctzll(shifted);
      const i64 start = base + tz;
      if (start != run_end) {
        if (run_end >= 0) sink->sorted_run(run_begin, run_end);
        run_begin = start;
      }
      run_end = start + len;
      word = len + tz >= 64 ? 0 : word & (~u64{0} << (tz + len));
    }
  }
  if (run_end >= 0) sink->sorted_run(run_begin, run_end);
  if (sink->lanes > 1) {
    block_barrier();  // every lane has read the bucket's words
    if (sink->lane == 0) {
      for (i64 w = w0; w < w1; ++w) bitmap[w] = 0;
    }
  }
}

void recycle_order(NodeManager* nm, const GcPlan& plan, i32 worker, i32 num_workers,
                   RunSink* sink) {
  i64 begin, end;
  gc_slice(plan.num_recycled, worker, num_workers, &begin, &end);
  const bool write = sink->list && sink->lane == 0;
  i64 run_begin = 0, run_end = -1;
  gc_for_each_segment<const i32>(nm->recycled_list, begin, end,
                                 [&](const i32* items, i64 first, i64 n) {
                                   for (i64 k = 0; k < n; ++k) {
                                     const i64 index = items[k];
                                     if (write) {
                                       nm->free_list.get<i32>(
                                           static_cast<i32>(plan.free_base + first + k)) =
                                           static_cast<i32>(index);
                                     }
                                     if (index == run_end) {
                                       ++run_end;
                                     } else if (index + 1 == run_begin) {
                                       --run_begin;
                                     } else {
                                       if (run_end >= 0) sink->zero(run_begin, run_end);
                                       run_begin = index;
                                       run_end = index + 1;
                                     }
                                   }
                                 });
  if (run_end >= 0) sink->zero(run_begin, run_end);
}

}  // namespace

void gc_zero_cooperative(Ptr p, u64 n, i32 lane, i32 lanes) {
  if (lanes <= 1) {
    mem_zero(p, n);
    return;
  }
  Ptr end = p + n;
  u64 head = (4 - (reinterpret_cast<uptr>(p) & 3)) & 3;
  if (head > n) head = n;
  Ptr aligned = p + head;
  if (lane == 0) {
    for (Ptr q = p; q < aligned; ++q) *q = 0;
  }
  const u64 words = static_cast<u64>(end - aligned) / 4;
  u32* w = reinterpret_cast<u32*>(aligned);
  for (u64 k = static_cast<u64>(lane); k < words; k += static_cast<u64>(lanes)) w[k] = 0;
  if (lane == 0) {
    for (Ptr q = aligned + 4 * words; q < end; ++q) *q = 0;
  }
}

void gc_phase2_refill_and_zero(NodeManager* nm, GcScratch* scratch, i32 worker, i32 num_workers,
                               i32 lane, i32 lanes) {
  const GcPlan& plan = scratch->plan;
  if (lanes < 1) lanes = 1;
  if (num_workers < 1) num_workers = 1;
  RunSink sink{nm, lane, lanes, plan.free_ok != 0, 0};
  if (plan.order == kGcOrderSorted) {
    if (lanes == 1) {
      for (i32 b = atomic_add(&scratch->next_bucket, 1); b < plan.num_buckets;
           b = atomic_add(&scratch->next_bucket, 1)) {
        sorted_bucket(nm, scratch, plan, b, &sink);
      }
    } else {
      for (i32 b = worker; b < plan.num_buckets; b += num_workers) {
        sorted_bucket(nm, scratch, plan, b, &sink);
      }
    }
  } else {
    recycle_order(nm, plan, worker, num_workers, &sink);
  }
}

}  // namespace gc
}  // namespace accelmem
