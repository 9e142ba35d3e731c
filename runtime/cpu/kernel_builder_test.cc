#include "codegen/kernel_builder.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "runtime/cpu/jit.h"
#include "runtime/kernel_context.h"
#include "runtime/runtime_bitcode.h"
#include "runtime/sparse_runtime.h"
#include "sparse_runtime/device/node_cache.h"
#include "sparse_runtime/device/snode_pointer.h"

namespace accelmem {
namespace runtime {
namespace cpu {
namespace {

using codegen::CoordMap;
using codegen::KernelBuilder;
using codegen::KernelBuilderOptions;
using codegen::KernelModule;
using codegen::RangeFn;
using codegen::RangeSumFn;
using codegen::StructForFn;
using codegen::StructForRunsFn;
using sparse_runtime::Axis;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;
using sparse_runtime::StructForExtent;

const Axis i(0), j(1);

// A compiled range kernel bound to one runtime's KernelContext.
template <typename Fn>
struct Bound {
  Fn fn = nullptr;
  void* ctx = nullptr;
  auto operator()(int64_t begin, int64_t end) const { return fn(ctx, begin, end); }
};
using WriteFn = Bound<RangeFn>;
using SumFn = Bound<RangeSumFn>;

template <typename Fn>
Bound<Fn> Bind(const JitModule& m, const char* name, BoundKernelContext& ctx) {
  auto address = m.Lookup(name);
  EXPECT_TRUE(address.ok()) << address.status();
  return Bound<Fn>{reinterpret_cast<Fn>(address.ok() ? *address : nullptr), ctx.get()};
}

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
          double offset)
      : ctx_(rt) {
    auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), rt->tree());
    EXPECT_TRUE(kb.ok()) << kb.status();
    absl::Status st = (*kb)->AddRangeWrite("w", place, coords, scale, offset);
    EXPECT_TRUE(st.ok()) << st;
    st = (*kb)->AddRangeSum("s", place, coords);
    EXPECT_TRUE(st.ok()) << st;
    KernelModule km = (*kb)->Finish();
    auto jit = CpuJit::Create(RuntimeBitcode(RuntimeArch::kX64));
    EXPECT_TRUE(jit.ok()) << jit.status();
    auto m = (*jit)->Compile(std::move(km.module), std::move(km.context), km.entry_points);
    EXPECT_TRUE(m.ok()) << m.status();
    module_ = std::move(m).value();
    write = Bind<RangeFn>(*module_, "w", ctx_);
    sum = Bind<RangeSumFn>(*module_, "s", ctx_);
  }
  WriteFn write;
  SumFn sum;

 private:
  BoundKernelContext ctx_;
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

// Range kernels take the stride of pointer cells of up to 8 bytes as the constant 8 (the
// allocator's rule; codegen/internal/emitter.cc, PointerCells) and fall back to the chunked path
// where a runtime's meta says otherwise: correct, but slower. This checks the rule against the
// runtime itself, so that a change of the allocator's cell sizes fails here rather than only
// slowing kernels down; and the kernel's writes land in the cells the host reads.
template <typename T>
void ExpectStrideEightAndKernelWrites() {
  SNodeTree tree;
  SNode& p = tree.root().pointer(i, 64);
  p.place<T>("v");
  const SNode& v = *tree.FindPlace("v");
  auto rt = Make(tree);
  const sparse_runtime::Ptr meta = rt->meta(p);
  EXPECT_EQ(sparse_runtime::Pointer_cells_stride(meta), 8u);
  EXPECT_NE(sparse_runtime::Pointer_cells_origin(meta), 0u);
  Kernels k(rt.get(), v, {{1, 0, 0}}, 2.0, 1.0);
  EXPECT_EQ(k.write(5, 60), 55);
  EXPECT_EQ(k.write(5, 60), 55);  // already active: the constant-stride path
  for (int n = 0; n < 64; ++n) {
    EXPECT_EQ(rt->Read<T>(v, {n}).value(), n >= 5 && n < 60 ? static_cast<T>(2 * n + 1) : T{0})
        << n;
  }
}
TEST(KernelBuilderTest, SmallPointerCellsHaveTheStrideKernelsAssume) {
  ExpectStrideEightAndKernelWrites<int32_t>();
  ExpectStrideEightAndKernelWrites<float>();
  ExpectStrideEightAndKernelWrites<double>();
  ExpectStrideEightAndKernelWrites<int64_t>();
  ExpectStrideEightAndKernelWrites<int8_t>();
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

// Compiles the kernels a builder holds.
std::unique_ptr<JitModule> Compile(KernelBuilder& kb) {
  KernelModule km = kb.Finish();
  auto jit = CpuJit::Create(RuntimeBitcode(RuntimeArch::kX64));
  EXPECT_TRUE(jit.ok()) << jit.status();
  auto m = (*jit)->Compile(std::move(km.module), std::move(km.context), km.entry_points);
  EXPECT_TRUE(m.ok()) << m.status();
  return std::move(m).value();
}

// Atomic adds from two threads at once onto a few pointer-backed cells lose no update, for
// integer and floating-point places; untouched cells stay inactive.
TEST(KernelBuilderTest, AtomicAddFromTwoThreads) {
  SNodeTree tree;
  SNode& p = tree.root().pointer(i, 4);
  p.dense(i, 4).place<int32_t>("n").place<double>("f");
  auto rt = Make(tree);
  const SNode& n = *tree.FindPlace("n");
  const SNode& f = *tree.FindPlace("f");
  auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), tree);
  ASSERT_TRUE(kb.ok()) << kb.status();
  ASSERT_TRUE((*kb)->AddRangeAtomicAdd("add_n", n, {{1, 4, 0}}, 0.0, 1.0).ok());
  ASSERT_TRUE((*kb)->AddRangeAtomicAdd("add_f", f, {{1, 4, 0}}, 0.0, 0.5).ok());
  auto m = Compile(**kb);
  BoundKernelContext ctx(rt.get());
  auto add_n = Bind<RangeFn>(*m, "add_n", ctx);
  auto add_f = Bind<RangeFn>(*m, "add_f", ctx);
  int64_t counts[4] = {};
  std::thread t0([&] {
    counts[0] = add_n(0, 10000);
    counts[1] = add_f(0, 10000);
  });
  std::thread t1([&] {
    counts[2] = add_n(0, 10000);
    counts[3] = add_f(0, 10000);
  });
  t0.join();
  t1.join();
  for (int64_t c : counts) EXPECT_EQ(c, 10000);
  for (int c = 0; c < 16; ++c) {
    EXPECT_EQ(rt->Read<int32_t>(n, {c}).value(), c < 4 ? 5000 : 0) << c;
    EXPECT_EQ(rt->Read<double>(f, {c}).value(), c < 4 ? 2500.0 : 0.0) << c;
  }
  EXPECT_TRUE(rt->IsActive(p, {0}).value());
  EXPECT_FALSE(rt->IsActive(p, {1}).value());
}

