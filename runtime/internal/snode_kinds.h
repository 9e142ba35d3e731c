// File: runtime/internal/snode_kinds.h
//
// The one mapping from an SNode kind to its runtime functions, for the host runtime: a traits
// struct per kind (written here: kinds differ) and WithKind(type, fn), which calls fn with the
// traits of `type` (the only switch over SNodeType the host runtime needs, generated from the
// kinds' table). Each traits struct has
//   kLookupElement, kIsActive, kGetNumElements  the StructMeta function pointers (null: place);
//   Activate / Deactivate(meta, node, i, cache)  no-ops for kinds whose cells are always active;
//     pointer cells go through `cache` (a worker's NodeCache, or null) when kUsesNodeCache;
//   IsActive / Lookup(meta, node, i)            one cell (a place: active, its own container);
//   Cursor(meta, node, lo)                      a struct-for's walk over cells lo, lo+1, ... of one
//     container: Next(i) is cell i when active, else null; ended() when a dynamic list turned
//     out shorter than it was when the walk started.
// Below them, the one-cell helpers of the host runtime's walks (point operations, list
// generation, checks) and the index arithmetic from an index to the cell of every path level.
// Everything is static and inline, so a dispatch costs what a switch with direct calls did.
#ifndef ACCELMEM_RUNTIME_INTERNAL_SNODE_KINDS_H_
#define ACCELMEM_RUNTIME_INTERNAL_SNODE_KINDS_H_

#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/node_cache.h"
#include "sparse_runtime/device/runtime_context.h"
#include "sparse_runtime/device/snode_kind_table.h"
#include "sparse_runtime/device/struct_meta.h"
#include "sparse_runtime/snode_tree.h"

namespace accelmem {
namespace runtime {
namespace internal {

// The traits name the device functions and types as the device code does (only inside this
// internal namespace).
using namespace ::accelmem::sparse_runtime;  // NOLINT(build/namespaces)

// Cells that are always active: (de)activation does nothing.
struct AlwaysActive {
  static constexpr bool kUsesNodeCache = false;
  static void Activate(Ptr, Ptr, i32, NodeCache*) {}
  static void Deactivate(Ptr, Ptr, i32, NodeCache*) {}
  static bool IsActive(Ptr, Ptr, i32) { return true; }
};

// A cursor that needs no state beyond the container: every kind but dynamic.
template <Ptr (*kCell)(Ptr meta, Ptr node, i32 i)>
class IndexCursor {
 public:
  IndexCursor(Ptr meta, Ptr node, i32 /*lo*/) : meta_(meta), node_(node) {}
  static constexpr bool ended() { return false; }
  Ptr Next(i32 i) const { return kCell(meta_, node_, i); }

