#include "sparse_runtime/snode_dynamic.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

ACCELMEM_RT_INLINE DynamicMeta* dmeta(Ptr meta) { return reinterpret_cast<DynamicMeta*>(meta); }
ACCELMEM_RT_INLINE DynamicNode* dnode(Ptr node) { return reinterpret_cast<DynamicNode*>(node); }
ACCELMEM_RT_INLINE Ptr* next_link(Ptr chunk) { return reinterpret_cast<Ptr*>(chunk); }

ACCELMEM_RT_INLINE Ptr cell_in_chunk(const DynamicMeta* m, Ptr chunk, i32 i) {
  return chunk + m->chunk_header + m->base.element_size * static_cast<u64>(i % m->chunk_size);
}

// With the container lock held: makes chunks 0..c exist and returns chunk c (null on error).
// Chunks below num_chunks exist; the walk starts at the tail when c is at or past it, so appends
// are O(1) (upstream walks the whole list on every append).
Ptr ensure_chunks_locked(DynamicMeta* m, DynamicNode* node, i32 c) {
  i32 k = 0;
  Ptr* link = &node->ptr;
  Ptr chunk = nullptr;
  if (node->num_chunks > 0 && c >= node->num_chunks - 1) {
    k = node->num_chunks - 1;
    chunk = node->tail;
    if (c == k) return chunk;
    link = next_link(chunk);
    ++k;
  }
  for (; k <= c; ++k) {
    chunk = atomic_load_relaxed(link);
    if (chunk == nullptr) {
      chunk = runtime_node_manager(m->base.context, m->base.snode_id)->allocate();
      if (chunk == nullptr) return nullptr;
      atomic_store_release(link, chunk);
      node->tail = chunk;
      node->num_chunks = k + 1;
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

i32 Dynamic_get_num_elements(Ptr, Ptr node) { return atomic_load_acquire(&dnode(node)->n); }

void Dynamic_activate(Ptr meta, Ptr node_ptr, i32 i) {
  DynamicMeta* m = dmeta(meta);
  DynamicNode* node = dnode(node_ptr);
  if (i < 0 || i >= m->base.max_num_elements) {
    report_overflow(m, i);
    return;
  }
  if (i < atomic_load_acquire(&node->n)) return;
  mutex_lock_i32(&node->lock);
  if (i >= atomic_load_relaxed(&node->n) && ensure_chunks_locked(m, node, i / m->chunk_size)) {
    atomic_store_release(&node->n, i + 1);
  }
  mutex_unlock_i32(&node->lock);
}

Ptr Dynamic_allocate(Ptr meta, Ptr node_ptr, i32* len) {
  DynamicMeta* m = dmeta(meta);
  DynamicNode* node = dnode(node_ptr);
  mutex_lock_i32(&node->lock);
  const i32 i = atomic_load_relaxed(&node->n);
  *len = i;
  if (i >= m->base.max_num_elements) {
    mutex_unlock_i32(&node->lock);
    report_overflow(m, i);
    return nullptr;
  }
  Ptr chunk = ensure_chunks_locked(m, node, i / m->chunk_size);
  if (chunk != nullptr) atomic_store_release(&node->n, i + 1);
  mutex_unlock_i32(&node->lock);
  return chunk == nullptr ? nullptr : cell_in_chunk(m, chunk, i);
}

void Dynamic_deactivate(Ptr meta, Ptr node_ptr) {
  DynamicMeta* m = dmeta(meta);
  DynamicNode* node = dnode(node_ptr);
  if (atomic_load_acquire(&node->n) == 0 && atomic_load_acquire(&node->ptr) == nullptr) return;
  NodeManager* nm = runtime_node_manager(m->base.context, m->base.snode_id);
  mutex_lock_i32(&node->lock);
  atomic_store_release(&node->n, 0);
  Ptr chunk = atomic_load_relaxed(&node->ptr);
  atomic_store_release(&node->ptr, static_cast<Ptr>(nullptr));
  node->tail = nullptr;
  node->num_chunks = 0;
  while (chunk != nullptr) {
    // The chunk is only zeroed by the next GC, so its link is still readable after recycling.
    Ptr next = atomic_load_relaxed(next_link(chunk));
    nm->recycle(chunk);
    chunk = next;
  }
  mutex_unlock_i32(&node->lock);
}

bool Dynamic_is_active(Ptr, Ptr node, i32 i) {
  return i >= 0 && i < atomic_load_acquire(&dnode(node)->n);
}

Ptr Dynamic_lookup_element(Ptr meta, Ptr node_ptr, i32 i) {
  DynamicMeta* m = dmeta(meta);
  DynamicNode* node = dnode(node_ptr);
  if (i >= 0 && i < atomic_load_acquire(&node->n)) {
    Ptr chunk = atomic_load_acquire(&node->ptr);
    for (i32 c = i / m->chunk_size; c > 0 && chunk != nullptr; --c) {
      chunk = atomic_load_acquire(next_link(chunk));
    }
    if (chunk != nullptr) return cell_in_chunk(m, chunk, i);
  }
  return runtime_ambient_element(m->base.context, m->base.snode_id);
}

i32 Dynamic_num_chunks(Ptr, Ptr node) {
  i32 count = 0;
  for (Ptr chunk = atomic_load_acquire(&dnode(node)->ptr); chunk != nullptr;
       chunk = atomic_load_acquire(next_link(chunk))) {
    ++count;
  }
  return count;
}

}  // namespace sparse_runtime
}  // namespace accelmem
