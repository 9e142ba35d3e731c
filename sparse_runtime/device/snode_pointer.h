// File: sparse_runtime/device/snode_pointer.h
//
// `pointer` SNode functions (upstream node_pointer.h). Container layout: `u32 slot[n]`, 4 bytes
// per cell (upstream: `i64 lock[n]` then `Ptr ptr[n]`, 16 bytes). A slot holds one of
//
//   0                  inactive: the cell resolves to the SNode's ambient element (all zeros,
//                      so reads of inactive cells return 0);
//   k + 1              active: cell k of this SNode's NodeManager (its data-list index);
//   kPointerClaimed    CUDA (or ACCELMEM_POINTER_CLAIMS_SLOT) only, during an activation
//                      (below); inactive for readers.
//
//   activate(i), CPU:  if slot[i] is 0: allocate an index k (a zeroed cell); CAS 0 -> k + 1. A
//                  thread whose CAS fails (another activation published its cell first) gives
//                  k back unwritten: to its NodeCache's free cells, or to the NodeManager's
//                  recycled list.
//   activate(i), CUDA: one lane per distinct slot of a warp (the warp-representative scheme of
//                  upstream's warp_locked_task; the others wait at a warp barrier) claims the
//                  slot, CAS 0 -> kPointerClaimed, allocates, and release-stores k + 1 (0 if the
//                  allocation failed); a representative that finds the slot claimed waits for
//                  the cell.
//   deactivate(i): v = slot[i]; if v is a cell: CAS v -> 0; the thread whose CAS succeeds
//                  recycles index v - 1 into the NodeManager -- O(1), one atomic on the slot, no
//                  lock, no address -> index step; the cell is zeroed by the next GC. A claimed
//                  slot is inactive: deactivation leaves it alone (it linearizes before the
//                  activation in progress).
//
// Why two protocols. On the CPU, threads split their work, so activations of one inactive slot
// rarely race, and without a claim value the slot has two states: is_active is `slot != 0`, one
// compare fewer per cell than a three-valued test, and no activation ever waits for another (a
// preempted thread cannot stall the others on its slot). A lost race costs one allocation given
// back. On CUDA every warp of a block that writes into one pointer cell's block races for the
// same slot at once, so lock-free activation would allocate a cell per racing warp from the fixed
// device pool and leave all but one for the GC; the claim makes it exactly one, as upstream's
// lock does. Host code never sees a claim: each is resolved before its kernel ends (unless the
// kernel traps mid-activation; the host's invariant check then reports the slot).
//
// Why an index and not the cell's address: a lookup, is_active or already-active activation
// reads one slot, so the slot's size is what these operations stream; 4 bytes is half upstream's
// pointer array (and a quarter of its container), so twice the slots per cache line and per
// byte of bandwidth. Turning k + 1 into an address costs one multiply-add where the NodeManager's
// data list is one contiguous reservation (the CPU host pool): PointerMeta caches its origin and
// stride (Pointer_bind_cells). Otherwise (chunked data list, e.g. the preallocated device pool,
// or a meta never bound) the address comes from the NodeManager's chunk table, out of line. An
// operation touches one cache line (upstream's touches the lock's and the pointer's).
//
// Does not activate ancestors (the host walker does). If the allocator fails, the cell stays
// inactive and the error is recorded in the runtime memory.
//
// Two forms of each operation. The X_* functions (`Pointer_activate(Ptr meta, ...)`) are out of
// line: the entry points of StructMeta's function pointers and of the runtime bitcode that
// generated kernels call by name. The `Pointer_*_inline` templates below are their fast paths
// over a meta view (struct_meta.h: RuntimeMeta, or StaticMeta with the shape known at compile
// time), in the header so that C++ callers inline them; the X_* functions are these templates
// over RuntimeMeta. Only the slow paths stay out of line: Pointer_activate_slow (allocate and
// CAS, or on CUDA claim, allocate and publish), entered when the plain test finds the slot
// inactive, and Pointer_cell_address_chunked. An already-active activation is therefore one load
// and a branch, not a call into the slow path's frame. Deactivation has no slow path: a
// deactivation that finds a cell always does the CAS and the recycle, inline too.
//
// Freestanding C++17 (see arch.h).
#ifndef ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_POINTER_H_
#define ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_POINTER_H_

