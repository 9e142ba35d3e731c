// File: kernel_abi/kernel_abi.h
//
// The one interface between generated kernels and the runtime: every function a kernel calls, the
// struct a kernel reads (KernelContext) and the sizes a kernel needs (a NodeCache on its stack).
//
// The functions are extern "C" (plain names, as Taichi's runtime exports them), defined in
// kernel_abi.cc, which is compiled into the runtime bitcode of every architecture
// (//runtime:runtime_x64, :runtime_cuda). Each forwards to the C++ function of the device library
// it names, and the JIT inlines it after linking. Kernels never read a runtime struct by its
// layout: a field a kernel needs has an accessor here (accelmem_runtime_node_manager), like
// Taichi's STRUCT_FIELD accessors. codegen names each function through this header's declaration
// (codegen/internal/runtime_call.h), so its LLVM type follows the C declaration and a rename fails
// the build:
//   * rename or retype a function in ACCELMEM_KERNEL_ENTRY_POINTS: codegen no longer compiles;
//   * rename or drop a definition in kernel_abi.cc: kernel_abi_test (which takes the address of
//     every listed function) no longer links;
//   * change a definition's signature: kernel_abi.cc no longer compiles (conflicting C linkage);
//   * rename a device library function: kernel_abi.cc no longer compiles.
// KernelBuilder::Create checks a runtime module against the same list (names and types), and
// //runtime:runtime_bitcode_test checks both architectures' modules, layout constants included.
//
// Freestanding C++17 (sparse_runtime/device/arch.h): included by device code and by host code.
#ifndef ACCELMEM_KERNEL_ABI_KERNEL_ABI_H_
#define ACCELMEM_KERNEL_ABI_KERNEL_ABI_H_

#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/node_cache.h"
#include "sparse_runtime/device/snode_kind_table.h"

// X(return type, name, (parameters)) for every runtime function a kernel may call. Opaque runtime
// structs (a meta, a node cache, a NodeManager, GC scratch, the RuntimeContext) are `void*`;
// containers and cells are byte pointers (`u8*`, the runtime's Ptr).
// The cell functions of the SNode kinds come from their table
// (sparse_runtime/device/snode_kind_table.h): accelmem_Kind_activate, _is_active and
// _lookup_element for every kind whose cells are CELLS_CALLED, and accelmem_Kind_deactivate as
// its deactivate column says; a kind's other functions are listed here by hand.
#define ACCELMEM_KERNEL_ENTRY_POINTS(X)                                                        \
  /* The SNode kinds' cell functions (sparse_runtime/device/snode_<kind>.h) */                 \
  ACCELMEM_SNODE_KINDS_WITH(ACCELMEM_KERNEL_KIND_ENTRY_POINTS_, X)                             \
  /* Pointer SNodes' cached and view functions (sparse_runtime/device/snode_pointer.h) */      \
  X(bool, accelmem_Pointer_deactivate_cached, (void* meta, u8* node, i32 i, void* cache))      \
  X(void, accelmem_Pointer_cache_init, (void* meta, void* cache))                              \
  X(void, accelmem_Pointer_cache_flush, (void* cache))                                         \
  X(u64, accelmem_Pointer_cells_origin, (void* meta))                                          \
  X(u64, accelmem_Pointer_cells_stride, (void* meta))                                          \
  X(bool, accelmem_Pointer_activate_cell_view,                                                 \
    (void* meta, u8* node, i32 i, u64 origin, u64 stride, u8** cell))                          \
  X(bool, accelmem_Pointer_lookup_cell_view,                                                   \
    (void* meta, u8* node, i32 i, u64 origin, u64 stride, u8** cell))                          \
  /* Dynamic SNodes' appends and length (sparse_runtime/device/snode_dynamic.h) */             \
  X(u8*, accelmem_Dynamic_allocate, (void* meta, u8* node, i32* length))                       \
  X(i32, accelmem_Dynamic_get_num_elements, (void* meta, u8* node))                            \
  /* Garbage collection of one allocator (gc/device) */                                        \
  X(bool, accelmem_gc_scratch_reserve, (void* scratch, void* node_manager, i32 num_workers))   \
  X(void, accelmem_gc_phase0_compact_free_list,                                                \
    (void* node_manager, void* scratch, i32 worker, i32 num_workers))                          \
  X(void, accelmem_gc_phase1_swap_lists, (void* node_manager, void* scratch, i32 num_workers)) \
  X(void, accelmem_gc_phase2_refill_and_zero,                                                  \
    (void* node_manager, void* scratch, i32 worker, i32 num_workers, i32 lane, i32 lanes))     \
  X(bool, accelmem_gc_serial, (void* node_manager, void* scratch))                             \
  /* Fields of the RuntimeContext (sparse_runtime/device/runtime_context.h) */                 \
  X(void*, accelmem_runtime_node_manager, (void* runtime, i32 snode_id))

