#include "benchmarks/baselines/upstream_gc.h"

namespace accelmem {
namespace baselines {

void UpstreamGcPhase0(UpstreamNodeManager* nm, int32_t linear_thread_idx, int32_t num_threads) {
  UpstreamListManager& free_list = *nm->free_list;
  const int32_t size = free_list.size();
  const int32_t used = nm->free_list_used;
  using T = UpstreamNodeManager::list_data_type;
  if (used * 2 > size) {
    const int32_t to_copy = size - used;  // source and destination do not overlap
    for (int32_t i = linear_thread_idx; i < to_copy; i += num_threads) {
      free_list.get<T>(i) = free_list.get<T>(used + i);
    }
  } else {
    const int32_t to_copy = used;  // only the part that does not overlap moves
    for (int32_t i = linear_thread_idx; i < to_copy; i += num_threads) {
      free_list.get<T>(i) = free_list.get<T>(size - to_copy + i);
    }
  }
}

void UpstreamGcPhase1(UpstreamNodeManager* nm) {
  const int32_t unused = nm->free_list->size() - nm->free_list_used;
  nm->free_list->resize(unused > 0 ? unused : 0);
  nm->free_list_used = 0;
  nm->recycle_list_size_backup = nm->recycled_list->size();
  nm->recycled_list->clear();
}

void UpstreamGcPhase2(UpstreamNodeManager* nm, int32_t block_idx, int32_t thread_idx,
                      int32_t grid_dim, int32_t block_dim) {
  const int32_t elements = nm->recycle_list_size_backup;
  const std::size_t element_size = nm->element_size;
  using T = UpstreamNodeManager::list_data_type;
  for (int32_t i = block_idx; i < elements; i += grid_dim) {
    const int32_t index = nm->recycled_list->get<T>(i);
    Ptr p = nm->data_list->get_element_ptr(index);
    if (thread_idx == 0) nm->free_list->push_back(index);
    Ptr const stop = p + element_size;
    const uintptr_t misalign = reinterpret_cast<uintptr_t>(p) % 4;
    if (misalign != 0) {
      Ptr const aligned = p + (4 - misalign);
      if (thread_idx == 0) {
        for (Ptr q = p; q < aligned && q < stop; ++q) *q = 0;
      }
      p = aligned;
    }
    p += static_cast<std::size_t>(thread_idx) * sizeof(uint32_t);
    while (p + sizeof(uint32_t) <= stop) {
      *reinterpret_cast<uint32_t*>(p) = 0;
      p += sizeof(uint32_t) * static_cast<std::size_t>(block_dim);
    }
    while (p < stop) *p++ = 0;
  }
}

void UpstreamGcParallel(UpstreamNodeManager* nm, int32_t grid_dim, int32_t block_dim) {
  const int32_t threads = grid_dim * block_dim;
  for (int32_t t = 0; t < threads; ++t) UpstreamGcPhase0(nm, t, threads);
  UpstreamGcPhase1(nm);
  for (int32_t b = 0; b < grid_dim; ++b) {
    for (int32_t t = 0; t < block_dim; ++t) UpstreamGcPhase2(nm, b, t, grid_dim, block_dim);
  }
}

}  // namespace baselines
}  // namespace accelmem
