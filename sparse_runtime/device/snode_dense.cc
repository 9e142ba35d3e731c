#include "sparse_runtime/device/snode_dense.h"

namespace accelmem {
namespace sparse_runtime {

i32 Dense_get_num_elements(Ptr meta, Ptr) {
  return static_cast<i32>(as_struct_meta(meta)->max_num_elements);
}
void Dense_activate(Ptr, Ptr, i32) {}
bool Dense_is_active(Ptr, Ptr, i32) { return true; }

}  // namespace sparse_runtime
}  // namespace accelmem
