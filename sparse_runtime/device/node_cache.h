// File: sparse_runtime/device/node_cache.h
//
// NodeCache: a per-worker cache in front of one NodeManager (the thread cache of tcmalloc, the
// local free lists of mimalloc), so that the per-cell allocate()/recycle() fast path touches no
// shared atomic and no shared cache line. Why: NodeManager::allocate/recycle cost one atomic
// add on a shared cursor each; with two workers those cursors bounce between cores and the
// per-cell API gets slower than on one worker.
//
//   allocate():  return free_ptr[kBatch - num_free--]; when empty, refill kBatch cells and
//                compute their addresses in one tight loop (ListManager::element_ptrs). A
//                refill reads the next kBatch free-list slots this cache reserved earlier, or
//                reserves several batches of slots with ONE atomic on the cursor (up to
//                kMaxReservedBatches; where the free list ends, its tail and fresh cells as
//                NodeManager::allocate_indices()). Cells come out in free-list order (the FIFO
//                reuse order after a GC is kept). One count-down counter, not a position/end
//                pair: the counter's store->load chain through memory is the fast path's
//                critical path (about twice as fast per call).
//   recycle(p):  with a contiguous data list (the CPU pool's default), p's index is computed on
//                the spot -- (p - base) / element size by a multiply, from copies of the list's
//                constants in the cache -- and buffered as by recycle_index(); an address beyond
//                the limit copied at the last refresh first refreshes it. Otherwise (a chunked
//                list, or p not a cell) recycled_ptr[n++] = p, and flush_recycled() hands those
//                to NodeManager::recycle_cells(), which locates them in one tight loop. A full
//                buffer is pushed with ONE atomic (kBatch addresses, kRecycledIndexBatch
//                indices). An unknown pointer is therefore reported (kErrorPtrNotFound) and
//                dropped at a flush, not inside recycle(). Why compute the index here: buffering
//                the address, then reading it back to locate it, cost about a sixth of an allocate
//                + recycle pair (node_manager_bench BM_Cycles; figures in benchmarks/README.md).
//   flush():     cached free cells and the reserved free-list slots not read yet (zeroed, not
//                handed out) go onto the recycled list -- they cannot go back onto the free
//                list, whose cursor does not move back below them between GCs, and the GC
//                re-zeroes them, at most kMaxReservedBatches * kBatch cells; slots a GC made
//                stale are dropped instead (below) -- then the buffered recycled cells are
//                pushed. Afterwards every slot of the manager is again
//                exactly one of in use / free (free list) / recycled (recycled list).
//
// Cells recycled into the cache are never handed out again by the cache: as with the plain API
// they become reusable only after a GC has zeroed them (other workers may still read them until
// then). Between flushes, cells held by the cache count as "in use" in the NodeManager's
// bookkeeping (num_in_use), so flush every cache of a manager before a GC, before exact
// statistics and before an invariant check, with no allocate/recycle in flight. A cache that
// still holds reserved free-list slots at a GC loses them: the GC moves the free list's entries,
// so the next refill or flush finds the slots stale (NodeManager::gc_epoch), records
// kErrorStaleCache and drops them instead of handing out cells twice; their cells leak. Cached
// free cells and buffered recycled cells survive a GC unharmed.
//
// Ownership: one NodeCache per (worker, NodeManager), used by one thread at a time; no
// thread_local. The object is cache-line aligned so two workers' caches never share a line.
// recycle_index(k) buffers an index beside the pointers (pushed at the same flushes, no locate;
// a flush pushes the buffered pointers' cells first, then the indices, so with a chunked data
// list a cache that uses both does not keep the global recycling order, which nothing depends
// on).
// Errors (out of chunks / memory, unknown pointer) are recorded in the manager's RuntimeMemory
// exactly as by the plain API.
//
// Freestanding C++17 (see arch.h). Zero-initialize, then call init().
#ifndef ACCELMEM_SPARSE_RUNTIME_DEVICE_NODE_CACHE_H_
#define ACCELMEM_SPARSE_RUNTIME_DEVICE_NODE_CACHE_H_

#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/node_manager.h"

namespace accelmem {
namespace sparse_runtime {

struct alignas(64) NodeCache {
  // Cells moved per shared atomic, in each direction. With two busy workers nearly every shared
  // atomic finds its line on the other core. 64 per atomic left those line transfers a visible
  // share of the per-cell cost (node_manager_bench, two threads), and 256 still kept the 1 -> 2
  // thread scaling of a pair clearly below the harness's own (BM_CycleScaling; figures in
  // benchmarks/README.md); 512 halves the transfers again. Cost: 16 KiB per cache (with the index
  // buffer below).
  static constexpr i32 kBatch = NodeManager::kCellBlock;
  // A refill that finds no reserved free-list slots left reserves up to this many batches of
  // them with its one atomic (1 after init and flush, doubling with each such refill), and the
  // next refills read them with none. Why: with two busy workers the cursor's line is on the
  // other core at nearly every refill; the free arrays (free_ptr, free_index) stay one batch,
  // as they are the fast path's footprint. Cost: up to kMaxReservedBatches * kBatch zeroed
  // cells go to the recycled list at a flush (the GC zeroes them again).
  static constexpr i32 kMaxReservedBatches = 8;
  // Indices recycled per shared atomic (the recycled list's size): the index buffer holds three
  // batches. Why: the same line transfer on the recycle side; three batches raised the 1 -> 2
  // thread scaling of the cached pair above 1.7, with no cost on one thread
  // (node_manager_bench BM_CycleScaling; figures in benchmarks/README.md). The address buffer (a
  // chunked data list, unknown addresses) stays one batch.
  static constexpr i32 kRecycledIndexBatch = 3 * kBatch;