// A deactivate kernel over bitmasked cells turns exactly the addressed active cells off: they
// read 0 (host and JIT) while their neighbours keep their values; a second run finds nothing.
TEST(KernelBuilderTest, DeactivateBitmaskedCells) {
  SNodeTree tree;
  SNode& b = tree.root().pointer(i, 4).bitmasked(i, 4);
  b.place<float>("x");
  auto rt = Make(tree);
  const SNode& x = *tree.FindPlace("x");
  auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), tree);
  ASSERT_TRUE(kb.ok()) << kb.status();
  ASSERT_TRUE((*kb)->AddRangeWrite("w", x, {{1, 0, 0}}, 1.0, 1.0).ok());
  ASSERT_TRUE((*kb)->AddRangeSum("s", x, {{1, 0, 0}}).ok());
  ASSERT_TRUE((*kb)->AddRangeDeactivate("d", b, {{1, 0, 0}}).ok());
  auto m = Compile(**kb);
  BoundKernelContext ctx(rt.get());
  auto w = Bind<RangeFn>(*m, "w", ctx);
  auto s = Bind<RangeSumFn>(*m, "s", ctx);
  auto d = Bind<RangeFn>(*m, "d", ctx);
  EXPECT_EQ(w(0, 12), 12);
  EXPECT_EQ(d(2, 6), 4);
  EXPECT_EQ(d(2, 6), 0);
  EXPECT_EQ(d(12, 16), 0);  // the pointer cell above is inactive
  double expected = 0;
  for (int c = 0; c < 16; ++c) {
    const bool live = c < 12 && (c < 2 || c >= 6);
    EXPECT_EQ(rt->Read<float>(x, {c}).value(), live ? c + 1.0f : 0.0f) << c;
    EXPECT_EQ(rt->IsActive(b, {c}).value(), live) << c;
    if (live) expected += c + 1.0;
  }
  EXPECT_EQ(s(0, 16), expected);
}

