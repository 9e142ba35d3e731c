// File: sparse_runtime/snode_dynamic.h
//
// `dynamic` SNode functions (upstream node_dynamic.h). The container is a DynamicNode
// `{i32 lock; i32 n; Ptr ptr; Ptr tail; i32 num_chunks}` (upstream's 16-byte triple plus the
// tail, so that appends are O(1) instead of a walk of the whole list) heading a singly linked
// list of chunks from this SNode's
// NodeManager; a chunk is `[next Ptr][pad to chunk_header][chunk_size cells]`, so the allocator's
// node size is chunk_header + chunk_size * element_size (chunk_header = round_up(8, cell
// alignment): the next pointer and the cells are aligned, upstream's 28-byte stride is not).
// Element i lives in chunk i / chunk_size. Cells at or past the length resolve to the ambient
// element (zeros).
//
// Differences from upstream, all for safety under concurrency:
//   * activate(i) and allocate() (append) extend the chunk list and publish the new length `n`
//     under the container's lock, *after* the chunks exist (upstream bumps n first, so a
//     concurrent lookup can walk into a null link); lookups stay lock-free;
//   * activating or appending past max_num_elements (the declared size) records
//     kErrorDynamicOverflow and does nothing (upstream keeps allocating, #6866/#7245);
//   * lookups tolerate a concurrently detached list (they return the ambient element).
// deactivate() (no index, as upstream) sets n = 0 and recycles every chunk under the lock.
//
// Freestanding C++17 (see arch.h).
#ifndef ACCELMEM_SPARSE_RUNTIME_SNODE_DYNAMIC_H_
#define ACCELMEM_SPARSE_RUNTIME_SNODE_DYNAMIC_H_

#include "sparse_runtime/arch.h"
#include "sparse_runtime/struct_meta.h"

namespace accelmem {
namespace sparse_runtime {

struct DynamicNode {
  i32 lock;
  i32 n;           // current length
  Ptr ptr;         // first chunk or null
  Ptr tail;        // last chunk (mutators only, under the lock)
  i32 num_chunks;  // chunks in the list (mutators only, under the lock)
  i32 reserved_;
};
static_assert(sizeof(DynamicNode) == 32, "DynamicNode: upstream's triple plus the tail");

struct DynamicMeta {
  StructMeta base;   // element_size = cell size; max_num_elements = declared size
  i32 chunk_size;    // cells per chunk
  i32 chunk_header;  // bytes before the first cell of a chunk (>= 8, multiple of the alignment)
};

ACCELMEM_RT_INLINE u64 Dynamic_chunk_header(u64 cell_alignment) {
  return round_up_u64(8, max_of<u64>(cell_alignment, 8));
}
ACCELMEM_RT_INLINE u64 Dynamic_node_size(u64 cell_size, u64 cell_alignment, i64 chunk_size) {
  return Dynamic_chunk_header(cell_alignment) + cell_size * static_cast<u64>(chunk_size);
}

i32 Dynamic_get_num_elements(Ptr meta, Ptr node);
void Dynamic_activate(Ptr meta, Ptr node, i32 i);
void Dynamic_deactivate(Ptr meta, Ptr node);
bool Dynamic_is_active(Ptr meta, Ptr node, i32 i);
Ptr Dynamic_lookup_element(Ptr meta, Ptr node, i32 i);
// Appends one cell: *len receives its index (the old length) and the cell address is returned;
// null (with *len = the current length) after recording an error.
Ptr Dynamic_allocate(Ptr meta, Ptr node, i32* len);
// Number of chunks in the list (host statistics and tests).
i32 Dynamic_num_chunks(Ptr meta, Ptr node);

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_SNODE_DYNAMIC_H_
