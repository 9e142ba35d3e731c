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

i32 Dense_get_num_elements(Ptr meta, Ptr node);
void Dense_activate(Ptr meta, Ptr node, i32 i);
bool Dense_is_active(Ptr meta, Ptr node, i32 i);
ACCELMEM_RT_INLINE Ptr Dense_lookup_element(Ptr meta, Ptr node, i32 i) {
  return node + as_struct_meta(meta)->element_size * static_cast<u64>(i);
}

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_DENSE_H_
