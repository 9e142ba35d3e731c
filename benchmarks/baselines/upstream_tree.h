// File: benchmarks/baselines/upstream_tree.h
//
// One upstream SNode (id 0) ready to call upstream's functions on: its container, allocator
// (UpstreamNodeManager, optional) and ambient element, with the runtime, context and meta they
// reach, all memory from a HostMemoryPool as accelmem's runtime uses (same page size and huge-page
// advice), so that a benchmark compares code, not memory sources.
#ifndef ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_TREE_H_
#define ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_TREE_H_

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "benchmarks/baselines/upstream_node_manager.h"
#include "benchmarks/baselines/upstream_snodes.h"
#include "sparse_runtime/host_memory_pool.h"

namespace accelmem {
namespace baselines {

struct UpstreamTree {
  // element_size: the meta's cell size; n: cells per container; container_bytes: the container
  // (e.g. UpstreamPointerContainerBytes(n)); allocator_node_bytes: the allocator's cell size, or 0
  // for kinds without an allocator.
  UpstreamTree(uint64_t element_size, int64_t n, uint64_t container_bytes,
               uint64_t allocator_node_bytes) {
    if (allocator_node_bytes > 0) {
      UpstreamAllocator allocator{&sparse_runtime::HostMemoryPool::AllocateCallback, &pool};
      nm = std::make_unique<UpstreamNodeManager>(
          allocator_node_bytes, UpstreamNodeManager::kRuntimeChunkNumElements, allocator);
      rt->node_allocators[0] = nm.get();
    }
    rt->ambient_elements[0] = static_cast<Ptr>(pool.Allocate(64, 64));
    context.runtime = rt.get();
    meta.base.snode_id = 0;
    meta.base.element_size = element_size;
    meta.base.max_num_elements = n;
    meta.base.context = &context;
    node = static_cast<Ptr>(pool.Allocate(container_bytes, 4096));  // fresh: zero
    if (node == nullptr || rt->ambient_elements[0] == nullptr) std::abort();
  }
  Ptr m() { return reinterpret_cast<Ptr>(&meta); }
  Ptr ambient() const { return rt->ambient_elements[0]; }
  sparse_runtime::HostMemoryPool pool;
  std::unique_ptr<UpstreamNodeManager> nm;
  std::unique_ptr<UpstreamRuntime> rt = std::make_unique<UpstreamRuntime>();
  UpstreamRuntimeContext context;
  UpstreamDynamicMeta meta;  // meta.base for the kinds other than dynamic
  Ptr node = nullptr;
};

}  // namespace baselines
}  // namespace accelmem

#endif  // ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_TREE_H_
