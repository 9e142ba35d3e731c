#include "sparse_runtime/snode_pointer.h"

namespace accelmem {
namespace sparse_runtime {

i32 Pointer_get_num_elements(Ptr meta, Ptr) {
  return static_cast<i32>(as_struct_meta(meta)->max_num_elements);
}

void Pointer_activate(Ptr meta, Ptr node, i32 i) {
  Ptr* slot = Pointer_slot(meta, node, i);
  if (atomic_load_acquire(slot) != nullptr) return;
  const StructMeta* m = as_struct_meta(meta);
  warp_locked_task(
      Pointer_lock(node, i),
      [&] {
        NodeManager* nm = runtime_node_manager(m->context, m->snode_id);
        Ptr cell = nm->allocate();
        if (cell != nullptr) atomic_store_release(slot, cell);
      },
      [&] { return atomic_load_acquire(slot) == nullptr; });
}

void Pointer_deactivate(Ptr meta, Ptr node, i32 i) {
  Ptr* slot = Pointer_slot(meta, node, i);
  if (atomic_load_acquire(slot) == nullptr) return;
  const StructMeta* m = as_struct_meta(meta);
  locked_task(
      Pointer_lock(node, i),
      [&] {
        Ptr cell = atomic_load_relaxed(slot);
        atomic_store_release(slot, static_cast<Ptr>(nullptr));
        runtime_node_manager(m->context, m->snode_id)->recycle(cell);
      },
      [&] { return atomic_load_acquire(slot) != nullptr; });
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
