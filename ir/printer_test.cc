#include "ir/printer.h"

#include <cstdlib>

#include "gtest/gtest.h"

namespace accelmem {
namespace ir {
namespace {

// Floats print in the shortest form that reads back exactly and always look like floats.
TEST(PrinterTest, FormatFloat) {
  EXPECT_EQ(FormatFloat(3.0), "3.0");
  EXPECT_EQ(FormatFloat(0.1), "0.1");
  EXPECT_EQ(FormatFloat(-2.5), "-2.5");
  EXPECT_EQ(FormatFloat(1e-7), "1e-07");
  EXPECT_EQ(FormatFloat(1e20), "1e+20");
  for (double v : {0.1 + 0.2, 1.0 / 3.0, 6.02214076e23, -1e-300}) {
    EXPECT_EQ(std::strtod(FormatFloat(v).c_str(), nullptr), v);
  }
}

// Strings escape quotes, backslashes and control characters.
TEST(PrinterTest, QuoteString) {
  EXPECT_EQ(QuoteString("a\"b\\c\n\t\x01"), "\"a\\\"b\\\\c\\n\\t\\x01\"");
}

// A function built in code prints in the contract's form (decorator, 4-space body, tuples).
TEST(PrinterTest, PrintsBuiltFunction) {
  VarPtr x = MakeVar("x", MakeTensor(StaticShape({8}), DType::kFP32));
  TypePtr tile = MakeTile(StaticShape({8}), DType::kFP32, MemorySpace::kVec);
  VarPtr a = MakeVar("a", tile);
  VarPtr it = MakeVar("it", tile);
  VarPtr i = MakeVar("i", MakeIndex());
  VarPtr res = MakeVar("res", tile);
  auto body = FlattenSeq({
      std::make_shared<AssignStmt>(a,
                                   MakeCall("tile.load", {x, MakeIntList({0}), MakeIntList({8})})),
      std::make_shared<ForStmt>(i, MakeInt(0), MakeInt(2), MakeInt(1), std::vector<VarPtr>{it},
                                std::vector<ExprPtr>{a},
                                FlattenSeq({std::make_shared<YieldStmt>(std::vector<ExprPtr>{it})}),
                                std::vector<VarPtr>{res}),
      std::make_shared<ReturnStmt>(std::vector<ExprPtr>{}),
  });
  Function f("f", FunctionType::kAIV, {x}, {}, body);
  EXPECT_EQ(PrintFunction(f),
            "@function(type=AIV)\n"
            "def f(x: Tensor[[8], FP32]):\n"
            "    a: Tile[[8], FP32, Vec] = tile.load(x, [0], [8])\n"
            "    for i, (it,) in range(0, 2, 1, init=(a,)) -> (res: Tile[[8], FP32, Vec],):\n"
            "        yield (it,)\n"
            "    return\n");
}

// Empty bodies print as `pass`; Opaque functions have no decorator; functions are separated.
TEST(PrinterTest, EmptyBodiesAndProgram) {
  auto f = std::make_shared<Function>("g", FunctionType::kOpaque, std::vector<VarPtr>{},
                                      std::vector<TypePtr>{}, FlattenSeq({}));
  Program p({f, f});
  EXPECT_EQ(PrintProgram(p), "def g():\n    pass\n\ndef g():\n    pass\n");
}

// Calls print keywords after positional arguments.
TEST(PrinterTest, CallKeywords) {
  CallPtr c = MakeCall("system.reserve_buffer", {},
                       {{"name", MakeString("r")}, {"size", MakeInt(64)}, {"base", MakeInt(-1)}});
  EXPECT_EQ(PrintExpr(*c), "system.reserve_buffer(name=\"r\", size=64, base=-1)");
  CallPtr m = MakeCall("tile.move", {MakeVar("t", MakeIndex()), MakeSpace(MemorySpace::kLeft)});
  EXPECT_EQ(PrintExpr(*m), "tile.move(t, Left)");
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
