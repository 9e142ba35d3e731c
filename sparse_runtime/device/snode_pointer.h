// File: sparse_runtime/device/snode_pointer.h
//
// `pointer` SNode functions (upstream node_pointer.h). Container layout: `Ptr slot[n]`, 8 bytes
// per cell (upstream: `i64 lock[n]` then `Ptr ptr[n]`, 16 bytes). A slot holds one of
//
//   null               inactive: the cell resolves to the SNode's ambient element (all zeros,
//                      so reads of inactive cells return 0);
//   kPointerLocked     (the address 1) an activation is allocating the cell; still inactive for
//                      readers (is_active false, lookup returns the ambient element);
//   a cell             active: a NodeManager cell of this SNode (at least 8-byte aligned, so it
//                      is never 1).
//
//   activate(i):   if slot[i] is null: CAS null -> kPointerLocked; allocate; release-store the
//                  cell (null if the allocation failed). A concurrent activation that finds the
//                  slot locked waits until it is not, then sees the cell. On CUDA one lane per
//                  distinct slot of a warp does this, the others wait at a warp barrier (the
//                  warp-representative scheme of upstream's warp_locked_task).
//   deactivate(i): v = slot[i]; if v is a cell: CAS v -> null; the thread whose CAS succeeds
//                  recycles v into the NodeManager -- O(1), one atomic on the slot, no lock; the
//                  cell is zeroed by the next GC. A locked slot is inactive: deactivation leaves
//                  it alone (it linearizes before the activation in progress).
//
// The lock bit lives in the slot, so an operation touches one cache line (upstream's touches the
// slot's and the lock's) and the container is half upstream's size.
//
// Does not activate ancestors (the host walker does). If the allocator fails, the cell stays
// inactive and the error is recorded in the runtime memory.
//
// Two forms of each operation. The X_* functions (`Pointer_activate(Ptr meta, ...)`) are out of
// line: the entry points of StructMeta's function pointers and of the runtime bitcode that
// generated kernels call by name. The `Pointer_*_inline` templates below are their fast paths
// over a meta view (struct_meta.h: RuntimeMeta, or StaticMeta with the shape known at compile
// time), in the header so that C++ callers inline them; the X_* functions are these templates
// over RuntimeMeta. Only the slow paths stay out of line: Pointer_activate_slow (lock, allocate)
// and Pointer_deactivate_slow (CAS, recycle), entered when the unlocked test says there is work.
// An already-active activation is therefore one load and a branch, not a call into the locked
// path's frame.
//
// Freestanding C++17 (see arch.h).
#ifndef ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_POINTER_H_
#define ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_POINTER_H_

#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/node_cache.h"
#include "sparse_runtime/device/struct_meta.h"

