// File: sparse_runtime/device/snode_bitmasked.h
//
// `bitmasked` SNode functions (upstream node_bitmasked.h): cells back to back at offset 0 (stride
// element_size), then one bit per cell in u32 words at Bitmasked_mask_offset = round_up(n *
// element_size, 4), so the mask words are always 4-byte aligned (upstream puts them at n *
// element_size, misaligned for small cells). Activation is an atomic OR, deactivation an atomic
// AND-NOT; no locks.
//
// Difference from upstream: the thread that deactivates a cell (clears a set bit) zero-fills the
// cell, so reads of an inactive cell return 0 like every other sparse kind (upstream returns stale
// data). Deactivating and writing the same cell concurrently is a race, as upstream (#607).
//
// Freestanding C++17 (see arch.h).
#ifndef ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_BITMASKED_H_
#define ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_BITMASKED_H_

#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/struct_meta.h"

namespace accelmem {
namespace sparse_runtime {

struct BitmaskedMeta {
  StructMeta base;
  bool _;  // placeholder, as upstream
};

// Byte offset of the mask words inside the container.
ACCELMEM_RT_INLINE u64 Bitmasked_mask_offset(u64 element_size, i64 max_num_elements) {
  return round_up_u64(element_size * static_cast<u64>(max_num_elements), 4);
}
// Bytes of a bitmasked container (without tail padding to the cell alignment).
ACCELMEM_RT_INLINE u64 Bitmasked_container_size(u64 element_size, i64 max_num_elements) {
  return Bitmasked_mask_offset(element_size, max_num_elements) +
         4 * ((static_cast<u64>(max_num_elements) + 31) / 32);
}

// The mask word of cell i through a meta view (struct_meta.h): with StaticMeta the mask offset is
// a constant.
template <typename M>
ACCELMEM_RT_INLINE u32* Bitmasked_mask_word_of(const M& m, Ptr node, i32 i) {
  return reinterpret_cast<u32*>(node +
                                Bitmasked_mask_offset(m.element_size(), m.max_num_elements())) +
         (i >> 5);
}

// Inline forms of the X_* functions below (which are these over RuntimeMeta). Activation tests
// the bit first and skips the atomic OR when it is already set.
template <typename M>
ACCELMEM_RT_INLINE bool Bitmasked_is_active_inline(const M& m, Ptr node, i32 i) {
  return (atomic_load_acquire(Bitmasked_mask_word_of(m, node, i)) >> (i & 31) & 1) != 0;
}
template <typename M>
ACCELMEM_RT_INLINE Ptr Bitmasked_lookup_element_inline(const M& m, Ptr node, i32 i) {
  return node + m.element_size() * static_cast<u64>(i);
}
template <typename M>
ACCELMEM_RT_INLINE void Bitmasked_activate_inline(const M& m, Ptr node, i32 i) {
  u32* word = Bitmasked_mask_word_of(m, node, i);
  const u32 bit = u32{1} << (i & 31);
  if ((atomic_load_relaxed(word) & bit) == 0) atomic_or(word, bit);
}
template <typename M>
ACCELMEM_RT_INLINE void Bitmasked_deactivate_inline(const M& m, Ptr node, i32 i) {
  u32* word = Bitmasked_mask_word_of(m, node, i);
  const u32 bit = u32{1} << (i & 31);
  if ((atomic_load_relaxed(word) & bit) == 0) return;
  // Only the thread that clears the bit zero-fills the cell.
  if ((atomic_and(word, ~bit) & bit) != 0) {
    mem_zero(Bitmasked_lookup_element_inline(m, node, i), m.element_size());
  }
}

// The out-of-line entry points.
i32 Bitmasked_get_num_elements(Ptr meta, Ptr node);
void Bitmasked_activate(Ptr meta, Ptr node, i32 i);
void Bitmasked_deactivate(Ptr meta, Ptr node, i32 i);
bool Bitmasked_is_active(Ptr meta, Ptr node, i32 i);
Ptr Bitmasked_lookup_element(Ptr meta, Ptr node, i32 i);

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_BITMASKED_H_
