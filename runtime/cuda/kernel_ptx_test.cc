// Every kernel kind of the kernel builder (range activate / write / sum / atomic add / deactivate /
// append, the seven point ops, struct-for, the GC kernels), built over runtime_cuda.bc with device
// entries, lowers to PTX for sm_90 and assembles with ptxas (skipped without a CUDA toolkit).
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/kernel_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cuda/ptx_codegen.h"
#include "runtime/cuda/ptxas_testing.h"
#include "runtime/runtime_bitcode.h"
#include "sparse_runtime/snode_tree.h"

namespace accelmem {
namespace runtime {
namespace cuda {
namespace {

using codegen::GcKernel;
using codegen::GcKernelName;
using codegen::KernelBuilder;
using codegen::KernelModule;
using codegen::kNumGcKernels;
using sparse_runtime::Axis;
using sparse_runtime::PointOp;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;
using ::testing::HasSubstr;

const Axis i(0), j(1), k(2);

// Builds every kernel kind with a device entry each; returns the entry names.
std::vector<std::string> BuildAll(KernelBuilder& kb, const SNodeTree& tree) {
  const SNode& x = *tree.FindPlace("x");
  const SNode& d = *tree.FindPlace("d");
  const SNode& bm = *x.parent()->parent();
  const SNode& ptr = *bm.parent();
  const SNode& dyn = *d.parent();
  std::vector<std::string> kernels;
  auto add = [&](const std::string& name, absl::Status status) {
    EXPECT_TRUE(status.ok()) << name << ": " << status;
    kernels.push_back(name);
  };
  add("activate", kb.AddRangeActivate("activate", bm, {{1, 0, 0}}));
  add("write", kb.AddRangeWrite("write", x, {{1, 0, 0}}, 2.0, 1.0));
  add("sum", kb.AddRangeSum("sum", x, {{1, 0, 0}}));
  add("atomic_add", kb.AddRangeAtomicAdd("atomic_add", x, {{1, 0, 0}}, 0.0, 1.0));
  add("deactivate", kb.AddRangeDeactivate("deactivate", ptr, {{1, 0, 0}}));
  add("append", kb.AddRangeAppend("append", d, {{1, 4, 0}}, 1.0, 0.0));
  add("p_activate", kb.AddPoint("p_activate", PointOp::kActivate, bm));
  add("p_deactivate", kb.AddPoint("p_deactivate", PointOp::kDeactivate, ptr));
  add("p_is_active", kb.AddPoint("p_is_active", PointOp::kIsActive, bm));
  add("p_read", kb.AddPoint("p_read", PointOp::kRead, x));
  add("p_write", kb.AddPoint("p_write", PointOp::kWrite, x));
  add("p_append", kb.AddPoint("p_append", PointOp::kAppend, d));
  add("p_length", kb.AddPoint("p_length", PointOp::kLength, dyn));
  add("p_deactivate_dynamic", kb.AddPoint("p_deactivate_dynamic", PointOp::kDeactivate, dyn));
  add("struct_for_x", kb.AddStructFor("struct_for_x", x));
  add("struct_for_d", kb.AddStructFor("struct_for_d", d));
  // The GC kernels of both allocator kinds (pointer, dynamic).
  for (const auto& [prefix, snode] :
       {std::make_pair("gc_ptr", &ptr), std::make_pair("gc_dyn", &dyn)}) {
    absl::Status status = kb.AddGc(prefix, *snode);
    EXPECT_TRUE(status.ok()) << prefix << ": " << status;
    for (int n = 0; n < kNumGcKernels; ++n) kernels.push_back(GcKernelName(prefix, GcKernel(n)));
  }
  std::vector<std::string> entries;
  for (const std::string& kernel : kernels) {
    const std::string entry = "entry_" + kernel;
    absl::Status status = kb.AddDeviceEntry(entry, kernel);
    EXPECT_TRUE(status.ok()) << entry << ": " << status;
    entries.push_back(entry);
  }
  return entries;
}

// The number of parameters of `.entry name(...)` in `ptx`, or -1 if absent.
int EntryParams(const std::string& ptx, const std::string& name) {
  const size_t begin = ptx.find(absl::StrCat(".entry ", name, "("));
  if (begin == std::string::npos) return -1;
  const size_t end = ptx.find(')', begin);
  int n = 0;
  for (size_t p = ptx.find(".param", begin); p < end; p = ptx.find(".param", p + 1)) ++n;
  return n;
}

// All kinds lower to PTX `.entry` functions for sm_90 (with the CUDA runtime linked in)
// and the PTX assembles with ptxas -arch=sm_90.
TEST(KernelPtxTest, EveryKernelKindAssemblesForSm90) {
  SNodeTree tree;
  tree.root().pointer(i, 8).bitmasked(i, 4).dense(i, 4).place<float>("x");
  tree.root().dense(j, 4).dynamic(k, 64, 8).place<int32_t>("d");
  ASSERT_TRUE(tree.Finalize().ok());
  auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kCuda), tree);
  ASSERT_TRUE(kb.ok()) << kb.status();
  std::vector<std::string> entries = BuildAll(**kb, tree);
  KernelModule km = (*kb)->Finish();
  auto ptx = CompileToPtx(*km.module, entries, RuntimeBitcode(RuntimeArch::kCuda));
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_THAT(*ptx, HasSubstr(".target sm_90"));
  for (const std::string& entry : entries) {
    EXPECT_THAT(*ptx, HasSubstr(absl::StrCat(".entry ", entry, "("))) << entry;
  }
  EXPECT_EQ(ptx->find(".extern"), std::string::npos);  // the runtime is linked in, not external
  // GC entries take worker and lane ids from the grid, not as parameters.
  const std::pair<GcKernel, int> gc_params[] = {{GcKernel::kPrepare, 4},
                                                {GcKernel::kPhase0, 3},
                                                {GcKernel::kPhase1, 3},
                                                {GcKernel::kPhase2, 2},
                                                {GcKernel::kSerial, 3}};
  for (const auto& [kind, params] : gc_params) {
    const std::string entry = "entry_" + GcKernelName("gc_ptr", kind);
    EXPECT_EQ(EntryParams(*ptx, entry), params) << entry;
  }
  // Each generated entry against its row of runtime/cuda/testdata/kernel_budgets.txt: a fence
  // added to a lookup, a point op or a struct-for fails here (ptxas -v also assembles the PTX).
  bool ptxas_checked = false;
  EXPECT_EQ(CheckKernelBudgets(*ptx, entries, "kernels", &ptxas_checked), "");
  // The promise, beyond the table's fingerprint: lookups, reads and struct-fors pay no
  // fence anywhere (acquire loads are ld.acquire, not a volatile load and membar.gl).
  const auto counts = CountPtxOrdering(*ptx);
  for (const char* entry : {"entry_p_read", "entry_p_is_active", "entry_p_length", "entry_sum",
                            "entry_struct_for_x", "entry_struct_for_d"}) {
    ASSERT_EQ(counts.count(entry), 1u) << entry;
    EXPECT_EQ(counts.at(entry).fence, 0) << entry;
  }
  if (!ptxas_checked) GTEST_SKIP() << "no CUDA toolkit configured: ptxas not given";
}

// Device entries need the NVPTX runtime and an existing kernel.
TEST(KernelPtxTest, DeviceEntryErrors) {
  SNodeTree tree;
  tree.root().dense(i, 4).place<float>("x");
  ASSERT_TRUE(tree.Finalize().ok());
  auto host = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), tree);
  ASSERT_TRUE(host.ok()) << host.status();
  ASSERT_TRUE((*host)->AddRangeSum("sum", *tree.FindPlace("x"), {{1, 0, 0}}).ok());
  EXPECT_EQ((*host)->AddDeviceEntry("e", "sum").code(), absl::StatusCode::kFailedPrecondition);
  auto device = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kCuda), tree);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ((*device)->AddDeviceEntry("e", "nope").code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem
