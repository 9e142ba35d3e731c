// File: sparse_runtime/device/snode_dynamic.h
//
// `dynamic` SNode functions (upstream node_dynamic.h). The container is a DynamicNode heading a
// singly linked list of chunks from this SNode's NodeManager; a chunk is
// `[next Ptr][i32 chunk index][pad to chunk_header][chunk_size cells]`, so the allocator's node
// size is chunk_header + chunk_size * element_size (chunk_header = round_up(16, cell alignment):
// the next pointer and the cells are aligned; upstream's 28-byte stride is not). Element i lives
// in chunk i / chunk_size. Cells at or past the length resolve to the ambient element (zeros).
//
// Appends are lock-free and O(1) in the common case: `state` packs (generation << 32 | n); an
// append reads state, then the tail chunk, and if the tail holds slot n (its stored chunk index
// is n / chunk_size) claims it with one CAS state -> state + 1. Otherwise (first append, chunk
// full) it extends the list under the container lock and retries. Deactivation nulls the tail,
// then bumps the generation and zeroes n in one CAS, so an append that read the old list cannot
// succeed afterwards (no ABA on n), then recycles every chunk.
//
// Differences from upstream, all for safety: the length is published only after the chunks exist
// (upstream bumps n first, so a concurrent lookup can walk into a null link); activating or
// appending past max_num_elements (the declared size) records kErrorDynamicOverflow and does
// nothing (upstream keeps allocating, #6866/#7245); appends do not walk the list (upstream walks
// it from the head on every append); lookups tolerate a concurrently detached list.
//
// Freestanding C++17 (see arch.h).
#ifndef ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_DYNAMIC_H_
#define ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_DYNAMIC_H_

#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/struct_meta.h"

namespace accelmem {
namespace sparse_runtime {

struct DynamicNode {
  u64 state;       // (generation << 32) | n, n = current length
  Ptr ptr;         // first chunk or null
  Ptr tail;        // last chunk or null
  i32 num_chunks;  // chunks in the list (written under the lock)
  i32 lock;        // serializes list extension and deactivation
};
static_assert(sizeof(DynamicNode) == 32, "DynamicNode is 32 bytes");

ACCELMEM_RT_INLINE i32 Dynamic_length(const DynamicNode* node) {
  return static_cast<i32>(atomic_load_acquire(&node->state) & 0xffffffffu);
}
ACCELMEM_RT_INLINE Ptr Dynamic_first_chunk(const DynamicNode* node) {
  return atomic_load_acquire(&node->ptr);
}
ACCELMEM_RT_INLINE Ptr Dynamic_next_chunk(Ptr chunk) {
  return atomic_load_acquire(reinterpret_cast<Ptr*>(chunk));
}

struct DynamicMeta {
  StructMeta base;   // element_size = cell size; max_num_elements = declared size
  i32 chunk_size;    // cells per chunk
  i32 chunk_header;  // bytes before the first cell of a chunk (>= 16, multiple of the alignment)
  i32 chunk_shift;   // log2(chunk_size) when it is a power of two, else -1 (division)
};

ACCELMEM_RT_INLINE u64 Dynamic_chunk_header(u64 cell_alignment) {
  return round_up_u64(16, max_of<u64>(cell_alignment, 8));
}
ACCELMEM_RT_INLINE u64 Dynamic_node_size(u64 cell_size, u64 cell_alignment, i64 chunk_size) {
  return Dynamic_chunk_header(cell_alignment) + cell_size * static_cast<u64>(chunk_size);
}

// Fills chunk_size, chunk_header and chunk_shift of a meta.
ACCELMEM_RT_INLINE void DynamicMeta_set_chunking(DynamicMeta* meta, i32 chunk_size,
                                                 u64 cell_alignment) {
  meta->chunk_size = chunk_size;
  meta->chunk_header = static_cast<i32>(Dynamic_chunk_header(cell_alignment));
  meta->chunk_shift = is_power_of_two_u64(static_cast<u64>(chunk_size))
                          ? log2_floor_u64(static_cast<u64>(chunk_size))
                          : -1;
}
ACCELMEM_RT_INLINE i32 Dynamic_chunk_of(const DynamicMeta* meta, i32 i) {
  return meta->chunk_shift >= 0 ? i >> meta->chunk_shift : i / meta->chunk_size;
}
ACCELMEM_RT_INLINE i32 Dynamic_offset_in_chunk(const DynamicMeta* meta, i32 i) {
  return meta->chunk_shift >= 0 ? i & (meta->chunk_size - 1) : i % meta->chunk_size;
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

#endif  // ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_DYNAMIC_H_
