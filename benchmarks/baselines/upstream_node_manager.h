// File: benchmarks/baselines/upstream_node_manager.h
//
// A benchmark-only re-implementation of the node allocator of Taichi's LLVM runtime
// (https://github.com/taichi-dev/taichi/blob/master/taichi/runtime/llvm/runtime_module/runtime.cpp,
// `struct NodeManager`), the baseline accelmem's NodeManager is measured against. Upstream's
// algorithms, kept as they are:
//
//   allocate():  old = atomic_add(free_list_used, 1)
//                index = old >= free_list.size() ? data_list.reserve_new_element()
//                                                : free_list[old]
//                return data_list.get_element_ptr(index)
//   recycle(p):  recycled_list.append(data_list.ptr2index(p))   -- the linear chunk scan
//   gc_serial(): move the unused tail [free_list_used, size) of the free list to its head, reset
//                the cursor, then for every recycled index in recycling order: memset the cell
//                to zero and push the index on the free list (FIFO reuse); clear the recycled
//                list (lazily: its entries stay in memory).
//
// Three lists of upstream's ListManager: free_list and recycled_list of i32 indices and
// data_list of cells, each with chunk_num_elements entries per chunk (upstream's runtime passes
// 16 Ki; -1 means 128 Ki, upstream's constructor default). The three-phase GC that upstream runs
// on GPUs is in upstream_gc.h.
#ifndef ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_NODE_MANAGER_H_
#define ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_NODE_MANAGER_H_

#include <cstdint>
#include <cstring>
#include <memory>

#include "benchmarks/baselines/upstream_list_manager.h"

namespace accelmem {
namespace baselines {

class UpstreamNodeManager {
 public:
  using list_data_type = int32_t;
  static constexpr int32_t kRuntimeChunkNumElements = 16 * 1024;

  explicit UpstreamNodeManager(std::size_t element_size,
                               int32_t chunk_num_elements = kRuntimeChunkNumElements,
                               UpstreamAllocator allocator = {})
      : element_size(element_size),
        chunk_num_elements(chunk_num_elements == -1 ? 128 * 1024 : chunk_num_elements),
        free_list(
            new UpstreamListManager(sizeof(list_data_type), this->chunk_num_elements, allocator)),
        recycled_list(
            new UpstreamListManager(sizeof(list_data_type), this->chunk_num_elements, allocator)),
        data_list(new UpstreamListManager(element_size, this->chunk_num_elements, allocator)) {}

  Ptr allocate() {
    const int32_t old_cursor = __atomic_fetch_add(&free_list_used, 1, __ATOMIC_SEQ_CST);
    int32_t index;
    if (old_cursor >= free_list->size()) {
      index = data_list->reserve_new_element();
    } else {
      index = free_list->get<list_data_type>(old_cursor);
    }
    return data_list->get_element_ptr(index);
  }

  int32_t locate(const void* p) const { return data_list->ptr2index(p); }

  void recycle(const void* p) {
    const int32_t index = locate(p);
    recycled_list->append(&index);
  }

  void gc_serial() {
    const int32_t size = free_list->size();
    for (int32_t i = free_list_used; i < size; ++i) {
      free_list->get<list_data_type>(i - free_list_used) = free_list->get<list_data_type>(i);
    }
    const int32_t num_unused = size - free_list_used > 0 ? size - free_list_used : 0;
    free_list_used = 0;
    free_list->resize(num_unused);
    const int32_t recycled = recycled_list->size();
    for (int32_t i = 0; i < recycled; ++i) {
      const int32_t index = recycled_list->get<list_data_type>(i);
      std::memset(data_list->get_element_ptr(index), 0, element_size);
      free_list->push_back(index);
    }
    recycled_list->clear();
  }

  std::size_t element_size;
  int32_t chunk_num_elements;
  int32_t free_list_used = 0;
  int32_t recycle_list_size_backup = 0;  // written by the three-phase GC's phase 1
  // Separate objects, as upstream (each holds a 1 MiB chunk table).
  std::unique_ptr<UpstreamListManager> free_list;
  std::unique_ptr<UpstreamListManager> recycled_list;
  std::unique_ptr<UpstreamListManager> data_list;
};

}  // namespace baselines
}  // namespace accelmem

#endif  // ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_NODE_MANAGER_H_