// Pointer cells deactivated by a kernel are recycled; after CollectGarbage they are free and
// zeroed, the invariants hold, and a later write kernel reuses them.
TEST(KernelBuilderTest, DeactivatePointerCellsThenReuse) {
  SNodeTree tree;
  SNode& p = tree.root().pointer(i, 8);
  p.dense(i, 2).place<int32_t>("x");
  SparseRuntimeOptions options;
  options.auto_collect = false;
  auto rt = Make(tree, options);
  const SNode& x = *tree.FindPlace("x");
  auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), tree);
  ASSERT_TRUE(kb.ok()) << kb.status();
  ASSERT_TRUE((*kb)->AddRangeWrite("w", x, {{1, 0, 0}}, 1.0, 1.0).ok());
  ASSERT_TRUE((*kb)->AddRangeDeactivate("d", p, {{1, 0, 0}}).ok());
  auto m = Compile(**kb);
  BoundKernelContext ctx(rt.get());
  auto w = Bind<RangeFn>(*m, "w", ctx);
  auto d = Bind<RangeFn>(*m, "d", ctx);
  EXPECT_EQ(w(0, 16), 16);
  EXPECT_EQ(rt->Stats(p).cells_in_use, 8);
  EXPECT_EQ(d(0, 4), 4);
  EXPECT_EQ(rt->Stats(p).cells_in_use, 4);
  EXPECT_EQ(rt->Stats(p).cells_recycled, 4);
  for (int c = 0; c < 16; ++c) {
    EXPECT_EQ(rt->Read<int32_t>(x, {c}).value(), c < 8 ? 0 : c + 1) << c;
  }
  ASSERT_TRUE(rt->CollectGarbage().ok());
  EXPECT_EQ(rt->Stats(p).cells_recycled, 0);
  EXPECT_TRUE(rt->CheckInvariants().ok()) << rt->CheckInvariants();
  const int64_t reserved = rt->Stats(p).cells_reserved;
  EXPECT_EQ(w(0, 8), 8);
  EXPECT_EQ(rt->Stats(p).cells_reserved, reserved);  // reused, not newly reserved
  for (int c = 0; c < 16; ++c) EXPECT_EQ(rt->Read<int32_t>(x, {c}).value(), c + 1) << c;
}

// Deactivation is refused for places and the root; a pointer with sparse descendants is
// deactivated subtree first (no inner cell leaks: the invariants hold after GC).
TEST(KernelBuilderTest, DeactivateWithSparseDescendants) {
  SNodeTree tree;
  SNode& p = tree.root().pointer(i, 4);
  SNode& d = p.dense(i, 2);
  d.bitmasked(i, 2).place<float>("x");
  SparseRuntimeOptions options;
  options.auto_collect = false;
  auto rt = Make(tree, options);
  const SNode& x = *tree.FindPlace("x");
  auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), tree);
  ASSERT_TRUE(kb.ok()) << kb.status();
  EXPECT_EQ((*kb)->AddRangeDeactivate("a", x, {{1, 0, 0}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*kb)->AddRangeDeactivate("b", tree.root(), {}).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE((*kb)->AddRangeDeactivate("d", p, {{1, 0, 0}}).ok());
  auto m = Compile(**kb);
  BoundKernelContext ctx(rt.get());
  auto deactivate = Bind<RangeFn>(*m, "d", ctx);
  for (int c = 0; c < 16; ++c) ASSERT_TRUE(rt->Write<float>(x, {c}, c + 1.0f).ok());
  EXPECT_EQ(deactivate(1, 3), 2);
  EXPECT_EQ(rt->Stats(p).cells_recycled, 2);
  for (int c = 0; c < 16; ++c) {
    EXPECT_EQ(rt->Read<float>(x, {c}).value(), c >= 4 && c < 12 ? 0.0f : c + 1.0f) << c;
  }
  ASSERT_TRUE(rt->CollectGarbage().ok());
  EXPECT_TRUE(rt->CheckInvariants().ok()) << rt->CheckInvariants();
  // Reactivated cells come back zeroed: the bitmask below was cleared before recycling.
  ASSERT_TRUE(rt->Activate(p, {1}).ok());
  EXPECT_FALSE(rt->IsActive(*x.parent(), {5}).value());
}

// A runtime over `tree` (no automatic GC) with its kernels "w" (writes i * scale + offset into the
// place at coordinate i), "s" (sums the place) and "d" (deactivates `target` at coordinate i),
// compiled and bound: the set-up of the deactivate-kernel tests below.
struct WriteSumDeactivate {
  WriteSumDeactivate(SNodeTree& tree, const char* place, const SNode& target, double scale,
                     double offset, const KernelBuilderOptions& builder_options = {}) {
    SparseRuntimeOptions options;
    options.auto_collect = false;
    rt = Make(tree, options);
    const SNode& x = *tree.FindPlace(place);
    auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), tree, builder_options);
    if (!kb.ok()) {
      ADD_FAILURE() << kb.status();
      return;
    }
    EXPECT_TRUE((*kb)->AddRangeWrite("w", x, {{1, 0, 0}}, scale, offset).ok());
    EXPECT_TRUE((*kb)->AddRangeSum("s", x, {{1, 0, 0}}).ok());
    EXPECT_TRUE((*kb)->AddRangeDeactivate("d", target, {{1, 0, 0}}).ok());
    m = Compile(**kb);
    ctx = std::make_unique<BoundKernelContext>(rt.get());
    w = Bind<RangeFn>(*m, "w", *ctx);
    s = Bind<RangeSumFn>(*m, "s", *ctx);
    d = Bind<RangeFn>(*m, "d", *ctx);
  }
  std::unique_ptr<SparseRuntime> rt;
  std::unique_ptr<JitModule> m;
  std::unique_ptr<BoundKernelContext> ctx;
  Bound<RangeFn> w, d;
  Bound<RangeSumFn> s;
};

