// File: gc/device/phase0_compact_free_list.h
//
// GC phase 0 (upstream gc_parallel_0, "gather_list"): run by every
// worker of a grid (or of a CPU pool), no synchronization inside.
//
//  1. Compaction: moves the unused tail [U, S) of the free list (S = size, U = free_list_used) to
//     its head. If 2U > S the source [U, S) and target [0, S-U) are disjoint and the tail is
//     shifted; otherwise only the U entries of [S-U, S) move into the hole [0, U) (the entries of
//     [U, S-U) stay), so the result is a rotation of the serial order. Either way source and
//     target never overlap, so workers copy their slices in parallel. U >= S or U == 0: nothing.
//     With a single worker the tail is shifted in order instead (a forward copy is safe then),
//     keeping upstream gc_serial's order: unused entries first, in their original order.
//  2. Sorted plan: marks the recycled indices of this worker's slice of the recycled list in the
//     scratch bitmap: its private bitmap with plain ORs (up to kMaxPrivateBitmaps workers, a CPU
//     pool), or the shared one with atomic ORs (a GPU grid). Recycling plan: counts the
//     out-of-range entries of the worker's slice.
// Out-of-range recycled indices (never valid cells) are reported as kErrorIndexOutOfRange and
// dropped instead of corrupting memory.
//
// Freestanding C++17 (see sparse_runtime/device/arch.h).
#ifndef ACCELMEM_GC_DEVICE_PHASE0_COMPACT_FREE_LIST_H_
#define ACCELMEM_GC_DEVICE_PHASE0_COMPACT_FREE_LIST_H_

#include "gc/device/gc_scratch.h"
#include "sparse_runtime/device/list_manager.h"
#include "sparse_runtime/device/node_manager.h"

namespace accelmem {
namespace gc {

// The compaction step alone for slice `worker` of `num_workers`, on a free list of `size` entries
// of which the first `used` were handed out.
void gc_compact_free_list(sparse_runtime::ListManager* free_list, i32 size, i32 used, i32 worker,
                          i32 num_workers);

// Phase 0 for worker `worker` in [0, num_workers). Every worker must pass the same num_workers,
// and phase 1 must be given it too.
void gc_phase0_compact_free_list(NodeManager* nm, GcScratch* scratch, i32 worker, i32 num_workers);

}  // namespace gc
}  // namespace accelmem

#endif  // ACCELMEM_GC_DEVICE_PHASE0_COMPACT_FREE_LIST_H_
