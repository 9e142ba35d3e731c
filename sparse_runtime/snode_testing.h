// File: sparse_runtime/snode_testing.h
//
// Test fixture for the X_* SNode functions: a RuntimeContext over a HostMemoryPool, and helpers
// that fill meta structs by hand (what the host runtime or codegen does for real trees).
#ifndef ACCELMEM_SPARSE_RUNTIME_SNODE_TESTING_H_
#define ACCELMEM_SPARSE_RUNTIME_SNODE_TESTING_H_

#include <cstring>

#include "gtest/gtest.h"
#include "sparse_runtime/device/runtime_context.h"
#include "sparse_runtime/device/struct_meta.h"
#include "sparse_runtime/host_memory_pool.h"

namespace accelmem {
namespace sparse_runtime {

class SNodeTestContext {
 public:
  // `reservations`: whether the memory can reserve address space (NodeManager data lists are
  // then contiguous; otherwise chunked, as on the preallocated device pool).
  explicit SNodeTestContext(i32 num_snodes = 4, u64 root_size = 4096, bool reservations = true) {
    std::memset(&rt_, 0, sizeof(rt_));
    pool_.Attach(&rt_.memory, reservations);
    EXPECT_TRUE(runtime_context_init(&rt_, num_snodes, root_size));
  }

  RuntimeContext* rt() { return &rt_; }
  HostMemoryPool& pool() { return pool_; }
  Ptr root() { return rt_.root; }

  // Fills the common prefix.
  void FillMeta(StructMeta* meta, i32 snode_id, u64 element_size, i64 max_num_elements) {
    std::memset(meta, 0, sizeof(*meta));
    meta->snode_id = snode_id;
    meta->element_size = element_size;
    meta->max_num_elements = max_num_elements;
    meta->context = &rt_;
  }
  // Creates the allocator + ambient element of a sparse SNode.
  NodeManager* MakeAllocator(i32 snode_id, u64 node_size, u64 alignment = 8,
                             i32 chunk_num_elements = 16) {
    EXPECT_TRUE(runtime_initialize_snode_allocator(&rt_, snode_id, node_size, alignment,
                                                   chunk_num_elements,
                                                   ListManager::kDefaultMaxNumChunks));
    return runtime_node_manager(&rt_, snode_id);
  }
  i32 error() { return runtime_error_code(&rt_); }

 private:
  HostMemoryPool pool_;
  RuntimeContext rt_;
};

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_SNODE_TESTING_H_