namespace accelmem {
namespace sparse_runtime {

struct PointerMeta {
  StructMeta base;
  bool _;  // placeholder, as upstream
};

ACCELMEM_RT_INLINE u64 Pointer_container_size(i64 max_num_elements) {
  return 8 * static_cast<u64>(max_num_elements);
}
// The slot value of a cell whose activation is in progress (never a cell address: cells are at
// least 8-byte aligned).
ACCELMEM_RT_INLINE Ptr Pointer_locked_value() { return reinterpret_cast<Ptr>(uptr{1}); }
// Whether a slot value is a cell (neither null nor Pointer_locked_value()). Written as v / 2 != 0
// rather than v > 1 (the same test): gcc turns `n += v > 1` into cmp/seta/movzx/add but
// `n += (v >> 1) != 0` into shr/cmp/sbb, one instruction less per cell in a counting loop.
ACCELMEM_RT_INLINE bool Pointer_is_cell(Ptr v) { return (reinterpret_cast<uptr>(v) >> 1) != 0; }
// The slot of cell i through a meta view (slot i is at node + 8 i whatever the meta; the view is
// kept for symmetry with the other kinds).
template <typename M>
ACCELMEM_RT_INLINE Ptr* Pointer_slot_of(const M&, Ptr node, i32 i) {
  return reinterpret_cast<Ptr*>(node) + i;
}
ACCELMEM_RT_INLINE Ptr* Pointer_slot(Ptr meta, Ptr node, i32 i) {
  return Pointer_slot_of(RuntimeMeta{meta}, node, i);
}
// The cell of slot i, or null when inactive (locked counts as inactive).
ACCELMEM_RT_INLINE Ptr Pointer_cell(Ptr meta, Ptr node, i32 i) {
  Ptr v = atomic_load_acquire(Pointer_slot(meta, node, i));
  return Pointer_is_cell(v) ? v : nullptr;
}

// Slow paths (out of line, never inlined): the locked part of activate and the CAS-and-recycle
// part of deactivate, entered after the unlocked test found the slot not a cell / a cell. Same
// semantics as the X_* functions (each reads the slot again).
void Pointer_activate_slow(Ptr meta, Ptr node, i32 i, NodeCache* cache);
void Pointer_deactivate_slow(Ptr meta, Ptr node, i32 i, NodeCache* cache);

// Recycles cell v, taken from its slot by this thread, into `cache` or (null) this SNode's
// NodeManager.
template <typename M>
ACCELMEM_RT_INLINE void Pointer_recycle_taken(const M& m, Ptr v, NodeCache* cache) {
  if (cache != nullptr) {
    cache->recycle(v);
  } else {
    runtime_node_manager(m.base()->context, m.base()->snode_id)->recycle(v);
  }
}

// Inline fast paths. `cache`: as Pointer_activate_cached (null: the NodeManager).
template <typename M>
ACCELMEM_RT_INLINE bool Pointer_is_active_inline(const M& m, Ptr node, i32 i) {
  return Pointer_is_cell(atomic_load_acquire(Pointer_slot_of(m, node, i)));
}
template <typename M>
ACCELMEM_RT_INLINE Ptr Pointer_lookup_element_inline(const M& m, Ptr node, i32 i) {
  Ptr cell = atomic_load_acquire(Pointer_slot_of(m, node, i));
  if (__builtin_expect(Pointer_is_cell(cell), 1)) return cell;
  return runtime_ambient_element(m.base()->context, m.base()->snode_id);
}
template <typename M>
ACCELMEM_RT_INLINE void Pointer_activate_inline(const M& m, Ptr node, i32 i,
                                                NodeCache* cache = nullptr) {
  if (__builtin_expect(Pointer_is_cell(atomic_load_acquire(Pointer_slot_of(m, node, i))), 1)) {
    return;
  }
  Pointer_activate_slow(m.meta, node, i, cache);
}
template <typename M>
ACCELMEM_RT_INLINE void Pointer_deactivate_inline(const M& m, Ptr node, i32 i,
                                                  NodeCache* cache = nullptr) {
  if (!Pointer_is_cell(atomic_load_acquire(Pointer_slot_of(m, node, i)))) return;
  Pointer_deactivate_slow(m.meta, node, i, cache);
}
// Deactivation by the slot's owner: the caller guarantees that no other thread deactivates slot
// i while this runs (other threads may activate, look up or test it); e.g. a parallel loop over
// the active cells deactivating the cell it visits, each cell visited by one thread. Same result
// as the CAS form. Why: with no competing deactivation nobody else can change a cell value in the
// slot (an activation only swaps null -> locked), so a release store of null takes the cell, and
// without a locked instruction per call the CPU overlaps the slot misses of consecutive calls
// (random order: close to a plain load per cell instead of one serialized miss per cell).
template <typename M>
ACCELMEM_RT_INLINE void Pointer_deactivate_owned_inline(const M& m, Ptr node, i32 i,
                                                        NodeCache* cache = nullptr) {
  Ptr* slot = Pointer_slot_of(m, node, i);
  Ptr v = atomic_load_acquire(slot);
  if (!Pointer_is_cell(v)) return;  // inactive, or another thread is activating it
  atomic_store_release(slot, static_cast<Ptr>(nullptr));
  Pointer_recycle_taken(m, v, cache);
}

// The out-of-line entry points.
i32 Pointer_get_num_elements(Ptr meta, Ptr node);
void Pointer_activate(Ptr meta, Ptr node, i32 i);
void Pointer_deactivate(Ptr meta, Ptr node, i32 i);
// The same, allocating from / recycling into a worker's NodeCache (node_cache.h) of this SNode's
// NodeManager instead of the manager itself: no shared atomic per cell on busy workers. `cache`
// must belong to the calling worker; null means the manager (as above).
void Pointer_activate_cached(Ptr meta, Ptr node, i32 i, NodeCache* cache);
void Pointer_deactivate_cached(Ptr meta, Ptr node, i32 i, NodeCache* cache);
// Pointer_deactivate_owned_inline out of line: the caller must be the only thread deactivating
// slot i meanwhile (see there); `cache` as above.
void Pointer_deactivate_owned(Ptr meta, Ptr node, i32 i, NodeCache* cache);
// Deactivation of many cells of one container: Pointer_deactivate_cached(meta, node, indices[k],
// cache) for k = 0..n-1, in that order, with the same guarantee per cell (the thread whose CAS
// nulls the slot recycles the cell, exactly once; indices may repeat and may race with other
// threads' activations and deactivations). Why: per call, a random-order deactivation waits for
// each slot's cache miss in turn -- the CAS is a locked instruction, and the CPU starts no later
// load until it completes. Here the slots are taken in blocks of kPointerDeactivateBlock: before
// the CASes of one block, the next block's slots are prefetched (x64, with write intent where
// the compiler targets it; no prefetch on CUDA), so their misses overlap each other and this
// block's CASes, and the CASes find their lines in cache. Recycling: into `cache` when given (no
// shared atomic), otherwise through NodeManager::recycle_cells once per
// kPointerDeactivateRecycleBatch cells taken (one shared atomic per batch instead of per cell).
constexpr i32 kPointerDeactivateBlock = 16;
constexpr i32 kPointerDeactivateRecycleBatch = 128;
void Pointer_deactivate_indices(Ptr meta, Ptr node, const i32* indices, i32 n, NodeCache* cache);
bool Pointer_is_active(Ptr meta, Ptr node, i32 i);
Ptr Pointer_lookup_element(Ptr meta, Ptr node, i32 i);

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_POINTER_H_
