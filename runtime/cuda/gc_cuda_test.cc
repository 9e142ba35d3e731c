// The CUDA GC without a GPU: its kernels compile to PTX that ptxas assembles for sm_90, and
// running it without a device fails with a clear status.
#include "runtime/cuda/gc_cuda.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "runtime/cuda/bitcode_testing.h"
#include "runtime/cuda/gc_cuda_kernels_bitcode.h"
#include "runtime/cuda/ptxas_testing.h"

namespace accelmem {
namespace runtime {
namespace cuda {
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
  if (TestPtxas().empty()) {
    GTEST_SKIP() << "no CUDA toolkit configured: ptxas not given";
  }
  auto ptx = CudaGcPtx("sm_90");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  absl::Status assembled = AssembleWithPtxas(*ptx, "gc_cuda");
  EXPECT_TRUE(assembled.ok()) << assembled;
}

// An unknown SM is refused by the code generator instead of producing bad PTX.
TEST(GcCudaTest, UnknownSmIsAnError) {
  auto ptx = CudaGcPtx("sm_1");
  ASSERT_FALSE(ptx.ok());
  EXPECT_EQ(ptx.status().code(), absl::StatusCode::kInvalidArgument);
}

// The GC kernels' bitcode is compiled with every function convergent: their calls of the phases
// (which reach bar.sync and the runtime's warp primitives in runtime_cuda.bc) are convergent
// calls in convergent functions.
TEST(GcCudaTest, BarriersAreConvergent) {
  const gc_cuda_kernels_bitcode_file* file = gc_cuda_kernels_bitcode_find("gc_cuda_kernels.bc");
  ASSERT_NE(file, nullptr);
  auto report =
      CheckConvergence(absl::string_view(reinterpret_cast<const char*>(file->data), file->size));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_GT(report->convergent_calls, 0) << "the GC kernels call the phases";
  for (const std::string& error : report->errors) ADD_FAILURE() << error;
}

// A pool from PoolBytesFor holds every chunk with its worst-case alignment padding: 20000 cells
// of 4 KiB need two 64 MiB chunks, each aligned to 64 MiB, plus tables; chunks of 4096 cells are
// 16 MiB. Cells beyond 128 MiB chunks halve the chunk as NodeManager::init does.
TEST(GcCudaTest, PoolBytesForCoversAlignedChunks) {
  const uint64_t mib = uint64_t{1} << 20;
  EXPECT_GE(CudaNodeManager::PoolBytesFor(4096, 20000), 2 * 64 * mib + 64 * mib + 64 * mib);
  EXPECT_GE(CudaNodeManager::PoolBytesFor(4096, 5000, 4096), 2 * 16 * mib + 16 * mib + 64 * mib);
  EXPECT_LT(CudaNodeManager::PoolBytesFor(4096, 5000, 4096), 256 * mib);
  // 16384 cells of 64 KiB would be 1 GiB chunks: halved to 2048 cells (128 MiB) per chunk.
  EXPECT_LT(CudaNodeManager::PoolBytesFor(65536, 2048), 2 * 128 * mib + 128 * mib);
  EXPECT_GT(CudaNodeManager::PoolBytesFor(64, 1), 64 * mib);
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
}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem
