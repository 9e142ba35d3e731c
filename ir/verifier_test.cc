#include "ir/verifier.h"

#include "gtest/gtest.h"
#include "ir/parser.h"

namespace accelmem {
namespace ir {
namespace {

ProgramPtr Parse(const std::string& text) {
  auto p = ParseProgram(text, "v.tile");
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : nullptr;
}

// A well-formed planned program passes.
TEST(VerifierTest, AcceptsPlannedProgram) {
  ProgramPtr p = Parse(R"(@function(type=AIV)
def f(x: Tensor[[8, 8], FP32]):
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 256, 0)
    a: Tile[[8, 8], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [8, 8])
    s: Tile[[2, 8], FP32, memref=mem_vec_0+64] = tile.slice(a, [2, 8], [2, 0])
    r: Tile[[16], FP32, memref=mem_vec_0+64] = tile.reshape(s, [16])
    return
)");
  EXPECT_TRUE(VerifyProgram(*p).ok()) << VerifyProgram(*p);
}

// Programs built by passes (no source locations) are reported without a location and name the
// function, the value and the rule.
TEST(VerifierTest, BuiltProgramErrorsHaveNoLocation) {
  VarPtr x = MakeVar("x", MakeTensor(StaticShape({4}), DType::kFP32));
  VarPtr a = MakeVar("a", MakeTile(StaticShape({4}), DType::kFP32, MemorySpace::kVec));
  StmtPtr body = FlattenSeq({
      std::make_shared<AssignStmt>(a,
                                   MakeCall("tile.load", {x, MakeIntList({0}), MakeIntList({4})})),
      std::make_shared<AssignStmt>(a, MakeCall("tile.exp", {a})),
  });
  Function f("g", FunctionType::kAIV, {x}, {}, body);
  absl::Status s = VerifyFunction(f);
  EXPECT_EQ(s.message(),
            "error: in function 'g': value 'a': ssa: the same value object is defined twice");
}

// A value defined inside a branch may not be used after it, even by the same object.
TEST(VerifierTest, BranchScoping) {
  VarPtr c = MakeVar("c", MakeScalar(DType::kINT32));
  VarPtr t = MakeVar("t", MakeTile(StaticShape({4}), DType::kFP32, MemorySpace::kVec));
  StmtPtr then_body = FlattenSeq({std::make_shared<AssignStmt>(
      t, MakeCall("tile.create",
                  {MakeIntList({4}), MakeDType(DType::kFP32), MakeSpace(MemorySpace::kVec)}))});
  StmtPtr body = FlattenSeq({
      std::make_shared<IfStmt>(c, then_body, nullptr, std::vector<VarPtr>{}),
      std::make_shared<EvalStmt>(MakeCall("tile.exp", {t})),
  });
  Function f("g", FunctionType::kAIV, {c}, {}, body);
  EXPECT_EQ(
      VerifyFunction(f).message(),
      "error: in function 'g': value 't': ssa: used before its definition or outside its scope");
}

// Yielded values must match the results' types.
TEST(VerifierTest, YieldTypesMatchResults) {
  ProgramPtr p = Parse(R"(def f(x: Tensor[[4], FP32], c: Scalar[INT32]):
    a: Tile[[4], FP32, Vec] = tile.load(x, [0], [4])
    h: Tile[[4], FP16, Vec] = tile.cast(a, FP16)
    if c -> (r: Tile[[4], FP32, Vec],):
        yield (a,)
    else:
        yield (h,)
    return
)");
  EXPECT_EQ(VerifyProgram(*p, {"v.tile"}).message(),
            "v.tile:7:9: error: in function 'f': value 'r': type: yields h of type "
            "Tile[[4], FP16, Vec] for result of type Tile[[4], FP32, Vec]");
}

// A block with results must end in a yield.
TEST(VerifierTest, MissingYield) {
  ProgramPtr p = Parse(R"(def f(x: Tensor[[4], FP32]):
    a: Tile[[4], FP32, Vec] = tile.load(x, [0], [4])
    for i, (c,) in range(2, init=(a,)) -> (o: Tile[[4], FP32, Vec],):
        d: Tile[[4], FP32, Vec] = tile.exp(c)
    return
)");
  EXPECT_EQ(VerifyProgram(*p, {"v.tile"}).message(),
            "v.tile:4:9: error: in function 'f': structure: a block with results must end with "
            "'yield'");
}

// writes-into: matmul_acc's result must be its accumulator's buffer.
TEST(VerifierTest, WritesIntoSharesBuffer) {
  ProgramPtr p = Parse(R"(@function(type=AIC)
def f(a: Tensor[[16, 16], FP16]):
    mem_left_0: MemRefType = tile.alloc(Left, -1, 512, 0)
    mem_right_1: MemRefType = tile.alloc(Right, -1, 512, 1)
    mem_acc_2: MemRefType = tile.alloc(Acc, -1, 1024, 2)
    mem_acc_3: MemRefType = tile.alloc(Acc, -1, 1024, 3)
    l: Tile[[16, 16], FP16, memref=mem_left_0] = tile.load(a, [0, 0], [16, 16], space=Left)
    r: Tile[[16, 16], FP16, memref=mem_right_1] = tile.load(a, [0, 0], [16, 16], space=Right)
    c: Tile[[16, 16], FP32, memref=mem_acc_2] = tile.matmul(l, r)
    d: Tile[[16, 16], FP32, memref=mem_acc_3] = tile.matmul_acc(c, l, r)
    return
)");
  EXPECT_EQ(VerifyProgram(*p, {"v.tile"}).message(),
            "v.tile:10:49: error: in function 'f': value 'd': memref: tile.matmul_acc writes into "
            "argument 0, so its result must have that argument's memref 'mem_acc_2', not "
            "'mem_acc_3'");
}

// A view must stay in its source's allocation.
TEST(VerifierTest, ViewInSourceAllocation) {
  ProgramPtr p = Parse(R"(def f(x: Tensor[[4], FP32]):
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 16, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, -1, 16, 1)
    a: Tile[[4], FP32, memref=mem_vec_0] = tile.load(x, [0], [4])
    r: Tile[[2, 2], FP32, memref=mem_vec_1] = tile.reshape(a, [2, 2])
    return
)");
  EXPECT_EQ(VerifyProgram(*p, {"v.tile"}).message(),
            "v.tile:5:47: error: in function 'f': value 'r': memref: view of 'a' must live in its "
            "allocation 'mem_vec_0', not 'mem_vec_1'");
}

// A tile.alloc's arguments must equal its MemRef's fields (passes rebuild both together).
TEST(VerifierTest, AllocMatchesMemRef) {
  MemRefPtr m = MemRef::MakeRoot("mem_vec_0", MemorySpace::kVec, 32, 64, 0);
  VarPtr mv = MakeVar("mem_vec_0", MakeMemRefType(m));
  StmtPtr body = FlattenSeq({std::make_shared<AssignStmt>(
      mv, MakeCall("tile.alloc",
                   {MakeSpace(MemorySpace::kVec), MakeInt(-1), MakeInt(64), MakeInt(0)}))});
  Function f("g", FunctionType::kAIV, {}, {}, body);
  EXPECT_EQ(VerifyFunction(f).message(),
            "error: in function 'g': value 'mem_vec_0': memref: tile.alloc(Vec, -1, 64, 0) "
            "differs from its MemRef (Vec, 32, 64, 0)");
}

// A custom byte sizer (backend padding) is honoured by the fit check.
TEST(VerifierTest, CustomSizer) {
  struct Double : TileByteSizer {
    std::optional<int64_t> Bytes(const TileType& t) const override {
      return 2 * *StaticTileBytes(t.shape, t.dtype);
    }
  } twice;
  ProgramPtr p = Parse(R"(def f(x: Tensor[[4], FP32]):
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 16, 0)
    a: Tile[[4], FP32, memref=mem_vec_0] = tile.load(x, [0], [4])
    return
)");
  EXPECT_TRUE(VerifyProgram(*p).ok());
  VerifyOptions opts;
  opts.sizer = &twice;
  EXPECT_FALSE(VerifyProgram(*p, opts).ok());
}

