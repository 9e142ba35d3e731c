// The CUDA GC without a GPU: its kernels compile to PTX that ptxas assembles for sm_90, and
// running it without a device fails with a clear status.
#include "gc/gc_cuda.h"

#include <string>

#include "backends/cuda/ptxas_testing.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace gc {
namespace {

// Every GC phase and device NodeManager kernel is emitted as a PTX entry for the requested SM.
TEST(GcCudaTest, PtxHasAnEntryPerKernel) {
  auto ptx = CudaGcPtx("sm_90");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_NE(ptx->find(".target sm_90"), std::string::npos);
  for (const std::string& name : CudaGcKernelNames()) {
    EXPECT_NE(ptx->find(".entry " + name), std::string::npos) << name;
  }
  // Phase 2's block lanes meet at bar.sync; phase 0 of a grid marks the bitmap atomically.
  EXPECT_NE(ptx->find("bar.sync"), std::string::npos);
  EXPECT_NE(ptx->find("atom.or.b64"), std::string::npos);
}

// The PTX of the GC kernels (with the runtime linked in) assembles with ptxas for sm_90.
TEST(GcCudaTest, PtxasAssemblesTheGcKernelsForSm90) {
  if (backends::cuda::TestPtxas().empty()) {
    GTEST_SKIP() << "no CUDA toolkit configured: ptxas not given";
  }
  auto ptx = CudaGcPtx("sm_90");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  absl::Status assembled = backends::cuda::AssembleWithPtxas(*ptx, "gc_cuda");
  EXPECT_TRUE(assembled.ok()) << assembled;
}

// An unknown SM is refused by the code generator instead of producing bad PTX.
TEST(GcCudaTest, UnknownSmIsAnError) {
  auto ptx = CudaGcPtx("sm_1");
  ASSERT_FALSE(ptx.ok());
  EXPECT_EQ(ptx.status().code(), absl::StatusCode::kInvalidArgument);
}

// Without a driver the collector cannot be created; the status says why.
TEST(GcCudaTest, CreateNeedsADriver) {
  auto gc = CudaGc::Create(nullptr);
  ASSERT_FALSE(gc.ok());
  EXPECT_EQ(gc.status().code(), absl::StatusCode::kInvalidArgument);
  auto driver = CudaDriver::Open();
  if (driver.ok()) GTEST_SKIP() << "a CUDA device is visible; see gc_cuda_gpu_test";
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace gc
}  // namespace accelmem
