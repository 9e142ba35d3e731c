// File: sparse_runtime/node_cache.h
//
// NodeCache: a per-worker cache in front of one NodeManager (the thread cache of tcmalloc, the
// local free lists of mimalloc), so that the per-cell allocate()/recycle() fast path touches no
// shared atomic and no shared cache line. Why: NodeManager::allocate/recycle cost one atomic
// add on a shared cursor each; with two workers those cursors bounce between cores and the
// per-cell API gets slower than on one worker (issue 5).
//
//   allocate():  hand out free[pos++]; when empty, refill kBatch indices with ONE
//                NodeManager::allocate_indices() (free list first, then fresh cells), in
//                free-list order (the FIFO reuse order after a GC is kept).
//   recycle(p):  recycled[n++] = locate(p) (O(1), ListManager::ptr2index); when kBatch are
//                buffered, push them with ONE NodeManager::recycle_indices().
//   flush():     cached free indices (zeroed, not handed out) go onto the recycled list -- they
//                cannot go back onto the free list, whose cursor only grows between GCs, and
//                the GC re-zeroes them at a cost of at most kBatch cells -- then the buffered
//                recycled indices are pushed. Afterwards every slot of the manager is again
//                exactly one of in use / free (free list) / recycled (recycled list).
//
// Cells recycled into the cache are never handed out again by the cache: as with the plain API
// they become reusable only after a GC has zeroed them (other workers may still read them until
// then). Between flushes, cells held by the cache count as "in use" in the NodeManager's
// bookkeeping (num_in_use), so flush every cache of a manager before a GC, before exact
// statistics and before an invariant check, with no allocate/recycle in flight.
//
// Ownership: one NodeCache per (worker, NodeManager), used by one thread at a time; no
// thread_local. The object is cache-line aligned so two workers' caches never share a line.
// Errors (out of chunks / memory, unknown pointer) are recorded in the manager's RuntimeMemory
// exactly as by the plain API.
//
// Freestanding C++17 (see arch.h). Zero-initialize, then call init().
#ifndef ACCELMEM_SPARSE_RUNTIME_NODE_CACHE_H_
#define ACCELMEM_SPARSE_RUNTIME_NODE_CACHE_H_

#include "sparse_runtime/arch.h"
#include "sparse_runtime/node_manager.h"

namespace accelmem {
namespace sparse_runtime {

struct alignas(64) NodeCache {
  // Indices moved per shared atomic, in each direction.
  static constexpr i32 kBatch = 64;

  NodeManager* manager;
  i32 free_pos;      // next cached free index to hand out
  i32 free_end;      // free[free_pos, free_end) are cached, zeroed, not handed out
  i32 num_recycled;  // recycled[0, num_recycled) are buffered for the recycled list
  i32 free[kBatch];
  i32 recycled[kBatch];

  void init(NodeManager* manager);

  // The index of a zeroed cell, or -1 (error recorded in the manager's memory).
  ACCELMEM_RT_INLINE i32 allocate_index() {
    if (free_pos < free_end) return free[free_pos++];
    return refill_and_allocate();
  }
  // A zeroed cell, or null (error recorded).
  ACCELMEM_RT_INLINE Ptr allocate() {
    const i32 index = allocate_index();
    return index < 0 ? nullptr : manager->get_cell(index);
  }

  // Buffers `index` for the recycled list.
  ACCELMEM_RT_INLINE void recycle_index(i32 index) {
    if (num_recycled == kBatch) flush_recycled();
    recycled[num_recycled++] = index;
  }
  // Buffers the cell at `p`; an unknown pointer records kErrorPtrNotFound and is ignored.
  ACCELMEM_RT_INLINE void recycle(Ptr p) {
    const i32 index = manager->locate(p);
    if (index >= 0) recycle_index(index);
  }

  // Returns every cached index to the manager (see the file comment). The cache stays usable.
  void flush();
  // Pushes the buffered recycled indices only (cached free indices stay).
  void flush_recycled();

  ACCELMEM_RT_INLINE i32 num_cached_free() const { return free_end - free_pos; }
  ACCELMEM_RT_INLINE i32 num_cached_recycled() const { return num_recycled; }

  // Slow path of allocate_index: one allocate_indices() of kBatch, then hands out the first.
  i32 refill_and_allocate();
};

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_NODE_CACHE_H_
