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
// Two forms of each operation. The X_* functions (`Pointer_activate(Ptr meta, ...)`) are out of
// line: the entry points of StructMeta's function pointers and of the runtime bitcode that
// generated kernels call by name. The `Pointer_*_inline` templates below are their fast paths
// over a meta view (struct_meta.h: RuntimeMeta, or StaticMeta with the shape known at compile
// time), in the header so that C++ callers inline them; the X_* functions are these templates
// over RuntimeMeta. Only the slow paths stay out of line: Pointer_activate_slow (lock, allocate)
// and Pointer_deactivate_slow (lock, recycle), entered when the unlocked test says there is work.
// An already-active activation is therefore one load and a branch, not a call into the locked
// path's frame.
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
// The slot of cell i through a meta view.
template <typename M>
ACCELMEM_RT_INLINE Ptr* Pointer_slot_of(const M& m, Ptr node, i32 i) {
  return reinterpret_cast<Ptr*>(node + 8 * static_cast<u64>(m.max_num_elements() + i));
}
ACCELMEM_RT_INLINE Ptr* Pointer_slot(Ptr meta, Ptr node, i32 i) {
  return Pointer_slot_of(RuntimeMeta{meta}, node, i);
}

// Slow paths (out of line, never inlined): the locked part of activate / deactivate, entered
// after the unlocked test found the slot null / non-null. Same semantics as the X_* functions
// (each tests the slot again under the lock).
void Pointer_activate_slow(Ptr meta, Ptr node, i32 i, NodeCache* cache);
void Pointer_deactivate_slow(Ptr meta, Ptr node, i32 i, NodeCache* cache);

// Inline fast paths. `cache`: as Pointer_activate_cached (null: the NodeManager).
template <typename M>
ACCELMEM_RT_INLINE bool Pointer_is_active_inline(const M& m, Ptr node, i32 i) {
  return atomic_load_acquire(Pointer_slot_of(m, node, i)) != nullptr;
}
template <typename M>
ACCELMEM_RT_INLINE Ptr Pointer_lookup_element_inline(const M& m, Ptr node, i32 i) {
  Ptr cell = atomic_load_acquire(Pointer_slot_of(m, node, i));
  if (__builtin_expect(cell != nullptr, 1)) return cell;
  return runtime_ambient_element(m.base()->context, m.base()->snode_id);
}
template <typename M>
ACCELMEM_RT_INLINE void Pointer_activate_inline(const M& m, Ptr node, i32 i,
                                                NodeCache* cache = nullptr) {
  if (__builtin_expect(atomic_load_acquire(Pointer_slot_of(m, node, i)) != nullptr, 1)) return;
  Pointer_activate_slow(m.meta, node, i, cache);
}
template <typename M>
ACCELMEM_RT_INLINE void Pointer_deactivate_inline(const M& m, Ptr node, i32 i,
                                                  NodeCache* cache = nullptr) {
  if (atomic_load_acquire(Pointer_slot_of(m, node, i)) == nullptr) return;
  Pointer_deactivate_slow(m.meta, node, i, cache);
}

// The out-of-line entry points.
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
