// File: sparse_runtime/device/snode_dense.h
//
// `dense` SNode functions (upstream node_dense.h): a container of max_num_elements cells back to
// back (stride element_size), always active.
//
// Freestanding C++17 (see arch.h).
#ifndef ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_DENSE_H_
#define ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_DENSE_H_

#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/struct_meta.h"

namespace accelmem {
namespace sparse_runtime {

struct DenseMeta {
  StructMeta base;
  i32 morton_dim;  // vestigial upstream (always 0); kept for layout parity
};

// Inline forms over a meta view (struct_meta.h): with StaticMeta the stride is a constant.
template <typename M>
ACCELMEM_RT_INLINE Ptr Dense_lookup_element_inline(const M& m, Ptr node, i32 i) {
  return node + m.element_size() * static_cast<u64>(i);
}
template <typename M>
ACCELMEM_RT_INLINE bool Dense_is_active_inline(const M&, Ptr, i32) {
  return true;
}
template <typename M>
ACCELMEM_RT_INLINE void Dense_activate_inline(const M&, Ptr, i32) {}

// The out-of-line entry points (Dense_lookup_element is inline as well; its address is still
// that of one function).
i32 Dense_get_num_elements(Ptr meta, Ptr node);
void Dense_activate(Ptr meta, Ptr node, i32 i);
bool Dense_is_active(Ptr meta, Ptr node, i32 i);
ACCELMEM_RT_INLINE Ptr Dense_lookup_element(Ptr meta, Ptr node, i32 i) {
  return Dense_lookup_element_inline(RuntimeMeta{meta}, node, i);
}

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_DENSE_H_
