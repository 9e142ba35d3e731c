#include "ir/mutator.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "ir/verifier.h"
#include "ir/visitor.h"

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

constexpr char kLoop[] = R"(def f(x: Tensor[[8], FP32]) -> Tensor[[8], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 32, 0)
    a: Tile[[8], FP32, memref=mem_vec_0] = tile.load(x, [0], [8])
    for i, (c,) in range(0, 2, 1, init=(a,)) -> (o: Tile[[8], FP32, memref=mem_vec_0],):
        n: Tile[[8], FP32, memref=mem_vec_0] = tile.add(c, a)
        yield (n,)
    r: Tensor[[8], FP32] = tile.store(o, [0], x)
    return r
)";

// Retyping definitions by value (MutateDefType) reaches every definition (loop carries and
// results too), every use, and the tile.alloc arguments of the retyped root.
TEST(MutatorTest, RetypeByValueUpdatesDefsUsesAndAlloc) {
  FunctionPtr f = ParseFn(kLoop);
  MemRefPtr planned = MemRef::MakeRoot("mem_vec_0", MemorySpace::kVec, 64, 32, 0);
  struct Plan : IRMutator {
    explicit Plan(MemRefPtr m) : m(std::move(m)) {}
    TypePtr MutateDefType(const Var& v) override {
      if (const TileType* t = AsTile(v.type)) return t->memref ? t->WithMemRef(m) : v.type;
      if (AsMemRefType(v.type) != nullptr) return MakeMemRefType(m);
      return v.type;
    }
    MemRefPtr m;
  } plan(planned);
  FunctionPtr g = plan.MutateFunction(f);
  ASSERT_NE(g, f);
  const std::string text = PrintFunction(*g);
  EXPECT_TRUE(absl::StrContains(text, "tile.alloc(Vec, 64, 32, 0)")) << text;
  // Every use refers to a defined, retyped value: the output parses and verifies.
  EXPECT_TRUE(ParseAndVerifyProgram(text).ok()) << ParseAndVerifyProgram(text).status();
}

// With nothing to change the function object itself comes back.
TEST(MutatorTest, NoChangeKeepsFunctionObject) {
  FunctionPtr f = ParseFn(kLoop);
  IRMutator m;
  EXPECT_EQ(m.MutateFunction(f), f);
}

// A Var a pass makes, retypes through MutateVarDef and drops stays alive as long as the mutator:
// the value maps are keyed by address, and a freed Var's address could be reused by the next new
// Var, which would then be mistaken for the dropped one (and replaced by its retyped copy).
TEST(MutatorTest, KeepsReplacedVarsAlive) {
  FunctionPtr f = ParseFn(kLoop);
  MemRefPtr planned = MemRef::MakeRoot("mem_vec_0", MemorySpace::kVec, 64, 32, 0);
  struct Temps : IRMutator {
    TypePtr MutateDefType(const Var& v) override {
      if (AsMemRefType(v.type) != nullptr) return MakeMemRefType(m);
      const TileType* t = AsTile(v.type);
      return t != nullptr && t->memref != nullptr ? t->WithMemRef(m) : v.type;
    }
    StmtPtr MutateYield(const std::shared_ptr<const YieldStmt>& s) override {
      for (int k = 0; k < 8; ++k) {
        VarPtr tmp = MakeVar("tmp", AsVarPtr(s->values[0])->type);
        VarPtr retyped = MutateVarDef(tmp);  // replaced: tmp must outlive this scope
        EXPECT_NE(retyped, tmp);
        temps.push_back(tmp);
      }
      return IRMutator::MutateYield(s);
    }
    MemRefPtr m;
    std::vector<std::weak_ptr<const Var>> temps;
  } pass;
  pass.m = planned;
  FunctionPtr g = pass.MutateFunction(f);
  ASSERT_EQ(pass.temps.size(), 8u);
  for (const auto& t : pass.temps) EXPECT_FALSE(t.expired());
  // Distinct temporaries stay distinct (no two share an address while the mutator lives).
  for (size_t i = 0; i < pass.temps.size(); ++i) {
    for (size_t j = i + 1; j < pass.temps.size(); ++j) {
      EXPECT_NE(pass.temps[i].lock(), pass.temps[j].lock());
    }
  }
  EXPECT_TRUE(VerifyFunction(*g).ok()) << VerifyFunction(*g);
}

// FreshName avoids every name a function defines (params, values, loop variables, carries,
// results) and every name it handed out before.
TEST(MutatorTest, FreshNames) {
  FunctionPtr f = ParseFn(kLoop);
  absl::flat_hash_set<std::string> names = DefinedNames(*f);
  for (const char* n : {"x", "mem_vec_0", "a", "i", "c", "n", "o", "r"}) {
    EXPECT_TRUE(names.contains(n)) << n;
  }
  EXPECT_EQ(FreshName("n", &names), "n_1");
  EXPECT_EQ(FreshName("n", &names), "n_2");
  EXPECT_EQ(FreshName("z", &names), "z");
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
