#include "ir/parser.h"

#include "gtest/gtest.h"
#include "ir/printer.h"

namespace accelmem {
namespace ir {
namespace {

constexpr char kPlanned[] = R"(@function(type=AIV)
def f(p: Tile[[4, 4], FP32, memref=mem_vec_0], x: Tensor[[4, 4], FP32]):
    mem_vec_0: MemRefType = tile.alloc(Vec, 64, 64, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 128, 64, 1)
    a: Tile[[4, 4], FP32, Vec, memref=mem_vec_1] = tile.exp(p)
    s: Tile[[1, 4], FP32, memref=mem_vec_1+16] = tile.slice(a, [1, 4], [1, 0])
    s2: Tile[[1, 4], FP32, memref=mem_vec_1+16] = tile.slice(a, [1, 4], [1, 0])
    return
)";

// MemRefs: params may name allocs of the body; a root is one object; equal views are interned.
TEST(ParserTest, MemRefsResolve) {
  auto p = ParseProgram(kPlanned, "t.tile");
  ASSERT_TRUE(p.ok()) << p.status();
  const Function& f = *(*p)->functions[0];
  const MemRefPtr& param_ref = AsTile(f.params[0]->type)->memref;
  const auto stmts = BodyStmts(f.body);
  const MemRefPtr& alloc_ref = AsMemRefType(AsAssign(stmts[0].get())->var->type)->memref;
  EXPECT_EQ(param_ref, alloc_ref);
  EXPECT_EQ(alloc_ref->addr(), 64);
  const MemRefPtr& s1 = AsTile(AsAssign(stmts[3].get())->var->type)->memref;
  const MemRefPtr& s2 = AsTile(AsAssign(stmts[4].get())->var->type)->memref;
  EXPECT_TRUE(s1->is_view());
  EXPECT_EQ(s1->offset(), 16);
  EXPECT_EQ(s1->size(), 16);
  EXPECT_EQ(s1->addr(), 128 + 16);
  EXPECT_EQ(s1, s2);
  // `Vec, memref=...` is accepted when they agree and printed in the memref-only form.
  EXPECT_NE(PrintProgram(**p).find("a: Tile[[4, 4], FP32, memref=mem_vec_1] = tile.exp(p)"),
            std::string::npos);
}

// Loops define their variable and carries inside, their results after; branches scope too.
TEST(ParserTest, LoopAndBranchScoping) {
  constexpr char kText[] = R"(def f(x: Tensor[[4], FP32], c: Scalar[INT32]):
    a: Tile[[4], FP32, Vec] = tile.load(x, [0], [4])
    for i, (acc,) in range(4, init=(a,)) -> (out: Tile[[4], FP32, Vec],):
        yield (acc,)
    b: Tile[[4], FP32, Vec] = tile.add(out, out)
    return
)";
  auto p = ParseProgram(kText);
  ASSERT_TRUE(p.ok()) << p.status();
  const ForStmt* loop = AsFor(BodyStmts((*p)->functions[0]->body)[1].get());
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(AsInt(loop->start.get())->value, 0);  // range(stop) means range(0, stop, 1)
  EXPECT_EQ(AsInt(loop->stop.get())->value, 4);
  EXPECT_EQ(AsInt(loop->step.get())->value, 1);
  EXPECT_EQ(loop->iter_args[0]->type, AsVar(loop->inits[0].get())->type);
  EXPECT_EQ(loop->loop_var->type->kind, TypeKind::kIndex);
}

// Source locations are recorded on statements, values and calls.
TEST(ParserTest, RecordsLocations) {
  auto p = ParseProgram(
      "\n\ndef f(x: Index):\n    y: Tile[[2], FP32, Vec] = tile.create([2], FP32, Vec)\n");
  ASSERT_TRUE(p.ok()) << p.status();
  const Function& f = *(*p)->functions[0];
  EXPECT_EQ(f.loc.line, 3);
  EXPECT_EQ(f.params[0]->loc.col, 7);
  const AssignStmt* a = AsAssign(BodyStmts(f.body)[0].get());
  EXPECT_EQ(a->loc.line, 4);
  EXPECT_EQ(a->loc.col, 5);
  EXPECT_EQ(AsCall(a->value.get())->loc.col, 31);
}

// Lines continue inside brackets; comments and blank lines are ignored; CRLF is accepted.
TEST(ParserTest, ContinuationCommentsCrlf) {
  constexpr char kText[] =
      "# header\r\n"
      "def f(x: Tensor[[4, 4], FP32],  # first\r\n"
      "      y: Index):\r\n"
      "\r\n"
      "    a: Tile[[4, 4], FP32, Vec] = tile.load(x,\r\n"
      "        [0, 0],\r\n"
      "  [4, 4])   # odd indentation inside brackets is fine\r\n"
      "    return\r\n";
  auto p = ParseProgram(kText);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(PrintProgram(**p),
            "def f(x: Tensor[[4, 4], FP32], y: Index):\n"
            "    a: Tile[[4, 4], FP32, Vec] = tile.load(x, [0, 0], [4, 4])\n"
            "    return\n");
}

// A registry passed in the options replaces the global one.
TEST(ParserTest, CustomRegistry) {
  OpRegistry r;
  OpDef d;
  d.name = "my.op";
  d.min_args = d.max_args = 0;
  d.result_type = [](const Call&) -> absl::StatusOr<TypePtr> { return MakeIndex(); };
  ASSERT_TRUE(r.Register(d).ok());
  ParseOptions opts;
  opts.registry = &r;
  EXPECT_TRUE(ParseAndVerifyProgram("def f():\n    i: Index = my.op()\n", "x", opts).ok());
  EXPECT_FALSE(ParseProgram("def f():\n    i: Index = my.op()\n").ok());
  EXPECT_FALSE(
      ParseProgram("def f():\n    i: Index = tile.create([1], FP32, Vec)\n", "x", opts).ok());
}

// Deep nesting is an error, not a stack overflow.
TEST(ParserTest, DeepNestingIsAnError) {
  std::string text = "def f():\n    system.reserve_buffer(name=\"a\", size=1, base=";
  text += std::string(100000, '[');
  auto p = ParseProgram(text, "deep.tile");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("nesting deeper than 200 levels"), std::string::npos);
}

// With ParseOptions::comments, full-line comments attach to the next function or statement,
// comments after code to the statement starting on that line, the rest to the end.
TEST(ParserTest, CollectsComments) {
  Comments c;
  ParseOptions opts;
  opts.comments = &c;
  auto p = ParseProgram("# top\ndef f(x: Index):  # sig\n    # first\n    return  # ret\n# tail\n",
                        "c.tile", opts);
  ASSERT_TRUE(p.ok()) << p.status();
  const Function* f = (*p)->functions[0].get();
  const Stmt* ret = BodyStmts((*p)->functions[0]->body)[0].get();
  EXPECT_EQ(c.leading[f], std::vector<std::string>{"# top"});
  EXPECT_EQ(c.trailing[f], "# sig");
  EXPECT_EQ(c.leading[ret], std::vector<std::string>{"# first"});
  EXPECT_EQ(c.trailing[ret], "# ret");
  EXPECT_EQ(c.end, std::vector<std::string>{"# tail"});
  EXPECT_EQ(PrintProgram(**p, &c),
            "# top\ndef f(x: Index):  # sig\n    # first\n    return  # ret\n# tail\n");
  EXPECT_EQ(PrintProgram(**p), "def f(x: Index):\n    return\n");
}

// Layouts read and print back in both tile forms (space and memref), and text without layouts
// stays as it was.
TEST(ParserTest, LayoutsRoundTrip) {
  const std::string text = R"(@function(type=AIV)
def f(x: Tensor[[16, 16], FP16], p: Tile[[16, 16], FP16, Vec, layout=ND]):
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 512, 0)
    a: Tile[[16, 16], FP16, memref=mem_vec_0, layout=NZ] = tile.load(x, [0, 0], [16, 16])
    s: Tile[[1, 16], FP16, memref=mem_vec_0+32, layout=NZ] = tile.slice(a, [1, 16], [1, 0])
    b: Tile[[16, 16], FP16, Vec] = tile.move(a, Vec)
    return
)";
  auto p = ParseAndVerifyProgram(text, "l.tile");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(PrintProgram(**p), text);
  const Function& f = *(*p)->functions[0];
  EXPECT_EQ(AsTile(f.params[1]->type)->layout, TileLayout::kND);
  EXPECT_EQ(AsTile(AsAssign(BodyStmts(f.body)[1].get())->var->type)->layout, TileLayout::kNZ);
  EXPECT_EQ(AsTile(AsAssign(BodyStmts(f.body)[3].get())->var->type)->layout, std::nullopt);
  // Space and memref in either order, layout last; the canonical print drops the space.
  auto q = ParseProgram(
      "def g(x: Tensor[[4], FP32]):\n    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 16, 0)\n"
      "    a: Tile[[4], FP32, memref=mem_vec_0, Vec, layout=ND] = tile.load(x, [0], [4])\n"
      "    return\n");
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_NE(PrintProgram(**q).find("a: Tile[[4], FP32, memref=mem_vec_0, layout=ND]"),
            std::string::npos);
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
