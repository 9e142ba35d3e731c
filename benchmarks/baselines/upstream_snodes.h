// File: benchmarks/baselines/upstream_snodes.h
//
// Benchmark-only re-implementations of the SNode functions of Taichi's LLVM runtime
// (https://github.com/taichi-dev/taichi/tree/master/taichi/runtime/llvm/runtime_module: node_*.h
// and runtime.cpp), the baselines for accelmem's sparse_runtime/snode_*.h. Upstream's layouts and
// algorithms, kept as they are:
//
//   StructMeta     snode_id, element_size, max_num_elements, the kind's function pointers, and
//                  the runtime context; a function reaches the node allocator and the ambient
//                  element of its SNode through meta->context->runtime->...[snode_id].
//   pointer        container = i64 lock[n] then Ptr data[n]. activate(i): if data[i] is null,
//                  lock i (spin on an atomic exchange), test again, data[i] = allocate() (atomic
//                  exchange), unlock. deactivate(i): if data[i] is not null, lock i, test again,
//                  recycle(data[i]) (the allocator's linear ptr2index scan), data[i] = null,
//                  unlock. is_active(i) = data[i] != null. lookup(i) = data[i], or the ambient
//                  element when null.
//   dense          lookup(i) = node + element_size * i; always active.
//   bitmasked      cells at node, then u32 mask words at node + element_size * n; activate =
//                  atomic OR (unconditional), deactivate = atomic AND, is_active = bit test,
//                  lookup(i) = node + element_size * i.
//   dynamic        DynamicNode {i32 lock; i32 n; Ptr ptr}, chunks of [next Ptr][chunk_size cells]
//                  (node size 8 + chunk_size * element_size). append(data): me = atomic_add(n, 1),
//                  activate(me) (walk the list from the head, allocating missing chunks under the
//                  lock, until the chunk holding `me`), store data at lookup(me) (another walk
//                  from the head). get_num_elements = n. deactivate: under the lock n = 0, recycle
//                  every chunk, ptr = null.
//
// Two forms of each lookup: the `Upstream*` functions declared here are defined out of line in
// upstream_snodes.cc and marked noinline, so every call reads the meta from memory (the cost of a
// call from host code or a non-inlined kernel); the `UpstreamInlined*` templates take the meta's
// constants as template arguments and are inlined, as upstream's code generator gets them after
// LLVM inlines the runtime functions into a kernel with a constant meta.
#ifndef ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_SNODES_H_
#define ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_SNODES_H_

#include <cstdint>

#include "benchmarks/baselines/upstream_list_manager.h"
#include "benchmarks/baselines/upstream_node_manager.h"

namespace accelmem {
namespace baselines {

struct UpstreamRuntime {
  static constexpr int kMaxNumSNodes = 1024;
  UpstreamNodeManager* node_allocators[kMaxNumSNodes] = {};
  Ptr ambient_elements[kMaxNumSNodes] = {};
};

struct UpstreamRuntimeContext {
  UpstreamRuntime* runtime = nullptr;
};

struct UpstreamStructMeta {
  int32_t snode_id = 0;
  std::size_t element_size = 0;
  int64_t max_num_elements = 0;
  void* lookup_element = nullptr;  // the kind's functions (unused by these baselines)
  void* from_parent_element = nullptr;
  void* is_active = nullptr;
  void* get_num_elements = nullptr;
  void* refine_coordinates = nullptr;
  UpstreamRuntimeContext* context = nullptr;
};

struct UpstreamDynamicMeta {
  UpstreamStructMeta base;
  int32_t chunk_size = 0;
};

struct UpstreamDynamicNode {
  int32_t lock;
  int32_t n;
  Ptr ptr;
};

// Bytes of a container.
inline std::size_t UpstreamPointerContainerBytes(int64_t n) { return 16 * static_cast<size_t>(n); }
inline std::size_t UpstreamBitmaskedContainerBytes(std::size_t element_size, int64_t n) {
  return element_size * static_cast<std::size_t>(n) + 4 * static_cast<std::size_t>((n + 31) / 32);
}
// The node size of a dynamic SNode's chunks (the size to give its UpstreamNodeManager).
inline std::size_t UpstreamDynamicChunkBytes(std::size_t element_size, int32_t chunk_size) {
  return sizeof(Ptr) + element_size * static_cast<std::size_t>(chunk_size);
}

// --- out of line (noinline; the meta is read from memory on every call) ---
int32_t UpstreamPointer_get_num_elements(Ptr meta, Ptr node);
void UpstreamPointer_activate(Ptr meta, Ptr node, int32_t i);
void UpstreamPointer_deactivate(Ptr meta, Ptr node, int32_t i);
bool UpstreamPointer_is_active(Ptr meta, Ptr node, int32_t i);
Ptr UpstreamPointer_lookup_element(Ptr meta, Ptr node, int32_t i);

Ptr UpstreamDense_lookup_element(Ptr meta, Ptr node, int32_t i);

void UpstreamBitmasked_activate(Ptr meta, Ptr node, int32_t i);
void UpstreamBitmasked_deactivate(Ptr meta, Ptr node, int32_t i);
bool UpstreamBitmasked_is_active(Ptr meta, Ptr node, int32_t i);
Ptr UpstreamBitmasked_lookup_element(Ptr meta, Ptr node, int32_t i);

void UpstreamDynamic_activate(Ptr meta, Ptr node, int32_t i);
void UpstreamDynamic_deactivate(Ptr meta, Ptr node);
bool UpstreamDynamic_is_active(Ptr meta, Ptr node, int32_t i);
Ptr UpstreamDynamic_lookup_element(Ptr meta, Ptr node, int32_t i);
int32_t UpstreamDynamic_get_num_elements(Ptr meta, Ptr node);
int32_t UpstreamDynamic_append(Ptr meta, Ptr node, int32_t data);

// --- inlined (the meta's constants known at compile time) ---
template <int64_t kNumElements>
struct UpstreamInlinedPointer {
  static inline Ptr* slot(Ptr node, int32_t i) {
    return reinterpret_cast<Ptr*>(node + 8 * (kNumElements + static_cast<int64_t>(i)));
  }
  static inline bool is_active(Ptr node, int32_t i) { return *slot(node, i) != nullptr; }
  static inline Ptr lookup_element(Ptr node, int32_t i, Ptr ambient) {
    Ptr p = *slot(node, i);
    return p != nullptr ? p : ambient;
  }
  static inline void activate(Ptr node, int32_t i, UpstreamNodeManager* allocator) {
    Ptr* data = slot(node, i);
    if (__atomic_load_n(data, __ATOMIC_RELAXED) != nullptr) return;
    int32_t* lock = reinterpret_cast<int32_t*>(node + 8 * static_cast<int64_t>(i));
    UpstreamLock(lock);
    if (__atomic_load_n(data, __ATOMIC_RELAXED) == nullptr) {
      (void)__atomic_exchange_n(data, allocator->allocate(), __ATOMIC_SEQ_CST);
    }
    UpstreamUnlock(lock);
  }
};

template <std::size_t kElementSize>
struct UpstreamInlinedDense {
  static inline Ptr lookup_element(Ptr node, int32_t i) {
    return node + kElementSize * static_cast<std::size_t>(i);
  }
};

template <std::size_t kElementSize, int64_t kNumElements>
struct UpstreamInlinedBitmasked {
  static inline uint32_t* mask(Ptr node) {
    return reinterpret_cast<uint32_t*>(node + kElementSize * kNumElements);
  }
  static inline void activate(Ptr node, int32_t i) {
    __atomic_fetch_or(&mask(node)[i / 32], uint32_t{1} << (i % 32), __ATOMIC_SEQ_CST);
  }
  static inline bool is_active(Ptr node, int32_t i) {
    return ((mask(node)[i / 32] >> (i % 32)) & 1) != 0;
  }
  static inline Ptr lookup_element(Ptr node, int32_t i) {
    return node + kElementSize * static_cast<std::size_t>(i);
  }
};

}  // namespace baselines
}  // namespace accelmem

#endif  // ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_SNODES_H_
