#include "gc/gc_cuda.h"

namespace accelmem {
namespace gc {

absl::Status CudaGcCollect(uint64_t device_node_manager, uint64_t device_scratch,
                           const CudaGcLaunch& launch, void* stream) {
  return absl::FailedPreconditionError("CUDA GC requires the CUDA backend");
}

}  // namespace gc
}  // namespace accelmem
