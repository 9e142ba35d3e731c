// Freestanding implementation of NodeCache (see node_cache.h).
#include "sparse_runtime/node_cache.h"

namespace accelmem {
namespace sparse_runtime {

void NodeCache::init(NodeManager* manager_in) {
  manager = manager_in;
  free_pos = 0;
  free_end = 0;
  num_recycled = 0;
}

i32 NodeCache::refill_and_allocate() {
  // On failure allocate_indices fills the entries from the failure on with -1 (error recorded);
  // keep the valid prefix.
  manager->allocate_indices(free, kBatch);
  i32 valid = 0;
  while (valid < kBatch && free[valid] >= 0) ++valid;
  free_pos = 0;
  free_end = valid;
  if (valid == 0) return -1;
  free_pos = 1;
  return free[0];
}

void NodeCache::flush_recycled() {
  manager->recycle_indices(recycled, num_recycled);
  num_recycled = 0;
}

void NodeCache::flush() {
  // Cached free cells are zero but the free list cannot take them back between GCs (its cursor
  // only grows); the recycled list can, and the GC zeroes them again.
  if (free_pos < free_end) manager->recycle_indices(free + free_pos, free_end - free_pos);
  free_pos = 0;
  free_end = 0;
  flush_recycled();
}

}  // namespace sparse_runtime
}  // namespace accelmem