// A deactivate kernel recycles its pointer cells through a NodeCache on its stack: with more
// cells than one cache batch (512) in one call, every deactivated cell is on the recycled list
// when the kernel returns (the batches pushed on the way and the rest at the end), none twice, and
// after a GC they are reused. The same without the stack cache (one recycle per cell).
TEST(KernelBuilderTest, DeactivateKernelRecyclesEveryCellThroughItsCache) {
  constexpr int kCells = 2048;
  for (bool stack_node_cache : {true, false}) {
    KernelBuilderOptions builder_options;
    builder_options.stack_node_cache = stack_node_cache;
    SNodeTree tree;
    SNode& p = tree.root().pointer(i, kCells);
    p.place<int32_t>("x");
    WriteSumDeactivate k(tree, "x", p, 1.0, 1.0, builder_options);
    ASSERT_NE(k.m, nullptr);
    SparseRuntime* rt = k.rt.get();
    const SNode& x = *tree.FindPlace("x");
    // The cache is a NodeCache-sized, line-aligned stack object of the kernel (the builder found
    // the runtime's NodeCache layout; it would fall back to per-call recycling silently). LLVM
    // retypes the byte array as the runtime's struct once the calls are inlined.
    const std::string& ir = k.m->optimized_ir();
    const bool has_cache =
        ir.find("alloca %\"struct.accelmem::sparse_runtime::NodeCache\", align 64") !=
            std::string::npos ||
        ir.find("alloca [" + std::to_string(sizeof(sparse_runtime::NodeCache)) +
                " x i8], align 64") != std::string::npos;
    EXPECT_EQ(has_cache, stack_node_cache);
    ASSERT_EQ(k.w(0, kCells), kCells);
    EXPECT_EQ(k.d(100, 1400), 1300);  // more than two cache batches
    EXPECT_EQ(rt->Stats(p).cells_recycled, 1300);
    EXPECT_EQ(rt->Stats(p).cells_in_use, kCells - 1300);
    EXPECT_EQ(k.d(0, 7), 7);  // fewer than one batch: pushed by the final flush
    EXPECT_EQ(rt->Stats(p).cells_recycled, 1307);
    EXPECT_EQ(k.d(0, kCells), kCells - 1307);  // the rest; the deactivated ones count 0
    EXPECT_EQ(rt->Stats(p).cells_recycled, kCells);
    EXPECT_EQ(rt->Stats(p).cells_in_use, 0);
    ASSERT_TRUE(rt->CollectGarbage().ok());
    EXPECT_TRUE(rt->CheckInvariants().ok()) << rt->CheckInvariants();
    EXPECT_EQ(rt->Stats(p).cells_free, kCells);
    ASSERT_EQ(k.w(0, kCells), kCells);
    EXPECT_EQ(rt->Stats(p).cells_reserved, kCells);  // every cell reused once, none lost
    for (int c = 0; c < kCells; c += 97) EXPECT_EQ(rt->Read<int32_t>(x, {c}).value(), c + 1) << c;
  }
}

// Nested pointers: deactivating outer cells by kernel recycles the inner pointer cells below them
// through the inner SNode's own cache, and both managers balance after a GC.
TEST(KernelBuilderTest, DeactivateKernelRecyclesNestedPointerCells) {
  SNodeTree tree;
  SNode& outer = tree.root().pointer(i, 64);
  SNode& inner = outer.pointer(i, 16);
  inner.place<int32_t>("x");
  WriteSumDeactivate k(tree, "x", outer, 1.0, 0.0);
  ASSERT_NE(k.m, nullptr);
  SparseRuntime* rt = k.rt.get();
  const SNode& x = *tree.FindPlace("x");
  // Every second inner cell of all 64 outer cells: 64 outer cells, 64 * 8 inner cells.
  for (int c = 0; c < 64 * 16; c += 2) ASSERT_EQ(k.w(c, c + 1), 1) << c;
  EXPECT_EQ(k.d(8, 48), 40);
  EXPECT_EQ(rt->Stats(outer).cells_recycled, 40);
  EXPECT_EQ(rt->Stats(inner).cells_recycled, 40 * 8);
  EXPECT_EQ(rt->Stats(inner).cells_in_use, 24 * 8);
  for (int c = 0; c < 64 * 16; c += 2) {
    const int o = c / 16;
    EXPECT_EQ(rt->Read<int32_t>(x, {c}).value(), o >= 8 && o < 48 ? 0 : c) << c;
  }
  ASSERT_TRUE(rt->CollectGarbage().ok());
  EXPECT_TRUE(rt->CheckInvariants().ok()) << rt->CheckInvariants();
}