 private:
  Ptr meta_;
  Ptr node_;
};

struct RootKind : AlwaysActive {
  static constexpr LookupElementFn kLookupElement = &Root_lookup_element;
  static constexpr IsActiveFn kIsActive = &Root_is_active;
  static constexpr GetNumElementsFn kGetNumElements = &Root_get_num_elements;
  static Ptr Lookup(Ptr meta, Ptr node, i32 i) { return Root_lookup_element(meta, node, i); }
  static Ptr Cell(Ptr, Ptr node, i32) { return node; }
  using Cursor = IndexCursor<&Cell>;
};

struct DenseKind : AlwaysActive {
  static constexpr LookupElementFn kLookupElement = &Dense_lookup_element;
  static constexpr IsActiveFn kIsActive = &Dense_is_active;
  static constexpr GetNumElementsFn kGetNumElements = &Dense_get_num_elements;
  static Ptr Lookup(Ptr meta, Ptr node, i32 i) { return Dense_lookup_element(meta, node, i); }
  using Cursor = IndexCursor<&Dense_lookup_element>;
};

struct BitmaskedKind {
  static constexpr LookupElementFn kLookupElement = &Bitmasked_lookup_element;
  static constexpr IsActiveFn kIsActive = &Bitmasked_is_active;
  static constexpr GetNumElementsFn kGetNumElements = &Bitmasked_get_num_elements;
  static constexpr bool kUsesNodeCache = false;
  static void Activate(Ptr meta, Ptr node, i32 i, NodeCache*) { Bitmasked_activate(meta, node, i); }
  static void Deactivate(Ptr meta, Ptr node, i32 i, NodeCache*) {
    Bitmasked_deactivate(meta, node, i);
  }
  static bool IsActive(Ptr meta, Ptr node, i32 i) { return Bitmasked_is_active(meta, node, i); }
  static Ptr Lookup(Ptr meta, Ptr node, i32 i) { return Bitmasked_lookup_element(meta, node, i); }
  static Ptr Cell(Ptr meta, Ptr node, i32 i) {
    return Bitmasked_is_active(meta, node, i) ? Bitmasked_lookup_element(meta, node, i) : nullptr;
  }
  using Cursor = IndexCursor<&Cell>;
};

struct PointerKind {
  static constexpr LookupElementFn kLookupElement = &Pointer_lookup_element;
  static constexpr IsActiveFn kIsActive = &Pointer_is_active;
  static constexpr GetNumElementsFn kGetNumElements = &Pointer_get_num_elements;
  static constexpr bool kUsesNodeCache = true;
  static void Activate(Ptr meta, Ptr node, i32 i, NodeCache* cache) {
    Pointer_activate_cached(meta, node, i, cache);
  }
  static void Deactivate(Ptr meta, Ptr node, i32 i, NodeCache* cache) {
    Pointer_deactivate_cached(meta, node, i, cache);
  }
  static bool IsActive(Ptr meta, Ptr node, i32 i) { return Pointer_is_active(meta, node, i); }
  static Ptr Lookup(Ptr meta, Ptr node, i32 i) { return Pointer_lookup_element(meta, node, i); }
  // The slot's cell (null when inactive), not the ambient element an inactive lookup returns.
  static Ptr Cell(Ptr meta, Ptr node, i32 i) { return Pointer_cell(meta, node, i); }
  using Cursor = IndexCursor<&Cell>;
};

struct DynamicKind {
  static constexpr LookupElementFn kLookupElement = &Dynamic_lookup_element;
  static constexpr IsActiveFn kIsActive = &Dynamic_is_active;
  static constexpr GetNumElementsFn kGetNumElements = &Dynamic_get_num_elements;
  static constexpr bool kUsesNodeCache = false;
  static void Activate(Ptr meta, Ptr node, i32 i, NodeCache*) { Dynamic_activate(meta, node, i); }
  // The whole list: a dynamic SNode's cells are deactivated together.
  static void Deactivate(Ptr meta, Ptr node, i32, NodeCache*) { Dynamic_deactivate(meta, node); }
  static bool IsActive(Ptr meta, Ptr node, i32 i) { return Dynamic_is_active(meta, node, i); }
  static Ptr Lookup(Ptr meta, Ptr node, i32 i) { return Dynamic_lookup_element(meta, node, i); }
  // Follows the chunk list instead of walking it from the head for every cell.
  class Cursor {
   public:
    Cursor(Ptr meta, Ptr node, i32 lo) : meta_(reinterpret_cast<const DynamicMeta*>(meta)) {
      chunk_ = Dynamic_first_chunk(reinterpret_cast<DynamicNode*>(node));
      for (i32 c = lo / meta_->chunk_size; c > 0 && chunk_ != nullptr; --c) {
        chunk_ = Dynamic_next_chunk(chunk_);
      }
      in_chunk_ = lo % meta_->chunk_size;
    }
    bool ended() const { return chunk_ == nullptr; }
    // Cells in order from `lo`, while !ended().
    Ptr Next(i32) {
      Ptr cell = chunk_ + meta_->chunk_header +
                 meta_->base.element_size * static_cast<uint64_t>(in_chunk_);
      if (++in_chunk_ == meta_->chunk_size) {
        in_chunk_ = 0;
        chunk_ = Dynamic_next_chunk(chunk_);
      }
      return cell;
    }

