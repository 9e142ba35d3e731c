// Freestanding implementation of GC phase 1 (see phase1_swap_lists.h).
#include "gc/device/phase1_swap_lists.h"

namespace accelmem {
namespace gc {

using sparse_runtime::atomic_store_release;
using sparse_runtime::max_of;
using sparse_runtime::min_of;

void gc_phase1_swap_lists(NodeManager* nm, GcScratch* scratch, i32 num_workers) {
  GcPlan plan = gc_make_plan(nm, scratch, num_workers);
  auto& free_list = nm->free_list;
  auto& recycled_list = nm->recycled_list;

  const i32 keep = max_of(free_list.size() - nm->free_list_used, 0);
  free_list.resize(keep);
  atomic_store_release(&nm->free_list_used, 0);
  ++nm->gc_epoch;  // NodeCache reservations made before this GC are stale now
  plan.free_base = keep;

  i64 refill = 0;
  if (plan.order == kGcOrderSorted) {
    const i64 words = gc_bitmap_words(plan.num_indices);
    const i64 words_per_bucket = i64{1} << (plan.bucket_shift - 6);
    u64* bitmap = scratch->bitmap;
    for (i32 b = 0; b < plan.num_buckets; ++b) {
      scratch->bucket_offset[b] = static_cast<i32>(refill);
      const i64 end = min_of(words, (b + 1) * words_per_bucket);
      for (i64 w = b * words_per_bucket; w < end; ++w) {
        refill += gc_popcount(gc_marked_word(bitmap, plan, w, /*clear=*/false));
      }
    }
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

}  // namespace gc
}  // namespace accelmem
