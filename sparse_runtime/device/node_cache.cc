// Freestanding implementation of NodeCache (see node_cache.h).
#include "sparse_runtime/device/node_cache.h"

namespace accelmem {
namespace sparse_runtime {

void NodeCache::init(NodeManager* manager_in) {
  manager = manager_in;
  num_free = 0;
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

bool NodeCache::refill() {
  if (manager->allocate_indices(free_index, kBatch)) {  // the common case: no scan
    manager->data_list.element_ptrs(free_index, kBatch, free_ptr);
    num_free = kBatch;
    return true;
  }
  // On failure allocate_indices fills the entries from the failure on with -1 (error recorded):
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
  // only grows); the recycled list can, and the GC zeroes them again. In hand-out order.
  manager->recycle_indices(free_index + (kBatch - num_free), num_free);
  num_free = 0;
  flush_recycled();
}

}  // namespace sparse_runtime
}  // namespace accelmem
