// Freestanding implementation of GC phase 0 (see phase0_compact_free_list.h).
#include "gc/device/phase0_compact_free_list.h"

namespace accelmem {
namespace gc {

using sparse_runtime::atomic_or_relaxed;
using sparse_runtime::kErrorIndexOutOfRange;
using sparse_runtime::ListManager;
using sparse_runtime::report_error;

namespace {

struct BitMasks {
  u64 mask[64];
  constexpr BitMasks() : mask() {
    for (int b = 0; b < 64; ++b) mask[b] = u64{1} << b;
  }
  constexpr u64 operator[](u32 b) const { return mask[b]; }
};
constexpr BitMasks kBitMask;

}  // namespace

void gc_compact_free_list(ListManager* free_list, i32 size, i32 used, i32 worker, i32 num_workers) {
  if (used <= 0 || used >= size) return;
  if (num_workers == 1) {  // serial: a forward shift keeps upstream gc_serial's (FIFO) order
    gc_for_each_segment<i32>(*free_list, 0, size - used, [&](i32* dst, i64 first, i64 n) {
      for (i64 k = 0; k < n; ++k) dst[k] = free_list->get<i32>(static_cast<i32>(used + first + k));
    });
    return;
  }
  // Disjoint source and target in both cases (see the header).
  const i64 count = 2 * static_cast<i64>(used) > size ? size - used : used;
  const i64 source = 2 * static_cast<i64>(used) > size ? used : size - used;
  i64 begin, end;
  gc_slice(count, worker, num_workers, &begin, &end);
  gc_for_each_segment<i32>(*free_list, begin, end, [&](i32* dst, i64 first, i64 n) {
    gc_for_each_segment<const i32>(*free_list, source + first, source + first + n,
                                   [&](const i32* src, i64 src_first, i64 m) {
                                     i32* d = dst + (src_first - source - first);
                                     for (i64 k = 0; k < m; ++k) d[k] = src[k];
                                   });
  });
}

void gc_phase0_compact_free_list(NodeManager* nm, GcScratch* scratch, i32 worker, i32 num_workers) {
  const GcPlan plan = gc_make_plan(nm, scratch, num_workers);
  gc_compact_free_list(&nm->free_list, nm->free_list.size(), nm->free_list_used, worker,
                       plan.num_workers);

  i64 begin, end;
  gc_slice(plan.num_recycled, worker, plan.num_workers, &begin, &end);
  const u32 limit = static_cast<u32>(plan.num_indices);
  i64 invalid = 0;
  i32 first_invalid = 0;
  auto invalid_index = [&](i32 index) {
    if (invalid++ == 0) first_invalid = index;
  };
  if (plan.order == kGcOrderSorted) {
    // Private bitmap (one worker, or a CPU pool): plain ORs. Shared (a GPU grid): atomic ORs.
    const bool shared = plan.num_bitmaps == 1 && plan.num_workers > 1;
    u64* bitmap = scratch->bitmap + (shared ? 0 : worker * plan.bitmap_stride);
    // Two loops rather than a branch per index (the compiler does not unswitch it).
    if (shared) {
      auto mark_shared = [&](i32 index) {
        if (static_cast<u32>(index) >= limit) {
          invalid_index(index);
          return;
        }
        // Relaxed: phase 1 reads the bitmap after a barrier. On CUDA a fenced atomic per cell
        // made each worker wait for its atomics one by one.
        atomic_or_relaxed(&bitmap[index >> 6], u64{1} << (index & 63));
      };
      gc_for_each_segment<const i32>(nm->recycled_list, begin, end,
                                     [&](const i32* items, i64, i64 n) {
                                       // Eight indices loaded before any is marked, so that a GPU
                                       // thread's loads overlap instead of each waiting a memory
                                       // latency.
                                       i64 k = 0;
                                       for (; k + 8 <= n; k += 8) {
                                         i32 x[8];
                                         for (i32 j = 0; j < 8; ++j) x[j] = items[k + j];
                                         for (i32 j = 0; j < 8; ++j) mark_shared(x[j]);
                                       }
                                       for (; k < n; ++k) mark_shared(items[k]);
                                     });
    } else {
      // Four indices per step: their loads and read-modify-writes issue together (about twice
      // as fast as one at a time while the bitmap is in L1/L2); any invalid one takes the
      // checked loop.
      auto mark_one = [&](u32 index) {
        if (index >= limit) {
          invalid_index(static_cast<i32>(index));
          return;
        }
        bitmap[index >> 6] |= u64{1} << (index & 63);
      };
      gc_for_each_segment<const i32>(
          nm->recycled_list, begin, end, [&](const i32* items, i64, i64 n) {
            i64 k = 0;
            for (; k + 4 <= n; k += 4) {
              const u32 i0 = static_cast<u32>(items[k]);
              const u32 i1 = static_cast<u32>(items[k + 1]);
              const u32 i2 = static_cast<u32>(items[k + 2]);
              const u32 i3 = static_cast<u32>(items[k + 3]);
              if ((i0 >= limit) | (i1 >= limit) | (i2 >= limit) | (i3 >= limit)) {
                mark_one(i0);
                mark_one(i1);
                mark_one(i2);
                mark_one(i3);
                continue;
              }
              // Masks from a table: a variable shift by cl is three micro-ops on x86 without
              // BMI2 (the default target), a table load one.
              const u64 m0 = kBitMask[i0 & 63], m1 = kBitMask[i1 & 63];
              const u64 m2 = kBitMask[i2 & 63], m3 = kBitMask[i3 & 63];
              bitmap[i0 >> 6] |= m0;
              bitmap[i1 >> 6] |= m1;
              bitmap[i2 >> 6] |= m2;
              bitmap[i3 >> 6] |= m3;
            }
            for (; k < n; ++k) mark_one(static_cast<u32>(items[k]));
          });
    }
  } else {
    gc_for_each_segment<const i32>(nm->recycled_list, begin, end,
                                   [&](const i32* items, i64, i64 n) {
                                     for (i64 k = 0; k < n; ++k) {
                                       if (static_cast<u32>(items[k]) >= limit) {
                                         invalid_index(items[k]);
                                       }
                                     }
                                   });
    scratch->invalid[worker] = static_cast<i32>(invalid);
  }
  if (invalid > 0) {
    report_error(nm->memory, kErrorIndexOutOfRange, "gc: recycled index out of range",
                 first_invalid < 0 ? -1 : first_invalid);
  }
}

}  // namespace gc
}  // namespace accelmem
