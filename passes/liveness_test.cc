#include "passes/liveness.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "passes/pass_testing.h"
#include "policy/default_memory_allocator_policy.h"

namespace accelmem {
namespace passes {
namespace {

using testing::ParseOrDie;

const ValueLife& Of(const Liveness& lv, const std::string& name) {
  for (const ValueLife& v : lv.values) {
    if (v.var->name == name) return v;
  }
  ADD_FAILURE() << "no value " << name;
  static const ValueLife kNone;
  return kNone;
}

// Statement t reads at 3t and writes at 3t+1 (3t for an op that is not in-place safe); a value
// lives until just after its last read, or one unit when never read.
TEST(LivenessTest, StraightLine) {
  ir::ProgramPtr p = ParseOrDie(R"(@function(type=AIV)
def f(x: Tensor[[8], FP32]) -> Tensor[[8], FP32]:
    a: Tile[[8], FP32, Vec] = tile.load(x, [0], [8])
    b: Tile[[8], FP32, Vec] = tile.exp(a)
    c: Tile[[8], FP32, Vec] = tile.recip(b)
    d: Tile[[8], FP32, Vec] = tile.add(c, c)
    r: Tensor[[8], FP32] = tile.store(d, [0], x)
    return r
)");
  Liveness lv(*p->functions[0]);
  ASSERT_EQ(lv.values.size(), 4u);
  EXPECT_EQ(Of(lv, "a").start, 4);  // statement 1
  EXPECT_EQ(Of(lv, "a").end, 7);    // read by statement 2 at 6
  EXPECT_EQ(Of(lv, "b").start, 7);
  EXPECT_EQ(Of(lv, "c").start, 9);  // tile.recip writes with its reads (3 * 3)
  EXPECT_EQ(Of(lv, "d").end, 16);   // read by the store, statement 5
  EXPECT_EQ(lv.num_statements, 7);
  EXPECT_TRUE(lv.copies.empty());
}

// A value defined outside a loop and read inside lives to the loop's end; carries record where
// their MemRef comes from, and a loop whose yield is not in the carried MemRef has an implicit
// copy at the yield.
TEST(LivenessTest, LoopExtensionSourcesAndCopies) {
  ir::ProgramPtr p = ParseOrDie(R"(@function(type=AIV)
def f(x: Tensor[[8], FP32]) -> Tensor[[8], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 32, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, -1, 32, 1)
    mem_vec_2: MemRefType = tile.alloc(Vec, -1, 32, 2)
    a: Tile[[8], FP32, memref=mem_vec_0] = tile.load(x, [0], [8])
    k: Tile[[8], FP32, memref=mem_vec_2] = tile.load(x, [0], [8])
    for i, (c,) in range(0, 4, 1, init=(a,)) -> (o: Tile[[8], FP32, memref=mem_vec_0],):
        n: Tile[[8], FP32, memref=mem_vec_1] = tile.add(c, k)
        yield (n,)
    r: Tensor[[8], FP32] = tile.store(o, [0], x)
    return r
)");
  Liveness lv(*p->functions[0]);
  ASSERT_EQ(lv.loops.size(), 1u);
  const LoopLife& loop = lv.loops[0];
  EXPECT_EQ(loop.entry, 6);
  EXPECT_EQ(loop.yield_at, 8);
  // k is read at statement 7 but lives through the loop's last statement (8).
  EXPECT_EQ(Of(lv, "k").end, 3 * 8 + 2);
  EXPECT_TRUE(Of(lv, "c").carried);
  EXPECT_EQ(Of(lv, "c").parent, lv.IndexOf(Of(lv, "a").var));
  EXPECT_EQ(Of(lv, "o").parent, lv.IndexOf(Of(lv, "c").var));
  ASSERT_EQ(lv.copies.size(), 1u);
  EXPECT_EQ(lv.copies[0].name, "copy into c");
  EXPECT_EQ(lv.copies[0].stmt, 8);
  // The root lifetimes cover the copy into mem_vec_0 and each root's values.
  bool saw_root0 = false;
  for (const RootLifetime& r : ComputeRootLifetimes(lv)) {
    if (r.root->name() != "mem_vec_0") continue;
    saw_root0 = true;
    EXPECT_EQ(r.start, Of(lv, "a").start);
    EXPECT_EQ(r.end, Of(lv, "o").end);
  }
  EXPECT_TRUE(saw_root0);
}

// A view and its source are one class; a writes-into result takes its destination as source.
TEST(LivenessTest, ViewClasses) {
  ir::ProgramPtr p = ParseOrDie(R"(@function(type=AIV)
def f(x: Tensor[[16, 8], FP32]) -> Tensor[[16, 8], FP32]:
    a: Tile[[16, 8], FP32, Vec] = tile.load(x, [0, 0], [16, 8])
    s: Tile[[8, 8], FP32, Vec] = tile.slice(a, [8, 8], [8, 0])
    t: Tile[[4, 8], FP32, Vec] = tile.slice(s, [4, 8], [0, 0])
    b: Tile[[4, 8], FP32, Vec] = tile.exp(t)
    r: Tensor[[16, 8], FP32] = tile.store(a, [0, 0], x)
    return r
)");
  Liveness lv(*p->functions[0]);
  const int a = lv.IndexOf(Of(lv, "a").var);
  const int t = lv.IndexOf(Of(lv, "t").var);
  const int b = lv.IndexOf(Of(lv, "b").var);
  EXPECT_EQ(lv.ViewClass(t), lv.ViewClass(a));
  EXPECT_NE(lv.ViewClass(b), lv.ViewClass(a));
  EXPECT_EQ(Of(lv, "t").parent, lv.IndexOf(Of(lv, "s").var));
}

// CheckRootsConflictFree ignores addresses and rejects only conflicts inside one root: init-memref
// puts the loop's iter-arg in its init's root, so a loop that overwrites the carried value while
// the init is still read after the loop conflicts; two roots that overlap only by address do not.
TEST(LivenessTest, RootsConflictFree) {
  policy::DefaultMemoryAllocatorPolicy pol;
  ir::ProgramPtr conflict = ParseOrDie(R"(@function(type=AIV)
def f(x: Tensor[[16, 16], FP32]) -> Tensor[[16, 16], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 1024, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, -1, 1024, 1)
    a: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 16])
    for i, (c,) in range(0, 2, 1, init=(a,)) -> (o: Tile[[16, 16], FP32, memref=mem_vec_0],):
        n: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.exp(c)
        yield (n,)
    b: Tile[[16, 16], FP32, memref=mem_vec_1] = tile.add(a, o)
    r: Tensor[[16, 16], FP32] = tile.store(b, [0, 0], x)
    return r
)");
  const ir::Function& cf = *conflict->functions[0];
  absl::Status s = CheckRootsConflictFree(cf, Liveness(cf), pol);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "in mem_vec_0")) << s;
  ir::ProgramPtr by_address = ParseOrDie(R"(@function(type=AIV)
def f(x: Tensor[[16, 16], FP32]) -> Tensor[[16, 16], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 1024, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 0, 1024, 1)
    a: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 16])
    b: Tile[[16, 16], FP32, memref=mem_vec_1] = tile.exp(a)
    c: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.add(a, b)
    r: Tensor[[16, 16], FP32] = tile.store(c, [0, 0], x)
    return r
)");
  const ir::Function& bf = *by_address->functions[0];
  EXPECT_TRUE(CheckRootsConflictFree(bf, Liveness(bf), pol).ok());
}

}  // namespace
}  // namespace passes
}  // namespace accelmem