// Rules only a pass can break (the parser rejects them earlier): a MemRef in another space than
// its tile, and a MemRef with no tile.alloc in the function.
TEST(VerifierTest, BuiltMemRefRules) {
  VarPtr x = MakeVar("x", MakeTensor(StaticShape({4}), DType::kFP32));
  MemRefPtr acc = MemRef::MakeRoot("mem_acc_0", MemorySpace::kAcc, -1, 16, 0);
  VarPtr a = MakeVar("a", MakeTile(StaticShape({4}), DType::kFP32, MemorySpace::kVec, acc));
  CallPtr load = MakeCall("tile.load", {x, MakeIntList({0}), MakeIntList({4})});
  Function with_alloc("g", FunctionType::kAIV, {x}, {},
                      FlattenSeq({MakeAllocStmt(acc), std::make_shared<AssignStmt>(a, load)}));
  EXPECT_EQ(VerifyFunction(with_alloc).message(),
            "error: in function 'g': value 'a': memref: declared space Vec differs from memref "
            "'mem_acc_0' in Acc");
  MemRefPtr vec = MemRef::MakeRoot("mem_vec_0", MemorySpace::kVec, -1, 16, 0);
  VarPtr b = MakeVar("b", MakeTile(StaticShape({4}), DType::kFP32, MemorySpace::kVec, vec));
  Function no_alloc("g", FunctionType::kAIV, {x}, {},
                    FlattenSeq({std::make_shared<AssignStmt>(b, load)}));
  EXPECT_EQ(VerifyFunction(no_alloc).message(),
            "error: in function 'g': value 'b': memref: memref 'mem_vec_0' names no tile.alloc in "
            "this function");
  Function ok("g", FunctionType::kAIV, {x}, {},
              FlattenSeq({MakeAllocStmt(vec), std::make_shared<AssignStmt>(b, load)}));
  EXPECT_TRUE(VerifyFunction(ok).ok()) << VerifyFunction(ok);
}

