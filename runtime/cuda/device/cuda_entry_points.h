// File: runtime/cuda/device/cuda_entry_points.h
//
// The kernels the CUDA backend's host side launches by name (cuModuleGetFunction), besides the
// generated ones: X(name, (parameters)), every one `void` and extern "C". The device files
// (device_runtime_kernels.cc, gc_cuda_kernels.cc) include this header, so a definition whose
// parameters differ from the list does not compile; the host takes its name lists from here
// (DeviceRuntimeKernelNames, CudaGcKernelNames), so it names only declared kernels. The
// functions generated kernels call are another list: kernel_abi/kernel_abi.h.
//
// Freestanding C++17: included by device code and by host code.
#ifndef ACCELMEM_RUNTIME_CUDA_DEVICE_CUDA_ENTRY_POINTS_H_
#define ACCELMEM_RUNTIME_CUDA_DEVICE_CUDA_ENTRY_POINTS_H_

#include "gc/device/gc_batch.h"
#include "runtime/cuda/device/device_runtime_abi.h"
#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/device/runtime_context.h"
#include "sparse_runtime/device/runtime_memory.h"

// A sparse runtime in device memory (device_runtime_kernels.cc, //runtime/cuda:device_runtime).
#define ACCELMEM_CUDA_RUNTIME_ENTRY_POINTS(X)                                     \
  X(accelmem_cuda_runtime_layout, (i64 * out))                                    \
  X(accelmem_cuda_runtime_init,                                                   \
    (RuntimeContext * rt, Ptr pool, u64 pool_size, i32 num_snodes, u64 root_size, \
     const DeviceAllocatorSpec* specs, i32 num_specs, u64* out))                  \
  X(accelmem_cuda_runtime_take_error, (RuntimeContext * rt, i32 * code, char* message))

// The CUDA GC and a NodeManager in device memory (gc_cuda_kernels.cc, //runtime/cuda:gc_cuda):
// first the collection's kernels, one per step of gc/device/gc_batch.h's ACCELMEM_GC_BATCH_STEPS
// and in its (launch) order, each over a table of managers (one manager is a table of one), all
// with the same parameters; then the kernels that build and inspect a device NodeManager.
#define ACCELMEM_CUDA_GC_STEP_ENTRY_POINT(step, runner, X) \
  X(accelmem_cuda_gc_batch_##step, (GcBatchEntry * entries, i32 n, i32 num_workers))
#define ACCELMEM_CUDA_GC_ENTRY_POINTS(X)                                                       \
  ACCELMEM_GC_BATCH_STEPS(ACCELMEM_CUDA_GC_STEP_ENTRY_POINT, X)                                \
  X(accelmem_cuda_layout, (i64 * out))                                                         \
  X(accelmem_cuda_nm_init, (RuntimeMemory * memory, Ptr pool, u64 pool_size, NodeManager * nm, \
                            u64 node_size, i32 chunk_num_elements, i32 * ok))                  \
  X(accelmem_cuda_nm_allocate, (NodeManager * nm, i32 * out, i32 n))                           \
  X(accelmem_cuda_nm_recycle, (NodeManager * nm, const i32* indices, i32 n))                   \
  X(accelmem_cuda_nm_fill, (NodeManager * nm, const i32* indices, i32 n, u32 value))           \
  X(accelmem_cuda_nm_stats, (const NodeManager* nm, i32* out))                                 \
  X(accelmem_cuda_nm_free_indices, (const NodeManager* nm, i32* out, i32 capacity))            \
  X(accelmem_cuda_nm_count_nonzero, (const NodeManager* nm, const i32* indices, i32 n, u64* count))

namespace accelmem {
namespace runtime {
namespace cuda {
namespace entry_points_internal {

using gc::GcBatchEntry;
using sparse_runtime::i32;
using sparse_runtime::i64;
using sparse_runtime::NodeManager;
using sparse_runtime::Ptr;
using sparse_runtime::RuntimeContext;
using sparse_runtime::RuntimeMemory;
using sparse_runtime::u32;
using sparse_runtime::u64;

extern "C" {
#define ACCELMEM_CUDA_ENTRY_POINT_DECLARE(name, params) void name params;
ACCELMEM_CUDA_RUNTIME_ENTRY_POINTS(ACCELMEM_CUDA_ENTRY_POINT_DECLARE)
ACCELMEM_CUDA_GC_ENTRY_POINTS(ACCELMEM_CUDA_ENTRY_POINT_DECLARE)
#undef ACCELMEM_CUDA_ENTRY_POINT_DECLARE
}

}  // namespace entry_points_internal
}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_CUDA_DEVICE_CUDA_ENTRY_POINTS_H_
