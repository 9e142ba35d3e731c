// File: sparse_runtime/device/runtime_context.h
//
// RuntimeContext: the runtime state of one materialized SNode tree (the analogue of upstream's
// LLVMRuntime): the memory pool (RuntimeMemory, with
// allocate_aligned and the error code/message host code reads), the zero-filled root buffer, one
// NodeManager and one ambient element per sparse SNode (pointer, dynamic).
//
// Differences from upstream: the per-SNode tables are sized by the tree (num_snodes) and indexed
// by the tree-local SNode id, so there is no global 1024-SNode limit (#4065) and no assumption
// that ids are contiguous across trees; every byte (tables, managers, chunks, ambient elements,
// root) comes from the runtime memory and goes back with it (#5777).
//
// Freestanding C++17 (see arch.h). Zero-initialize, attach memory (runtime_memory_init_*), then
// call runtime_context_init.
#ifndef ACCELMEM_SPARSE_RUNTIME_DEVICE_RUNTIME_CONTEXT_H_
#define ACCELMEM_SPARSE_RUNTIME_DEVICE_RUNTIME_CONTEXT_H_

#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/device/runtime_memory.h"

namespace accelmem {
namespace sparse_runtime {

struct RuntimeContext {
  RuntimeMemory memory;
  Ptr root;       // zero-filled, 4096-aligned
  u64 root_size;  // rounded up to 4096
  i32 num_snodes;
  NodeManager** node_managers;  // [num_snodes]; null for SNodes without an allocator
  Ptr* ambient_elements;        // [num_snodes]; null for SNodes without an ambient element
  u64* ambient_sizes;           // [num_snodes]
};

// Allocates the root buffer (root_size rounded up to 4096, zero-filled) and the per-SNode tables.
// Returns false with the error recorded in rt->memory.
bool runtime_context_init(RuntimeContext* rt, i32 num_snodes, u64 root_size);

// Creates the NodeManager of a sparse SNode (node_size bytes per cell, cell alignment) and its
// ambient element (element_size zero bytes, never written): where the manager's data list is
// contiguous, the lead element in front of cell 0 (aligned as a cell), otherwise a
// 128-aligned allocation. False on error (recorded).
bool runtime_initialize_snode_allocator(RuntimeContext* rt, i32 snode_id, u64 node_size,
                                        u64 alignment, i32 chunk_num_elements, i32 max_num_chunks);

ACCELMEM_RT_INLINE NodeManager* runtime_node_manager(const RuntimeContext* rt, i32 snode_id) {
  return rt->node_managers[snode_id];
}
ACCELMEM_RT_INLINE Ptr runtime_ambient_element(const RuntimeContext* rt, i32 snode_id) {
  return rt->ambient_elements[snode_id];
}
ACCELMEM_RT_INLINE i32 runtime_error_code(const RuntimeContext* rt) {
  return runtime_error_code(&rt->memory);
}

// Runs gc_serial on the allocator of `snode_id` (no-op without one). Needs exclusive access.
void runtime_gc_serial(RuntimeContext* rt, i32 snode_id);

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_DEVICE_RUNTIME_CONTEXT_H_
