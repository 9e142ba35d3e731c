// File: benchmarks/snode_bench_upstream_dynamic.h
//
// snode_bench's upstream side of BM_Dynamic_Append, as upstream runs `ti.append` (kept out of
// snode_bench.cc for its length; benchmarks/baselines' UpstreamDynamic_append walks the chunk
// list twice, activate then lookup, which upstream's append does not).
#ifndef ACCELMEM_BENCHMARKS_SNODE_BENCH_UPSTREAM_DYNAMIC_H_
#define ACCELMEM_BENCHMARKS_SNODE_BENCH_UPSTREAM_DYNAMIC_H_

#include <cstddef>
#include <cstdint>

#include "benchmarks/baselines/upstream_list_manager.h"
#include "benchmarks/baselines/upstream_node_manager.h"
#include "benchmarks/baselines/upstream_snodes.h"

namespace accelmem {
namespace baselines {

// Upstream's NodeManager constructor caps a chunk of its data list at 128 MiB, halving the cells
// per chunk from the 16 Ki the runtime asks for (taichi runtime.cpp, NodeManager::NodeManager):
// for 8 + 4 * 4096-byte dynamic chunks, 4 Ki per chunk, not UpstreamTree's 16 Ki.
inline int32_t UpstreamClampedChunkNumElements(uint64_t node_bytes, int32_t chunk_num_elements) {
  while (chunk_num_elements > 1 &&
         static_cast<uint64_t>(chunk_num_elements) * node_bytes > 128ull * 1024 * 1024) {
    chunk_num_elements /= 2;
  }
  return chunk_num_elements;
}

// What `ti.append` runs upstream: the kernel calls Dynamic_allocate (SNodeOpType::allocate in
// taichi/codegen/llvm/codegen_llvm.cpp; taichi/runtime/llvm/runtime_module/node_dynamic.h) and
// stores the value at the cell it returns. Dynamic_allocate walks the chunk list once from the
// head, allocating a missing chunk under the node's lock (x64 locked_task: lock, test, allocate,
// unlock). Out of line (noinline, the meta read from memory) as the other upstream rows.
// Upstream's taichi_assert_runtime calls are not on this path: node_dynamic.h has none; the
// allocator's (ListManager::touch_chunk "out of chunks", ptr2index "ptr not found") run only when
// a chunk is first reserved or recycled, which BM_Dynamic_Append checks stays off its timed
// rounds after the first.
__attribute__((noinline)) inline Ptr UpstreamDynamic_allocate(Ptr meta_, Ptr node_, int32_t* len) {
  auto* meta = reinterpret_cast<UpstreamDynamicMeta*>(meta_);
  auto* node = reinterpret_cast<UpstreamDynamicNode*>(node_);
  const int32_t chunk_size = meta->chunk_size;
  const int32_t i = __atomic_fetch_add(&node->n, 1, __ATOMIC_SEQ_CST);
  *len = i;
  int32_t chunk_start = 0;
  Ptr* p_chunk_ptr = &node->ptr;
  for (;;) {
    if (__atomic_load_n(p_chunk_ptr, __ATOMIC_ACQUIRE) == nullptr) {
      UpstreamLock(&node->lock);
      if (__atomic_load_n(p_chunk_ptr, __ATOMIC_ACQUIRE) == nullptr) {
        UpstreamNodeManager* alloc =
            meta->base.context->runtime->node_allocators[meta->base.snode_id];
        __atomic_store_n(p_chunk_ptr, alloc->allocate(), __ATOMIC_RELEASE);
      }
      UpstreamUnlock(&node->lock);
    }
    if (i < chunk_start + chunk_size) {
      return *p_chunk_ptr + sizeof(Ptr) +
             static_cast<std::size_t>(i - chunk_start) * meta->base.element_size;
    }
    p_chunk_ptr = reinterpret_cast<Ptr*>(*p_chunk_ptr);
    chunk_start += chunk_size;
  }
}

}  // namespace baselines
}  // namespace accelmem

#endif  // ACCELMEM_BENCHMARKS_SNODE_BENCH_UPSTREAM_DYNAMIC_H_
