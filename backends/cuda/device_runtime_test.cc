// The device runtime without a GPU: its entry points compile to PTX that ptxas assembles for
// sm_90, and creating it without a collector (hence without a device) fails with a clear status.
#include "backends/cuda/device_runtime.h"

#include <string>

#include "backends/cuda/ptxas_testing.h"
#include "gtest/gtest.h"
#include "sparse_runtime/snode_tree.h"

namespace accelmem {
namespace backends {
namespace cuda {
namespace {

// Every device-runtime entry point is a PTX entry for the requested SM.
TEST(DeviceRuntimeTest, PtxHasAnEntryPerKernel) {
  auto ptx = DeviceRuntimePtx("sm_90");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_NE(ptx->find(".target sm_90"), std::string::npos);
  for (const std::string& name : DeviceRuntimeKernelNames()) {
    EXPECT_NE(ptx->find(".entry " + name), std::string::npos) << name;
  }
}

// The PTX (with the runtime's context and allocator initialization linked in) assembles.
TEST(DeviceRuntimeTest, PtxasAssemblesForSm90) {
  if (TestPtxas().empty()) GTEST_SKIP() << "no CUDA toolkit configured: ptxas not given";
  auto ptx = DeviceRuntimePtx("sm_90");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  absl::Status assembled = AssembleWithPtxas(*ptx, "device_runtime");
  EXPECT_TRUE(assembled.ok()) << assembled;
}

// Without a CUDA GC (no driver, no device) there is no device runtime; the status says so.
TEST(DeviceRuntimeTest, CreateNeedsTheCudaGc) {
  sparse_runtime::SNodeTree tree;
  tree.root().dense(sparse_runtime::Axis(0), 16).place<float>("x");
  ASSERT_TRUE(tree.Finalize().ok());
  auto rt = CudaSparseRuntime::Create(nullptr, tree, 1 << 20);
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(rt.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cuda
}  // namespace backends
}  // namespace accelmem