// Runs the deactivate kernel over overlapping ranges from two threads at once (of kCells cells:
// [0, 3/4) and [1/4, 1)) and returns the sum of their counts.
int64_t DeactivateFromTwoThreads(const Bound<RangeFn>& d, int64_t cells) {
  int64_t first = 0, second = 0;
  std::thread a([&] { first = d(0, cells * 3 / 4); });
  std::thread b([&] { second = d(cells / 4, cells); });
  a.join();
  b.join();
  return first + second;
}

// Two threads run the deactivate kernel over overlapping ranges at once: each cell is
// deactivated by exactly one of them (their counts add up to the cells) and recycled once.
TEST(KernelBuilderTest, DeactivateKernelFromTwoThreadsRecyclesEachCellOnce) {
  constexpr int kCells = 1 << 14;
  SNodeTree tree;
  SNode& p = tree.root().pointer(i, kCells);
  p.place<int32_t>("x");
  WriteSumDeactivate k(tree, "x", p, 1.0, 1.0);
  ASSERT_NE(k.m, nullptr);
  SparseRuntime* rt = k.rt.get();
  for (int round = 0; round < 8; ++round) {
    ASSERT_EQ(k.w(0, kCells), kCells);
    EXPECT_EQ(DeactivateFromTwoThreads(k.d, kCells), kCells) << round;
    EXPECT_EQ(rt->Stats(p).cells_recycled, kCells) << round;
    ASSERT_TRUE(rt->CollectGarbage().ok());
    ASSERT_TRUE(rt->CheckInvariants().ok()) << rt->CheckInvariants();
    EXPECT_EQ(rt->Stats(p).cells_reserved, kCells) << round;
  }
}

// The same for bitmasked cells: the count of two racing deactivate kernels is exact (only the
// call that clears a set flag counts it) and every cell reads 0 afterwards.
TEST(KernelBuilderTest, DeactivateBitmaskedFromTwoThreadsCountsEachCellOnce) {
  constexpr int kCells = 1 << 14;
  SNodeTree tree;
  SNode& b = tree.root().dense(i, kCells / 64).bitmasked(i, 64);
  b.place<float>("x");
  WriteSumDeactivate k(tree, "x", b, 1.0, 1.0);
  ASSERT_NE(k.m, nullptr);
  for (int round = 0; round < 8; ++round) {
    ASSERT_EQ(k.w(0, kCells), kCells);
    EXPECT_EQ(DeactivateFromTwoThreads(k.d, kCells), kCells) << round;
    EXPECT_EQ(k.s(0, kCells), 0.0) << round;
  }
}

// A range activate kernel activates exactly the addressed cells (and their ancestors), counts
// them, is idempotent, and stops with -1 when the allocator runs out.
TEST(KernelBuilderTest, RangeActivate) {
  SNodeTree tree;
  SNode& p = tree.root().pointer(i, 16);
  SNode& b = p.bitmasked(i, 4);
  b.place<int32_t>("x");
  SparseRuntimeOptions options;
  options.chunk_num_elements = 4;
  options.max_num_chunks = 2;  // 8 pointer cells
  auto rt = Make(tree, options);
  auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), tree);
  ASSERT_TRUE(kb.ok()) << kb.status();
  ASSERT_TRUE((*kb)->AddRangeActivate("act", b, {{1, 0, 0}}).ok());
  EXPECT_EQ((*kb)->AddRangeActivate("bad", *tree.FindPlace("x"), {{1, 0, 0}}).code(),
            absl::StatusCode::kInvalidArgument);
  auto m = Compile(**kb);
  BoundKernelContext ctx(rt.get());
  auto act = Bind<RangeFn>(*m, "act", ctx);
  EXPECT_EQ(act(2, 10), 8);
  EXPECT_EQ(act(2, 10), 8);
  for (int c = 0; c < 24; ++c) EXPECT_EQ(rt->IsActive(b, {c}).value(), c >= 2 && c < 10) << c;
  EXPECT_EQ(rt->Stats(p).cells_in_use, 3);  // pointer cells 0..2
  EXPECT_EQ(act(10, 64), -1);               // needs pointer cells 3..15: 8 exist
  EXPECT_EQ(sparse_runtime::runtime_error_code(rt->context()), sparse_runtime::kErrorOutOfChunks);
  EXPECT_TRUE(rt->CheckInvariants().ok()) << rt->CheckInvariants();
}

