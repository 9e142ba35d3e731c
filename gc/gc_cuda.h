// File: gc/gc_cuda.h
//
// The CUDA GC driver's interface: one collection of a device-resident NodeManager as three kernel
// launches (upstream codegen_cuda.cpp: phase 0 "gather_list" on a saturating grid of 64-thread
// blocks, phase 1 "reinit_lists" on one thread, phase 2 "zero_fill" on the same grid as phase 0;
// the kernel boundaries are the grid-wide barriers). The phase sources in gc/ are freestanding so
// that they compile to nvptx64 bitcode; building that bitcode and loading it is the job of the
// bitcode/CUDA backend, which does not exist yet.
//
// Until then CudaGcCollect compiles everywhere and returns FailedPrecondition("CUDA GC requires
// the CUDA backend") without touching anything: it never pretends to have collected.
#ifndef ACCELMEM_GC_GC_CUDA_H_
#define ACCELMEM_GC_GC_CUDA_H_

#include <cstdint>

#include "absl/status/status.h"

namespace accelmem {
namespace gc {

// Launch shape of the two parallel phases (upstream: grid = saturating_grid_dim, block = 64).
struct CudaGcLaunch {
  int grid_dim = 0;    // 0: enough blocks to fill the device
  int block_dim = 64;  // lanes per block in phase 2 (phase 0 uses grid_dim * block_dim workers)
};

// Collects the NodeManager at device address `device_node_manager` using the GcScratch at
// `device_scratch` on `stream` (a CUstream, or 0).
absl::Status CudaGcCollect(uint64_t device_node_manager, uint64_t device_scratch,
                           const CudaGcLaunch& launch, void* stream);

}  // namespace gc
}  // namespace accelmem

#endif  // ACCELMEM_GC_GC_CUDA_H_