// Loop carries must be initialised with values of their own type.
TEST(VerifierTest, CarryInitType) {
  VarPtr x = MakeVar("x", MakeTensor(StaticShape({4}), DType::kFP32));
  VarPtr a = MakeVar("a", MakeTile(StaticShape({4}), DType::kFP32, MemorySpace::kVec));
  VarPtr c = MakeVar("c", MakeTile(StaticShape({4}), DType::kFP16, MemorySpace::kVec));
  VarPtr o = MakeVar("o", MakeTile(StaticShape({4}), DType::kFP16, MemorySpace::kVec));
  StmtPtr body = FlattenSeq({
      std::make_shared<AssignStmt>(a,
                                   MakeCall("tile.load", {x, MakeIntList({0}), MakeIntList({4})})),
      std::make_shared<ForStmt>(MakeVar("i", MakeIndex()), MakeInt(0), MakeInt(2), MakeInt(1),
                                std::vector<VarPtr>{c}, std::vector<ExprPtr>{a},
                                FlattenSeq({std::make_shared<YieldStmt>(std::vector<ExprPtr>{c})}),
                                std::vector<VarPtr>{o}),
  });
  Function f("g", FunctionType::kAIV, {x}, {}, body);
  EXPECT_EQ(VerifyFunction(f).message(),
            "error: in function 'g': value 'c': type: carried value is initialised with a of "
            "another type");
}

