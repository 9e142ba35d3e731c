#include "sparse_runtime/device/snode_pointer.h"

namespace accelmem {
namespace sparse_runtime {

i32 Pointer_get_num_elements(Ptr meta, Ptr) {
  return static_cast<i32>(as_struct_meta(meta)->max_num_elements);
}

// Slot value 0 lands on the lead element in front of cell 0.
static_assert(ListManager::kContiguousLeadElements == 1,
              "slot value v addresses origin + v * stride");

void Pointer_bind_cells(PointerMeta* meta, const NodeManager* manager) {
  const ListManager& cells = manager->data_list;
  const Ptr origin =
      cells.is_contiguous()
          ? cells.contiguous_base - ListManager::kContiguousLeadElements * cells.element_size
          : nullptr;
  // Bound only where the SNode's ambient element is the lead element (as
  // runtime_initialize_snode_allocator makes it), so that an inactive slot's lookup through the
  // origin is the ambient element; otherwise lookups take the chunk table, which selects it.
  const StructMeta& base = meta->base;
  if (origin != nullptr && base.context != nullptr &&
      runtime_ambient_element(base.context, base.snode_id) == origin) {
    meta->cell_stride = cells.element_size;
    meta->cell_origin = reinterpret_cast<uptr>(origin);
  } else {
    meta->cell_stride = 0;
    meta->cell_origin = 0;
  }
}

Ptr Pointer_cell_address_chunked(Ptr meta, PointerSlot v) {
  const StructMeta* m = as_struct_meta(meta);
  return runtime_node_manager(m->context, m->snode_id)->get_cell(Pointer_cell_index(v));
}

namespace {

// The index of a newly allocated cell, or -1 (error recorded).
ACCELMEM_RT_INLINE i32 allocate_cell(const StructMeta* m, NodeCache* cache) {
  return cache != nullptr ? cache->allocate_index()
                          : runtime_node_manager(m->context, m->snode_id)->allocate_index();
}

// Gives back cell index k, allocated by this thread and never published: the cache's last
// allocation is cached free again (it is still zero), the manager's goes to its recycled list
// (the GC zeroes it again and frees it: losing a race without a cache costs a recycle).
ACCELMEM_RT_INLINE void give_back_cell(const StructMeta* m, i32 k, NodeCache* cache) {
  if (cache != nullptr) {
    cache->give_back_last();
  } else {
    runtime_node_manager(m->context, m->snode_id)->recycle_index(k);
  }
}

// Publishes cell index k in `slot` if it is inactive (CAS 0 -> k + 1), else gives k back.
ACCELMEM_RT_INLINE bool publish_cell(const StructMeta* m, PointerSlot* slot, i32 k,
                                     NodeCache* cache) {
  PointerSlot expected = 0;
  if (atomic_cas(slot, &expected, Pointer_slot_value(k))) {
    StructMeta_mark_changed(m);
    return true;
  }
  give_back_cell(m, k, cache);
  return false;
}

// Activation of one slot by one thread (see snode_pointer.h). Returns once the slot holds a cell
// or, if the allocation failed (-1, error recorded: the cell stays inactive), is 0.
ACCELMEM_RT_INLINE void activate_slot(const StructMeta* m, PointerSlot* slot, NodeCache* cache) {
  PointerSlot v = atomic_load_acquire(slot);
  if constexpr (kPointerClaimsSlot) {
    // Claim (CAS 0 -> claimed), allocate, publish; a claimed slot is waited for.
    for (;;) {
      if (Pointer_is_cell(v)) return;
      if (v == 0) {
        if (atomic_cas(slot, &v, kPointerClaimed)) {
          const i32 k = allocate_cell(m, cache);
          atomic_store_release(slot, k >= 0 ? Pointer_slot_value(k) : PointerSlot{0});
          if (k >= 0) StructMeta_mark_changed(m);
          return;
        }
        continue;  // v now holds what the slot held instead of 0
      }
      spin_pause();  // another thread is allocating this cell
      v = atomic_load_acquire(slot);
    }
  } else {
    // Lock-free: allocate, then publish (or give the cell back).
    if (Pointer_is_cell(v)) return;
    const i32 k = allocate_cell(m, cache);
    if (k >= 0) publish_cell(m, slot, k, cache);
  }
}

}  // namespace

// noinline: in this file and in the linked runtime bitcode the compiler could otherwise fold the
// slow path back into Pointer_activate, whose fast path would then pay its frame.
__attribute__((noinline)) void Pointer_activate_slow(Ptr meta, Ptr node, i32 i, NodeCache* cache) {
  PointerSlot* slot = Pointer_slot(meta, node, i);
  // CUDA: one lane per distinct slot among the warp's active lanes activates it, the others wait
  // at the warp barrier (no intra-warp spinning on the slot). CPU: mask 0, always representative.
  const u32 mask = active_mask();
  if (is_representative(mask, slot)) activate_slot(as_struct_meta(meta), slot, cache);
  warp_barrier(mask);
}

bool Pointer_publish_cell(Ptr meta, Ptr node, i32 i, i32 k, NodeCache* cache) {
  return publish_cell(as_struct_meta(meta), Pointer_slot(meta, node, i), k, cache);
}

void Pointer_deactivate_indices(Ptr meta, Ptr node, const i32* indices, i32 n, NodeCache* cache) {
  constexpr i32 kBlock = kPointerDeactivateBlock;
  PointerSlot* const slots = Pointer_slot(meta, node, 0);
  NodeManager* manager = nullptr;
  if (cache == nullptr) {
    const StructMeta* m = as_struct_meta(meta);
    manager = runtime_node_manager(m->context, m->snode_id);
  }
  // Indices of the cells this thread took, not yet recycled (only without a cache).
  i32 taken[kPointerDeactivateRecycleBatch];
  i32 num_taken = 0;
  bool any_taken = false;
  for (i32 k = 0; k < n && k < kBlock; ++k) prefetch_for_write(slots + indices[k]);
  for (i32 begin = 0; begin < n; begin += kBlock) {
    const i32 end = n - begin > kBlock ? begin + kBlock : n;
    // The next block's slots, one block ahead: issued before this block's first locked
    // instruction, so these misses proceed while the CASes below run.
    const i32 ahead = n - end > kBlock ? end + kBlock : n;
    for (i32 k = end; k < ahead; ++k) prefetch_for_write(slots + indices[k]);
    for (i32 k = begin; k < end; ++k) {
      PointerSlot* const slot = slots + indices[k];
      const PointerSlot v = Pointer_take_cell(slot, atomic_load_acquire(slot));
      if (v == 0) continue;
      any_taken = true;
      if (cache != nullptr) {
        cache->recycle_index(Pointer_cell_index(v));
        continue;
      }
      taken[num_taken++] = Pointer_cell_index(v);
      if (num_taken == kPointerDeactivateRecycleBatch) {
        manager->recycle_indices(taken, num_taken);
        num_taken = 0;
      }
    }
  }
  if (num_taken > 0) manager->recycle_indices(taken, num_taken);
  if (any_taken) StructMeta_mark_changed(as_struct_meta(meta));
}

void Pointer_cache_init(Ptr meta, NodeCache* cache) {
  const StructMeta* m = as_struct_meta(meta);
  cache->init(runtime_node_manager(m->context, m->snode_id));
}

void Pointer_cache_flush(NodeCache* cache) { cache->flush(); }

void Pointer_activate_cached(Ptr meta, Ptr node, i32 i, NodeCache* cache) {
  Pointer_activate_inline(RuntimeMeta{meta}, node, i, cache);
}

void Pointer_activate(Ptr meta, Ptr node, i32 i) {
  Pointer_activate_inline(RuntimeMeta{meta}, node, i, nullptr);
}

__attribute__((noinline)) PointerSlot Pointer_activate_cell_slow(Ptr meta, Ptr node, i32 i,
                                                                 NodeCache* cache) {
  PointerSlot* slot = Pointer_slot(meta, node, i);
  for (int tries = 0; tries < kPointerActivateCellTries; ++tries) {
    Pointer_activate_slow(meta, node, i, cache);
    const PointerSlot v = atomic_load_acquire(slot);
    if (Pointer_is_cell(v)) return v;
  }
  return 0;
}

Ptr Pointer_activate_cell(Ptr meta, Ptr node, i32 i) {
  Ptr cell;
  return Pointer_activate_cell_inline(RuntimeMeta{meta}, node, i, &cell, nullptr) ? cell : nullptr;
}

Ptr Pointer_lookup_cell(Ptr meta, Ptr node, i32 i) { return Pointer_cell(meta, node, i); }

uptr Pointer_cells_origin(Ptr meta) { return as_pointer_meta(meta)->cell_origin; }

u64 Pointer_cells_stride(Ptr meta) { return as_pointer_meta(meta)->cell_stride; }

bool Pointer_activate_cell_view(Ptr meta, Ptr node, i32 i, uptr origin, u64 stride, Ptr* cell) {
  const PointerView<RuntimeMeta> view{{RuntimeMeta{meta}}, origin, stride, nullptr};
  return Pointer_activate_cell_inline(view, node, i, cell, nullptr);
}

bool Pointer_lookup_cell_view(Ptr meta, Ptr node, i32 i, uptr origin, u64 stride, Ptr* cell) {
  const PointerSlot v = atomic_load_acquire(Pointer_slot(meta, node, i));
  if (!Pointer_is_cell(v)) return false;
  *cell = Pointer_cell_address_at(origin, stride, meta, v);
  return true;
}

bool Pointer_deactivate_cached(Ptr meta, Ptr node, i32 i, NodeCache* cache) {
  return Pointer_deactivate_inline(RuntimeMeta{meta}, node, i, cache);
}

void Pointer_deactivate_owned(Ptr meta, Ptr node, i32 i, NodeCache* cache) {
  Pointer_deactivate_owned_inline(RuntimeMeta{meta}, node, i, cache);
}

bool Pointer_deactivate(Ptr meta, Ptr node, i32 i) {
  return Pointer_deactivate_inline(RuntimeMeta{meta}, node, i, nullptr);
}

bool Pointer_is_active(Ptr meta, Ptr node, i32 i) {
  return Pointer_is_active_inline(RuntimeMeta{meta}, node, i);
}

Ptr Pointer_lookup_element(Ptr meta, Ptr node, i32 i) {
  return Pointer_lookup_element_inline(RuntimeMeta{meta}, node, i);
}

}  // namespace sparse_runtime
}  // namespace accelmem
