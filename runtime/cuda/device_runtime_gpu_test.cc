// Runs only with --config=gpu on a machine with an NVIDIA GPU (tag "gpu"); skips with a message
// when no device is visible, or fails when ACCELMEM_REQUIRE_GPU=1 (gpu_testing.h). Kernels
// from //codegen:kernel_builder, lowered to PTX with runtime_cuda.bc, run on a sparse runtime that
// lives in device memory: activation from many threads, deactivation, the device GC and reuse of
// the collected cells, atomic adds, and allocator exhaustion reported as a status.
#include <cstdint>
#include <memory>

#include "codegen/kernel_builder.h"
#include "gtest/gtest.h"
#include "runtime/cuda/device_runtime.h"
#include "runtime/cuda/driver.h"
#include "runtime/cuda/gc_cuda.h"
#include "runtime/cuda/gpu_testing.h"
#include "runtime/runtime_bitcode.h"
#include "sparse_runtime/snode_tree.h"

namespace accelmem {
namespace runtime {
namespace cuda {
namespace {

using codegen::KernelBuilder;
using sparse_runtime::Axis;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;

const Axis i(0);

class DeviceRuntimeGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ACCELMEM_OPEN_GPU_OR_SKIP(driver_);
    auto gc = CudaGc::Create(driver_.get());
    ASSERT_TRUE(gc.ok()) << gc.status();
    gc_ = std::move(*gc);
  }
  std::unique_ptr<CudaDriver> driver_;
  std::unique_ptr<CudaGc> gc_;
};

// Write, sum, deactivate, collect and write again on the device; values and allocator counts
// are what the host runtime gives for the same kernels.
TEST_F(DeviceRuntimeGpuTest, WriteDeactivateCollectReuse) {
  SNodeTree tree;
  SNode& p = tree.root().pointer(i, 64);
  p.dense(i, 64).place<float>("x");
  ASSERT_TRUE(tree.Finalize().ok());
  const SNode& x = *tree.FindPlace("x");
  auto rt = CudaSparseRuntime::Create(gc_.get(), tree, uint64_t{64} << 20);
  ASSERT_TRUE(rt.ok()) << rt.status();

  auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kCuda), tree);
  ASSERT_TRUE(kb.ok()) << kb.status();
  ASSERT_TRUE((*kb)->AddRangeWrite("write", x, {{1, 0, 0}}, 2.0, 1.0).ok());
  ASSERT_TRUE((*kb)->AddRangeSum("sum", x, {{1, 0, 0}}).ok());
  ASSERT_TRUE((*kb)->AddRangeDeactivate("deactivate", p, {{1, 0, 0}}).ok());
  for (const char* k : {"write", "sum", "deactivate"}) {
    ASSERT_TRUE((*kb)->AddDeviceEntry(std::string("entry_") + k, k).ok()) << k;
  }
  auto module = (*rt)->Load((*kb)->Finish());
  ASSERT_TRUE(module.ok()) << module.status();

  auto written = (*rt)->RunRange(*module, "entry_write", 0, 4096);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(*written, 4096);
  auto sum = (*rt)->RunRangeSum(*module, "entry_sum", 0, 4096);
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(*sum, 4096.0 * 4096.0);  // sum of 2i+1 for i < 4096
  auto stats = (*rt)->Stats(p);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->in_use, 64) << "every pointer cell activated once, from many threads";

  auto deactivated = (*rt)->RunRange(*module, "entry_deactivate", 0, 32);
  ASSERT_TRUE(deactivated.ok()) << deactivated.status();
  EXPECT_EQ(*deactivated, 32);
  ASSERT_TRUE((*rt)->CollectGarbage().ok());
  stats = (*rt)->Stats(p);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->recycled, 0);
  EXPECT_EQ(stats->free, 32);
  EXPECT_EQ(stats->in_use, 32);
  sum = (*rt)->RunRangeSum(*module, "entry_sum", 0, 4096);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 4096.0 * 4096.0 - 2048.0 * 2048.0) << "deactivated cells read 0";

  written = (*rt)->RunRange(*module, "entry_write", 0, 2048);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(*written, 2048);
  stats = (*rt)->Stats(p);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->reserved, 64) << "collected cells are reused, none newly reserved";
  sum = (*rt)->RunRangeSum(*module, "entry_sum", 0, 4096);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 4096.0 * 4096.0);
}

// Atomic adds from every thread of the grid into 64 cells lose nothing.
TEST_F(DeviceRuntimeGpuTest, AtomicAddsFromTheWholeGrid) {
  SNodeTree tree;
  tree.root().pointer(i, 16).dense(i, 4).place<int32_t>("x");
  ASSERT_TRUE(tree.Finalize().ok());
  const SNode& x = *tree.FindPlace("x");
  auto rt = CudaSparseRuntime::Create(gc_.get(), tree, uint64_t{16} << 20);
  ASSERT_TRUE(rt.ok()) << rt.status();
  auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kCuda), tree);
  ASSERT_TRUE(kb.ok()) << kb.status();
  ASSERT_TRUE((*kb)->AddRangeAtomicAdd("add", x, {{1, 64, 0}}, 0.0, 1.0).ok());
  ASSERT_TRUE((*kb)->AddRangeSum("sum", x, {{1, 0, 0}}).ok());
  ASSERT_TRUE((*kb)->AddDeviceEntry("entry_add", "add").ok());
  ASSERT_TRUE((*kb)->AddDeviceEntry("entry_sum", "sum").ok());
  auto module = (*rt)->Load((*kb)->Finish());
  ASSERT_TRUE(module.ok()) << module.status();
  auto added = (*rt)->RunRange(*module, "entry_add", 0, 64000);
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(*added, 64000);
  auto sum = (*rt)->RunRangeSum(*module, "entry_sum", 0, 64);
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(*sum, 64000.0);
}

// A device pool too small for the cells is ResourceExhausted with the runtime's message, not a
// crash or a silent partial write.
TEST_F(DeviceRuntimeGpuTest, ExhaustedPoolIsResourceExhausted) {
  SNodeTree tree;
  tree.root().pointer(i, 1024).dense(i, 1024).place<float>("x");
  ASSERT_TRUE(tree.Finalize().ok());
  const SNode& x = *tree.FindPlace("x");
  CudaSparseRuntimeOptions options;
  options.chunk_num_elements = 64;
  // The three chunk tables of the default 131072 chunks (1 MiB each) would not fit the 1 MiB pool
  // and Create would fail before any cell is written; 64 chunks of 64 cells hold every cell, so
  // it is the pool's bytes that run out.
  options.max_num_chunks = 64;
  auto rt = CudaSparseRuntime::Create(gc_.get(), tree, uint64_t{1} << 20, options);
  ASSERT_TRUE(rt.ok()) << rt.status();
  auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kCuda), tree);
  ASSERT_TRUE(kb.ok()) << kb.status();
  ASSERT_TRUE((*kb)->AddRangeWrite("write", x, {{1, 0, 0}}, 1.0, 0.0).ok());
  ASSERT_TRUE((*kb)->AddDeviceEntry("entry_write", "write").ok());
  auto module = (*rt)->Load((*kb)->Finish());
  ASSERT_TRUE(module.ok()) << module.status();
  auto written = (*rt)->RunRange(*module, "entry_write", 0, 1024 * 1024);
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.status().code(), absl::StatusCode::kResourceExhausted) << written.status();
}

}  // namespace
}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem
