#include "ir/mutator.h"

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "ir/verifier.h"

namespace accelmem {
namespace ir {
namespace {

constexpr char kBefore[] = R"(@function(type=InCore)
def seed(x: Tensor[[64, 64], FP32], y: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 16384, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, -1, 16384, 1)
    tile_a: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [64, 64])
    s: Tile[[16, 64], FP32, memref=mem_vec_0+4096] = tile.slice(tile_a, [16, 64], [16, 0])
    tile_b: Tile[[64, 64], FP32, memref=mem_vec_1] = tile.add(tile_a, tile_a)
    r: Tensor[[64, 64], FP32] = tile.store(tile_b, [0, 0], y)
    return r
)";

FunctionPtr ParseFn(const std::string& text) {
  auto p = ParseProgram(text, "m.tile");
  EXPECT_TRUE(p.ok()) << p.status();
  return (*p)->functions[0];
}

// The identity mutation returns the very same nodes.
TEST(MutatorTest, IdentitySharesEverything) {
  auto p = ParseProgram(kBefore);
  ASSERT_TRUE(p.ok());
  IRMutator m;
  EXPECT_EQ(m.MutateProgram(*p), *p);
}

// Remapping roots plans addresses everywhere: types, views (same offset), tile.alloc arguments;
// subtrees that do not mention a MemRef are shared.
TEST(MutatorTest, RemapMemRefsPlansAddresses) {
  FunctionPtr f = ParseFn(kBefore);
  const auto stmts = BodyStmts(f->body);
  const MemRefPtr& m0 = AsMemRefType(AsAssign(stmts[0].get())->var->type)->memref;
  const MemRefPtr& m1 = AsMemRefType(AsAssign(stmts[1].get())->var->type)->memref;
  FunctionPtr g = RemapMemRefs(f, {{m0.get(), m0->WithAddr(0)}, {m1.get(), m1->WithAddr(16384)}});
  EXPECT_TRUE(VerifyFunction(*g).ok()) << VerifyFunction(*g);
  FunctionPtr expected = ParseFn(R"(@function(type=InCore)
def seed(x: Tensor[[64, 64], FP32], y: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 16384, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 16384, 16384, 1)
    tile_a: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [64, 64])
    s: Tile[[16, 64], FP32, memref=mem_vec_0+4096] = tile.slice(tile_a, [16, 64], [16, 0])
    tile_b: Tile[[64, 64], FP32, memref=mem_vec_1] = tile.add(tile_a, tile_a)
    r: Tensor[[64, 64], FP32] = tile.store(tile_b, [0, 0], y)
    return r
)");
  EXPECT_TRUE(StructuralEqual(*g, *expected)) << FirstDifference(*g, *expected);
  const auto new_stmts = BodyStmts(g->body);
  EXPECT_EQ(AsTile(AsAssign(new_stmts[3].get())->var->type)->memref->addr(), 4096);
  EXPECT_EQ(new_stmts[6], stmts[6]);  // `return r` mentions no MemRef: shared
  EXPECT_EQ(g->params[0], f->params[0]);
  // The original is untouched.
  EXPECT_EQ(AsMemRefType(AsAssign(BodyStmts(f->body)[0].get())->var->type)->memref->addr(), -1);
}

// A pass may delete statements (return null) or put several in place of one (return a Seq).
TEST(MutatorTest, DeleteAndSplice) {
  struct Pass : IRMutator {
    StmtPtr MutateEval(const std::shared_ptr<const EvalStmt>& s) override { return nullptr; }
    StmtPtr MutateYield(const std::shared_ptr<const YieldStmt>& s) override {
      VarPtr y = AsVarPtr(s->values[0]);
      VarPtr mv = MakeVar(y->name + "_mv", y->type);
      auto move = std::make_shared<AssignStmt>(
          mv, MakeCall("tile.move", {y, MakeSpace(MemorySpace::kVec)}));
      auto yield = std::make_shared<YieldStmt>(std::vector<ExprPtr>{mv});
      return std::make_shared<SeqStmts>(std::vector<StmtPtr>{move, yield});
    }
  } pass;
  FunctionPtr f = ParseFn(R"(def f(x: Tensor[[4], FP32]):
    system.reserve_buffer(name="r", size=64)
    a: Tile[[4], FP32, Vec] = tile.load(x, [0], [4])
    for i, (c,) in range(2, init=(a,)) -> (o: Tile[[4], FP32, Vec],):
        d: Tile[[4], FP32, Vec] = tile.exp(c)
        yield (d,)
    return
)");
  FunctionPtr g = pass.MutateFunction(f);
  EXPECT_EQ(PrintFunction(*g), R"(def f(x: Tensor[[4], FP32]):
    a: Tile[[4], FP32, Vec] = tile.load(x, [0], [4])
    for i, (c,) in range(0, 2, 1, init=(a,)) -> (o: Tile[[4], FP32, Vec],):
        d: Tile[[4], FP32, Vec] = tile.exp(c)
        d_mv: Tile[[4], FP32, Vec] = tile.move(d, Vec)
        yield (d_mv,)
    return
)");
  EXPECT_TRUE(VerifyFunction(*g).ok()) << VerifyFunction(*g);
}

// Retyping a definition (e.g. giving a tile a MemRef) updates every later use.
TEST(MutatorTest, RetypedDefinitionReachesUses) {
  FunctionPtr f = ParseFn(R"(def f(x: Tensor[[4], FP32]):
    a: Tile[[4], FP32, Vec] = tile.load(x, [0], [4])
    b: Tile[[4], FP32, Vec] = tile.exp(a)
    return
)");
  MemRefPtr root = MemRef::MakeRoot("mem_vec_0", MemorySpace::kVec, -1, 16, 0);
  struct Give : IRMutator {
    explicit Give(MemRefPtr m) : m(std::move(m)) {}
    TypePtr MutateType(const TypePtr& t) override {
      if (const TileType* tile = AsTile(t); tile != nullptr && tile->memref == nullptr) {
        return tile->WithMemRef(m);
      }
      return IRMutator::MutateType(t);
    }
    MemRefPtr m;
  } give(root);
  FunctionPtr g = give.MutateFunction(f);
  const auto stmts = BodyStmts(g->body);
  const AssignStmt* a = AsAssign(stmts[0].get());
  const AssignStmt* b = AsAssign(stmts[1].get());
  EXPECT_EQ(AsTile(a->var->type)->memref, root);
  EXPECT_EQ(AsCall(b->value.get())->args[0], a->var);  // the use sees the new Var
  // Adding the alloc makes it verify.
  std::vector<StmtPtr> with_alloc = {MakeAllocStmt(root)};
  with_alloc.insert(with_alloc.end(), stmts.begin(), stmts.end());
  FunctionPtr h = g->WithBody(FlattenSeq(with_alloc));
  EXPECT_TRUE(VerifyFunction(*h).ok()) << VerifyFunction(*h);
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
