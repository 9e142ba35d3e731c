#include "sparse_runtime/device/snode_bitmasked.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

ACCELMEM_RT_INLINE u32* mask_word(Ptr meta, Ptr node, i32 i) {
  const StructMeta* m = as_struct_meta(meta);
  return reinterpret_cast<u32*>(node +
                                Bitmasked_mask_offset(m->element_size, m->max_num_elements)) +
         (i >> 5);
}

}  // namespace

i32 Bitmasked_get_num_elements(Ptr meta, Ptr) {
  return static_cast<i32>(as_struct_meta(meta)->max_num_elements);
}

void Bitmasked_activate(Ptr meta, Ptr node, i32 i) {
  u32* word = mask_word(meta, node, i);
  const u32 bit = u32{1} << (i & 31);
  if ((atomic_load_relaxed(word) & bit) == 0) atomic_or(word, bit);
}

void Bitmasked_deactivate(Ptr meta, Ptr node, i32 i) {
  u32* word = mask_word(meta, node, i);
  const u32 bit = u32{1} << (i & 31);
  if ((atomic_load_relaxed(word) & bit) == 0) return;
  if ((atomic_and(word, ~bit) & bit) != 0) {
    const u64 es = as_struct_meta(meta)->element_size;
    mem_zero(node + es * static_cast<u64>(i), es);
  }
}

bool Bitmasked_is_active(Ptr meta, Ptr node, i32 i) {
  return (atomic_load_acquire(mask_word(meta, node, i)) >> (i & 31) & 1) != 0;
}

Ptr Bitmasked_lookup_element(Ptr meta, Ptr node, i32 i) {
  return node + as_struct_meta(meta)->element_size * static_cast<u64>(i);
}

}  // namespace sparse_runtime
}  // namespace accelmem
