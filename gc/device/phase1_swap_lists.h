// File: gc/device/phase1_swap_lists.h
//
// GC phase 1 (upstream gc_parallel_1, "reinit_lists"): the
// single-threaded bookkeeping between phase 0 and phase 2. It runs on exactly one thread, after
// every phase-0 worker finished and before any phase-2 worker starts (two barriers, or three
// kernel launches on a GPU), so nothing here needs atomics for correctness.
//
//  1. Shrinks the free list to its unused entries: size = max(S - U, 0) (#1076: compact, never
//     clear), and resets the cursor free_list_used = 0 and counts the collection in nm->gc_epoch.
//  2. Backs up the recycled list's valid size (ListManager::valid_size) into
//     recycle_list_size_backup and lazily clears the recycled list (its contents stay readable
//     for phase 2).
//  3. Better than upstream: reserves the free-list slots phase 2 will fill, in one step, so that
//     phase 2 writes each index to a known slot instead of an atomic append per cell (upstream:
//     one atomic push_back per cell, in nondeterministic order). Sorted plan: popcounts the
//     bitmap bucket by bucket into each bucket's offset (distinct indices; O(bitmap words), which
//     the plan keeps at most kAutoMaxBitmapWordsPerCell per recycled cell). Recycling plan: drops
//     the out-of-range entries phase 0 found (rare, already reported), so the backup counts valid
//     entries only.
//  4. Stores the plan in the scratch for phase 2 and resets the bucket-claim counter.
//
// Freestanding C++17 (see sparse_runtime/device/arch.h).
#ifndef ACCELMEM_GC_DEVICE_PHASE1_SWAP_LISTS_H_
#define ACCELMEM_GC_DEVICE_PHASE1_SWAP_LISTS_H_

#include "gc/device/gc_scratch.h"
#include "sparse_runtime/device/node_manager.h"

namespace accelmem {
namespace gc {

// `num_workers` must be the value phase 0 ran with.
void gc_phase1_swap_lists(NodeManager* nm, GcScratch* scratch, i32 num_workers);

}  // namespace gc
}  // namespace accelmem

#endif  // ACCELMEM_GC_DEVICE_PHASE1_SWAP_LISTS_H_
