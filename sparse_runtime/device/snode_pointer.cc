#include "sparse_runtime/device/snode_pointer.h"

namespace accelmem {
namespace sparse_runtime {

i32 Pointer_get_num_elements(Ptr meta, Ptr) {
  return static_cast<i32>(as_struct_meta(meta)->max_num_elements);
}

void Pointer_activate_cached(Ptr meta, Ptr node, i32 i, NodeCache* cache) {
  Ptr* slot = Pointer_slot(meta, node, i);
  if (atomic_load_acquire(slot) != nullptr) return;
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

void Pointer_activate(Ptr meta, Ptr node, i32 i) {
  Pointer_activate_cached(meta, node, i, nullptr);
}

void Pointer_deactivate_cached(Ptr meta, Ptr node, i32 i, NodeCache* cache) {
  Ptr* slot = Pointer_slot(meta, node, i);
  if (atomic_load_acquire(slot) == nullptr) return;
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

void Pointer_deactivate(Ptr meta, Ptr node, i32 i) {
  Pointer_deactivate_cached(meta, node, i, nullptr);
}

bool Pointer_is_active(Ptr meta, Ptr node, i32 i) {
  return atomic_load_acquire(Pointer_slot(meta, node, i)) != nullptr;
}

Ptr Pointer_lookup_element(Ptr meta, Ptr node, i32 i) {
  Ptr cell = atomic_load_acquire(Pointer_slot(meta, node, i));
  if (cell != nullptr) return cell;
  const StructMeta* m = as_struct_meta(meta);
  return runtime_ambient_element(m->context, m->snode_id);
}

}  // namespace sparse_runtime
}  // namespace accelmem