// Range kernels over shifted coordinates (i + offset on every axis: the loop's bounds are
// clamped once instead of each index being checked) write exactly the cells whose coordinates
// lie inside the index space, against a reference that computes i + offset without wrapping
// (128-bit), for offsets from INT64_MIN to INT64_MAX and windows [begin, end) around them; the
// kernel with a divisor (checked per index) is the control. 1-D and 2-D.
TEST(KernelBuilderTest, ShiftedCoordinatesWriteExactlyTheCellsInside) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const std::vector<int64_t> offsets = {0,    3,    -5,   15,       16,      -16,
                                        1000, kMax, kMin, kMin + 1, kMax - 7};
  SNodeTree tree;
  tree.root().pointer(i, 16).place<int32_t>("x");
  tree.root().pointer({i, j}, {4, 8}).place<int32_t>("y");
  ASSERT_TRUE(tree.Finalize().ok());
  const SNode& x = *tree.FindPlace("x");
  const SNode& y = *tree.FindPlace("y");
  auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), tree);
  ASSERT_TRUE(kb.ok()) << kb.status();
  for (size_t k = 0; k < offsets.size(); ++k) {
    const int64_t o = offsets[k];
    ASSERT_TRUE((*kb)->AddRangeWrite("x" + std::to_string(k), x, {{1, 0, o}}, 0.0, 7.0).ok());
    // y: (i + o, i + 2) -- both shifted, clamped by the tighter of the two.
    ASSERT_TRUE(
        (*kb)->AddRangeWrite("y" + std::to_string(k), y, {{1, 0, o}, {1, 0, 2}}, 0.0, 7.0).ok());
  }
  ASSERT_TRUE((*kb)->AddRangeWrite("control", x, {{2, 0, -3}}, 0.0, 7.0).ok());
  auto m = Compile(**kb);
  auto inside = [](int64_t i, int64_t o, int64_t extent) {
    const __int128 v = static_cast<__int128>(i) + o;
    return v >= 0 && v < extent;
  };
  for (size_t k = 0; k < offsets.size(); ++k) {
    const int64_t o = offsets[k];
    // Windows around where the coordinates enter and leave the index space, and at the ends.
    std::vector<int64_t> starts = {-40, -3, 0, 10, kMin, kMax - 40};
    for (__int128 edge : {-static_cast<__int128>(o) - 5, 16 - static_cast<__int128>(o) - 5}) {
      if (edge >= kMin && edge <= kMax - 40) starts.push_back(static_cast<int64_t>(edge));
    }
    for (int64_t begin : starts) {
      const int64_t end = begin + 40;
      SparseRuntimeOptions options;
      options.auto_collect = false;
      auto rt = SparseRuntime::Create(tree, options);
      ASSERT_TRUE(rt.ok()) << rt.status();
      BoundKernelContext ctx(rt->get());
      auto wx = Bind<RangeFn>(*m, ("x" + std::to_string(k)).c_str(), ctx);
      auto wy = Bind<RangeFn>(*m, ("y" + std::to_string(k)).c_str(), ctx);
      std::set<int64_t> want_x, want_y;
      for (int64_t i = begin; i < end; ++i) {
        if (inside(i, o, 16)) want_x.insert(i + o);
        if (inside(i, o, 4) && inside(i, 2, 8)) want_y.insert((i + o) * 8 + (i + 2));
      }
      EXPECT_EQ(wx(begin, end), static_cast<int64_t>(want_x.size())) << o << " " << begin;
      EXPECT_EQ(wy(begin, end), static_cast<int64_t>(want_y.size())) << o << " " << begin;
      for (int32_t c = 0; c < 16; ++c) {
        EXPECT_EQ((*rt)->Read<int32_t>(x, {c}).value(), want_x.count(c) ? 7 : 0) << o << " " << c;
      }
      for (int32_t a = 0; a < 4; ++a) {
        for (int32_t b = 0; b < 8; ++b) {
          EXPECT_EQ((*rt)->Read<int32_t>(y, {a, b}).value(), want_y.count(a * 8 + b) ? 7 : 0)
              << o << " " << a << "," << b;
        }
      }
    }
  }
  // The control (i / 2 - 3, checked per index) over [-4, 40): i / 2 - 3 in [0, 16) for i in
  // [6, 38) (C++ division truncates toward zero, as the kernel's sdiv).
  SparseRuntimeOptions options;
  auto rt = SparseRuntime::Create(tree, options);
  ASSERT_TRUE(rt.ok());
  BoundKernelContext ctx(rt->get());
  auto control = Bind<RangeFn>(*m, "control", ctx);
  EXPECT_EQ(control(-4, 40), 32);
  for (int32_t c = 0; c < 16; ++c) EXPECT_EQ((*rt)->Read<int32_t>(x, {c}).value(), 7) << c;
}

