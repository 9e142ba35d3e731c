// The device runtime without a GPU: its entry points compile to PTX that ptxas assembles for
// sm_90, the metas it copies to the device hold no host address, and creating it without a
// collector (hence without a device) fails with a clear status.
#include "runtime/cuda/device_runtime.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cuda/bitcode_testing.h"
#include "runtime/cuda/device_runtime_kernels_bitcode.h"
#include "runtime/cuda/ptxas_testing.h"
#include "runtime/runtime_bitcode.h"
#include "runtime/sparse_runtime.h"
#include "sparse_runtime/device/snode_pointer.h"
#include "sparse_runtime/device/struct_meta.h"
#include "sparse_runtime/snode_tree.h"

namespace accelmem {
namespace runtime {
namespace cuda {
namespace {

// The metas copied to the device point at the device context, carry no host function pointers
// and leave pointer SNodes unbound: the host runtime caches its cells' contiguous origin in each
// PointerMeta, an address the device must never use (its data lists are chunked and take the
// chunk-table path when cell_origin is 0). Everything else is the host's meta, byte for byte.
TEST(DeviceRuntimeTest, DeviceMetasDropHostAddresses) {
  using sparse_runtime::PointerMeta;
  using sparse_runtime::SNodeType;
  using sparse_runtime::StructMeta;
  sparse_runtime::SNodeTree tree;
  const sparse_runtime::Axis i(0);
  tree.root().pointer(i, 64).dense(i, 4).place<int32_t>("x");
  tree.root().pointer(i, 8).place<float>("y");
  ASSERT_TRUE(tree.Finalize().ok());
  auto host = runtime::SparseRuntime::Create(tree);
  ASSERT_TRUE(host.ok()) << host.status();
  constexpr uint64_t kDeviceContext = 0xdead0000;
  const uint64_t slot_bytes = internal::DeviceMetaSlotBytes();
  ASSERT_GE(slot_bytes, sizeof(PointerMeta));
  const std::vector<unsigned char> structs =
      internal::DeviceMetaStructs(**host, tree, kDeviceContext);
  ASSERT_EQ(structs.size(), static_cast<size_t>(tree.num_snodes()) * slot_bytes);
  int pointers = 0;
  for (int id = 0; id < tree.num_snodes(); ++id) {
    const unsigned char* slot = structs.data() + id * slot_bytes;
    const bool is_pointer = tree.snode(id).type() == SNodeType::kPointer;
    // What the device should get: the host's meta with exactly these fields replaced.
    const size_t bytes = is_pointer ? sizeof(PointerMeta) : sizeof(StructMeta);
    std::vector<unsigned char> expected(bytes);
    std::memcpy(expected.data(), (*host)->meta(tree.snode(id)), bytes);
    StructMeta* meta = reinterpret_cast<StructMeta*>(expected.data());
    meta->context = reinterpret_cast<sparse_runtime::RuntimeContext*>(kDeviceContext);
    meta->lookup_element = nullptr;
    meta->from_parent_element = nullptr;
    meta->is_active = nullptr;
    meta->get_num_elements = nullptr;
    if (is_pointer) {
      ++pointers;
      PointerMeta* pointer = reinterpret_cast<PointerMeta*>(expected.data());
      EXPECT_NE(pointer->cell_origin, 0u) << "the host runtime binds its pointer metas";
      pointer->cell_origin = 0;
    }
    EXPECT_EQ(std::memcmp(slot, expected.data(), bytes), 0) << "snode " << id;
  }
  EXPECT_EQ(pointers, 2);
}

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

// The device runtime's entries against their rows of runtime/cuda/testdata/kernel_budgets.txt
// (see GcCudaTest.PtxBudgetsPerEntry).
TEST(DeviceRuntimeTest, PtxBudgetsPerEntry) {
  auto ptx = DeviceRuntimePtx("sm_90");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  bool ptxas_checked = false;
  EXPECT_EQ(CheckKernelBudgets(*ptx, DeviceRuntimeKernelNames(), "device_runtime_budgets",
                               &ptxas_checked),
            "");
  if (!ptxas_checked) GTEST_SKIP() << "no CUDA toolkit configured: only the PTX counts checked";
}

// The nvptx64 runtime and the device runtime's entry points are compiled with every function
// convergent: the runtime's warp primitives (activemask, match.any.sync, bar.warp.sync in
// locked_task) are convergent calls in convergent functions, so LLVM cannot move them across
// divergent branches.
TEST(DeviceRuntimeTest, WarpPrimitivesAreConvergent) {
  auto runtime = CheckConvergence(runtime::RuntimeBitcode(runtime::RuntimeArch::kCuda));
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
