// A downstream test of the JIT path from another repository: @accelmem//runtime/cpu:jit_backend
// pulls in the runtime bitcode (compiled by accelmem's clang genrules inside this workspace's
// external repository and embedded), the kernel builder and the ORC JIT; the host API then runs
// through JIT-compiled kernels.
#include <cstdint>

#include "gtest/gtest.h"
#include "runtime/cpu/jit_backend.h"
#include "runtime/sparse_runtime.h"
#include "sparse_runtime/snode_tree.h"

namespace {

using accelmem::runtime::SparseRuntime;
using accelmem::runtime::SparseRuntimeOptions;
using accelmem::sparse_runtime::Axis;
using accelmem::sparse_runtime::SNode;
using accelmem::sparse_runtime::SNodeTree;

// Writes through JIT kernels activate the path; inactive cells read 0; deactivation frees.
TEST(ConsumerJitTest, HostApiOnTheJitBackend) {
  SNodeTree tree;
  SNode& p = tree.root().pointer(Axis(0), 8);
  p.dense(Axis(0), 4).place<float>("x");
  ASSERT_TRUE(tree.Finalize().ok());
  const SNode& x = *tree.FindPlace("x");
  SparseRuntimeOptions options;
  options.kernel_backend = accelmem::runtime::cpu::JitBackend::Factory();
  auto rt = SparseRuntime::Create(tree, options);
  ASSERT_TRUE(rt.ok()) << rt.status();
  ASSERT_TRUE((*rt)->Write<float>(x, {5}, 2.5f).ok());
  EXPECT_EQ((*rt)->Read<float>(x, {5}).value(), 2.5f);
  EXPECT_EQ((*rt)->Read<float>(x, {20}).value(), 0.0f);
  EXPECT_TRUE((*rt)->IsActive(p, {1}).value());
  ASSERT_TRUE((*rt)->Deactivate(p, {1}).ok());
  EXPECT_EQ((*rt)->Read<float>(x, {5}).value(), 0.0f);
  EXPECT_EQ((*rt)->Stats(p).cells_in_use, 0);
}

}  // namespace
