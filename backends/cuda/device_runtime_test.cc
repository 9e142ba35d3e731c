// The device runtime without a GPU: its entry points compile to PTX that ptxas assembles for
// sm_90, and creating it without a collector (hence without a device) fails with a clear status.
#include "backends/cuda/device_runtime.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "sparse_runtime/snode_tree.h"

namespace accelmem {
namespace backends {
namespace cuda {
namespace {

std::string g_ptxas;  // set by main() when the CUDA toolkit is configured

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
  if (g_ptxas.empty()) GTEST_SKIP() << "no CUDA toolkit configured: ptxas not given";
  auto ptx = DeviceRuntimePtx("sm_90");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp != nullptr ? tmp : "/tmp";
  const std::string ptx_path = dir + "/device_runtime.ptx";
  const std::string cubin = dir + "/device_runtime.cubin";
  std::ofstream(ptx_path) << *ptx;
  const std::string command = g_ptxas + " -arch=sm_90 -o " + cubin + " " + ptx_path;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
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

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc > 1) accelmem::backends::cuda::g_ptxas = argv[1];
  return RUN_ALL_TESTS();
}
