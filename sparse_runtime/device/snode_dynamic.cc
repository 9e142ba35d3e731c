#include "sparse_runtime/device/snode_dynamic.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

constexpr u64 kLengthMask = 0xffffffffu;
constexpr u64 kGeneration = u64{1} << 32;

ACCELMEM_RT_INLINE DynamicMeta* dmeta(Ptr meta) { return reinterpret_cast<DynamicMeta*>(meta); }
ACCELMEM_RT_INLINE DynamicNode* dnode(Ptr node) { return reinterpret_cast<DynamicNode*>(node); }
ACCELMEM_RT_INLINE Ptr* next_link(Ptr chunk) { return reinterpret_cast<Ptr*>(chunk); }
ACCELMEM_RT_INLINE i32* chunk_index(Ptr chunk) { return reinterpret_cast<i32*>(chunk + 8); }

ACCELMEM_RT_INLINE Ptr cell_in_chunk(const DynamicMeta* m, Ptr chunk, i32 i) {
  return chunk + m->chunk_header +
         m->base.element_size * static_cast<u64>(Dynamic_offset_in_chunk(m, i));
}

// With the container lock held: makes chunks 0..c exist and returns chunk c (null on error).
// Chunks below num_chunks exist; the walk starts at the tail when c is at or past it.
Ptr ensure_chunks_locked(DynamicMeta* m, DynamicNode* node, i32 c) {
  const i32 num_chunks = atomic_load_relaxed(&node->num_chunks);
  i32 k = 0;
  Ptr* link = &node->ptr;
  Ptr chunk = nullptr;
  if (num_chunks > 0 && c >= num_chunks - 1) {
    k = num_chunks - 1;
    chunk = atomic_load_relaxed(&node->tail);
    if (c == k) return chunk;
    link = next_link(chunk);
    ++k;
  }
  for (; k <= c; ++k) {
    chunk = atomic_load_relaxed(link);
    if (chunk == nullptr) {
      chunk = runtime_node_manager(m->base.context, m->base.snode_id)->allocate();
      if (chunk == nullptr) return nullptr;
      *chunk_index(chunk) = k;  // fresh zeroed cell: published by the release stores below
      atomic_store_release(link, chunk);
      atomic_store_release(&node->tail, chunk);
      atomic_store_release(&node->num_chunks, k + 1);
    }
    link = next_link(chunk);
  }
  return chunk;
}

void report_overflow(const DynamicMeta* m, i32 i) {
  report_error(&m->base.context->memory, kErrorDynamicOverflow,
               "dynamic SNode: index at or past the declared size", i);
}

}  // namespace

i32 Dynamic_get_num_elements(Ptr, Ptr node) { return Dynamic_length(dnode(node)); }

void Dynamic_activate(Ptr meta, Ptr node_ptr, i32 i) {
  DynamicMeta* m = dmeta(meta);
  DynamicNode* node = dnode(node_ptr);
  if (i < 0 || i >= m->base.max_num_elements) {
    report_overflow(m, i);
    return;
  }
  if (i < Dynamic_length(node)) return;
  mutex_lock_i32(&node->lock);
  if (ensure_chunks_locked(m, node, Dynamic_chunk_of(m, i)) != nullptr) {
    // Raise n to i + 1 (appends may advance it concurrently; the generation is kept).
    u64 s = atomic_load_acquire(&node->state);
    while (static_cast<i32>(s & kLengthMask) <= i &&
           !atomic_cas(&node->state, &s, (s & ~kLengthMask) | static_cast<u64>(i + 1))) {
    }
    StructMeta_mark_changed(&m->base);
  }
  mutex_unlock_i32(&node->lock);
}

Ptr Dynamic_allocate(Ptr meta, Ptr node_ptr, i32* len) {
  DynamicMeta* m = dmeta(meta);
  DynamicNode* node = dnode(node_ptr);
  for (;;) {
    u64 s = atomic_load_acquire(&node->state);
    const i32 i = static_cast<i32>(s & kLengthMask);
    if (i >= m->base.max_num_elements) {
      *len = i;
      report_overflow(m, i);
      return nullptr;
    }
    // Fast path: the tail chunk holds slot i. The state is loaded before the tail, and
    // deactivation nulls the tail before it bumps the generation, so a tail read here either
    // belongs to the list of state s or makes the CAS below fail.
    Ptr tail = atomic_load_acquire(&node->tail);
    if (tail != nullptr && *chunk_index(tail) == Dynamic_chunk_of(m, i)) {
      if (atomic_cas(&node->state, &s, s + 1)) {
        StructMeta_mark_changed(&m->base);
        *len = i;
        return cell_in_chunk(m, tail, i);
      }
      continue;
    }
    // Slow path: extend the list so that the chunk of the current length exists, then retry.
    mutex_lock_i32(&node->lock);
    const i32 n = Dynamic_length(node);
    const bool ok = n >= m->base.max_num_elements ||
                    ensure_chunks_locked(m, node, Dynamic_chunk_of(m, n)) != nullptr;
    mutex_unlock_i32(&node->lock);
    if (!ok) {
      *len = n;
      return nullptr;  // allocator error recorded
    }
  }
}

void Dynamic_deactivate(Ptr meta, Ptr node_ptr) {
  DynamicMeta* m = dmeta(meta);
  DynamicNode* node = dnode(node_ptr);
  if (Dynamic_length(node) == 0 && Dynamic_first_chunk(node) == nullptr) return;
  NodeManager* nm = runtime_node_manager(m->base.context, m->base.snode_id);
  mutex_lock_i32(&node->lock);
  Ptr chunk = atomic_load_relaxed(&node->ptr);
  atomic_store_release(&node->tail, static_cast<Ptr>(nullptr));
  atomic_store_release(&node->num_chunks, 0);
  atomic_store_release(&node->ptr, static_cast<Ptr>(nullptr));
  u64 s = atomic_load_relaxed(&node->state);
  while (!atomic_cas(&node->state, &s, (s & ~kLengthMask) + kGeneration)) {
  }
  StructMeta_mark_changed(&m->base);
  while (chunk != nullptr) {
    // The chunk is only zeroed by the next GC, so its link is still readable after recycling.
    Ptr next = atomic_load_relaxed(next_link(chunk));
    nm->recycle(chunk);
    chunk = next;
  }
  mutex_unlock_i32(&node->lock);
}

bool Dynamic_is_active(Ptr, Ptr node, i32 i) { return i >= 0 && i < Dynamic_length(dnode(node)); }

Ptr Dynamic_lookup_element(Ptr meta, Ptr node_ptr, i32 i) {
  DynamicMeta* m = dmeta(meta);
  DynamicNode* node = dnode(node_ptr);
  if (i >= 0 && i < Dynamic_length(node)) {
    Ptr chunk = Dynamic_first_chunk(node);
    for (i32 c = Dynamic_chunk_of(m, i); c > 0 && chunk != nullptr; --c)
      chunk = Dynamic_next_chunk(chunk);
    if (chunk != nullptr) return cell_in_chunk(m, chunk, i);
  }
  return runtime_ambient_element(m->base.context, m->base.snode_id);
}

i32 Dynamic_num_chunks(Ptr, Ptr node) {
  i32 count = 0;
  for (Ptr chunk = Dynamic_first_chunk(dnode(node)); chunk != nullptr;
       chunk = Dynamic_next_chunk(chunk)) {
    ++count;
  }
  return count;
}

}  // namespace sparse_runtime
}  // namespace accelmem
