// Freestanding implementation of NodeCache (see node_cache.h).
#include "sparse_runtime/node_cache.h"

namespace accelmem {
namespace sparse_runtime {

void NodeCache::init(NodeManager* manager_in) {
  manager = manager_in;
  num_free = 0;
  num_recycled = 0;
}

bool NodeCache::refill() {
  // On failure allocate_indices fills the entries from the failure on with -1 (error recorded);
  // keep the valid prefix.
  i32 batch[kBatch];
  manager->allocate_indices(batch, kBatch);
  i32 valid = 0;
  while (valid < kBatch && batch[valid] >= 0) ++valid;
  // Reversed: allocate() takes from the top, so batch[0] is handed out first.
  for (i32 k = 0; k < valid; ++k) free_index[valid - 1 - k] = batch[k];
  manager->data_list.element_ptrs(free_index, valid, free_ptr);
  num_free = valid;
  return valid > 0;
}

void NodeCache::flush_recycled() {
  i32 indices[kBatch];
  i32 n = num_recycled;
  if (manager->data_list.ptrs2indices(recycled_ptr, n, indices) != 0) {
    // Drop the unknown pointers (already reported).
    i32 kept = 0;
    for (i32 k = 0; k < n; ++k) {
      if (indices[k] >= 0) indices[kept++] = indices[k];
    }
    n = kept;
  }
  manager->recycle_indices(indices, n);
  num_recycled = 0;
}

void NodeCache::flush() {
  // Cached free cells are zero but the free list cannot take them back between GCs (its cursor
  // only grows); the recycled list can, and the GC zeroes them again. In hand-out order.
  i32 order[kBatch];
  for (i32 k = 0; k < num_free; ++k) order[k] = free_index[num_free - 1 - k];
  manager->recycle_indices(order, num_free);
  num_free = 0;
  flush_recycled();
}

}  // namespace sparse_runtime
}  // namespace accelmem