   private:
    const DynamicMeta* meta_;
    Ptr chunk_ = nullptr;
    i32 in_chunk_ = 0;
  };
};

// A place has no cells of its own: no meta functions; its "cell" is the container.
struct PlaceKind : AlwaysActive {
  static constexpr LookupElementFn kLookupElement = nullptr;
  static constexpr IsActiveFn kIsActive = nullptr;
  static constexpr GetNumElementsFn kGetNumElements = nullptr;
  static Ptr Lookup(Ptr, Ptr node, i32) { return node; }
  static Ptr Cell(Ptr, Ptr, i32) { return nullptr; }
  using Cursor = IndexCursor<&Cell>;
};

// fn(KindTraits{}) for the traits of `type`: Kind##Kind for each row of
// sparse_runtime/device/snode_kind_table.h (PlaceKind for a value outside the enum). Every call
// must return the same type. Always inlined, so that a caller dispatching on the same type twice
// gets one switch, as with hand-written switches.
template <typename Fn>
ACCELMEM_RT_INLINE auto WithKind(SNodeType type, Fn&& fn) -> decltype(fn(RootKind{})) {
  switch (type) {
#define ACCELMEM_WITH_KIND_CASE(Name, ...) \
  case SNodeType::k##Name:                 \
    return fn(Name##Kind{});
    ACCELMEM_SNODE_KINDS(ACCELMEM_WITH_KIND_CASE)
#undef ACCELMEM_WITH_KIND_CASE
  }
  return fn(PlaceKind{});
}

// One cell of a container of `s` (meta: s's StructMeta), by kind.
inline bool IsActiveCell(const SNode& s, Ptr meta, Ptr container, i32 i) {
  return WithKind(s.type(),
                  [&](auto kind) { return decltype(kind)::IsActive(meta, container, i); });
}
inline Ptr LookupCell(const SNode& s, Ptr meta, Ptr container, i32 i) {
  return WithKind(s.type(), [&](auto kind) { return decltype(kind)::Lookup(meta, container, i); });
}
// Cell i of a pointer or dynamic container if it is active, else null. Pointer slots through
// Pointer_cell (one slot load; a slot being activated counts as inactive: its lookup would
// return a zero lead cell that is not the ambient element, see snode_pointer.h).
inline Ptr ActiveCell(const RuntimeContext* context, const SNode& s, Ptr meta, Ptr container,
                      i32 i) {
  if (s.type() == SNodeType::kPointer) return Pointer_cell(meta, container, i);
  if (!IsActiveCell(s, meta, container, i)) return nullptr;
  const Ptr cell = LookupCell(s, meta, container, i);
  return cell == runtime_ambient_element(context, s.id()) ? nullptr : cell;
}
// The cells of one container of `s` (a dynamic's: its current length).
inline i32 NumCells(const SNode& s, Ptr meta, Ptr container) {
  if (s.type() == SNodeType::kDynamic) return Dynamic_get_num_elements(meta, container);
  return static_cast<i32>(s.num_cells_per_container());
}

// Per path position p >= 1 of `snode`, the cell index inside path[p]'s container of the cell
// holding `index` (num_indices coordinates, ascending axis order; out has path().size() slots).
inline void CellIndices(const SNode& snode, const int32_t* index, size_t num_indices,
                        int32_t* out) {
  int64_t coord[kMaxAxes];
  int64_t remaining[kMaxAxes];
  for (int a = 0; a < kMaxAxes; ++a) {
    coord[a] = 0;
    remaining[a] = 1;
  }
  for (size_t k = 0; k < num_indices; ++k) {
    const int axis = snode.index_axes()[k];
    coord[axis] = index[k];
    remaining[axis] = snode.extent(axis);
  }
  const auto& path = snode.path();
  for (size_t p = 1; p < path.size(); ++p) {
    const SNode& level = *path[p];
    int64_t l = 0;
    for (int axis : level.axes()) {
      const int64_t shape = level.shape(axis);
      remaining[axis] /= shape;
      l = l * shape + (coord[axis] / remaining[axis]) % shape;
    }
    out[p] = static_cast<int32_t>(l);
  }
}

}  // namespace internal
}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_INTERNAL_SNODE_KINDS_H_
