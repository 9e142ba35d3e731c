// Freestanding implementation of NodeCache (see node_cache.h).
#include "sparse_runtime/device/node_cache.h"

namespace accelmem {
namespace sparse_runtime {

void NodeCache::init(NodeManager* manager_in) {
  manager = manager_in;
  num_free = 0;
  reserved_next = 0;
  reserved_end = 0;
  reserved_batches = 1;
  num_recycled = 0;
  num_recycled_index = 0;
  const ListManager& data = manager->data_list;
  index_base = reinterpret_cast<u64>(data.contiguous_base);
  index_inverse = data.element_size_odd_inverse;
  index_shift = data.element_size_shift;
  index_limit = 0;  // read by the first recycle() of a contiguous list
}

void NodeCache::recycle_beyond_limit(Ptr p, u64 q) {
  // Relaxed, as ListManager::find_index: an address handed to recycle() was obtained after its
  // chunk's commit.
  index_limit = static_cast<u64>(atomic_load_relaxed(&manager->data_list.contiguous_limit));
  if (q < index_limit) {
    recycle_index(static_cast<i32>(q));
  } else {
    recycle_address(p);  // not a cell: reported and dropped at the flush
  }
}

void NodeCache::take_reserved(i32 n) {
  i32* indices = free_index + (kBatch - n);
  const ListManager& free_list = manager->free_list;
  free_list.read_range(reserved_next, n, indices);
  reserved_next += n;
#if defined(ARCH_x64)  // as NodeManager::take_indices: the next batch arrives while this one is
                       // used
  constexpr i32 kPerLine = 64 / static_cast<i32>(sizeof(i32));
  const i32 next_end = min_of(reserved_next + kBatch, reserved_end);
  for (i32 i = reserved_next; i < next_end; i += kPerLine) {
    prefetch_for_read(free_list.get_element_ptr(i));
  }
#endif
  manager->data_list.element_ptrs(indices, n, free_ptr + (kBatch - n));
  num_free = n;
}

void NodeCache::drop_stale_reservation() {
  // The GC moved the free list's entries: the slots now name other cells, free or soon handed
  // out by others, so reading them would hand cells out twice. The cells they named before are
  // on no list now (leaked): reported, as flushing before a GC is the caller's duty.
  report_error(manager->memory, kErrorStaleCache,
               "NodeCache: free-list slots reserved before a GC (cache not flushed); cells leaked",
               reserved_end - reserved_next);
  reserved_next = 0;
  reserved_end = 0;
  reserved_batches = 1;
}

bool NodeCache::refill() {
  if (reserved_next < reserved_end) {
    if (__builtin_expect(reserved_epoch == manager->gc_epoch, 1)) {
      take_reserved(min_of(kBatch, reserved_end - reserved_next));
      return true;
    }
    drop_stale_reservation();
  }
  const i32 want = reserved_batches * kBatch;
  const i32 old = atomic_add(&manager->free_list_used, want);
  const i32 available = manager->free_list.size() - old;
  if (available >= kBatch) {  // the common case: whole batches of the free list
    reserved_next = old;
    reserved_end = old + min_of(available, want);
    reserved_epoch = manager->gc_epoch;
    if (reserved_batches < kMaxReservedBatches) reserved_batches *= 2;
    take_reserved(kBatch);
    return true;
  }
  // The free list ends inside the first batch: its tail, then fresh cells (the slots reserved
  // past the batch lie beyond the free list's end: nothing is lost). The cursor now runs ahead of
  // the slots read by at most kMaxReservedBatches - 1 batches per cache and GC cycle (later
  // refills reserve one batch, fully used); a refill that gets no cell at all takes its slots
  // back (take_indices), so repeated failures after running out of memory cannot overflow it.
  reserved_batches = 1;
  if (manager->take_indices(old, want, free_index, kBatch)) {
    manager->data_list.element_ptrs(free_index, kBatch, free_ptr);
    num_free = kBatch;
    return true;
  }
  // On failure take_indices fills the entries from the failure on with -1 (error recorded):
  // keep the valid prefix, moved to the top of the array.
  i32 valid = 0;
  while (valid < kBatch && free_index[valid] >= 0) ++valid;
  for (i32 k = valid - 1; k >= 0; --k) free_index[kBatch - valid + k] = free_index[k];
  manager->data_list.element_ptrs(free_index + (kBatch - valid), valid,
                                  free_ptr + (kBatch - valid));
  num_free = valid;
  return valid > 0;
}

void NodeCache::flush_recycled() {
  manager->recycle_cells(recycled_ptr, num_recycled);  // unknown pointers: reported, dropped
  num_recycled = 0;
  manager->recycle_indices(recycled_index, num_recycled_index);
  num_recycled_index = 0;
}

void NodeCache::flush() {
  // Cached free cells are zero but the free list cannot take them back between GCs (its cursor
  // does not move back below them); the recycled list can, and the GC zeroes them again. In
  // hand-out order.
  manager->recycle_indices(free_index + (kBatch - num_free), num_free);
  num_free = 0;
  if (reserved_next < reserved_end && reserved_epoch != manager->gc_epoch) {
    drop_stale_reservation();  // pushing them would recycle cells that are free (or in use)
  }
  while (reserved_next < reserved_end) {  // then the reserved slots not read yet, in list order
    const i32 n = min_of(kBatch, reserved_end - reserved_next);
    manager->free_list.read_range(reserved_next, n, free_index);
    reserved_next += n;
    manager->recycle_indices(free_index, n);
  }
  reserved_batches = 1;
  flush_recycled();
}

}  // namespace sparse_runtime
}  // namespace accelmem
