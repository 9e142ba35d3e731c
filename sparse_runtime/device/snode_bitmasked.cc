#include "sparse_runtime/device/snode_bitmasked.h"

namespace accelmem {
namespace sparse_runtime {

i32 Bitmasked_get_num_elements(Ptr meta, Ptr) {
  return static_cast<i32>(as_struct_meta(meta)->max_num_elements);
}

void Bitmasked_activate(Ptr meta, Ptr node, i32 i) {
  Bitmasked_activate_inline(RuntimeMeta{meta}, node, i);
}

bool Bitmasked_deactivate(Ptr meta, Ptr node, i32 i) {
  return Bitmasked_deactivate_inline(RuntimeMeta{meta}, node, i);
}

bool Bitmasked_is_active(Ptr meta, Ptr node, i32 i) {
  return Bitmasked_is_active_inline(RuntimeMeta{meta}, node, i);
}

Ptr Bitmasked_lookup_element(Ptr meta, Ptr node, i32 i) {
  return Bitmasked_lookup_element_inline(RuntimeMeta{meta}, node, i);
}

}  // namespace sparse_runtime
}  // namespace accelmem
