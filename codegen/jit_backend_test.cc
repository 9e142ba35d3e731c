// The sparse runtime suite on the JIT backend, and the backend's own checks.
#include "codegen/jit_backend.h"

#include <cstdint>
#include <memory>

#include "codegen/kernel_cache.h"
#include "gtest/gtest.h"
#include "sparse_runtime/runtime_bitcode.h"
#include "sparse_runtime/sparse_runtime_test_suite.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

INSTANTIATE_TEST_SUITE_P(Jit, SparseRuntimeTest,
                         ::testing::Values(RuntimeBackendParam{"Jit",
                                                               codegen::JitBackend::Factory()}),
                         RuntimeBackendName);

const Axis i(0);

std::unique_ptr<SparseRuntime> MakeJit(SNodeTree& tree, codegen::KernelCache* cache) {
  EXPECT_TRUE(tree.Finalize().ok());
  SparseRuntimeOptions options;
  options.kernel_backend = codegen::JitBackend::Factory(cache);
  auto rt = SparseRuntime::Create(tree, options);
  EXPECT_TRUE(rt.ok()) << rt.status();
  return std::move(rt).value();
}

// Operations really run through the JIT backend: each (SNode, op) is compiled once, and a second
// runtime of the same tree shape reuses the compiled kernels (cache hits, no new compile).
TEST(JitBackendTest, KernelsCompiledOncePerShape) {
  auto cache = codegen::KernelCache::Create(RuntimeBitcode(RuntimeArch::kX64));
  ASSERT_TRUE(cache.ok()) << cache.status();
  SNodeTree tree_a, tree_b;
  tree_a.root().pointer(i, 8).place<int32_t>("x");
  tree_b.root().pointer(i, 8).place<int32_t>("x");
  auto a = MakeJit(tree_a, cache->get());
  auto b = MakeJit(tree_b, cache->get());
  ASSERT_NE(a->kernel_backend(), nullptr);
  ASSERT_TRUE(a->Write<int32_t>(*tree_a.FindPlace("x"), {3}, 7).ok());
  ASSERT_TRUE(a->Write<int32_t>(*tree_a.FindPlace("x"), {4}, 8).ok());
  EXPECT_EQ((*cache)->misses(), 1);
  ASSERT_TRUE(b->Write<int32_t>(*tree_b.FindPlace("x"), {3}, 9).ok());
  EXPECT_EQ((*cache)->misses(), 1);
  EXPECT_EQ((*cache)->hits(), 1);
  EXPECT_EQ(a->Read<int32_t>(*tree_a.FindPlace("x"), {3}).value(), 7);
  EXPECT_EQ(b->Read<int32_t>(*tree_b.FindPlace("x"), {3}).value(), 9);
  EXPECT_EQ(b->Read<int32_t>(*tree_b.FindPlace("x"), {4}).value(), 0);
  EXPECT_EQ((*cache)->misses(), 2);  // the read kernel
}

// A factory that fails makes SparseRuntime::Create fail with its status.
TEST(JitBackendTest, FailingFactoryFailsCreate) {
  SNodeTree tree;
  tree.root().dense(i, 4).place<float>("x");
  ASSERT_TRUE(tree.Finalize().ok());
  SparseRuntimeOptions options;
  options.kernel_backend = [](SparseRuntime*) -> absl::StatusOr<std::unique_ptr<KernelBackend>> {
    return absl::UnavailableError("no backend");
  };
  EXPECT_EQ(SparseRuntime::Create(tree, options).status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem
