// File: gc/device/gc_scratch.h
//
// GcScratch and GcPlan: the state the three GC phases share besides the NodeManager itself.
//
// Why it exists: upstream zeroes recycled cells in recycling order (random addresses) and pushes
// each index with an atomic append. accelmem's GC instead marks the recycled indices in a bitmap
// (phase 0), counts each bitmap bucket's marks with popcount to know where its indices go on the
// free list (phase 1, one thread), then scans the bitmap (phase 2): cells come out in address
// order, adjacent cells form runs that are zeroed with one memset, the free list is written
// without atomics, and duplicate recycled indices (a double deactivation) are collapsed. That is
// the "sorted" order. When the recycled set is very sparse in the data list (scanning the bitmap
// would cost more than it saves) or no bitmap could be allocated, the plan falls back to recycling
// order (upstream's order, with adjacent indices still merged into one memset).
//
// Ownership: one GcScratch serves any number of NodeManagers of one runtime, one GC at a time.
// Invariant: the bitmap is all-zero between collections (phase 2 clears what it scans), so it is
// never cleared in a separate pass. Zero-initialize, then call gc_scratch_reserve before each GC
// (the drivers do); memory comes from the runtime pool and is kept (the pool never frees).
//
// Freestanding C++17 (see sparse_runtime/device/arch.h): no standard headers, exceptions or RTTI.
#ifndef ACCELMEM_GC_DEVICE_GC_SCRATCH_H_
#define ACCELMEM_GC_DEVICE_GC_SCRATCH_H_

#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/device/runtime_memory.h"

