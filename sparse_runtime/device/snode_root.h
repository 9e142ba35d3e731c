// File: sparse_runtime/device/snode_root.h
//
// `root` SNode functions (upstream node_root.h): the root container is one cell, always active.
//
// Freestanding C++17 (see arch.h).
#ifndef ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_ROOT_H_
#define ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_ROOT_H_

#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/struct_meta.h"

namespace accelmem {
namespace sparse_runtime {

struct RootMeta {
  StructMeta base;
  i32 tag;
};

i32 Root_get_num_elements(Ptr meta, Ptr node);
void Root_activate(Ptr meta, Ptr node, i32 i);
bool Root_is_active(Ptr meta, Ptr node, i32 i);
Ptr Root_lookup_element(Ptr meta, Ptr node, i32 i);

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_ROOT_H_
