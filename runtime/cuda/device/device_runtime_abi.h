// File: runtime/cuda/device/device_runtime_abi.h
//
// Structs shared by the host side of //runtime/cuda:device_runtime and its device kernels
// (device_runtime_kernels.cc, compiled to nvptx64). Freestanding: no standard headers.
#ifndef ACCELMEM_RUNTIME_CUDA_DEVICE_DEVICE_RUNTIME_ABI_H_
#define ACCELMEM_RUNTIME_CUDA_DEVICE_DEVICE_RUNTIME_ABI_H_

#include "sparse_runtime/device/arch.h"

namespace accelmem {
namespace runtime {
namespace cuda {

// The allocator of one sparse SNode (runtime_initialize_snode_allocator's arguments).
struct DeviceAllocatorSpec {
  sparse_runtime::i32 snode_id;
  sparse_runtime::i32 chunk_num_elements;
  sparse_runtime::i32 max_num_chunks;
  sparse_runtime::i32 reserved;
  sparse_runtime::u64 node_size;
  sparse_runtime::u64 alignment;
};

inline constexpr sparse_runtime::i32 kDeviceErrorMessageBytes = 256;

}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_CUDA_DEVICE_DEVICE_RUNTIME_ABI_H_