// One row of the SNode kinds' table as kernel entries (see ACCELMEM_KERNEL_ENTRY_POINTS).
#define ACCELMEM_KERNEL_KIND_ENTRY_POINTS_(X, Kind, kind, Meta, flags, cells, deactivate, ...) \
  ACCELMEM_KERNEL_##cells##_(X, Kind) ACCELMEM_KERNEL_##deactivate##_(X, Kind)
#define ACCELMEM_KERNEL_CELLS_CALLED_(X, Kind)                        \
  X(void, accelmem_##Kind##_activate, (void* meta, u8* node, i32 i))  \
  X(bool, accelmem_##Kind##_is_active, (void* meta, u8* node, i32 i)) \
  X(u8*, accelmem_##Kind##_lookup_element, (void* meta, u8* node, i32 i))
#define ACCELMEM_KERNEL_CELLS_INLINE_(X, Kind)
#define ACCELMEM_KERNEL_CELLS_NONE_(X, Kind)
#define ACCELMEM_KERNEL_DEACTIVATES_CELL_(X, Kind) \
  X(bool, accelmem_##Kind##_deactivate, (void* meta, u8* node, i32 i))
#define ACCELMEM_KERNEL_DEACTIVATES_LIST_(X, Kind) \
  X(void, accelmem_##Kind##_deactivate, (void* meta, u8* node))
#define ACCELMEM_KERNEL_DEACTIVATES_NONE_(X, Kind)

namespace accelmem {
namespace kernel_abi {

using sparse_runtime::i32;
using sparse_runtime::i64;
using sparse_runtime::u64;
using sparse_runtime::u8;

// The declarations. C linkage: the names are these plain names in every module, whatever the
// namespace they are declared in.
extern "C" {
#define ACCELMEM_KERNEL_ABI_DECLARE(ret, name, params) ret name params;
ACCELMEM_KERNEL_ENTRY_POINTS(ACCELMEM_KERNEL_ABI_DECLARE)
#undef ACCELMEM_KERNEL_ABI_DECLARE
}

// The struct every generated kernel takes as its first argument (codegen/kernel_builder.h); the
// host fills it for a SparseRuntime (runtime/kernel_context.h). Kernels load its members at their
// offsetof(), which this definition alone fixes: each is one pointer of the target (x86-64 and
// nvptx64 are both 64-bit), with no padding (checked below).
struct KernelContext {
  u8* root;             // the root buffer
  void* runtime;        // the RuntimeContext: error state, allocators
  u8* const* metas;     // per SNode id: its meta struct
  u8* const* ambients;  // per SNode id: its ambient element (or null)
};

static_assert(sizeof(void*) == 8, "kernels load KernelContext members as 64-bit pointers");
static_assert(sizeof(KernelContext) == 4 * sizeof(void*),
              "every KernelContext member is one pointer the IR loads; add a load for a new one");

// A kernel keeps one NodeCache per pointer SNode it deactivates in (accelmem_Pointer_cache_init,
// _deactivate_cached, _cache_flush) on its stack (x86-64 only): the bytes and alignment of that
// slot. The runtime modules record the same sizes as compiled for their target
// (accelmem_abi_layout below), which //runtime:runtime_bitcode_test compares with these.
inline constexpr u64 kNodeCacheBytes = sizeof(sparse_runtime::NodeCache);
inline constexpr u64 kNodeCacheAlign = alignof(sparse_runtime::NodeCache);

// Indices into accelmem_abi_layout.
enum AbiLayoutField : int {
  kLayoutNodeCacheBytes = 0,
  kLayoutNodeCacheAlign = 1,
  kLayoutKernelContextBytes = 2,
  kNumLayoutFields = 3,
};

// The layout of the structs above as the runtime module was compiled (kernel_abi.cc).
extern "C" const u64 accelmem_abi_layout[kNumLayoutFields];

}  // namespace kernel_abi
}  // namespace accelmem

#endif  // ACCELMEM_KERNEL_ABI_KERNEL_ABI_H_