// Layout rules: any layout on an ordinary op's result (tile.move converts), the source's on a
// view and on a write-into result; carried values keep their init's.
TEST(VerifierTest, Layouts) {
  ProgramPtr ok = Parse(R"(def f(x: Tensor[[16, 16], FP16], y: Tensor[[16, 16], FP16]):
    a: Tile[[16, 16], FP16, Vec, layout=ND] = tile.load(x, [0, 0], [16, 16])
    b: Tile[[16, 16], FP16, Vec, layout=NZ] = tile.move(a, Vec)
    r: Tile[[16, 16], FP16, Vec, layout=NZ] = tile.reshape(b, [16, 16])
    l: Tile[[16, 16], FP16, Left] = tile.load(x, [0, 0], [16, 16], space=Left)
    w: Tile[[16, 16], FP16, Right] = tile.load(y, [0, 0], [16, 16], space=Right)
    m: Tile[[16, 16], FP32, Acc, layout=NZ] = tile.matmul(l, w)
    m2: Tile[[16, 16], FP32, Acc, layout=NZ] = tile.matmul_acc(m, l, w)
    return
)");
  EXPECT_TRUE(VerifyProgram(*ok).ok()) << VerifyProgram(*ok);
  ProgramPtr acc = Parse(R"(def f(x: Tensor[[16, 16], FP16], y: Tensor[[16, 16], FP16]):
    l: Tile[[16, 16], FP16, Left] = tile.load(x, [0, 0], [16, 16], space=Left)
    w: Tile[[16, 16], FP16, Right] = tile.load(y, [0, 0], [16, 16], space=Right)
    m: Tile[[16, 16], FP32, Acc, layout=NZ] = tile.matmul(l, w)
    m2: Tile[[16, 16], FP32, Acc, layout=ND] = tile.matmul_acc(m, l, w)
    return
)");
  EXPECT_EQ(VerifyProgram(*acc, {"v.tile"}).message(),
            "v.tile:5:48: error: in function 'f': value 'm2': layout: tile.matmul_acc writes into "
            "'m', which states layout NZ; its result must state the same, not layout ND");
  ProgramPtr carry = Parse(R"(def f(x: Tensor[[4], FP32]):
    a: Tile[[4], FP32, Vec, layout=NZ] = tile.load(x, [0], [4])
    for i, (c,) in range(0, 4, 1, init=(a,)) -> (o: Tile[[4], FP32, Vec, layout=ND],):
        yield (c,)
    return
)");
  EXPECT_FALSE(VerifyProgram(*carry).ok());
}

// A loop built through the API states a pipeline depth the parser would refuse; the verifier
// names it. A slotted tile outside any pipelined loop has a fixed slot and is accepted.
TEST(VerifierTest, PipelineDepthAndFixedSlots) {
  auto loop = [](int64_t depth) {
    return std::make_shared<ForStmt>(MakeVar("i", MakeIndex()), MakeInt(0), MakeInt(2), MakeInt(1),
                                     std::vector<VarPtr>{}, std::vector<ExprPtr>{}, FlattenSeq({}),
                                     std::vector<VarPtr>{}, SourceLoc{}, depth);
  };
  EXPECT_TRUE(
      VerifyFunction(Function("g", FunctionType::kAIV, {}, {}, FlattenSeq({loop(2)}))).ok());
  EXPECT_EQ(
      VerifyFunction(Function("g", FunctionType::kAIV, {}, {}, FlattenSeq({loop(17)}))).message(),
      "error: in function 'g': structure: pipeline depth must be between 2 and 16, not 17");
  ProgramPtr fixed = Parse(R"(def f(x: Tensor[[4], FP32]):
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 32, 0, slots=2)
    a: Tile[[4], FP32, memref=mem_vec_0[0]] = tile.load(x, [0], [4])
    b: Tile[[4], FP32, memref=mem_vec_0[1]] = tile.exp(a)
    return
)");
  EXPECT_TRUE(VerifyProgram(*fixed).ok()) << VerifyProgram(*fixed);
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
