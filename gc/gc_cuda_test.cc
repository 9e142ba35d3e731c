#include "gc/gc_cuda.h"

#include "gtest/gtest.h"

namespace accelmem {
namespace gc {
namespace {

// Until the bitcode/CUDA backend exists the driver refuses honestly instead of pretending.
TEST(GcCudaTest, RequiresTheCudaBackend) {
  absl::Status status = CudaGcCollect(0x1000, 0x2000, CudaGcLaunch{}, nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(), "CUDA GC requires the CUDA backend");
}

}  // namespace
}  // namespace gc
}  // namespace accelmem