// A range append kernel appends i*scale+offset to the list at container f(i); past the declared
// size it stops with -1 and the runtime context holds the overflow error; a dynamic deactivate
// kernel empties the lists it reaches.
TEST(KernelBuilderTest, AppendAndDeactivateDynamic) {
  SNodeTree tree;
  tree.root().dense(i, 3).dynamic(j, 10, 4).place<int32_t>("a");
  SparseRuntimeOptions options;
  options.auto_collect = false;
  auto rt = Make(tree, options);
  const SNode& a = *tree.FindPlace("a");
  const SNode& dyn = *a.parent();
  auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), tree);
  ASSERT_TRUE(kb.ok()) << kb.status();
  ASSERT_TRUE((*kb)->AddRangeAppend("append", a, {{1, 3, 0}}, 1.0, 100.0).ok());
  ASSERT_TRUE((*kb)->AddRangeDeactivate("clear", dyn, {{1, 0, 0}}).ok());
  auto m = Compile(**kb);
  BoundKernelContext ctx(rt.get());
  auto append = Bind<RangeFn>(*m, "append", ctx);
  auto clear = Bind<RangeFn>(*m, "clear", ctx);
  EXPECT_EQ(append(0, 12), 12);  // 4 appends per list, list c gets 100+c, 103+c, ...
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(rt->Length(dyn, {c}).value(), 4) << c;
    for (int n = 0; n < 4; ++n) EXPECT_EQ(rt->Read<int32_t>(a, {c, n}).value(), 100 + c + 3 * n);
  }
  EXPECT_EQ(append(12, 30), 18);  // exactly fills every list to 10
  EXPECT_EQ(append(30, 31), -1);  // the 11th append to list 0
  EXPECT_EQ(sparse_runtime::runtime_error_code(rt->context()),
            sparse_runtime::kErrorDynamicOverflow);
  sparse_runtime::runtime_reset_error(&rt->context()->memory);
  EXPECT_EQ(rt->Length(dyn, {0}).value(), 10);
  EXPECT_EQ(clear(1, 3), 2);
  EXPECT_EQ(rt->Length(dyn, {1}).value(), 0);
  EXPECT_EQ(rt->Length(dyn, {0}).value(), 10);
  EXPECT_EQ(rt->Stats(dyn).cells_recycled, 6);  // 3 chunks of 4 per list
  ASSERT_TRUE(rt->CollectGarbage().ok());
  EXPECT_TRUE(rt->CheckInvariants().ok()) << rt->CheckInvariants();
}

struct Visited {
  std::vector<std::vector<int32_t>> cells;
  int num_indices = 0;
};
void Record(void* data, const int32_t* index, void* cell) {
  auto* v = static_cast<Visited*>(data);
  std::vector<int32_t> row(index, index + v->num_indices);
  row.push_back(*static_cast<int32_t*>(cell));
  v->cells.push_back(row);
}

// The struct-for kernel visits exactly the cells the host struct-for visits, in the same order,
// with the same indices and values; a [begin, end) sub-range of the outermost level visits only
// the cells below it.
TEST(KernelBuilderTest, StructForMatchesHost) {
  SNodeTree tree;
  tree.root().pointer({i, j}, {3, 3}).bitmasked({i, j}, {2, 5}).place<int32_t>("x");
  auto rt = Make(tree);
  const SNode& x = *tree.FindPlace("x");
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c < 15; c += r + 1)
      ASSERT_TRUE(rt->Write<int32_t>(x, {r, c}, 100 * r + c).ok());
  }
  auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), tree);
  ASSERT_TRUE(kb.ok()) << kb.status();
  ASSERT_TRUE((*kb)->AddStructFor("sf", x).ok());
  auto m = Compile(**kb);
  BoundKernelContext ctx(rt.get());
  auto sf = reinterpret_cast<StructForFn>(*m->Lookup("sf"));
  Visited host{{}, 2};
  ASSERT_TRUE(rt->StructFor(x, [&](absl::Span<const int32_t> index, void* cell) {
                  Record(&host, index.data(), cell);
                }).ok());
  Visited jit{{}, 2};
  EXPECT_EQ(StructForExtent(x), 9);
  EXPECT_EQ(sf(ctx.get(), 0, StructForExtent(x), &Record, &jit),
            static_cast<int64_t>(host.cells.size()));
  EXPECT_EQ(jit.cells, host.cells);
  Visited part{{}, 2};
  sf(ctx.get(), 3, 6, &Record, &part);  // pointer cells (1, *): rows 2..3
  ASSERT_FALSE(part.cells.empty());
  for (const auto& row : part.cells) EXPECT_TRUE(row[0] == 2 || row[0] == 3) << row[0];
}

struct VisitedRuns {
  std::vector<std::vector<int32_t>> firsts;  // first index of each run, then its length
  std::vector<int32_t> values;               // every cell's value, runs expanded
  int num_indices = 0;
};
void RecordRun(void* data, const int32_t* first, void* cell, int64_t count, int64_t stride) {
  auto* v = static_cast<VisitedRuns*>(data);
  std::vector<int32_t> row(first, first + v->num_indices);
  row.push_back(static_cast<int32_t>(count));
  v->firsts.push_back(row);
  for (int64_t k = 0; k < count; ++k) {
    v->values.push_back(*reinterpret_cast<int32_t*>(static_cast<char*>(cell) + k * stride));
  }
}

