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

}  // namespace
}  // namespace ir
}  // namespace accelmem
