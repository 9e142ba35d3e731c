#include "runtime/cpu/kernel_cache.h"

#include <cstdint>
#include <memory>
#include <utility>

#include "codegen/kernel_builder.h"
#include "gtest/gtest.h"
#include "runtime/kernel_context.h"
#include "runtime/runtime_bitcode.h"
#include "runtime/sparse_runtime.h"
#include "runtime/thread_pool.h"

namespace accelmem {
namespace runtime {
namespace cpu {
namespace {

using codegen::KernelBuilder;
using codegen::RangeFn;
using codegen::RangeSumFn;
using sparse_runtime::Axis;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;

const Axis i(0);

std::unique_ptr<SparseRuntime> Make(SNodeTree& tree) {
  EXPECT_TRUE(tree.Finalize().ok());
  auto rt = SparseRuntime::Create(tree);
  EXPECT_TRUE(rt.ok()) << rt.status();
  return std::move(rt).value();
}

std::unique_ptr<KernelCache> NewCache() {
  auto cache = KernelCache::Create(RuntimeBitcode(RuntimeArch::kX64));
  EXPECT_TRUE(cache.ok()) << cache.status();
  return std::move(cache).value();
}

// Equal shapes give equal keys; any change of kind, shape or type changes the key.
TEST(KernelCacheTest, TreeShapeKeyDistinguishesShapes) {
  SNodeTree a, b, c, d;
  a.root().pointer(i, 8).dense(i, 4).place<float>("x");
  b.root().pointer(i, 8).dense(i, 4).place<float>("y");
  c.root().pointer(i, 8).dense(i, 8).place<float>("x");
  d.root().bitmasked(i, 8).dense(i, 4).place<int32_t>("x");
  for (SNodeTree* t : {&a, &b, &c, &d}) ASSERT_TRUE(t->Finalize().ok());
  EXPECT_EQ(TreeShapeKey(a), TreeShapeKey(b));
  EXPECT_NE(TreeShapeKey(a), TreeShapeKey(c));
  EXPECT_NE(TreeShapeKey(a), TreeShapeKey(d));
}

// One compiled module serves two runtimes of the same tree shape: each kernel call works on the
// runtime whose KernelContext it is given; the second lookup is a hit, a new shape a miss.
TEST(KernelCacheTest, OneModuleServesRuntimesOfTheSameShape) {
  auto cache = NewCache();
  SNodeTree ta, tb, tc;
  ta.root().pointer(i, 8).dense(i, 4).place<float>("x");
  tb.root().pointer(i, 8).dense(i, 4).place<float>("x");
  tc.root().pointer(i, 4).dense(i, 4).place<float>("x");
  auto ra = Make(ta), rb = Make(tb), rc = Make(tc);
  auto build = [](const SNodeTree& tree) {
    return [&tree](KernelBuilder& kb) {
      const SNode& x = *tree.FindPlace("x");
      absl::Status s = kb.AddRangeWrite("w", x, {{1, 0, 0}}, 1.0, 0.0);
      if (s.ok()) s = kb.AddRangeSum("s", x, {{1, 0, 0}});
      return s;
    };
  };
  auto ma = cache->GetOrCompile("write+sum", ta, build(ta));
  ASSERT_TRUE(ma.ok()) << ma.status();
  auto mb = cache->GetOrCompile("write+sum", tb, build(tb));
  ASSERT_TRUE(mb.ok()) << mb.status();
  EXPECT_EQ(ma->get(), mb->get());
  EXPECT_EQ(cache->hits(), 1);
  EXPECT_EQ(cache->misses(), 1);
  auto mc = cache->GetOrCompile("write+sum", tc, build(tc));
  ASSERT_TRUE(mc.ok()) << mc.status();
  EXPECT_NE(ma->get(), mc->get());
  EXPECT_EQ(cache->misses(), 2);

  auto write = reinterpret_cast<RangeFn>(*(*ma)->Lookup("w"));
  auto sum = reinterpret_cast<RangeSumFn>(*(*ma)->Lookup("s"));
  BoundKernelContext ca(ra.get()), cb(rb.get());
  EXPECT_EQ(write(ca.get(), 0, 8), 8);    // a: x[0..8) = i
  EXPECT_EQ(write(cb.get(), 20, 24), 4);  // b: x[20..24) = i
  EXPECT_EQ(ra->Read<float>(*ta.FindPlace("x"), {5}).value(), 5.0f);
  EXPECT_EQ(ra->Read<float>(*ta.FindPlace("x"), {21}).value(), 0.0f);
  EXPECT_EQ(rb->Read<float>(*tb.FindPlace("x"), {21}).value(), 21.0f);
  EXPECT_EQ(rb->Read<float>(*tb.FindPlace("x"), {5}).value(), 0.0f);
  EXPECT_EQ(sum(ca.get(), 0, 32), 28.0);
  EXPECT_EQ(sum(cb.get(), 0, 32), 20.0 + 21 + 22 + 23);
}

// A build error is returned and not cached.
TEST(KernelCacheTest, BuildErrorsAreReturned) {
  auto cache = NewCache();
  SNodeTree tree;
  tree.root().dense(i, 4).place<float>("x");
  ASSERT_TRUE(tree.Finalize().ok());
  auto m = cache->GetOrCompile("bad", tree, [&](KernelBuilder& kb) {
    return kb.AddRangeWrite("w", *tree.FindPlace("x"), {}, 1.0, 0.0);  // missing coordinates
  });
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache->misses(), 1);
  m = cache->GetOrCompile("bad", tree, [&](KernelBuilder& kb) {
    return kb.AddRangeWrite("w", *tree.FindPlace("x"), {}, 1.0, 0.0);
  });
  EXPECT_FALSE(m.ok());
  EXPECT_EQ(cache->misses(), 2);
}

// The parallel range-for (host splits [begin, end) over a 2-thread pool) gives the serial result:
// every cell written once, atomic adds from all parts land, -1 when a part fails.
TEST(KernelCacheTest, ParallelRangeForMatchesSerial) {
  SNodeTree tree;
  tree.root().pointer(i, 64).dense(i, 16).place<int32_t>("x");
  auto rt = Make(tree);
  const SNode& x = *tree.FindPlace("x");
  auto m = KernelCache::Default()->GetOrCompile("parallel", tree, [&](KernelBuilder& kb) {
    absl::Status s = kb.AddRangeWrite("w", x, {{1, 0, 0}}, 2.0, 1.0);
    if (s.ok()) s = kb.AddRangeAtomicAdd("a", x, {{1, 16, 0}}, 0.0, 1.0);
    return s;
  });
  ASSERT_TRUE(m.ok()) << m.status();
  auto write = reinterpret_cast<RangeFn>(*(*m)->Lookup("w"));
  auto add = reinterpret_cast<RangeFn>(*(*m)->Lookup("a"));
  BoundKernelContext ctx(rt.get());
  ThreadPool pool(2);
  EXPECT_EQ(ParallelRangeFor(&pool, write, ctx.get(), 16, 1024), 1008);
  for (int c = 0; c < 1024; c += 7) {
    EXPECT_EQ(rt->Read<int32_t>(x, {c}).value(), c < 16 ? 0 : 2 * c + 1) << c;
  }
  EXPECT_EQ(ParallelRangeFor(&pool, add, ctx.get(), 0, 16000), 16000);
  for (int c = 0; c < 16; ++c) EXPECT_EQ(rt->Read<int32_t>(x, {c}).value(), 1000) << c;
  EXPECT_EQ(ParallelRangeFor(&pool, write, ctx.get(), 5, 5), 0);
  EXPECT_TRUE(rt->CheckInvariants().ok());
}

}  // namespace
}  // namespace cpu
}  // namespace runtime
}  // namespace accelmem
