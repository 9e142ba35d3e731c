// File: sparse_runtime/device/snode_bitmasked.h
//
// `bitmasked` SNode functions (upstream node_bitmasked.h): cells back to back at offset 0 (stride
// element_size), then one activity flag per cell at Bitmasked_mask_offset = round_up(n *
// element_size, 4): flag i is byte i there (0 inactive, 1 active), padded to a multiple of 4 bytes
// so that each flag lies in an aligned u32 word.
//
// Difference from upstream, which keeps one bit per cell in u32 words and activates with an
// atomic OR: a byte per cell (n bytes of flags where upstream has n / 8). Setting a byte is a
// plain store that no other cell's activation can disturb, so activating an inactive cell needs
// no atomic read-modify-write (upstream's OR is a locked instruction on x86, which serializes
// with the next cell's test), and activating an active one is one load (the flag is tested
// first). Deactivation clears the byte with one atomic AND on its u32 word, so that exactly one
// of several racing deactivations sees the flag set. On CUDA, where a byte store and an atomic
// on the enclosing word are different-size accesses, activation uses an atomic OR on the word.
//
// Difference from upstream: the thread that deactivates a cell (clears a set flag) zero-fills
// the cell, so reads of an inactive cell return 0 like every other sparse kind (upstream returns
// stale data). Deactivating and writing the same cell concurrently is a race, as upstream (#607).
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

// Byte offset of the activity flags inside the container.
ACCELMEM_RT_INLINE u64 Bitmasked_mask_offset(u64 element_size, i64 max_num_elements) {
  return round_up_u64(element_size * static_cast<u64>(max_num_elements), 4);
}
// Bytes of a bitmasked container (without tail padding to the cell alignment).
ACCELMEM_RT_INLINE u64 Bitmasked_container_size(u64 element_size, i64 max_num_elements) {
  return Bitmasked_mask_offset(element_size, max_num_elements) +
         round_up_u64(static_cast<u64>(max_num_elements), 4);
}

// The activity flag of cell i through a meta view (struct_meta.h): with StaticMeta the offset is
// a constant.
template <typename M>
ACCELMEM_RT_INLINE u8* Bitmasked_flag_of(const M& m, Ptr node, i32 i) {
  return node + Bitmasked_mask_offset(m.element_size(), m.max_num_elements()) + static_cast<u64>(i);
}
// The aligned u32 word holding flag i, and the flag's shift inside it (little endian).
template <typename M>
ACCELMEM_RT_INLINE u32* Bitmasked_flag_word_of(const M& m, Ptr node, i32 i) {
  return reinterpret_cast<u32*>(Bitmasked_flag_of(m, node, i & ~3));
}
ACCELMEM_RT_INLINE u32 Bitmasked_flag_shift(i32 i) { return 8 * static_cast<u32>(i & 3); }

// Inline forms of the X_* functions below (which are these over RuntimeMeta).
template <typename M>
ACCELMEM_RT_INLINE bool Bitmasked_is_active_inline(const M& m, Ptr node, i32 i) {
  return atomic_load_acquire(Bitmasked_flag_of(m, node, i)) != 0;
}
template <typename M>
ACCELMEM_RT_INLINE Ptr Bitmasked_lookup_element_inline(const M& m, Ptr node, i32 i) {
  return node + m.element_size() * static_cast<u64>(i);
}
// Tests the flag first: an active cell costs one load, an inactive one a load and a store.
template <typename M>
ACCELMEM_RT_INLINE void Bitmasked_activate_inline(const M& m, Ptr node, i32 i) {
  u8* flag = Bitmasked_flag_of(m, node, i);
  if (atomic_load_relaxed(flag) != 0) return;
#if defined(ARCH_cuda)
  atomic_or(Bitmasked_flag_word_of(m, node, i), u32{1} << Bitmasked_flag_shift(i));
#else
  atomic_store_release(flag, u8{1});
#endif
  StructMeta_mark_changed(m.base());
}
template <typename M>
ACCELMEM_RT_INLINE bool Bitmasked_deactivate_inline(const M& m, Ptr node, i32 i) {
  if (atomic_load_relaxed(Bitmasked_flag_of(m, node, i)) == 0) return false;
  const u32 shift = Bitmasked_flag_shift(i);
  // Only the thread that clears the flag zero-fills the cell.
  const u32 old = atomic_and(Bitmasked_flag_word_of(m, node, i), ~(u32{0xFF} << shift));
  if ((old >> shift & 0xFF) == 0) return false;
  StructMeta_mark_changed(m.base());
  mem_zero(Bitmasked_lookup_element_inline(m, node, i), m.element_size());
  return true;
}

// The out-of-line entry points.
i32 Bitmasked_get_num_elements(Ptr meta, Ptr node);
void Bitmasked_activate(Ptr meta, Ptr node, i32 i);
// Returns whether this call deactivated the cell (as Pointer_deactivate).
bool Bitmasked_deactivate(Ptr meta, Ptr node, i32 i);
bool Bitmasked_is_active(Ptr meta, Ptr node, i32 i);
Ptr Bitmasked_lookup_element(Ptr meta, Ptr node, i32 i);

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_DEVICE_SNODE_BITMASKED_H_