namespace accelmem {
namespace gc {

using sparse_runtime::i32;
using sparse_runtime::i64;
using sparse_runtime::NodeManager;
using sparse_runtime::Ptr;
using sparse_runtime::RuntimeMemory;
using sparse_runtime::u32;
using sparse_runtime::u64;
using sparse_runtime::u8;

// Order in which recycled cells are zeroed and appended to the free list.
enum GcOrder : i32 {
  kGcOrderAuto = 0,     // sorted when the bitmap scan pays off (see gc_make_plan), else recycling
  kGcOrderSorted = 1,   // address order via the bitmap (falls back only if no bitmap fits)
  kGcOrderRecycle = 2,  // recycling order, as upstream
};

// Auto picks the sorted order when the bitmap has at most this many 64-bit words per recycled
// cell (a density of recycled cells in the data list of at least 1/(64 * this)).
inline constexpr i64 kAutoMaxBitmapWordsPerCell = 2;
// Sorted-order work units of phase 2: each bucket covers 2^bucket_shift indices, at least this
// many...
inline constexpr i32 kMinBucketShift = 12;  // 4096 indices = 64 bitmap words
// ...on a GPU one bitmap word: a block takes a bucket and its lanes zero the bucket's cells
// together, so 4096-index buckets left most of the grid idle in small collections (10^4 cells
// among 2 * 10^4: 5 buckets, 5 busy blocks of 1056).
inline constexpr i32 kCudaMinBucketShift = 6;
#if defined(ARCH_cuda)
inline constexpr i32 kDefaultMinBucketShift = kCudaMinBucketShift;
#else
inline constexpr i32 kDefaultMinBucketShift = kMinBucketShift;
#endif
// ...and there are at most this many buckets per worker (dynamic claiming balances the load; one
// worker uses a single bucket).
inline constexpr i32 kBucketsPerWorker = 8;
inline constexpr i32 kMaxGcWorkers = 1024;
// Phase 1 runs on at most this many lanes (a GPU block); more are idle.
inline constexpr i32 kMaxPhase1Lanes = 1024;
// Up to this many phase-0 workers (a CPU pool) each mark into a private bitmap with plain ORs
// (phases 1 and 2 read the OR of them); more workers (a GPU grid) share one bitmap with atomic
// ORs. An atomic OR per cell costs far more than the extra bitmap words.
inline constexpr i32 kMaxPrivateBitmaps = 8;
// Phase 2 zeroes with non-temporal stores (x86-64) when a collection zeroes at least this many
// bytes: more than the caches hold, so the lines would be evicted unread anyway.
inline constexpr u64 kStreamingZeroBytes = u64{16} << 20;
// ...and already from half the CPU's L2 cache when cells are at least a cache line (64 B): then
// most lines are written whole, and a whole-line non-temporal store skips the read-for-ownership
// an ordinary store pays for every line not in L1/L2. Below that the cells may well still be in
// L2, where ordinary stores (phase 2 prefetches the lines for writing a bitmap word ahead) write
// faster; above it most of them cannot be, and streaming writes scattered lines faster (10^4
// cells of 64 B, 640 KB: streamed on a 1 MiB L2, not on a 2 MiB one; figures in gc_bench's
// section of benchmarks/README.md). The price: the zeroed cells leave the caches (the next
// allocation of one misses). kStreamingLineZeroBytes is the figure where the L2 is unknown (the
// JIT-linked bitcode, a CPU that does not report it).
inline constexpr u64 kStreamingLineZeroBytes = u64{2} << 20;
// The whole-line threshold for an L2 of l2_bytes: half of it, at most the small-cell threshold;
// kStreamingLineZeroBytes where l2_bytes is 0 (unknown) or implausibly small (< 64 KiB).
ACCELMEM_RT_INLINE u64 gc_line_streaming_bytes(u64 l2_bytes) {
  if (l2_bytes < (u64{64} << 10)) return kStreamingLineZeroBytes;
  return sparse_runtime::min_of(l2_bytes / 2, kStreamingZeroBytes);
}

// What one collection does; a pure function of the NodeManager state before phase 1, the scratch
// capacity, the worker count and the requested order, so every worker of phase 0 computes the
// same plan without communicating; phase 1 stores it in the scratch for phase 2.
struct GcPlan {
  i32 order;          // kGcOrderSorted or kGcOrderRecycle (never Auto)
  i32 num_workers;    // workers (grid blocks) of phases 0 and 2
  i32 num_recycled;   // recycled_list.valid_size() at the start
  i32 num_indices;    // cells the data list holds (valid indices are [0, num_indices))
  i32 bucket_shift;   // sorted: index >> bucket_shift = bucket (>= 6: whole bitmap words)
  i32 num_buckets;    // sorted: ceil(num_indices / 2^bucket_shift)
  i32 num_bitmaps;    // sorted: 1 (shared) or num_workers (private), each of bitmap_stride words
  i64 bitmap_stride;  // sorted: gc_bitmap_words(num_indices)
  i32 free_base;      // phase 1: free-list size after compaction (the first refilled slot)
  i32 num_refill;     // phase 1: entries phase 2 appends to the free list
  i32 free_ok;        // phase 1: 1 if [free_base, free_base + num_refill) was reserved
};

struct GcScratch {
  // Requested order for the next collections (host sets it; default Auto).
  i32 order;
  // The non-temporal store width streamed zeroing uses, in bytes: 16, 32 or 64, capped at what
  // the CPU supports (0, the default: gc_streaming_store_bytes picks one: two 32-byte stores a
  // line with AVX, one 64-byte store on AMD Zen 5 and later). For tests and benchmarks.
  u32 streaming_store_bytes;
  // Streaming threshold in bytes for the next collections, whatever the cell size (0: the
  // defaults, see gc_streaming_threshold).
  u64 streaming_zero_bytes;
  // The smallest bucket, log2 of its indices, in [6, 30] (0: kDefaultMinBucketShift, the target's
  // own). Lets a CPU test plan a GPU's geometry.
  i32 min_bucket_shift;
  // Bitmap(s) of recycled indices, all-zero between collections.
  u64* bitmap;
  i64 bitmap_words;  // capacity (all bitmaps together)
  // Sorted order: bucket_offset[b] = where bucket b's indices start after free_base (phase 1).
  i32* bucket_offset;
  i64 bucket_offset_capacity;
  // Recycling order: invalid[w] = out-of-range recycled entries seen by worker w (phase 0).
  i32 invalid[kMaxGcWorkers];
  // Phase 1 output, read by phase 2.
  GcPlan plan;
  // Sorted order, one lane per block: next bucket to claim.
  alignas(64) i32 next_bucket;
  // Sorted order, phase 1 on several lanes: the marked indices of each lane's range of buckets.
  i32 phase1_lane_total[kMaxPhase1Lanes];
};

// The bucket shift below which a collection planned with `scratch` does not go.
ACCELMEM_RT_INLINE i32 gc_min_bucket_shift(const GcScratch* scratch) {
  const i32 shift = scratch->min_bucket_shift;
  if (shift == 0) return kDefaultMinBucketShift;
  return shift < 6 ? 6 : shift > 30 ? 30 : shift;
}

// Bitmap words needed for `num_indices` cells.
ACCELMEM_RT_INLINE i64 gc_bitmap_words(i64 num_indices) { return (num_indices + 63) >> 6; }

// Word w of the marked set of a sorted plan: the OR of its bitmaps; with `clear`, also zeroes
// them (phase 2 restores the all-zero invariant this way).
ACCELMEM_RT_INLINE u64 gc_marked_word(u64* bitmap, const GcPlan& plan, i64 w, bool clear) {
  if (plan.num_bitmaps == 1) {
    const u64 word = bitmap[w];
    if (clear && word != 0) bitmap[w] = 0;
    return word;
  }
  u64 word = 0;
  for (i32 b = 0; b < plan.num_bitmaps; ++b) {
    u64* p = bitmap + b * plan.bitmap_stride + w;
    const u64 part = *p;
    if (clear && part != 0) *p = 0;
    word |= part;
  }
  return word;
}

// Bytes from which a collection of cells of `element_size` zeroes with non-temporal stores, on a
// CPU with an L2 of l2_bytes (0: unknown).
ACCELMEM_RT_INLINE u64 gc_streaming_threshold(const GcScratch* scratch, u64 element_size,
                                              u64 l2_bytes) {
  if (scratch->streaming_zero_bytes != 0) return scratch->streaming_zero_bytes;
  return element_size >= 64 ? gc_line_streaming_bytes(l2_bytes) : kStreamingZeroBytes;
}

// Set bits of x. GCC without -mpopcnt (the default x86-64 target) lowers __builtin_popcountll to
// a libgcc call; this SWAR form stays inline (clang and NVPTX lower the builtin well themselves).
ACCELMEM_RT_INLINE i32 gc_popcount(u64 x) {
#if defined(__POPCNT__) || defined(__clang__) || defined(ARCH_cuda)
  return __builtin_popcountll(x);
#else
  x -= (x >> 1) & 0x5555555555555555ull;
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return static_cast<i32>((x * 0x0101010101010101ull) >> 56);
#endif
}

// Cells the data list of `nm` holds (indices [0, result) are valid cells).
i32 gc_num_indices(const NodeManager* nm);

// Grows the scratch for a GC of `nm` with `num_workers` workers (allocating from nm's runtime
// memory; new memory is zero-filled, as the bitmap invariant needs). Returns false if memory for
// the bitmap ran out (an error is recorded in the runtime memory); the GC then runs in recycling
// order.
bool gc_scratch_reserve(GcScratch* scratch, const NodeManager* nm, i32 num_workers);

// The plan for the current state of `nm` (call before phase 1 changes it).
GcPlan gc_make_plan(const NodeManager* nm, const GcScratch* scratch, i32 num_workers);

// [begin, end) of the `worker`-th of `num_workers` contiguous, balanced slices of [0, n).
ACCELMEM_RT_INLINE void gc_slice(i64 n, i32 worker, i32 num_workers, i64* begin, i64* end) {
  *begin = n * worker / num_workers;
  *end = n * (worker + 1) / num_workers;
}

// Calls f(T* items, i64 first_index, i64 count) for each chunk-contiguous segment of elements
// [begin, end) of `list` (elements of type T), so hot loops index raw arrays instead of going
// through get_element_ptr for every element.
template <typename T, typename F>
ACCELMEM_RT_INLINE void gc_for_each_segment(const sparse_runtime::ListManager& list, i64 begin,
                                            i64 end, const F& f) {
  const i64 chunk = list.max_num_elements_per_chunk;
  while (begin < end) {
    i64 stop = (begin | (chunk - 1)) + 1;
    if (stop > end) stop = end;
    T* items = reinterpret_cast<T*>(list.get_element_ptr_relaxed(static_cast<i32>(begin)));
    f(items, begin, stop - begin);
    begin = stop;
  }
}

}  // namespace gc
}  // namespace accelmem

#endif  // ACCELMEM_GC_DEVICE_GC_SCRATCH_H_
