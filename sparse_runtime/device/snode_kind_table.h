// File: sparse_runtime/device/snode_kind_table.h
//
// The one table of SNode kinds: a row per kind, in SNodeType order. Everything that used to be
// restated per kind is generated from it: the SNodeType enum and the kinds' names, IsSparse and
// HasAllocator (sparse_runtime/snode_tree.cc), the host runtime's meta union (MetaStorage in
// runtime/sparse_runtime.h) and its dispatch over kinds (WithKind in
// runtime/internal/snode_kinds.h), the kernel ABI's cell functions (kernel_abi/kernel_abi.h and
// .cc) and codegen's CellFunction, the CUDA runtime's meta size and Python's builder switch. It
// also includes every kind's header, so that one include gives a user every row's types and
// functions. What differs between kinds and cannot be a row (layout, the traits structs of
// runtime/internal/snode_kinds.h, a kind's extra kernel entries) stays hand-written beside them.
//
// Freestanding C++17 (included by device code, kernel_abi/kernel_abi.h, and by host code).
//
// X(Kind, kind, Meta, flags, cells, deactivate, builder):
//   Kind        the CamelCase name: SNodeType::k##Kind, the device functions Kind##_activate ...,
//               the kernel entries accelmem_##Kind##_..., the host traits Kind##Kind;
//   kind        the lower-case name: SNodeTypeName and Python's SNode.type, the builder method,
//               the MetaStorage member;
//   Meta        the meta struct (StructMeta first); a place has a bare StructMeta;
//   flags       kSNodeSparse (cells can be (de)activated) | kSNodeAllocator (cells come from a
//               NodeManager and need GC), or 0;
//   cells       how a generated kernel reaches one cell of a container:
//                 CELLS_INLINE  address arithmetic, no runtime call (root, dense);
//                 CELLS_CALLED  the kernel entries accelmem_Kind_activate, _is_active and
//                               _lookup_element, forwarding to Kind_activate ...;
//                 CELLS_NONE    a place has no cells of its own;
//   deactivate  what the kind's deactivation takes, for its kernel entry accelmem_Kind_deactivate:
//                 DEACTIVATES_CELL  bool Kind_deactivate(meta, node, i): one cell (CellOp's
//                                   kDeactivate of codegen);
//                 DEACTIVATES_LIST  void Kind_deactivate(meta, node): the whole container (a
//                                   dynamic list; kernels call it themselves, no CellOp);
//                 DEACTIVATES_NONE  cells are always active;
//   builder     the builder's shape, for Python's binding:
//                 BUILDER_AXES  SNode::kind(axes, sizes), bound as is;
//                 BUILDER_OWN   a signature of its own, bound by hand (dynamic, place);
//                 BUILDER_NONE  no builder (the root).
// The token columns (cells, deactivate, builder) select code by pasting: a user pastes the value
// into a helper's name (ACCELMEM_KERNEL_##cells##_ in kernel_abi.h) and defines one helper per
// value, so a new value needs a helper in each such user (the build fails where one is missing).
// A kind's extra kernel entries (pointer's cached and view functions, dynamic's allocate and
// length) are listed by hand in ACCELMEM_KERNEL_ENTRY_POINTS.
//
// The rows' order is SNodeType's, whose values are compared and may be persisted: a new kind is
// appended after the last row, never inserted.
#ifndef ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_KIND_TABLE_H_
#define ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_KIND_TABLE_H_

#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/snode_bitmasked.h"
#include "sparse_runtime/device/snode_dense.h"
#include "sparse_runtime/device/snode_dynamic.h"
#include "sparse_runtime/device/snode_pointer.h"
#include "sparse_runtime/device/snode_root.h"
#include "sparse_runtime/device/struct_meta.h"

// clang-format off
#define ACCELMEM_SNODE_KINDS_WITH(X, A)                                                            \
  X(A, Root,      root,      RootMeta,      0,                              CELLS_INLINE,        \
    DEACTIVATES_NONE, BUILDER_NONE)                                                                \
  X(A, Dense,     dense,     DenseMeta,     0,                              CELLS_INLINE,        \
    DEACTIVATES_NONE, BUILDER_AXES)                                                                \
  X(A, Bitmasked, bitmasked, BitmaskedMeta, kSNodeSparse,                   CELLS_CALLED,        \
    DEACTIVATES_CELL, BUILDER_AXES)                                                                \
  X(A, Pointer,   pointer,   PointerMeta,   kSNodeSparse | kSNodeAllocator, CELLS_CALLED,        \
    DEACTIVATES_CELL, BUILDER_AXES)                                                                \
  X(A, Dynamic,   dynamic,   DynamicMeta,   kSNodeSparse | kSNodeAllocator, CELLS_CALLED,        \
    DEACTIVATES_LIST, BUILDER_OWN)                                                                 \
  X(A, Place,     place,     StructMeta,    0,                              CELLS_NONE,          \
    DEACTIVATES_NONE, BUILDER_OWN)
// clang-format on

// The rows without the pass-through argument A: X(Kind, kind, Meta, flags, cells, deactivate,
// builder). ACCELMEM_SNODE_KINDS_WITH(X, A) hands A to X first, for a list such as the kernel
// ABI's that expands the rows into its own caller's X.
#define ACCELMEM_SNODE_KINDS(X) ACCELMEM_SNODE_KINDS_WITH(ACCELMEM_SNODE_KIND_DROP_ARG_, X)
#define ACCELMEM_SNODE_KIND_DROP_ARG_(X, ...) X(__VA_ARGS__)

namespace accelmem {
namespace sparse_runtime {

// The flags column.
enum SNodeKindFlag : u32 {
  kSNodeSparse = 1u << 0,
  kSNodeAllocator = 1u << 1,
};

// The number of rows.
#define ACCELMEM_SNODE_KIND_ONE_(...) +1
inline constexpr int kNumSNodeKinds = 0 ACCELMEM_SNODE_KINDS(ACCELMEM_SNODE_KIND_ONE_);
#undef ACCELMEM_SNODE_KIND_ONE_

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_KIND_TABLE_H_
