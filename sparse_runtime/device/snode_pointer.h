// File: sparse_runtime/device/snode_pointer.h
//
// `pointer` SNode functions (upstream node_pointer.h). Container layout: `i64 lock[n]` then
// `Ptr ptr[n]` (16 bytes per cell; lock i uses the low 32 bits of its word). An active cell is a
// NodeManager cell of this SNode; an inactive one (null) resolves to the SNode's ambient element,
// which is all zeros, so reads of inactive cells return 0.
//
//   activate(i):   if ptr[i] is null: warp_locked_task(lock i, test ptr[i] == null):
//                  ptr[i] = node_manager.allocate() (release store)
//   deactivate(i): locked_task(lock i, test ptr[i] != null): p = ptr[i]; ptr[i] = null;
//                  node_manager.recycle(p)   -- O(1); the cell is zeroed by the next GC
//
// Does not activate ancestors (the host walker does). If the allocator fails, the cell stays
// inactive and the error is recorded in the runtime memory.
//
// Freestanding C++17 (see arch.h).
#ifndef ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_POINTER_H_
#define ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_POINTER_H_

#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/node_cache.h"
#include "sparse_runtime/device/struct_meta.h"

namespace accelmem {
namespace sparse_runtime {

struct PointerMeta {
  StructMeta base;
  bool _;  // placeholder, as upstream
};

ACCELMEM_RT_INLINE u64 Pointer_container_size(i64 max_num_elements) {
  return 16 * static_cast<u64>(max_num_elements);
}
ACCELMEM_RT_INLINE i32* Pointer_lock(Ptr node, i32 i) {
  return reinterpret_cast<i32*>(node + 8 * static_cast<u64>(i));
}
ACCELMEM_RT_INLINE Ptr* Pointer_slot(Ptr meta, Ptr node, i32 i) {
  return reinterpret_cast<Ptr*>(node +
                                8 * static_cast<u64>(as_struct_meta(meta)->max_num_elements + i));
}

i32 Pointer_get_num_elements(Ptr meta, Ptr node);
void Pointer_activate(Ptr meta, Ptr node, i32 i);
void Pointer_deactivate(Ptr meta, Ptr node, i32 i);
// The same, allocating from / recycling into a worker's NodeCache (node_cache.h) of this SNode's
// NodeManager instead of the manager itself: no shared atomic per cell on busy workers. `cache`
// must belong to the calling worker; null means the manager (as above).
void Pointer_activate_cached(Ptr meta, Ptr node, i32 i, NodeCache* cache);
void Pointer_deactivate_cached(Ptr meta, Ptr node, i32 i, NodeCache* cache);
bool Pointer_is_active(Ptr meta, Ptr node, i32 i);
Ptr Pointer_lookup_element(Ptr meta, Ptr node, i32 i);

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_POINTER_H_
