// Freestanding implementation of RuntimeContext (see runtime_context.h).
#include "sparse_runtime/device/runtime_context.h"

namespace accelmem {
namespace sparse_runtime {

bool runtime_context_init(RuntimeContext* rt, i32 num_snodes, u64 root_size) {
  if (num_snodes <= 0) {
    report_error(&rt->memory, kErrorInvalidArgument, "runtime: num_snodes must be positive",
                 num_snodes);
    return false;
  }
  rt->num_snodes = num_snodes;
  rt->root_size = round_up_u64(max_of<u64>(root_size, 1), 4096);
  rt->root = allocate_aligned(&rt->memory, rt->root_size, 4096, true);
  const u64 n = static_cast<u64>(num_snodes);
  rt->node_managers =
      reinterpret_cast<NodeManager**>(allocate_aligned(&rt->memory, sizeof(void*) * n, 64, true));
  rt->ambient_elements =
      reinterpret_cast<Ptr*>(allocate_aligned(&rt->memory, sizeof(void*) * n, 64, true));
  rt->ambient_sizes =
      reinterpret_cast<u64*>(allocate_aligned(&rt->memory, sizeof(u64) * n, 64, true));
  return rt->root != nullptr && rt->node_managers != nullptr && rt->ambient_elements != nullptr &&
         rt->ambient_sizes != nullptr;
}

bool runtime_initialize_snode_allocator(RuntimeContext* rt, i32 snode_id, u64 node_size,
                                        u64 alignment, i32 chunk_num_elements, i32 max_num_chunks) {
  if (snode_id < 0 || snode_id >= rt->num_snodes) {
    report_error(&rt->memory, kErrorInvalidArgument, "runtime: snode id out of range", snode_id);
    return false;
  }
  auto* nm = reinterpret_cast<NodeManager*>(
      allocate_aligned(&rt->memory, sizeof(NodeManager), alignof(NodeManager), true));
  if (nm == nullptr) return false;
  if (!nm->init(&rt->memory, node_size, alignment, chunk_num_elements, max_num_chunks)) {
    return false;
  }
  // With a contiguous data list the ambient element is the zero lead element in front of the
  // cells (ListManager::kContiguousLeadElements): a pointer slot's value v then maps
  // to origin + v * element_size with no test, inactive (0) onto this ambient element.
  Ptr ambient =
      nm->data_list.is_contiguous()
          ? nm->data_list.contiguous_base - ListManager::kContiguousLeadElements * nm->element_size
          : allocate_aligned(&rt->memory, nm->element_size, 128, true);
  if (ambient == nullptr) return false;
  rt->node_managers[snode_id] = nm;
  rt->ambient_elements[snode_id] = ambient;
  rt->ambient_sizes[snode_id] = nm->element_size;
  return true;
}

void runtime_gc_serial(RuntimeContext* rt, i32 snode_id) {
  NodeManager* nm = rt->node_managers[snode_id];
  if (nm != nullptr) nm->gc_serial();
}

}  // namespace sparse_runtime
}  // namespace accelmem
