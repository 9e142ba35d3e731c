// The definitions of kernel_abi.h: each entry point forwards to the device library function it is
// named after (the JIT inlines both). Compiled into the runtime bitcode of every architecture and
// natively (kernel_abi_test). Freestanding C++17.
#include "kernel_abi/kernel_abi.h"

#include "gc/device/gc_scratch.h"
#include "gc/device/gc_serial.h"
#include "gc/device/phase0_compact_free_list.h"
#include "gc/device/phase1_swap_lists.h"
#include "gc/device/phase2_refill_and_zero.h"
#include "sparse_runtime/device/node_cache.h"
#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/device/runtime_context.h"
#include "sparse_runtime/device/snode_kind_table.h"

namespace accelmem {
namespace kernel_abi {
namespace {

using gc::GcScratch;
using sparse_runtime::NodeCache;
using sparse_runtime::NodeManager;
using sparse_runtime::Ptr;
using sparse_runtime::RuntimeContext;
using sparse_runtime::uptr;

ACCELMEM_RT_INLINE Ptr M(void* meta) { return static_cast<Ptr>(meta); }
ACCELMEM_RT_INLINE NodeCache* Cache(void* cache) { return static_cast<NodeCache*>(cache); }
ACCELMEM_RT_INLINE NodeManager* Nm(void* nm) { return static_cast<NodeManager*>(nm); }
ACCELMEM_RT_INLINE GcScratch* Scratch(void* scratch) { return static_cast<GcScratch*>(scratch); }

}  // namespace

extern "C" {

const u64 accelmem_abi_layout[kNumLayoutFields] = {
    sizeof(NodeCache),
    alignof(NodeCache),
    sizeof(KernelContext),
};

// The SNode kinds' cell functions, one set per row of the kinds' table (the declarations' macro
// in kernel_abi.h says which).
#define ACCELMEM_KERNEL_ABI_DEFINE_KIND(Kind, kind, Meta, flags, cells, deactivate, ...) \
  ACCELMEM_KERNEL_ABI_DEFINE_##cells##_(Kind) ACCELMEM_KERNEL_ABI_DEFINE_##deactivate##_(Kind)
#define ACCELMEM_KERNEL_ABI_DEFINE_CELLS_CALLED_(Kind)                \
  void accelmem_##Kind##_activate(void* meta, u8* node, i32 i) {      \
    sparse_runtime::Kind##_activate(M(meta), node, i);                \
  }                                                                   \
  bool accelmem_##Kind##_is_active(void* meta, u8* node, i32 i) {     \
    return sparse_runtime::Kind##_is_active(M(meta), node, i);        \
  }                                                                   \
  u8* accelmem_##Kind##_lookup_element(void* meta, u8* node, i32 i) { \
    return sparse_runtime::Kind##_lookup_element(M(meta), node, i);   \
  }
#define ACCELMEM_KERNEL_ABI_DEFINE_CELLS_INLINE_(Kind)
#define ACCELMEM_KERNEL_ABI_DEFINE_CELLS_NONE_(Kind)
#define ACCELMEM_KERNEL_ABI_DEFINE_DEACTIVATES_CELL_(Kind)         \
  bool accelmem_##Kind##_deactivate(void* meta, u8* node, i32 i) { \
    return sparse_runtime::Kind##_deactivate(M(meta), node, i);    \
  }
#define ACCELMEM_KERNEL_ABI_DEFINE_DEACTIVATES_LIST_(Kind)  \
  void accelmem_##Kind##_deactivate(void* meta, u8* node) { \
    sparse_runtime::Kind##_deactivate(M(meta), node);       \
  }
