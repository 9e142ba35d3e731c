// GPU entry points that build and inspect a sparse runtime in device memory
// (//runtime/cuda:device_runtime), declared in cuda_entry_points.h. Compiled only to nvptx64
// bitcode and linked with the runtime's runtime_cuda.bc into PTX at run time; freestanding C++17
// (sparse_runtime/device/arch.h), extern "C" names so the host finds them without demangling.
#include "runtime/cuda/device/cuda_entry_points.h"
#include "runtime/cuda/device/device_runtime_abi.h"
#include "sparse_runtime/device/runtime_context.h"
#include "sparse_runtime/device/runtime_memory.h"

using accelmem::runtime::cuda::DeviceAllocatorSpec;
using accelmem::runtime::cuda::kDeviceErrorMessageBytes;
using accelmem::sparse_runtime::i32;
using accelmem::sparse_runtime::i64;
using accelmem::sparse_runtime::Ptr;
using accelmem::sparse_runtime::RuntimeContext;
using accelmem::sparse_runtime::u64;

extern "C" {

// out[0] = sizeof(RuntimeContext) as compiled for the device (one thread).
void accelmem_cuda_runtime_layout(i64* out) { out[0] = sizeof(RuntimeContext); }

// One thread. `rt` (zeroed) takes the zero-filled pool [pool, pool + pool_size), gets its root
// buffer and per-SNode tables, and one allocator per spec. out[0] = 1 on success (0: the error is
// in rt->memory), out[1] = the root, out[2 + id] = the ambient element of SNode id (0 if none),
// out[2 + num_snodes + id] = its NodeManager (0 if none).
void accelmem_cuda_runtime_init(RuntimeContext* rt, Ptr pool, u64 pool_size, i32 num_snodes,
                                u64 root_size, const DeviceAllocatorSpec* specs, i32 num_specs,
                                u64* out) {
  accelmem::sparse_runtime::runtime_memory_init_preallocated(&rt->memory, pool, pool_size);
  out[0] = 0;
  if (!accelmem::sparse_runtime::runtime_context_init(rt, num_snodes, root_size)) return;
  for (i32 k = 0; k < num_specs; ++k) {
    const DeviceAllocatorSpec& s = specs[k];
    if (!accelmem::sparse_runtime::runtime_initialize_snode_allocator(
            rt, s.snode_id, s.node_size, s.alignment, s.chunk_num_elements, s.max_num_chunks)) {
      return;
    }
  }
  out[1] = reinterpret_cast<u64>(rt->root);
  for (i32 id = 0; id < num_snodes; ++id) {
    out[2 + id] = reinterpret_cast<u64>(rt->ambient_elements[id]);
    out[2 + num_snodes + id] = reinterpret_cast<u64>(rt->node_managers[id]);
  }
  out[0] = 1;
}

// One thread: copies the recorded error (code, NUL-terminated message) out and clears it.
void accelmem_cuda_runtime_take_error(RuntimeContext* rt, i32* code, char* message) {
  *code = accelmem::sparse_runtime::runtime_error_code(&rt->memory);
  for (i32 k = 0; k < kDeviceErrorMessageBytes; ++k) {
    message[k] = rt->memory.error_message[k];
    if (message[k] == 0) break;
  }
  message[kDeviceErrorMessageBytes - 1] = 0;
  accelmem::sparse_runtime::runtime_reset_error(&rt->memory);
}

}  // extern "C"
