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
// On a GPU phase 1 runs on the lanes of one block: each lane counts a contiguous range of buckets
// (eight bitmap words loaded at a time) into offsets relative to its range and its range's total,
// then, after a block barrier, adds the totals of the ranges below to its offsets, while lane 0
// does the rest. Why: one thread popcounting 31k words one load after another took 3 ms for 10^6
// cells on an H200. One lane (the CPU) is the same computation over a single range.
//
// Freestanding C++17 (see sparse_runtime/device/arch.h).
#ifndef ACCELMEM_GC_DEVICE_PHASE1_SWAP_LISTS_H_
#define ACCELMEM_GC_DEVICE_PHASE1_SWAP_LISTS_H_

#include "gc/device/gc_scratch.h"
#include "sparse_runtime/device/node_manager.h"

namespace accelmem {
namespace gc {

// `num_workers` must be the value phase 0 ran with. One thread.
void gc_phase1_swap_lists(NodeManager* nm, GcScratch* scratch, i32 num_workers);

// Phase 1 on `lanes` lanes (lane in [0, lanes)): every lane calls it, all with the same
// arguments otherwise; lanes beyond kMaxPhase1Lanes only take part in the barrier. It is
//   plan = gc_make_plan(nm, scratch, num_workers); gc_phase1_count(plan, ...);
//   block_barrier(); gc_phase1_finish(nm, scratch, plan, ...)
// with each lane's plan taken before the barrier (lane 0 changes the lists after it).
void gc_phase1_swap_lists_block(NodeManager* nm, GcScratch* scratch, i32 num_workers, i32 lane,
                                i32 lanes);
// The two steps, for callers that run the lanes themselves (a CPU test runs every lane's count,
// then every lane's finish).
void gc_phase1_count(const GcPlan& plan, GcScratch* scratch, i32 lane, i32 lanes);
void gc_phase1_finish(NodeManager* nm, GcScratch* scratch, GcPlan plan, i32 lane, i32 lanes);

}  // namespace gc
}  // namespace accelmem

#endif  // ACCELMEM_GC_DEVICE_PHASE1_SWAP_LISTS_H_