  NodeManager* manager;
  // The data list's contiguous layout, copied at init(): an address p is cell q =
  // ListManager::contiguous_quotient(p, index_base, index_inverse, index_shift) if q <
  // index_limit. index_base is 0 for a chunked list (index_limit stays 0 then). index_limit is
  // the list's limit when an address was last found beyond it (0 until then): the list only
  // grows.
  u64 index_base;
  u64 index_inverse;
  u64 index_limit;
  i32 index_shift;
  i32 num_free;  // cells free_ptr[kBatch - num_free, kBatch) are cached, zeroed, not handed out
  // Free-list slots [reserved_next, reserved_end) are this cache's (the cursor is past them),
  // not read yet; the next refill takes up to kBatch of them. reserved_batches: the size of the
  // next reservation, in batches.
  // reserved_epoch: manager->gc_epoch when they were reserved (a GC since then makes them
  // stale: see drop_stale_reservation).
  i32 reserved_next;
  i32 reserved_end;
  i32 reserved_batches;
  u32 reserved_epoch;
  i32 num_recycled;  // recycled_ptr[0, num_recycled) are buffered for the recycled list
  // recycled_index[0, num_recycled_index) are buffered too: cells recycled by index (the pointer
  // SNode's slots hold indices) and the addresses recycle() indexed.
  i32 num_recycled_index;
  Ptr free_ptr[kBatch];  // free_ptr[k] = manager->get_cell(free_index[k])
  i32 free_index[kBatch];
  Ptr recycled_ptr[kBatch];
  i32 recycled_index[kRecycledIndexBatch];

  void init(NodeManager* manager);

  // A zeroed cell, or null (error recorded in the manager's memory).
  ACCELMEM_RT_INLINE Ptr allocate() {
    if (num_free > 0) return free_ptr[kBatch - num_free--];
    return refill() ? free_ptr[kBatch - num_free--] : nullptr;
  }
  // The index of a zeroed cell, or -1 (error recorded).
  ACCELMEM_RT_INLINE i32 allocate_index() {
    if (num_free > 0) return free_index[kBatch - num_free--];
    return refill() ? free_index[kBatch - num_free--] : -1;
  }

  // Takes back the cell that the last successful allocate() / allocate_index() of this cache
  // handed out, unwritten, with no other call on this cache in between: it is cached free again,
  // next to be handed out. Why: an activation that lost the race to publish its cell
  // (snode_pointer.h) returns the still zero cell without a recycle, so the GC need not zero it.
  ACCELMEM_RT_INLINE void give_back_last() { ++num_free; }
  // Buffers the cell at `p` for the recycled list: its index, or (chunked list, unknown address)
  // the address, located at the next flush.
  ACCELMEM_RT_INLINE void recycle(Ptr p) {
    const u64 q = ListManager::contiguous_quotient(reinterpret_cast<u64>(p), index_base,
                                                   index_inverse, index_shift);
    if (__builtin_expect(q < index_limit, 1)) {
      recycle_index(static_cast<i32>(q));
    } else if (index_base == 0) {
      recycle_address(p);
    } else {
      recycle_beyond_limit(p, q);
    }
  }
  // Buffers cell `index` (0 <= index < manager->num_reserved()).
  ACCELMEM_RT_INLINE void recycle_index(i32 index) {
    if (num_recycled_index == kRecycledIndexBatch) flush_recycled();
    recycled_index[num_recycled_index++] = index;
  }

  // Returns every cached cell to the manager (see the file comment). The cache stays usable.
  void flush();
  // Locates and pushes the buffered recycled cells only (cached free cells stay).
  void flush_recycled();

  // Free cells the cache holds: the cached ones and the reserved free-list slots not read yet.
  ACCELMEM_RT_INLINE i32 num_cached_free() const {
    return num_free + (reserved_epoch == manager->gc_epoch ? reserved_end - reserved_next : 0);
  }
  ACCELMEM_RT_INLINE i32 num_cached_recycled() const { return num_recycled + num_recycled_index; }

  // Slow path of allocate (num_free == 0): up to kBatch reserved free-list slots, else one atomic
  // reserving reserved_batches * kBatch slots (or, where the free list ends, its tail and fresh
  // cells as allocate_indices()). False if no cell could be had (error recorded); otherwise
  // num_free > 0.
  bool refill();
  // Reads n (<= kBatch) reserved slots into the free arrays.
  void take_reserved(i32 n);
  // A reservation that a GC made stale (the cache was not flushed before it): records
  // kErrorStaleCache and forgets it.
  void drop_stale_reservation();
  // recycle(p) of a contiguous list where p's quotient q is not below index_limit: reads the
  // list's limit again, then buffers q, or the address if p is still not a cell below it.
  void recycle_beyond_limit(Ptr p, u64 q);
  // Buffers the address p, located at the next flush.
  ACCELMEM_RT_INLINE void recycle_address(Ptr p) {
    if (num_recycled == kBatch) flush_recycled();
    recycled_ptr[num_recycled++] = p;
  }
};

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_DEVICE_NODE_CACHE_H_