#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/node_cache.h"
#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/device/struct_meta.h"

namespace accelmem {
namespace sparse_runtime {

using PointerSlot = u32;

struct PointerMeta {
  StructMeta base;
  // Slot value v >= 1 -> the cell's address cell_origin + v * cell_stride, when this SNode's
  // NodeManager keeps its cells in one contiguous reservation (cell_origin = the data list's base
  // - stride, as an integer); 0 otherwise (then the NodeManager's chunk table is used). Set by
  // Pointer_bind_cells; a zero-filled meta is valid and takes the chunk-table path. A meta copied
  // to another address space (the device) must zero it. v = 0 (inactive) maps to the data list's
  // zero lead element (ListManager::kContiguousLeadElements), which is the SNode's ambient
  // element (runtime_initialize_snode_allocator), so a lookup through the origin needs no test of
  // the slot.
  uptr cell_origin;
  u64 cell_stride;
};

// Caches the contiguous layout of `manager` (this SNode's NodeManager) in `meta`, or clears it
// when the manager's data list is chunked or the SNode's ambient element is not its lead
// element. Call after the manager's init and the meta's context, before any operation.
void Pointer_bind_cells(PointerMeta* meta, const NodeManager* manager);

ACCELMEM_RT_INLINE u64 Pointer_container_size(i64 max_num_elements) {
  return sizeof(PointerSlot) * static_cast<u64>(max_num_elements);
}
// Whether activation claims the slot before it allocates (see the file comment): on CUDA, and in
// builds that define ACCELMEM_POINTER_CLAIMS_SLOT (the CPU tests of the CUDA protocol).
#if defined(ARCH_cuda) || defined(ACCELMEM_POINTER_CLAIMS_SLOT)
constexpr bool kPointerClaimsSlot = true;
#else
constexpr bool kPointerClaimsSlot = false;
#endif
// The slot value of a claimed slot (kPointerClaimsSlot only): above every k + 1, since k < 2^31.
constexpr PointerSlot kPointerClaimed = ~PointerSlot{0};
// Whether a slot value is a cell (neither 0 nor, where it can occur, kPointerClaimed).
ACCELMEM_RT_INLINE bool Pointer_is_cell(PointerSlot v) {
  if constexpr (kPointerClaimsSlot) {
    return v + 1 > 1;  // wraps kPointerClaimed to 0
  } else {
    return v != 0;
  }
}
// The slot value a lookup maps to an address: a claimed slot reads as inactive (0).
ACCELMEM_RT_INLINE PointerSlot Pointer_lookup_value(PointerSlot v) {
  if constexpr (kPointerClaimsSlot) {
    return v == kPointerClaimed ? PointerSlot{0} : v;
  } else {
    return v;
  }
}
// The slot value of cell index k, and back.
ACCELMEM_RT_INLINE PointerSlot Pointer_slot_value(i32 k) { return static_cast<PointerSlot>(k) + 1; }
ACCELMEM_RT_INLINE i32 Pointer_cell_index(PointerSlot v) { return static_cast<i32>(v - 1); }
// The slot of cell i through a meta view (slot i is at node + 4 i whatever the meta; the view is
// kept for symmetry with the other kinds).
template <typename M>
ACCELMEM_RT_INLINE PointerSlot* Pointer_slot_of(const M&, Ptr node, i32 i) {
  return reinterpret_cast<PointerSlot*>(node) + i;
}
ACCELMEM_RT_INLINE PointerSlot* Pointer_slot(Ptr meta, Ptr node, i32 i) {
  return Pointer_slot_of(RuntimeMeta{meta}, node, i);
}
ACCELMEM_RT_INLINE const PointerMeta* as_pointer_meta(Ptr meta) {
  return reinterpret_cast<const PointerMeta*>(meta);
}

// A StaticMeta of a pointer SNode whose cells' stride is a compile-time constant too: kCellStride
// = NodeManager::cell_stride(kElementSize, the cell type's alignment) (8 for every cell of up to 8
// bytes), what a kernel builder knows from the cell type. Why: through a StaticMeta every lookup
// loads the stride from the meta again (no load moves above the slot's acquire load) and
// multiplies by it; as a constant the address is one shift-and-add and a random lookup loop issues
// one load fewer per cell (snode_bench, BM_Pointer_Lookup). Its views (Pointer_view) use the
// constant too: the scaled index folded into the address beats a multiply by the register the
// view holds, in lookup loops and in activate-and-write loops (jit_bench). Used only where the
// cells are contiguous (cell_origin != 0); check matches() when the constants are bound at run
// time (a view of a meta that does not match finds the cells through the chunk table).
template <i64 kMaxNumElements, u64 kElementSize, u64 kCellStride>
struct PointerStaticMeta : StaticMeta<kMaxNumElements, kElementSize> {
  static_assert(kCellStride >= kElementSize && kCellStride >= 8 && kCellStride % 8 == 0,
                "a NodeManager stride (NodeManager::cell_stride)");
  // StaticMeta::matches, and the cells are chunked or have this stride.
  ACCELMEM_RT_INLINE bool matches() const {
    const PointerMeta* pm = as_pointer_meta(this->meta);
    return StaticMeta<kMaxNumElements, kElementSize>::matches() &&
           (pm->cell_origin == 0 || pm->cell_stride == kCellStride);
  }
};
// The compile-time cell stride of a meta view, 0 where it has none (read from the meta).
template <typename M>
struct PointerStaticStride {
  static constexpr u64 value = 0;
};
template <i64 kMaxNumElements, u64 kElementSize, u64 kCellStride>
struct PointerStaticStride<PointerStaticMeta<kMaxNumElements, kElementSize, kCellStride>> {
  static constexpr u64 value = kCellStride;
};
// The cells' stride through view M: its constant, or `loaded` (the meta's or the view's field).
template <typename M>
ACCELMEM_RT_INLINE u64 Pointer_stride_of(u64 loaded) {
  if constexpr (PointerStaticStride<M>::value != 0) {
    return PointerStaticStride<M>::value;
  } else {
    return loaded;
  }
}

// The address of the cell of slot value v (a cell) through the NodeManager's chunk table.
Ptr Pointer_cell_address_chunked(Ptr meta, PointerSlot v);
// The address of the cell of slot value v (a cell): from the contiguous cells' origin and stride
// (origin != 0), otherwise through the chunk table.
ACCELMEM_RT_INLINE Ptr Pointer_cell_address_at(uptr origin, u64 stride, Ptr meta, PointerSlot v) {
  if (__builtin_expect(origin != 0, 1)) {
    return reinterpret_cast<Ptr>(origin + static_cast<uptr>(v) * stride);
  }
  return Pointer_cell_address_chunked(meta, v);
}
template <typename M>
ACCELMEM_RT_INLINE Ptr Pointer_cell_address(const M& m, PointerSlot v) {
  const PointerMeta* pm = as_pointer_meta(m.meta);
  return Pointer_cell_address_at(pm->cell_origin, Pointer_stride_of<M>(pm->cell_stride), m.meta, v);
}
// A meta view for a kernel loop over one pointer SNode: the view `M` (RuntimeMeta or StaticMeta)
// plus the cells' origin and stride, read from the PointerMeta once, when the view is made
// (Pointer_view). Why: through M, every lookup reads them from the meta again -- the compiler
// cannot hoist those loads above the slot's acquire load -- and a sequential lookup loop is bound
// by the instructions it issues; with them in registers a lookup is the slot load and one
// multiply-add (a scaled add when the stride is a PointerStaticMeta's constant). The cached values
// are what Pointer_bind_cells stored, so make the view after the runtime is created (they never
// change afterwards). The view is an M (meta, base(), the shape) with the cached values added.
// kContiguous: the view was made by Pointer_contiguous_view, which succeeds only when the cells are
// contiguous, so its address computation skips the test of the origin (the chunk-table fallback).
template <typename M, bool kContiguous = false>
struct PointerView : M {
  uptr cell_origin;
  u64 cell_stride;
  Ptr ambient;  // the SNode's ambient element, for the chunked cells' lookup (no reload)
};
// A PointerStaticMeta whose constant stride is not the cells' own (matches() is false) gets a
// view without the origin: it finds the cells through the chunk table, slower but right, where
// the constant would place them wrongly.
template <typename M>
ACCELMEM_RT_INLINE PointerView<M> Pointer_view(const M& m) {
  const PointerMeta* pm = as_pointer_meta(m.meta);
  uptr origin = pm->cell_origin;
  if (PointerStaticStride<M>::value != 0 && pm->cell_stride != PointerStaticStride<M>::value) {
    origin = 0;
  }
  return PointerView<M>{
      {m}, origin, pm->cell_stride, runtime_ambient_element(m.base()->context, m.base()->snode_id)};
}
// Pointer_view for an SNode whose cells are one contiguous reservation (the CPU runtime's
// default): fills *view and returns true, or returns false (the cells are chunked, the meta
// was never bound, or a PointerStaticMeta's stride is not the cells': use Pointer_view). A kernel
// loop made once for each view type and chosen by this call keeps the origin test out of the loop,
// which measurably costs an activate-and-write loop (jit_bench, BM_ActivateWrite_AlreadyActive);
// Pointer_with_view below makes that choice.
template <typename M>
ACCELMEM_RT_INLINE bool Pointer_contiguous_view(const M& m, PointerView<M, true>* view) {
  const PointerView<M> v = Pointer_view(m);
  *view = PointerView<M, true>{{m}, v.cell_origin, v.cell_stride, v.ambient};
  return v.cell_origin != 0;
}
// Calls f(view) once with the fastest view of m's cells and returns what f returns: the contiguous
// view (Pointer_contiguous_view) where the cells are contiguous, otherwise Pointer_view. Why: f is
// a generic lambda, instantiated for both view types, so a kernel loop inside it has no per-cell
// test of the chunk-table fallback; the compiler does not take that loop-invariant test out of the
// loop itself at -O2, and in an activate-then-lookup loop it costs more than the second slot load
// (jit_bench, BM_ActivateWrite_AlreadyActive: `native` against `native_view`). f must return the
// same type for both views. A loop that stores into cells copies the view into a local first:
// the stores go through byte pointers, which may alias the caller's view, so the compiler would
// reload its fields on every cell.
//   Pointer_with_view(sm, [&](const auto& view0) {
//     const auto view = view0;
//     for (i32 i = 0; i < n; ++i) use(Pointer_lookup_element_inline(view, node, i));
//   });
template <typename M, typename F>
ACCELMEM_RT_INLINE auto Pointer_with_view(const M& m, F&& f) {
  const PointerView<M> view = Pointer_view(m);
  if (view.cell_origin != 0) {
    const PointerView<M, true> contiguous{{m}, view.cell_origin, view.cell_stride, view.ambient};
    return f(contiguous);
  }
  return f(view);
}
// origin + v * stride through a view (the meta's constant stride where it has one): the cell of
// slot value v when the view's cells are contiguous (cell_origin != 0; 0 lands on the ambient).
template <typename M, bool kContiguous>
ACCELMEM_RT_INLINE Ptr Pointer_view_address(const PointerView<M, kContiguous>& m, PointerSlot v) {
  return reinterpret_cast<Ptr>(m.cell_origin +
                               static_cast<uptr>(v) * Pointer_stride_of<M>(m.cell_stride));
}
template <typename M, bool kContiguous>
ACCELMEM_RT_INLINE Ptr Pointer_cell_address(const PointerView<M, kContiguous>& m, PointerSlot v) {
  if (kContiguous || __builtin_expect(m.cell_origin != 0, 1)) return Pointer_view_address(m, v);
  return Pointer_cell_address_chunked(m.meta, v);
}

// The cell of slot i, or null when inactive.
ACCELMEM_RT_INLINE Ptr Pointer_cell(Ptr meta, Ptr node, i32 i) {
  const PointerSlot v = atomic_load_acquire(Pointer_slot(meta, node, i));
  return Pointer_is_cell(v) ? Pointer_cell_address(RuntimeMeta{meta}, v) : nullptr;
}

// Slow path (out of line, never inlined): the allocate-and-publish part of activate, entered after
// the plain test found the slot inactive. Same semantics as Pointer_activate_cached (it reads the
// slot again).
void Pointer_activate_slow(Ptr meta, Ptr node, i32 i, NodeCache* cache);
// Activation's last step: publishes cell index k, allocated by this thread from `cache` (its
// last allocation) or, if null, from this SNode's NodeManager and not yet written, in slot i if
// that slot is inactive (CAS 0 -> k + 1); otherwise gives k back (to the cache's free cells, or
// to the manager's recycled list) and leaves the slot alone. Returns whether k was published.
bool Pointer_publish_cell(Ptr meta, Ptr node, i32 i, i32 k, NodeCache* cache);

// Recycles the cell of slot value v, taken from its slot by this thread, into `cache` or (null)
// this SNode's NodeManager.
template <typename M>
ACCELMEM_RT_INLINE void Pointer_recycle_taken(const M& m, PointerSlot v, NodeCache* cache) {
  const i32 index = Pointer_cell_index(v);
  if (cache != nullptr) {
    cache->recycle_index(index);
  } else {
    runtime_node_manager(m.base()->context, m.base()->snode_id)->recycle_index(index);
  }
}

// Inline fast paths. `cache`: as Pointer_activate_cached (null: the NodeManager).
template <typename M>
ACCELMEM_RT_INLINE bool Pointer_is_active_inline(const M& m, Ptr node, i32 i) {
  return Pointer_is_cell(atomic_load_acquire(Pointer_slot_of(m, node, i)));
}
// With contiguous cells (cell_origin != 0) the lookup is origin + v * stride for every slot value:
// an inactive slot (0) lands on the ambient element, so it needs neither a test nor a select
// (upstream's `ptr ? ptr : ambient` needs both; with claims, a claimed slot is mapped to 0 first).
// Chunked cells: the cell, or the ambient element.
template <typename M>
ACCELMEM_RT_INLINE Ptr Pointer_lookup_element_inline(const M& m, Ptr node, i32 i) {
  const PointerSlot v = Pointer_lookup_value(atomic_load_acquire(Pointer_slot_of(m, node, i)));
  const PointerMeta* pm = as_pointer_meta(m.meta);
  if (__builtin_expect(pm->cell_origin != 0, 1)) {
    return reinterpret_cast<Ptr>(pm->cell_origin +
                                 static_cast<uptr>(v) * Pointer_stride_of<M>(pm->cell_stride));
  }
  if (Pointer_is_cell(v)) return Pointer_cell_address_chunked(m.meta, v);
  return runtime_ambient_element(m.base()->context, m.base()->snode_id);
}
template <typename M, bool kContiguous>
ACCELMEM_RT_INLINE Ptr Pointer_lookup_element_inline(const PointerView<M, kContiguous>& m, Ptr node,
                                                     i32 i) {
  const PointerSlot v = Pointer_lookup_value(atomic_load_acquire(Pointer_slot_of(m, node, i)));
  if (kContiguous || __builtin_expect(m.cell_origin != 0, 1)) return Pointer_view_address(m, v);
  return Pointer_is_cell(v) ? Pointer_cell_address_chunked(m.meta, v) : m.ambient;
}
template <typename M>
ACCELMEM_RT_INLINE void Pointer_activate_inline(const M& m, Ptr node, i32 i,
                                                NodeCache* cache = nullptr) {
  if (__builtin_expect(Pointer_is_cell(atomic_load_acquire(Pointer_slot_of(m, node, i))), 1)) {
    return;
  }
  Pointer_activate_slow(m.meta, node, i, cache);
}
// Activation that hands back the cell: Pointer_activate_inline, then *cell = the cell's address,
// from the one slot load of the already-active path. Returns false, leaving *cell alone, if the
// cell could not be activated (the allocator failed: error recorded). Why: a kernel writing a
// sparse cell calls activate and then lookup, which loads the slot twice and selects an ambient
// element that it never writes; this is one load and, inlined, the caller's test of the result
// folds away on the already-active path (through a contiguous view it beats upstream's inlined pair
// where activate + lookup does not: jit_bench's BM_ActivateWrite_AlreadyActive in
// benchmarks/README.md). A deactivation racing in between is answered by activating again (the
// write then follows that deactivation), a few times, so that false means the allocator failed, not
// that another thread was quick; only a thread deactivating the slot over and over could exhaust
// the retries.
constexpr int kPointerActivateCellTries = 4;
// The slow path of Pointer_activate_cell_inline, with the retries (out of line, so that they stay
// out of every inlined caller): activates slot i and returns the cell value it then holds, or 0.
PointerSlot Pointer_activate_cell_slow(Ptr meta, Ptr node, i32 i, NodeCache* cache);
template <typename M>
ACCELMEM_RT_INLINE bool Pointer_activate_cell_inline(const M& m, Ptr node, i32 i, Ptr* cell,
                                                     NodeCache* cache = nullptr) {
  PointerSlot v = atomic_load_acquire(Pointer_slot_of(m, node, i));
  if (__builtin_expect(!Pointer_is_cell(v), 0)) {
    v = Pointer_activate_cell_slow(m.meta, node, i, cache);
    if (v == 0) return false;
  }
  *cell = Pointer_cell_address(m, v);
  return true;
}
// Deactivation's CAS: turns the cell value v (the slot's value as the caller last loaded it; a
// failed CAS reloads it) into 0 and returns it, or returns 0 once the slot holds no cell (another
// thread took it). Exactly one thread turns a given cell value into 0, and only that thread
// recycles it. A cell index cannot come back into the slot before a GC (which runs alone: a
// recycled index is handed out again only after it; a cell given back by a losing activation was
// never in any slot), so the CAS has no ABA problem.
ACCELMEM_RT_INLINE PointerSlot Pointer_take_cell(PointerSlot* slot, PointerSlot v) {
  while (Pointer_is_cell(v)) {
    if (atomic_cas(slot, &v, PointerSlot{0})) return v;
  }
  return 0;
}
// Deactivation, whole (no call): the plain test first, so that an inactive slot costs no locked
// instruction; then the CAS, and the taker recycles the cell into `cache` or this SNode's
// NodeManager. Without a cache the recycled list's append state is loaded before the CAS: after
// it, the chain meta -> context -> manager -> list fields would wait for the CAS, which waits for
// the slot's cache miss. Why inline: the out-of-line slow path this replaced added a call and a
// second load of the slot to every cell of a deactivation loop, also in the JIT's kernels
// (jit_bench, BM_Deactivate_JitKernel).
template <typename M>
ACCELMEM_RT_INLINE bool Pointer_deactivate_inline(const M& m, Ptr node, i32 i,
                                                  NodeCache* cache = nullptr) {
  PointerSlot* const slot = Pointer_slot_of(m, node, i);
  const PointerSlot seen = atomic_load_acquire(slot);
  if (!Pointer_is_cell(seen)) return false;
  if (cache != nullptr) {
    const PointerSlot v = Pointer_take_cell(slot, seen);
    if (v == 0) return false;
    StructMeta_mark_changed(m.base());
    Pointer_recycle_taken(m, v, cache);
    return true;
  }
  const StructMeta* const base = m.base();
  const ListManager::Appender recycled =
      runtime_node_manager(base->context, base->snode_id)->recycled_list.appender();
  const PointerSlot v = Pointer_take_cell(slot, seen);
  if (v == 0) return false;
  StructMeta_mark_changed(base);
  recycled.push_back<NodeManager::list_data_type>(Pointer_cell_index(v));
  return true;
}
// Deactivation by the slot's owner: the caller guarantees that no other thread deactivates slot
// i while this runs (other threads may activate, look up or test it); e.g. a parallel loop over
// the active cells deactivating the cell it visits, each cell visited by one thread. Same result
// as the CAS form. Why: with no competing deactivation nobody else can change a cell value in the
// slot (an activation only changes a 0, or its own claim), so a release store of 0 takes the cell,
// and without a locked instruction per call the CPU overlaps the slot misses of consecutive calls
// (random order: close to a plain load per cell instead of one serialized miss per cell).
template <typename M>
ACCELMEM_RT_INLINE void Pointer_deactivate_owned_inline(const M& m, Ptr node, i32 i,
                                                        NodeCache* cache = nullptr) {
  PointerSlot* slot = Pointer_slot_of(m, node, i);
  const PointerSlot v = atomic_load_acquire(slot);
  if (!Pointer_is_cell(v)) return;  // inactive, or claimed by an activation in progress
  atomic_store_release(slot, PointerSlot{0});
  StructMeta_mark_changed(m.base());
  Pointer_recycle_taken(m, v, cache);
}

// The out-of-line entry points.
i32 Pointer_get_num_elements(Ptr meta, Ptr node);
void Pointer_activate(Ptr meta, Ptr node, i32 i);
// Pointer_activate_cell_inline out of line: the cell's address, or null if it could not be
// activated (see there). The entry point for generated kernels that write the cell they activate.
Ptr Pointer_activate_cell(Ptr meta, Ptr node, i32 i);
// Pointer_cell out of line: the cell of slot i, or null when inactive. The entry point for
// generated kernels that read a cell only if it is active: one slot load, where is_active then
// lookup loads the slot twice and selects an ambient element.
Ptr Pointer_lookup_cell(Ptr meta, Ptr node, i32 i);
// What Pointer_view caches, for generated kernels, which load them once per kernel: the cells'
// origin and stride (0 and 0 when the cells are chunked or the meta is unbound). And
// Pointer_activate_cell / Pointer_lookup_cell taking them (the view's forms), reporting the cell
// in *cell and whether there is one as the result: inlined into a kernel loop they keep origin
// and stride in registers, where the forms above reload both from the meta on every cell (no load
// moves above the slot's acquire load); the origin's test is loop-invariant, so the loop can be
// specialized for contiguous cells; and the already-active path's result is a constant true, where
// a returned address would be tested against null on every cell.
uptr Pointer_cells_origin(Ptr meta);
u64 Pointer_cells_stride(Ptr meta);
bool Pointer_activate_cell_view(Ptr meta, Ptr node, i32 i, uptr origin, u64 stride, Ptr* cell);
bool Pointer_lookup_cell_view(Ptr meta, Ptr node, i32 i, uptr origin, u64 stride, Ptr* cell);
// Deactivation returns whether this call deactivated the cell: false if it was inactive or
// another thread's deactivation took it first (exactly one of several racing calls returns true).
bool Pointer_deactivate(Ptr meta, Ptr node, i32 i);
// The same, allocating from / recycling into a worker's NodeCache (node_cache.h) of this SNode's
// NodeManager instead of the manager itself: no shared atomic per cell on busy workers. `cache`
// must belong to the calling worker; null means the manager (as above).
void Pointer_activate_cached(Ptr meta, Ptr node, i32 i, NodeCache* cache);
bool Pointer_deactivate_cached(Ptr meta, Ptr node, i32 i, NodeCache* cache);
// Pointer_deactivate_owned_inline out of line: the caller must be the only thread deactivating
// slot i meanwhile (see there); `cache` as above.
void Pointer_deactivate_owned(Ptr meta, Ptr node, i32 i, NodeCache* cache);
// Deactivation of many cells of one container: Pointer_deactivate_cached(meta, node, indices[k],
// cache) for k = 0..n-1, in that order, with the same guarantee per cell (the thread whose CAS
// zeroes the slot recycles the cell, exactly once; indices may repeat and may race with other
// threads' activations and deactivations). Why: per call, a random-order deactivation waits for
// each slot's cache miss in turn -- the CAS is a locked instruction, and the CPU starts no later
// load until it completes. Here the slots are taken in blocks of kPointerDeactivateBlock: before
// the CASes of one block, the next block's slots are prefetched (x64, with write intent where
// the compiler targets it; no prefetch on CUDA), so their misses overlap each other and this
// block's CASes, and the CASes find their lines in cache. Recycling: into `cache` when given (no
// shared atomic), otherwise through NodeManager::recycle_indices once per
// kPointerDeactivateRecycleBatch cells taken (one shared atomic per batch instead of per cell).
constexpr i32 kPointerDeactivateBlock = 16;
constexpr i32 kPointerDeactivateRecycleBatch = 128;
void Pointer_deactivate_indices(Ptr meta, Ptr node, const i32* indices, i32 n, NodeCache* cache);
// A NodeCache for one kernel invocation: `cache` (zeroed or not, any NodeCache-sized memory,
// e.g. a kernel's stack) bound to this pointer SNode's NodeManager, and Pointer_cache_flush at
// the end. Generated range-deactivate kernels on the CPU recycle through one: per cell, the plain
// Pointer_deactivate pays a second locked instruction (the recycled list's shared atomic) after
// its slot CAS, about as much again as the CAS (snode_bench's floor_cas_push), while the cache
// pushes 1536 cells with one (NodeCache::kRecycledIndexBatch). Only deactivation goes through it,
// so the flush pushes just the cells recycled (no cached free cells to re-zero), and they are on
// the recycled list when the kernel returns, as with the plain call.
void Pointer_cache_init(Ptr meta, NodeCache* cache);
void Pointer_cache_flush(NodeCache* cache);
bool Pointer_is_active(Ptr meta, Ptr node, i32 i);
Ptr Pointer_lookup_element(Ptr meta, Ptr node, i32 i);

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_POINTER_H_
