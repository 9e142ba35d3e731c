#include "sparse_runtime/device/snode_pointer.h"

namespace accelmem {
namespace sparse_runtime {

i32 Pointer_get_num_elements(Ptr meta, Ptr) {
  return static_cast<i32>(as_struct_meta(meta)->max_num_elements);
}

// noinline: in this file and in the linked runtime bitcode the compiler could otherwise fold the
// locked path back into Pointer_activate, whose fast path would then pay its frame.
__attribute__((noinline)) void Pointer_activate_slow(Ptr meta, Ptr node, i32 i, NodeCache* cache) {
  Ptr* slot = Pointer_slot(meta, node, i);
  const StructMeta* m = as_struct_meta(meta);
  warp_locked_task(
      Pointer_lock(node, i),
      [&] {
        Ptr cell = cache != nullptr ? cache->allocate()
                                    : runtime_node_manager(m->context, m->snode_id)->allocate();
        if (cell != nullptr) atomic_store_release(slot, cell);
      },
      [&] { return atomic_load_acquire(slot) == nullptr; });
}

__attribute__((noinline)) void Pointer_deactivate_slow(Ptr meta, Ptr node, i32 i,
                                                       NodeCache* cache) {
  Ptr* slot = Pointer_slot(meta, node, i);
  const StructMeta* m = as_struct_meta(meta);
  locked_task(
      Pointer_lock(node, i),
      [&] {
        Ptr cell = atomic_load_relaxed(slot);
        atomic_store_release(slot, static_cast<Ptr>(nullptr));
        if (cache != nullptr) {
          cache->recycle(cell);
        } else {
          runtime_node_manager(m->context, m->snode_id)->recycle(cell);
        }
      },
      [&] { return atomic_load_acquire(slot) != nullptr; });
}

void Pointer_activate_cached(Ptr meta, Ptr node, i32 i, NodeCache* cache) {
  Pointer_activate_inline(RuntimeMeta{meta}, node, i, cache);
}

void Pointer_activate(Ptr meta, Ptr node, i32 i) {
  Pointer_activate_inline(RuntimeMeta{meta}, node, i, nullptr);
}

void Pointer_deactivate_cached(Ptr meta, Ptr node, i32 i, NodeCache* cache) {
  Pointer_deactivate_inline(RuntimeMeta{meta}, node, i, cache);
}

void Pointer_deactivate(Ptr meta, Ptr node, i32 i) {
  Pointer_deactivate_inline(RuntimeMeta{meta}, node, i, nullptr);
}

bool Pointer_is_active(Ptr meta, Ptr node, i32 i) {
  return Pointer_is_active_inline(RuntimeMeta{meta}, node, i);
}

Ptr Pointer_lookup_element(Ptr meta, Ptr node, i32 i) {
  return Pointer_lookup_element_inline(RuntimeMeta{meta}, node, i);
}

}  // namespace sparse_runtime
}  // namespace accelmem
