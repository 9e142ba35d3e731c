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

// Records that `meta`'s SNode changed structure (see StructMeta::structure_changed). A load before
// the store: while the flag stays set, the meta's cache line stays shared between threads.
ACCELMEM_RT_INLINE void StructMeta_mark_changed(const StructMeta* meta) {
  u32* flag = const_cast<u32*>(&meta->structure_changed);
  if (atomic_load_relaxed(flag) == 0) atomic_store_release(flag, u32{1});
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
