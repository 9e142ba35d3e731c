#include "ir/visitor.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/parser.h"

namespace accelmem {
namespace ir {
namespace {

struct Recorder : IRVisitor {
  void VisitVarDef(const Var& v) override { events.push_back("def " + v.name); }
  void VisitVarUse(const Var& v) override { events.push_back("use " + v.name); }
  void VisitCall(const Call& c) override {
    events.push_back("call " + c.op);
    IRVisitor::VisitCall(c);
  }
  std::vector<std::string> events;
};

// Definitions and uses arrive in program order: uses of a statement before its definition,
// loop bounds/inits before the loop's own definitions, results after the body.
TEST(VisitorTest, OrderOfDefsAndUses) {
  auto p = ParseProgram(R"(def f(x: Tensor[[4], FP32], n: Index):
    a: Tile[[4], FP32, Vec] = tile.load(x, [0], [4])
    for i, (c,) in range(0, n, 1, init=(a,)) -> (o: Tile[[4], FP32, Vec],):
        d: Tile[[4], FP32, Vec] = tile.add(c, a)
        yield (d,)
    return
)");
  ASSERT_TRUE(p.ok()) << p.status();
  Recorder r;
  r.VisitProgram(**p);
  EXPECT_EQ(r.events,
            (std::vector<std::string>{"def x", "def n", "call tile.load", "use x", "def a", "use n",
                                      "use a", "def i", "def c", "call tile.add", "use c", "use a",
                                      "def d", "use d", "def o"}));
}

// ForEachDefPtr walks the definitions in ForEachDef's order (params, assignments, a loop's
// variable, carries, body, results; an if's branches, then its results) and hands out the very
// pointers the statements hold.
TEST(VisitorTest, ForEachDefPtrMatchesForEachDef) {
  auto p = ParseProgram(R"(def f(x: Tensor[[4], FP32], n: Index, s: Scalar[INT32]):
    a: Tile[[4], FP32, Vec] = tile.load(x, [0], [4])
    for i, (c,) in range(0, n, 1, init=(a,)) -> (o: Tile[[4], FP32, Vec],):
        d: Tile[[4], FP32, Vec] = tile.add(c, a)
        yield (d,)
    if s -> (r: Tile[[4], FP32, Vec],):
        e: Tile[[4], FP32, Vec] = tile.exp(o)
        yield (e,)
    else:
        yield (o,)
    return
)");
  ASSERT_TRUE(p.ok()) << p.status();
  const Function& f = *(*p)->functions[0];
  std::vector<std::string> by_ref, by_ptr;
  ForEachDef(f, [&](const Var& v) { by_ref.push_back(v.name); });
  std::vector<VarPtr> ptrs;
  ForEachDefPtr(f, [&](const VarPtr& v) {
    by_ptr.push_back(v->name);
    ptrs.push_back(v);
  });
  EXPECT_EQ(by_ref, (std::vector<std::string>{"x", "n", "s", "a", "i", "c", "d", "o", "e", "r"}));
  EXPECT_EQ(by_ptr, by_ref);
  ASSERT_EQ(ptrs.size(), 10u);
  EXPECT_EQ(ptrs[0], f.params[0]);
  EXPECT_EQ(ptrs[3].get(), AsAssign(BodyStmts(f.body)[0].get())->var.get());
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
