#include "codegen/kernel_builder.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/jit.h"
#include "gtest/gtest.h"
#include "sparse_runtime/runtime_bitcode.h"
#include "sparse_runtime/sparse_runtime.h"

namespace accelmem {
namespace codegen {
namespace {

using backends::cpu::CpuJit;
using backends::cpu::JitModule;
using sparse_runtime::Axis;
using sparse_runtime::RuntimeArch;
using sparse_runtime::RuntimeBitcode;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;
using sparse_runtime::SparseRuntime;
using sparse_runtime::SparseRuntimeOptions;

const Axis i(0), j(1);

using WriteFn = int64_t (*)(int64_t, int64_t);
using SumFn = double (*)(int64_t, int64_t);

std::unique_ptr<SparseRuntime> Make(SNodeTree& tree, SparseRuntimeOptions options = {}) {
  absl::Status status = tree.Finalize();
  EXPECT_TRUE(status.ok()) << status;
  auto rt = SparseRuntime::Create(tree, options);
  EXPECT_TRUE(rt.ok()) << rt.status();
  return std::move(rt).value();
}

// Builds a write kernel "w" and a sum kernel "s" for `place` and compiles them.
class Kernels {
 public:
  Kernels(SparseRuntime* rt, const SNode& place, const std::vector<CoordMap>& coords, double scale,
          double offset) {
    auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64));
    EXPECT_TRUE(kb.ok()) << kb.status();
    absl::Status st = (*kb)->AddRangeWrite("w", rt, place, coords, scale, offset);
    EXPECT_TRUE(st.ok()) << st;
    st = (*kb)->AddRangeSum("s", rt, place, coords);
    EXPECT_TRUE(st.ok()) << st;
    KernelModule km = (*kb)->Finish();
    auto jit = CpuJit::Create(RuntimeBitcode(RuntimeArch::kX64));
    EXPECT_TRUE(jit.ok()) << jit.status();
    auto m = (*jit)->Compile(std::move(km.module), std::move(km.context), km.entry_points);
    EXPECT_TRUE(m.ok()) << m.status();
    module_ = std::move(m).value();
    write = reinterpret_cast<WriteFn>(*module_->Lookup("w"));
    sum = reinterpret_cast<SumFn>(*module_->Lookup("s"));
  }
  WriteFn write = nullptr;
  SumFn sum = nullptr;

 private:
  std::unique_ptr<JitModule> module_;
};

// A dense field: the JIT kernel writes i*scale+offset, the host reads it, the JIT sum matches.
TEST(KernelBuilderTest, DenseWriteReadSum) {
  SNodeTree tree;
  tree.root().dense(i, 16).place<float>("x");
  const SNode& x = *tree.FindPlace("x");
  auto rt = Make(tree);
  Kernels k(rt.get(), x, {{1, 0, 0}}, 2.0, 1.0);
  EXPECT_EQ(k.write(0, 16), 16);
  double expected = 0;
  for (int n = 0; n < 16; ++n) {
    EXPECT_EQ(rt->Read<float>(x, {n}).value(), 2.0f * n + 1.0f) << n;
    expected += 2.0 * n + 1.0;
  }
  EXPECT_EQ(k.sum(0, 16), expected);
  EXPECT_EQ(k.sum(3, 5), 7.0 + 9.0);
}

// Writes through dense/pointer/bitmasked levels activate only the written path; untouched
// cells stay inactive and read 0 from the host and from the JIT sum.
TEST(KernelBuilderTest, SparsePathActivatesOnlyWrittenCells) {
  SNodeTree tree;
  SNode& d = tree.root().dense(i, 4);
  SNode& p = d.pointer(i, 4);
  SNode& b = p.bitmasked(i, 4);
  b.place<int32_t>("y");
  const SNode& y = *tree.FindPlace("y");
  auto rt = Make(tree);
  Kernels k(rt.get(), y, {{1, 0, 0}}, 3.0, -5.0);
  EXPECT_EQ(k.write(10, 20), 10);
  int64_t expected = 0;
  for (int n = 0; n < 64; ++n) {
    const int32_t want = (n >= 10 && n < 20) ? 3 * n - 5 : 0;
    EXPECT_EQ(rt->Read<int32_t>(y, {n}).value(), want) << n;
    EXPECT_EQ(rt->IsActive(b, {n}).value(), n >= 10 && n < 20) << n;
    expected += want;
  }
  // Pointer cells cover 4 coordinates each: [8,12), [12,16), [16,20) are active.
  for (int n = 0; n < 16; ++n) {
    EXPECT_EQ(rt->IsActive(p, {n}).value(), n >= 2 && n < 5) << n;
  }
  EXPECT_EQ(k.sum(0, 64), static_cast<double>(expected));
  EXPECT_EQ(k.sum(0, 10), 0.0);
}

// Values the host writes are seen by the JIT sum; a host-deactivated bitmasked cell reads 0 in
// the JIT sum although its storage still holds the old value.
TEST(KernelBuilderTest, SumSeesHostWritesAndDeactivation) {
  SNodeTree tree;
  SNode& b = tree.root().pointer(i, 4).bitmasked(i, 8);
  b.place<double>("z");
  const SNode& z = *tree.FindPlace("z");
  auto rt = Make(tree);
  Kernels k(rt.get(), z, {{1, 0, 0}}, 1.0, 0.0);
  ASSERT_TRUE(rt->Write<double>(z, {3}, 1.5).ok());
  ASSERT_TRUE(rt->Write<double>(z, {4}, 2.5).ok());
  ASSERT_TRUE(rt->Write<double>(z, {20}, 4.0).ok());
  EXPECT_EQ(k.sum(0, 32), 8.0);
  ASSERT_TRUE(rt->Deactivate(b, {4}).ok());
  EXPECT_EQ(k.sum(0, 32), 5.5);
  ASSERT_TRUE(rt->Deactivate(*b.parent(), {2}).ok());
  EXPECT_EQ(k.sum(0, 32), 1.5);
}

// A 2-D coordinate map (row = i / 8, column = i % 8) addresses a pointer-over-dense field.
TEST(KernelBuilderTest, TwoDimensionalMap) {
  SNodeTree tree;
  tree.root().pointer({i, j}, {4, 4}).dense({i, j}, {2, 2}).place<int64_t>("z");
  const SNode& z = *tree.FindPlace("z");
  auto rt = Make(tree);
  Kernels k(rt.get(), z, {{8, 0, 0}, {1, 8, 0}}, 1.0, 100.0);
  EXPECT_EQ(k.write(0, 64), 64);
  for (int r = 0; r < 8; ++r) {
    for (int c = 0; c < 8; ++c) {
      EXPECT_EQ(rt->Read<int64_t>(z, {r, c}).value(), r * 8 + c + 100) << r << "," << c;
    }
  }
  EXPECT_EQ(k.sum(0, 64), 64 * 100 + 63 * 64 / 2);
}

// Iterations whose coordinates fall outside the index space are skipped by both kernels.
TEST(KernelBuilderTest, OutOfRangeCoordinatesAreSkipped) {
  SNodeTree tree;
  tree.root().pointer(i, 8).place<uint32_t>("x");
  const SNode& x = *tree.FindPlace("x");
  auto rt = Make(tree);
  Kernels k(rt.get(), x, {{1, 0, -2}}, 1.0, 0.0);  // coordinate i - 2
  EXPECT_EQ(k.write(0, 12), 8);                    // i in [2, 10) only
  for (int n = 0; n < 8; ++n) EXPECT_EQ(rt->Read<uint32_t>(x, {n}).value(), n + 2u) << n;
  EXPECT_EQ(k.sum(-100, 100), (2 + 9) * 8 / 2);
}

// When the pointer allocator is exhausted, the write kernel stops with -1 and never writes the
// ambient element (reads of the failed cell stay 0).
TEST(KernelBuilderTest, ExhaustedAllocatorFails) {
  SNodeTree tree;
  tree.root().pointer(i, 64).dense(i, 2).place<int32_t>("x");
  const SNode& x = *tree.FindPlace("x");
  SparseRuntimeOptions options;
  options.chunk_num_elements = 4;
  options.max_num_chunks = 1;
  auto rt = Make(tree, options);
  Kernels k(rt.get(), x, {{1, 0, 0}}, 1.0, 1.0);
  EXPECT_EQ(k.write(0, 128), -1);
  int nonzero = 0;
  for (int n = 0; n < 128; ++n) nonzero += rt->Read<int32_t>(x, {n}).value() != 0;
  EXPECT_GT(nonzero, 0);
  EXPECT_LT(nonzero, 128);
  EXPECT_EQ(rt->Read<int32_t>(x, {127}).value(), 0);
}

// Bad arguments are refused with a clear status.
TEST(KernelBuilderTest, RejectsBadArguments) {
  SNodeTree tree;
  SNode& d = tree.root().dense(i, 4);
  d.place<float>("x");
  const SNode& x = *tree.FindPlace("x");
  tree.root().dynamic(j, 8).place<float>("y");
  const SNode& y = *tree.FindPlace("y");
  auto rt = Make(tree);
  auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64));
  ASSERT_TRUE(kb.ok()) << kb.status();
  EXPECT_EQ((*kb)->AddRangeWrite("a", rt.get(), x, {}, 1, 0).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*kb)->AddRangeSum("b", rt.get(), d, {{1, 0, 0}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*kb)->AddRangeSum("c", rt.get(), x, {{0, 0, 0}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*kb)->AddRangeSum("d", rt.get(), y, {{1, 0, 0}}).code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_TRUE((*kb)->AddRangeSum("e", rt.get(), x, {{1, 0, 0}}).ok());
  EXPECT_EQ((*kb)->AddRangeSum("e", rt.get(), x, {{1, 0, 0}}).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE((*kb)->MangledName("Pointer_activate").ok());
  EXPECT_EQ((*kb)->MangledName("No_such_function").status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(KernelBuilder::Create("not bitcode").ok());
}

}  // namespace
}  // namespace codegen
}  // namespace accelmem