// The struct-for-runs kernel visits the host struct-for's cells in the same order, a dense leaf
// container per run (a sparse leaf: runs of one), each run starting at the index the host visits
// there, its cells `stride` apart; the count it returns is the cells'. Trees: pointer -> dense
// (2-D, two places: stride 8), pointer -> bitmasked, a dense leaf under the root; the whole
// extent and a sub-range.
TEST(KernelBuilderTest, StructForRunsMatchesHost) {
  struct Case {
    const char* name;
    std::function<void(SNodeTree&)> build;
    bool dense_leaf;
  };
  const Case cases[] = {
      {"pointer_dense",
       [](SNodeTree& t) {
         t.root()
             .pointer({i, j}, {3, 3})
             .dense({i, j}, {2, 5})
             .place<int32_t>("x")
             .place<int32_t>("y");
       },
       true},
      {"pointer_bitmasked",
       [](SNodeTree& t) {
         t.root().pointer({i, j}, {3, 3}).bitmasked({i, j}, {2, 5}).place<int32_t>("x");
       },
       false},
      {"root_dense",
       [](SNodeTree& t) {
         t.root().dense({i, j}, {6, 15}).place<int32_t>("x");
       },
       true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    SNodeTree tree;
    c.build(tree);
    auto rt = Make(tree);
    const SNode& x = *tree.FindPlace("x");
    for (int r = 0; r < 6; ++r) {
      for (int col = 0; col < 15; col += r + 1)
        ASSERT_TRUE(rt->Write<int32_t>(x, {r, col}, 100 * r + col).ok());
    }
    auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), tree);
    ASSERT_TRUE(kb.ok()) << kb.status();
    ASSERT_TRUE((*kb)->AddStructForRuns("runs", x).ok());
    auto m = Compile(**kb);
    BoundKernelContext ctx(rt.get());
    auto runs = reinterpret_cast<StructForRunsFn>(*m->Lookup("runs"));
    for (auto range : {std::pair<int64_t, int64_t>{0, StructForExtent(x)}, {3, 6}}) {
      const int64_t begin = range.first, end = range.second;
      const bool root_dense = std::string(c.name) == "root_dense";
      std::vector<std::vector<int32_t>> host;
      ASSERT_TRUE(rt->StructFor(x, [&](absl::Span<const int32_t> index, void* cell) {
                      // The cell of the outermost level (the pointer's, or the dense leaf's own
                      // under the root) must be in [begin, end).
                      const int64_t outer =
                          root_dense ? index[0] * 15 + index[1] : (index[0] / 2) * 3 + index[1] / 5;
                      if (outer < begin || outer >= end) return;
                      host.push_back({index[0], index[1], *static_cast<int32_t*>(cell)});
                    }).ok());
      VisitedRuns jit{{}, {}, 2};
      const int64_t visited = runs(ctx.get(), begin, end, &RecordRun, &jit);
      ASSERT_EQ(visited, static_cast<int64_t>(host.size()));
      ASSERT_EQ(jit.values.size(), host.size());
      size_t at = 0;
      for (const auto& run : jit.firsts) {
        ASSERT_LT(at, host.size());
        EXPECT_EQ(run[0], host[at][0]);
        EXPECT_EQ(run[1], host[at][1]);
        if (!c.dense_leaf) EXPECT_EQ(run[2], 1);
        at += static_cast<size_t>(run[2]);
      }
      for (size_t k = 0; k < host.size(); ++k) EXPECT_EQ(jit.values[k], host[k][2]) << k;
      if (c.dense_leaf) {
        // One run per active dense container (its part in the range, under the root).
        EXPECT_EQ(jit.firsts.size(), root_dense ? 1u : host.size() / 10);
      }
    }
  }
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
  auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), tree);
  ASSERT_TRUE(kb.ok()) << kb.status();
  EXPECT_EQ((*kb)->AddRangeWrite("a", x, {}, 1, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*kb)->AddRangeSum("b", d, {{1, 0, 0}}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*kb)->AddRangeSum("c", x, {{0, 0, 0}}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE((*kb)->AddRangeSum("d", y, {{1, 0, 0}}).ok());  // dynamic levels are walked too
  EXPECT_EQ((*kb)->AddRangeAppend("g", x, {}, 1, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE((*kb)->AddRangeSum("e", x, {{1, 0, 0}}).ok());
  EXPECT_EQ((*kb)->AddRangeSum("e", x, {{1, 0, 0}}).code(), absl::StatusCode::kAlreadyExists);
  SNodeTree other;
  other.root().dense(i, 4).place<float>("x");
  ASSERT_TRUE(other.Finalize().ok());
  EXPECT_EQ((*kb)->AddRangeSum("f", *other.FindPlace("x"), {{1, 0, 0}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(KernelBuilder::CheckRuntimeBitcode(RuntimeBitcode(RuntimeArch::kX64)).ok());
  EXPECT_FALSE(KernelBuilder::Create("not bitcode", tree).ok());
}

}  // namespace
}  // namespace cpu
}  // namespace runtime
}  // namespace accelmem