#define ACCELMEM_KERNEL_ABI_DEFINE_DEACTIVATES_NONE_(Kind)
ACCELMEM_SNODE_KINDS(ACCELMEM_KERNEL_ABI_DEFINE_KIND)
#undef ACCELMEM_KERNEL_ABI_DEFINE_KIND
#undef ACCELMEM_KERNEL_ABI_DEFINE_CELLS_CALLED_
#undef ACCELMEM_KERNEL_ABI_DEFINE_CELLS_INLINE_
#undef ACCELMEM_KERNEL_ABI_DEFINE_CELLS_NONE_
#undef ACCELMEM_KERNEL_ABI_DEFINE_DEACTIVATES_CELL_
#undef ACCELMEM_KERNEL_ABI_DEFINE_DEACTIVATES_LIST_
#undef ACCELMEM_KERNEL_ABI_DEFINE_DEACTIVATES_NONE_

// Pointer SNodes: the cached and view functions.
bool accelmem_Pointer_deactivate_cached(void* meta, u8* node, i32 i, void* cache) {
  return sparse_runtime::Pointer_deactivate_cached(M(meta), node, i, Cache(cache));
}
void accelmem_Pointer_cache_init(void* meta, void* cache) {
  sparse_runtime::Pointer_cache_init(M(meta), Cache(cache));
}
void accelmem_Pointer_cache_flush(void* cache) {
  sparse_runtime::Pointer_cache_flush(Cache(cache));
}
u64 accelmem_Pointer_cells_origin(void* meta) {
  return static_cast<u64>(sparse_runtime::Pointer_cells_origin(M(meta)));
}
u64 accelmem_Pointer_cells_stride(void* meta) {
  return sparse_runtime::Pointer_cells_stride(M(meta));
}
bool accelmem_Pointer_activate_cell_view(void* meta, u8* node, i32 i, u64 origin, u64 stride,
                                         u8** cell) {
  return sparse_runtime::Pointer_activate_cell_view(M(meta), node, i, static_cast<uptr>(origin),
                                                    stride, cell);
}
bool accelmem_Pointer_lookup_cell_view(void* meta, u8* node, i32 i, u64 origin, u64 stride,
                                       u8** cell) {
  return sparse_runtime::Pointer_lookup_cell_view(M(meta), node, i, static_cast<uptr>(origin),
                                                  stride, cell);
}

// Dynamic SNodes: appends and length.
u8* accelmem_Dynamic_allocate(void* meta, u8* node, i32* length) {
  return sparse_runtime::Dynamic_allocate(M(meta), node, length);
}
i32 accelmem_Dynamic_get_num_elements(void* meta, u8* node) {
  return sparse_runtime::Dynamic_get_num_elements(M(meta), node);
}

// Garbage collection of one allocator.
bool accelmem_gc_scratch_reserve(void* scratch, void* node_manager, i32 num_workers) {
  return gc::gc_scratch_reserve(Scratch(scratch), Nm(node_manager), num_workers);
}
void accelmem_gc_phase0_compact_free_list(void* node_manager, void* scratch, i32 worker,
                                          i32 num_workers) {
  gc::gc_phase0_compact_free_list(Nm(node_manager), Scratch(scratch), worker, num_workers);
}
void accelmem_gc_phase1_swap_lists(void* node_manager, void* scratch, i32 num_workers) {
  gc::gc_phase1_swap_lists(Nm(node_manager), Scratch(scratch), num_workers);
}
void accelmem_gc_phase2_refill_and_zero(void* node_manager, void* scratch, i32 worker,
                                        i32 num_workers, i32 lane, i32 lanes) {
  gc::gc_phase2_refill_and_zero(Nm(node_manager), Scratch(scratch), worker, num_workers, lane,
                                lanes);
}
bool accelmem_gc_serial(void* node_manager, void* scratch) {
  return gc::gc_serial(Nm(node_manager), Scratch(scratch));
}

// Fields of the RuntimeContext.
void* accelmem_runtime_node_manager(void* runtime, i32 snode_id) {
  return sparse_runtime::runtime_node_manager(static_cast<const RuntimeContext*>(runtime),
                                              snode_id);
}

}  // extern "C"

}  // namespace kernel_abi
}  // namespace accelmem
