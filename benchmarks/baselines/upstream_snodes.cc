#include "benchmarks/baselines/upstream_snodes.h"

#define UPSTREAM_NOINLINE __attribute__((noinline))

namespace accelmem {
namespace baselines {
namespace {

UpstreamStructMeta* smeta(Ptr meta) { return reinterpret_cast<UpstreamStructMeta*>(meta); }
UpstreamNodeManager* allocator_of(Ptr meta) {
  UpstreamStructMeta* m = smeta(meta);
  return m->context->runtime->node_allocators[m->snode_id];
}
Ptr ambient_of(Ptr meta) {
  UpstreamStructMeta* m = smeta(meta);
  return m->context->runtime->ambient_elements[m->snode_id];
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// pointer
UPSTREAM_NOINLINE int32_t UpstreamPointer_get_num_elements(Ptr meta, Ptr) {
  return static_cast<int32_t>(smeta(meta)->max_num_elements);
}

UPSTREAM_NOINLINE void UpstreamPointer_activate(Ptr meta, Ptr node, int32_t i) {
  const int64_t n = smeta(meta)->max_num_elements;
  int32_t* lock = reinterpret_cast<int32_t*>(node + 8 * static_cast<int64_t>(i));
  Ptr* data = reinterpret_cast<Ptr*>(node + 8 * (n + i));
  if (*reinterpret_cast<Ptr volatile*>(data) == nullptr) {
    UpstreamLock(lock);
    if (__atomic_load_n(data, __ATOMIC_RELAXED) == nullptr) {
      (void)__atomic_exchange_n(data, allocator_of(meta)->allocate(), __ATOMIC_SEQ_CST);
    }
    UpstreamUnlock(lock);
  }
}

UPSTREAM_NOINLINE void UpstreamPointer_deactivate(Ptr meta, Ptr node, int32_t i) {
  const int64_t n = smeta(meta)->max_num_elements;
  int32_t* lock = reinterpret_cast<int32_t*>(node + 8 * static_cast<int64_t>(i));
  Ptr* data = reinterpret_cast<Ptr*>(node + 8 * (n + i));
  if (*data != nullptr) {
    UpstreamLock(lock);
    if (*data != nullptr) {
      allocator_of(meta)->recycle(*data);
      *data = nullptr;
    }
    UpstreamUnlock(lock);
  }
}

UPSTREAM_NOINLINE bool UpstreamPointer_is_active(Ptr meta, Ptr node, int32_t i) {
  const int64_t n = smeta(meta)->max_num_elements;
  return *reinterpret_cast<Ptr*>(node + 8 * (n + i)) != nullptr;
}

UPSTREAM_NOINLINE Ptr UpstreamPointer_lookup_element(Ptr meta, Ptr node, int32_t i) {
  const int64_t n = smeta(meta)->max_num_elements;
  Ptr p = *reinterpret_cast<Ptr*>(node + 8 * (n + i));
  return p != nullptr ? p : ambient_of(meta);
}

// ---------------------------------------------------------------------------------------------
// dense
UPSTREAM_NOINLINE Ptr UpstreamDense_lookup_element(Ptr meta, Ptr node, int32_t i) {
  return node + smeta(meta)->element_size * static_cast<std::size_t>(i);
}

// ---------------------------------------------------------------------------------------------
// bitmasked
namespace {
uint32_t* mask_begin(Ptr meta, Ptr node) {
  UpstreamStructMeta* m = smeta(meta);
  return reinterpret_cast<uint32_t*>(node + m->element_size *
                                                static_cast<std::size_t>(m->max_num_elements));
}
}  // namespace

UPSTREAM_NOINLINE void UpstreamBitmasked_activate(Ptr meta, Ptr node, int32_t i) {
  __atomic_fetch_or(&mask_begin(meta, node)[i / 32], uint32_t{1} << (i % 32), __ATOMIC_SEQ_CST);
}

UPSTREAM_NOINLINE void UpstreamBitmasked_deactivate(Ptr meta, Ptr node, int32_t i) {
  __atomic_fetch_and(&mask_begin(meta, node)[i / 32], ~(uint32_t{1} << (i % 32)), __ATOMIC_SEQ_CST);
}

UPSTREAM_NOINLINE bool UpstreamBitmasked_is_active(Ptr meta, Ptr node, int32_t i) {
  return ((mask_begin(meta, node)[i / 32] >> (i % 32)) & 1) != 0;
}

UPSTREAM_NOINLINE Ptr UpstreamBitmasked_lookup_element(Ptr meta, Ptr node, int32_t i) {
  return node + smeta(meta)->element_size * static_cast<std::size_t>(i);
}

// ---------------------------------------------------------------------------------------------
// dynamic
namespace {
UpstreamDynamicMeta* dmeta(Ptr meta) { return reinterpret_cast<UpstreamDynamicMeta*>(meta); }
UpstreamDynamicNode* dnode(Ptr node) { return reinterpret_cast<UpstreamDynamicNode*>(node); }
}  // namespace

UPSTREAM_NOINLINE void UpstreamDynamic_activate(Ptr meta, Ptr node_ptr, int32_t i) {
  UpstreamDynamicNode* node = dnode(node_ptr);
  // Raise n to i + 1 (upstream's atomic_max_i32).
  int32_t n = __atomic_load_n(&node->n, __ATOMIC_RELAXED);
  while (n < i + 1 && !__atomic_compare_exchange_n(&node->n, &n, i + 1, false, __ATOMIC_SEQ_CST,
                                                   __ATOMIC_RELAXED)) {
  }
  const int32_t chunk_size = dmeta(meta)->chunk_size;
  UpstreamNodeManager* allocator = allocator_of(meta);
  int32_t chunk_start = 0;
  Ptr* link = &node->ptr;
  for (;;) {
    if (__atomic_load_n(link, __ATOMIC_ACQUIRE) == nullptr) {
      UpstreamLock(&node->lock);
      if (__atomic_load_n(link, __ATOMIC_ACQUIRE) == nullptr) {
        __atomic_store_n(link, allocator->allocate(), __ATOMIC_RELEASE);
      }
      UpstreamUnlock(&node->lock);
    }
    if (i < chunk_start + chunk_size) return;
    link = reinterpret_cast<Ptr*>(*link);
    chunk_start += chunk_size;
  }
}

UPSTREAM_NOINLINE void UpstreamDynamic_deactivate(Ptr meta, Ptr node_ptr) {
  UpstreamDynamicNode* node = dnode(node_ptr);
  if (node->n <= 0) return;
  UpstreamLock(&node->lock);
  node->n = 0;
  UpstreamNodeManager* allocator = allocator_of(meta);
  Ptr* link = &node->ptr;
  while (*link != nullptr) {
    allocator->recycle(*link);
    link = reinterpret_cast<Ptr*>(*link);  // the chunk stays readable until the next GC
  }
  node->ptr = nullptr;
  UpstreamUnlock(&node->lock);
}

UPSTREAM_NOINLINE bool UpstreamDynamic_is_active(Ptr, Ptr node, int32_t i) {
  return i < dnode(node)->n;
}

UPSTREAM_NOINLINE Ptr UpstreamDynamic_lookup_element(Ptr meta, Ptr node_ptr, int32_t i) {
  if (!UpstreamDynamic_is_active(meta, node_ptr, i)) return ambient_of(meta);
  UpstreamDynamicMeta* m = dmeta(meta);
  int32_t chunk_start = 0;
  Ptr chunk = dnode(node_ptr)->ptr;
  while (i >= chunk_start + m->chunk_size) {
    chunk = *reinterpret_cast<Ptr*>(chunk);
    chunk_start += m->chunk_size;
  }
  return chunk + sizeof(Ptr) + m->base.element_size * static_cast<std::size_t>(i - chunk_start);
}

UPSTREAM_NOINLINE int32_t UpstreamDynamic_get_num_elements(Ptr, Ptr node) {
  return __atomic_load_n(&dnode(node)->n, __ATOMIC_ACQUIRE);
}

UPSTREAM_NOINLINE int32_t UpstreamDynamic_append(Ptr meta, Ptr node, int32_t data) {
  const int32_t me = __atomic_fetch_add(&dnode(node)->n, 1, __ATOMIC_SEQ_CST);
  UpstreamDynamic_activate(meta, node, me);
  *reinterpret_cast<int32_t*>(UpstreamDynamic_lookup_element(meta, node, me)) = data;
  return me;
}

}  // namespace baselines
}  // namespace accelmem
