// The sparse runtime suite on the JIT backend, and the backend's own checks.
#include "runtime/cpu/jit_backend.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cpu/kernel_cache.h"
#include "runtime/runtime_bitcode.h"
#include "runtime/sparse_runtime_test_suite.h"

namespace accelmem {
namespace runtime {
namespace cpu {
namespace {

using sparse_runtime::Axis;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;

INSTANTIATE_TEST_SUITE_P(Jit, SparseRuntimeTest,
                         ::testing::Values(RuntimeBackendParam{"Jit", JitBackend::Factory()}),
                         RuntimeBackendName);

const Axis i(0);

std::unique_ptr<SparseRuntime> MakeJit(SNodeTree& tree, KernelCache* cache) {
  EXPECT_TRUE(tree.Finalize().ok());
  SparseRuntimeOptions options;
  options.kernel_backend = JitBackend::Factory(cache);
  auto rt = SparseRuntime::Create(tree, options);
  EXPECT_TRUE(rt.ok()) << rt.status();
  return std::move(rt).value();
}

// Operations really run through the JIT backend: each (SNode, op) is compiled once, and a second
// runtime of the same tree shape reuses the compiled kernels (cache hits, no new compile).
TEST(JitBackendTest, KernelsCompiledOncePerShape) {
  auto cache = KernelCache::Create(RuntimeBitcode(RuntimeArch::kX64));
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

// Differential check: 3000 random operations (write, read, activate, deactivate, is-active,
// append, length) on the native runtime and on the JIT backend, over the same tree, give the same
// result and status for every call, the same cells in a final struct-for and the same allocator
// statistics.
TEST(JitBackendTest, RandomOperationsMatchNative) {
  const Axis j(1);
  SNodeTree tn, tj;
  for (SNodeTree* t : {&tn, &tj}) {
    SNode& p = t->root().pointer(i, 8);
    p.bitmasked(i, 4).place<int32_t>("x");
    t->root().dense(j, 4).dynamic(Axis(2), 12, 4).place<float>("d");
    ASSERT_TRUE(t->Finalize().ok());
  }
  SparseRuntimeOptions native_options;
  native_options.chunk_num_elements = 8;
  native_options.max_num_chunks = 1;  // dynamic chunks (up to 12 needed, 8 here) run out
  SparseRuntimeOptions jit_options = native_options;
  jit_options.kernel_backend = JitBackend::Factory();
  auto native = SparseRuntime::Create(tn, native_options);
  auto jit = SparseRuntime::Create(tj, jit_options);
  ASSERT_TRUE(native.ok() && jit.ok());
  SparseRuntime* rts[2] = {native->get(), jit->get()};
  const SNodeTree* trees[2] = {&tn, &tj};
  uint64_t state = 12345;
  auto next = [&](int n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int32_t>((state >> 33) % static_cast<uint64_t>(n));
  };
  int exhausted = 0, out_of_range = 0;
  for (int step = 0; step < 3000; ++step) {
    const int op = next(7);
    const int32_t c = next(34) - 1;  // sometimes out of range
    const int32_t v = next(1000);
    std::string results[2];
    for (int r = 0; r < 2; ++r) {
      SparseRuntime& rt = *rts[r];
      const SNode& x = *trees[r]->FindPlace("x");
      const SNode& d = *trees[r]->FindPlace("d");
      const SNode& bm = *x.parent();
      const SNode& ptr = *bm.parent();
      const int32_t cd = c / 8;
      std::string& out = results[r];
      switch (op) {
        case 0:
          out = rt.Write<int32_t>(x, {c}, v).ToString();
          break;
        case 1: {
          auto value = rt.Read<int32_t>(x, {c});
          out = value.ok() ? std::to_string(*value) : value.status().ToString();
          break;
        }
        case 2:
          out = rt.Activate(c % 2 ? bm : ptr, {c % 2 ? c : c / 4}).ToString();
          break;
        case 3:
          out = rt.Deactivate(c % 3 ? bm : ptr, {c % 3 ? c : c / 4}).ToString();
          break;
        case 4: {
          auto active = rt.IsActive(c % 2 ? bm : ptr, {c % 2 ? c : c / 4});
          out = active.ok() ? std::to_string(*active) : active.status().ToString();
          break;
        }
        case 5: {
          auto position = rt.Append<float>(d, {cd}, static_cast<float>(v));
          out = position.ok() ? std::to_string(*position) : position.status().ToString();
          break;
        }
        default: {
          auto length = v % 4 == 0 ? rt.Deactivate(*d.parent(), {cd}).ToString() : std::string();
          auto n = rt.Length(*d.parent(), {cd});
          out = length + (n.ok() ? std::to_string(*n) : n.status().ToString());
          break;
        }
      }
    }
    // Messages name the failing level natively and the target on the JIT: compare codes there.
    auto code = [](const std::string& s) { return s.substr(0, s.find(':')); };
    ASSERT_EQ(code(results[0]), code(results[1])) << "step " << step << " op " << op << " c " << c;
    exhausted += code(results[0]) == "RESOURCE_EXHAUSTED";
    out_of_range += code(results[0]) == "OUT_OF_RANGE";
  }
  EXPECT_GT(exhausted, 0);  // the error paths were exercised
  EXPECT_GT(out_of_range, 0);
  std::vector<std::vector<int>> cells[2];
  for (int r = 0; r < 2; ++r) {
    const SNode& x = *trees[r]->FindPlace("x");
    const SNode& d = *trees[r]->FindPlace("d");
    ASSERT_TRUE(rts[r]
                    ->StructFor(x,
                                [&](absl::Span<const int32_t> idx, void* cell) {
                                  cells[r].push_back({idx[0], *static_cast<int32_t*>(cell)});
                                })
                    .ok());
    ASSERT_TRUE(
        rts[r]
            ->StructFor(d,
                        [&](absl::Span<const int32_t> idx, void* cell) {
                          cells[r].push_back(
                              {idx[0], idx[1], static_cast<int>(*static_cast<float*>(cell))});
                        })
            .ok());
    EXPECT_TRUE(rts[r]->CheckInvariants().ok()) << rts[r]->CheckInvariants();
  }
  EXPECT_EQ(cells[0], cells[1]);
  EXPECT_GT(cells[0].size(), 10u);
  const SNode& pn = *tn.FindPlace("x")->parent()->parent();
  const SNode& pj = *tj.FindPlace("x")->parent()->parent();
  EXPECT_EQ(rts[0]->Stats(pn).cells_in_use, rts[1]->Stats(pj).cells_in_use);
  EXPECT_EQ(rts[0]->Stats(pn).cells_free, rts[1]->Stats(pj).cells_free);
}

}  // namespace
}  // namespace cpu
}  // namespace runtime
}  // namespace accelmem
