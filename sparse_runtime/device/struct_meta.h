// File: sparse_runtime/device/struct_meta.h
//
// StructMeta: the common prefix of every SNode kind's meta struct (upstream runtime.cpp
// StructMeta). Every X_* function takes `(Ptr meta, Ptr node, ...)`
// where `meta` points at a kind-specific meta struct whose first member is a StructMeta, and
// `node` is the container. Kind metas are standard-layout structs with `StructMeta base` first, so
// a kind meta pointer is a valid StructMeta pointer.
//
// Fields as upstream (snode_id, element_size = cell stride, max_num_elements = cells per
// container, the kind's lookup/is_active/get_num_elements functions, the runtime context), plus
// `offset_in_parent_cell` (upstream computes it in the per-tree `get_ch_*` functions that
// `from_parent_element` points to; kept for codegen, optional here). `refine_coordinates` is done
// by the host walker (and by generated code later) and is not part of the meta.
//
// Freestanding C++17 (see arch.h).
#ifndef ACCELMEM_SPARSE_RUNTIME_DEVICE_STRUCT_META_H_
#define ACCELMEM_SPARSE_RUNTIME_DEVICE_STRUCT_META_H_

#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/runtime_context.h"

namespace accelmem {
namespace sparse_runtime {

using LookupElementFn = Ptr (*)(Ptr meta, Ptr node, i32 i);
using FromParentElementFn = Ptr (*)(Ptr parent_cell);
using IsActiveFn = bool (*)(Ptr meta, Ptr node, i32 i);
using GetNumElementsFn = i32 (*)(Ptr meta, Ptr node);

struct StructMeta {
  i32 snode_id;
  // Set (to 1) whenever the SNode's set of active cells changes, or a dynamic SNode's length:
  // by StructMeta_mark_changed, from every activation that installs a cell and every
  // deactivation that removes one, on any path (host API, JIT kernels, GPU). The host reads and
  // clears it to know when a struct-for may reuse its element lists (SparseRuntime's list cache).
  // In the padding after snode_id: no other member moves.
  u32 structure_changed;
  u64 element_size;
  i64 max_num_elements;
  LookupElementFn lookup_element;
  FromParentElementFn from_parent_element;  // optional; null: parent_cell + offset_in_parent_cell
  IsActiveFn is_active;
  GetNumElementsFn get_num_elements;
  RuntimeContext* context;
  u64 offset_in_parent_cell;
};

// The container of this SNode inside a cell of its parent.
ACCELMEM_RT_INLINE Ptr StructMeta_from_parent(const StructMeta* meta, Ptr parent_cell) {
  return meta->from_parent_element != nullptr ? meta->from_parent_element(parent_cell)
                                              : parent_cell + meta->offset_in_parent_cell;
}

ACCELMEM_RT_INLINE StructMeta* as_struct_meta(Ptr meta) {
  return reinterpret_cast<StructMeta*>(meta);
}

// Records that `meta`'s SNode changed structure (see StructMeta::structure_changed); called after
// the store or read-modify-write that made the change. The host's list builder
// (SparseRuntime::ListGen) exchanges the flag to 0, then runs the heavy fence
// (sparse_runtime/asymmetric_fence.h), then walks the tree; here the light fence
// (asymmetric_fence_light), a load, and a store of 1 only if the load read 0.
//
// Why the fence pair. Without it the mark can be lost: the change's store may still sit in this
// CPU's store buffer while the load reads an older 1 that a builder is about to clear, and the
// builder then walks without the change and leaves the flag 0, so every later struct-for reuses
// the stale list (struct_meta_model_test finds that interleaving). With it, if this thread's light
// fence precedes the heavy fence the walk sees the change; otherwise the load reads the builder's
// 0 (or a later mark) and the flag is set again. Why not an exchange, or a seq_cst fence before
// the load: either is a locked instruction or MFENCE on every activation and deactivation,
// including the two designed to have none (bitmasked activation, owned pointer deactivation),
// where the heavy fence costs one system call per list rebuilt after a change. The store may be
// relaxed: the builder's exchange needs no synchronization with it (the fences order the change),
// and on CUDA it saves a fence (the host reads the flag there only between kernels). The load
// first keeps the meta's line shared between threads while the flag stays set.
ACCELMEM_RT_INLINE void StructMeta_mark_changed(const StructMeta* meta) {
  u32* flag = const_cast<u32*>(&meta->structure_changed);
  asymmetric_fence_light();
  if (__builtin_expect(atomic_load_relaxed(flag) == 0, 0)) atomic_store_relaxed(flag, u32{1});
}

// Meta views. The header-inline fast paths of the SNode kinds (`X_op_inline` in snode_*.h) read
// a meta's shape through a view, so that one body serves two kinds of caller:
//
//   RuntimeMeta{meta}                every field is loaded from the StructMeta at run time (what
//                                    the out-of-line X_* entry points use);
//   StaticMeta<N, S>{meta}           max_num_elements = N and element_size = S are compile-time
//                                    constants, so slot and mask addresses fold into the caller's
//                                    address arithmetic (what a kernel gets once LLVM has
//                                    inlined the runtime into it with a constant meta).
//
// Both keep the StructMeta pointer: the slow paths (allocation under the lock, the ambient
// element of an inactive pointer cell) still need the runtime context and the SNode id.
struct RuntimeMeta {
  Ptr meta;
  ACCELMEM_RT_INLINE const StructMeta* base() const { return as_struct_meta(meta); }
  ACCELMEM_RT_INLINE i64 max_num_elements() const { return base()->max_num_elements; }
  ACCELMEM_RT_INLINE u64 element_size() const { return base()->element_size; }
};

template <i64 kMaxNumElements, u64 kElementSize>
struct StaticMeta {
  static_assert(kMaxNumElements > 0, "an SNode has at least one cell per container");
  Ptr meta;
  ACCELMEM_RT_INLINE const StructMeta* base() const { return as_struct_meta(meta); }
  static constexpr i64 max_num_elements() { return kMaxNumElements; }
  static constexpr u64 element_size() { return kElementSize; }
  // Whether the constants agree with the StructMeta (for callers that bind one at run time).
  ACCELMEM_RT_INLINE bool matches() const {
    return base()->max_num_elements == kMaxNumElements && base()->element_size == kElementSize;
  }
};

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_DEVICE_STRUCT_META_H_
