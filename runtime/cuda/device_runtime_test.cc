// The device runtime without a GPU: its entry points compile to PTX that ptxas assembles for
// sm_90, and creating it without a collector (hence without a device) fails with a clear status.
#include "runtime/cuda/device_runtime.h"

#include <string>

#include "gtest/gtest.h"
#include "runtime/cuda/bitcode_testing.h"
#include "runtime/cuda/device_runtime_kernels_bitcode.h"
#include "runtime/cuda/ptxas_testing.h"
#include "runtime/runtime_bitcode.h"
#include "sparse_runtime/snode_tree.h"

namespace accelmem {
namespace runtime {
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

// The nvptx64 runtime and the device runtime's entry points are compiled with every function
// convergent: the runtime's warp primitives (activemask, match.any.sync, bar.warp.sync in
// locked_task) are convergent calls in convergent functions, so LLVM cannot move them across
// divergent branches.
TEST(DeviceRuntimeTest, WarpPrimitivesAreConvergent) {
  auto runtime =
      CheckConvergence(sparse_runtime::RuntimeBitcode(sparse_runtime::RuntimeArch::kCuda));
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  EXPECT_GT(runtime->convergent_calls, 0) << "runtime_cuda.bc has warp primitives";
  for (const std::string& error : runtime->errors) ADD_FAILURE() << "runtime_cuda.bc: " << error;
  const device_runtime_kernels_bitcode_file* file =
      device_runtime_kernels_bitcode_find("device_runtime_kernels.bc");
  ASSERT_NE(file, nullptr);
  auto kernels =
      CheckConvergence(absl::string_view(reinterpret_cast<const char*>(file->data), file->size));
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  for (const std::string& error : kernels->errors) ADD_FAILURE() << "kernels: " << error;
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
}  // namespace runtime
}  // namespace accelmem
