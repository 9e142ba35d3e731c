// Freestanding implementation of the GC scratch and plan (see gc_scratch.h).
#include "gc/device/gc_scratch.h"

namespace accelmem {
namespace gc {
namespace {

using sparse_runtime::allocate_aligned;
using sparse_runtime::max_of;
using sparse_runtime::min_of;
using sparse_runtime::next_power_of_two_u64;

// Geometry of a sorted-order collection: buckets of 2^shift indices, at most
// kBucketsPerWorker * workers of them.
struct Geometry {
  i32 bucket_shift;
  i32 num_buckets;
};

Geometry sorted_geometry(i64 num_indices, i32 num_workers, i32 min_shift) {
  Geometry g;
  g.bucket_shift = min_shift;
  const i64 max_buckets = num_workers == 1 ? 1 : static_cast<i64>(kBucketsPerWorker) * num_workers;
  while (((num_indices + (i64{1} << g.bucket_shift) - 1) >> g.bucket_shift) > max_buckets) {
    ++g.bucket_shift;
  }
  g.num_buckets =
      static_cast<i32>((num_indices + (i64{1} << g.bucket_shift) - 1) >> g.bucket_shift);
  if (g.num_buckets == 0) g.num_buckets = 1;
  return g;
}

i64 num_bitmaps(i32 num_workers) { return num_workers <= kMaxPrivateBitmaps ? num_workers : 1; }

i32 clamp_workers(i32 num_workers) {
  return min_of<i32>(max_of<i32>(num_workers, 1), kMaxGcWorkers);
}

// Whether a collection of `num_recycled` cells among `num_indices` wants the bitmap at all.
bool wants_sorted(i32 order, i64 num_recycled, i64 num_indices) {
  if (order == kGcOrderRecycle || num_recycled <= 0 || num_indices <= 0) return false;
  if (order == kGcOrderSorted) return true;
  return gc_bitmap_words(num_indices) <= kAutoMaxBitmapWordsPerCell * num_recycled;
}

// Grows `*array` (capacity `*capacity` elements) to at least `needed`.
template <typename T>
bool grow(RuntimeMemory* memory, T** array, i64* capacity, i64 needed) {
  if (*capacity >= needed) return true;
  u64 n = next_power_of_two_u64(static_cast<u64>(needed));
  Ptr p = allocate_aligned(memory, n * sizeof(T), 64, /*request=*/false);
  if (p == nullptr) return false;
  *array = reinterpret_cast<T*>(p);  // zero-filled; the old array (all-zero bitmap) is abandoned
  *capacity = static_cast<i64>(n);
  return true;
}

}  // namespace

i32 gc_num_indices(const NodeManager* nm) { return nm->num_reserved(); }

bool gc_scratch_reserve(GcScratch* scratch, const NodeManager* nm, i32 num_workers) {
  num_workers = clamp_workers(num_workers);
  const i64 num_indices = gc_num_indices(nm);
  if (!wants_sorted(scratch->order, nm->recycled_list.valid_size(), num_indices)) return true;
  Geometry g = sorted_geometry(num_indices, num_workers, gc_min_bucket_shift(scratch));
  return grow(nm->memory, &scratch->bitmap, &scratch->bitmap_words,
              num_bitmaps(num_workers) * gc_bitmap_words(num_indices)) &&
         grow(nm->memory, &scratch->bucket_offset, &scratch->bucket_offset_capacity,
              static_cast<i64>(g.num_buckets) + 1);
}

GcPlan gc_make_plan(const NodeManager* nm, const GcScratch* scratch, i32 num_workers) {
  GcPlan plan;
  plan.num_workers = clamp_workers(num_workers);
  plan.num_recycled = nm->recycled_list.valid_size();  // entries past a refusal: never written
  plan.num_indices = gc_num_indices(nm);
  plan.order = kGcOrderRecycle;
  plan.bucket_shift = 0;
  plan.num_buckets = 0;
  plan.num_bitmaps = 0;
  plan.bitmap_stride = 0;
  plan.free_base = 0;
  plan.num_refill = 0;
  plan.free_ok = 0;
  if (wants_sorted(scratch->order, plan.num_recycled, plan.num_indices)) {
    Geometry g = sorted_geometry(plan.num_indices, plan.num_workers, gc_min_bucket_shift(scratch));
    const i64 stride = gc_bitmap_words(plan.num_indices);
    const i64 bitmaps = num_bitmaps(plan.num_workers);
    if (scratch->bitmap_words >= bitmaps * stride &&
        scratch->bucket_offset_capacity >= static_cast<i64>(g.num_buckets) + 1) {
      plan.order = kGcOrderSorted;
      plan.bucket_shift = g.bucket_shift;
      plan.num_buckets = g.num_buckets;
      plan.num_bitmaps = static_cast<i32>(bitmaps);
      plan.bitmap_stride = stride;
    }
  }
  return plan;
}

}  // namespace gc
}  // namespace accelmem
