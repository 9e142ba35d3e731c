#include "ir/op_registry.h"

#include "gtest/gtest.h"

namespace accelmem {
namespace ir {
namespace {

VarPtr TileVar(std::vector<int64_t> shape, DType d, MemorySpace s) {
  return MakeVar("t", MakeTile(StaticShape(shape), d, s));
}

// Every op of the tile IR is registered.
TEST(OpRegistryTest, ContractOpsRegistered) {
  const OpRegistry& r = OpRegistry::Global();
  for (const char* op : {"tile.slice", "tile.reshape", "tile.matmul_acc", "tile.recip",
                         "tile.rsqrt", "tile.move", "tile.cast", "tile.transpose", "tile.load",
                         "tile.store", "tile.add", "tile.sub", "tile.mul", "tile.muls", "tile.exp",
                         "tile.matmul", "tile.create", "system.reserve_buffer", "tile.alloc"}) {
    EXPECT_NE(r.Find(op), nullptr) << op;
  }
  EXPECT_EQ(r.Find("tile.nope"), nullptr);
}

// Memory behaviour: views, writes-into argument 0, not-in-place-safe ops.
TEST(OpRegistryTest, MemoryBehaviour) {
  const OpRegistry& r = OpRegistry::Global();
  EXPECT_TRUE(r.Find("tile.slice")->IsView());
  EXPECT_TRUE(r.Find("tile.reshape")->IsView());
  EXPECT_FALSE(r.Find("tile.add")->IsView());
  EXPECT_EQ(r.Find("tile.matmul_acc")->memory, MemoryBehavior::kWritesInto);
  EXPECT_EQ(r.Find("tile.matmul_acc")->writes_into_arg, 0);
  Call dummy("tile.recip", {});
  for (const char* op : {"tile.recip", "tile.rsqrt", "tile.move", "tile.transpose"}) {
    EXPECT_FALSE(r.Find(op)->IsInplaceSafe(dummy)) << op;
  }
  EXPECT_TRUE(r.Find("tile.add")->IsInplaceSafe(dummy));
  // tile.cast: only widening casts are unsafe.
  const OpDef* cast = r.Find("tile.cast");
  Call widen("tile.cast", {TileVar({4}, DType::kFP16, MemorySpace::kVec), MakeDType(DType::kFP32)});
  Call narrow("tile.cast",
              {TileVar({4}, DType::kFP32, MemorySpace::kVec), MakeDType(DType::kFP16)});
  EXPECT_FALSE(cast->IsInplaceSafe(widen));
  EXPECT_TRUE(cast->IsInplaceSafe(narrow));
}

// Pipes: the engine of each op, moves and stores by their spaces, none for views and allocations.
TEST(OpRegistryTest, Pipes) {
  const OpRegistry& r = OpRegistry::Global();
  Call dummy("tile.add", {});
  EXPECT_EQ(r.Find("tile.add")->OperandPipe(dummy, 0), Pipe::kVector);
  EXPECT_EQ(r.Find("tile.exp")->OperandPipe(dummy, -1), Pipe::kVector);
  EXPECT_EQ(r.Find("tile.load")->OperandPipe(dummy, -1), Pipe::kMte2);
  EXPECT_EQ(r.Find("tile.matmul")->OperandPipe(dummy, 0), Pipe::kCube);
  EXPECT_EQ(r.Find("tile.matmul_acc")->OperandPipe(dummy, -1), Pipe::kCube);
  EXPECT_EQ(r.Find("tile.slice")->OperandPipe(dummy, 0), Pipe::kNone);
  EXPECT_EQ(r.Find("tile.alloc")->OperandPipe(dummy, -1), Pipe::kNone);
  VarPtr tensor = MakeVar("x", MakeTensor(StaticShape({16, 16}), DType::kFP32));
  const OpDef* store = r.Find("tile.store");
  Call store_vec("tile.store",
                 {TileVar({16, 16}, DType::kFP32, MemorySpace::kVec), MakeIntList({0, 0}), tensor});
  Call store_acc("tile.store",
                 {TileVar({16, 16}, DType::kFP32, MemorySpace::kAcc), MakeIntList({0, 0}), tensor});
  EXPECT_EQ(store->OperandPipe(store_vec, 0), Pipe::kMte3);
  EXPECT_EQ(store->OperandPipe(store_acc, 0), Pipe::kFix);
  const OpDef* move = r.Find("tile.move");
  auto move_pipe = [&](MemorySpace from, MemorySpace to) {
    Call c("tile.move", {TileVar({16, 16}, DType::kFP16, from), MakeSpace(to)});
    return move->OperandPipe(c, 0);
  };
  EXPECT_EQ(move_pipe(MemorySpace::kMat, MemorySpace::kLeft), Pipe::kMte1);
  EXPECT_EQ(move_pipe(MemorySpace::kMat, MemorySpace::kRight), Pipe::kMte1);
  EXPECT_EQ(move_pipe(MemorySpace::kAcc, MemorySpace::kMat), Pipe::kFix);
  EXPECT_EQ(move_pipe(MemorySpace::kVec, MemorySpace::kMat), Pipe::kMte3);
  EXPECT_EQ(move_pipe(MemorySpace::kMat, MemorySpace::kVec), Pipe::kMte2);
  EXPECT_EQ(move_pipe(MemorySpace::kVec, MemorySpace::kVec), Pipe::kVector);
  EXPECT_STREQ(PipeName(Pipe::kMte1), "mte1");
  EXPECT_STREQ(PipeName(Pipe::kFix), "fix");
}

// Result-type rules of the contract: load defaults to Vec, matmul gives an [M, N] Acc tile.
TEST(OpRegistryTest, ResultTypes) {
  const OpRegistry& r = OpRegistry::Global();
  VarPtr t = MakeVar("x", MakeTensor(StaticShape({64, 64}), DType::kFP16));
  Call load("tile.load", {t, MakeIntList({0, 0}), MakeIntList({32, 64})});
  auto lt = r.Find("tile.load")->result_type(load);
  ASSERT_TRUE(lt.ok()) << lt.status();
  EXPECT_EQ(TypeToString(**lt), "Tile[[32, 64], FP16, Vec]");
  Call load_mat("tile.load", {t, MakeIntList({0, 0}), MakeIntList({32, 64})},
                {{"space", MakeSpace(MemorySpace::kMat)}});
  EXPECT_EQ(TypeToString(**r.Find("tile.load")->result_type(load_mat)),
            "Tile[[32, 64], FP16, Mat]");
  Call mm("tile.matmul", {TileVar({16, 32}, DType::kFP16, MemorySpace::kLeft),
                          TileVar({32, 8}, DType::kFP16, MemorySpace::kRight)});
  EXPECT_EQ(TypeToString(**r.Find("tile.matmul")->result_type(mm)), "Tile[[16, 8], FP32, Acc]");
  Call mm_int("tile.matmul", {TileVar({16, 32}, DType::kINT8, MemorySpace::kLeft),
                              TileVar({32, 8}, DType::kINT8, MemorySpace::kRight)});
  EXPECT_EQ(TypeToString(**r.Find("tile.matmul")->result_type(mm_int)),
            "Tile[[16, 8], INT32, Acc]");
  Call tr("tile.transpose", {TileVar({16, 32}, DType::kFP32, MemorySpace::kVec)});
  EXPECT_EQ(TypeToString(**r.Find("tile.transpose")->result_type(tr)), "Tile[[32, 16], FP32, Vec]");
}

// Rules reject bad arguments with messages naming the op and the problem.
TEST(OpRegistryTest, RulesRejectBadArguments) {
  const OpRegistry& r = OpRegistry::Global();
  Call mm("tile.matmul", {TileVar({16, 32}, DType::kFP16, MemorySpace::kLeft),
                          TileVar({16, 8}, DType::kFP16, MemorySpace::kRight)});
  auto s = r.Find("tile.matmul")->result_type(mm);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), "tile.matmul: inner dimensions differ: [16, 32] x [16, 8]");
  Call slice("tile.slice", {TileVar({8, 8}, DType::kFP32, MemorySpace::kVec), MakeIntList({4, 8}),
                            MakeIntList({6, 0})});
  auto sl = r.Find("tile.slice")->result_type(slice);
  ASSERT_FALSE(sl.ok());
  EXPECT_EQ(sl.status().message(),
            "tile.slice: region [6, 10) of dimension 0 exceeds its extent 8");
  Call reshape("tile.reshape",
               {TileVar({8, 8}, DType::kFP32, MemorySpace::kVec), MakeIntList({7})});
  EXPECT_FALSE(r.Find("tile.reshape")->result_type(reshape).ok());
  Call add("tile.add", {TileVar({8}, DType::kFP32, MemorySpace::kVec), MakeInt(1)});
  EXPECT_EQ(r.Find("tile.add")->result_type(add).status().message(),
            "tile.add: argument 1 must be a Tile, got an integer");
}

// Signature checks: arity, unknown and missing keywords.
TEST(OpRegistryTest, CheckCallSignature) {
  const OpRegistry& r = OpRegistry::Global();
  EXPECT_EQ(CheckCallSignature(*r.Find("tile.add"), Call("tile.add", {MakeInt(1)})).message(),
            "tile.add expects 2 arguments, got 1");
  EXPECT_EQ(CheckCallSignature(*r.Find("tile.exp"), Call("tile.exp", {})).message(),
            "tile.exp expects 1 argument, got 0");
  Call rb("system.reserve_buffer", {}, {{"name", MakeString("x")}, {"bogus", MakeInt(1)}});
  EXPECT_EQ(CheckCallSignature(*r.Find("system.reserve_buffer"), rb).message(),
            "system.reserve_buffer has no keyword argument 'bogus'");
  Call rb2("system.reserve_buffer", {}, {{"name", MakeString("x")}});
  EXPECT_EQ(CheckCallSignature(*r.Find("system.reserve_buffer"), rb2).message(),
            "system.reserve_buffer requires keyword 'size'");
}

// Downstream registration: new ops are found, duplicates and bad definitions refused.
TEST(OpRegistryTest, DownstreamRegistration) {
  OpRegistry r;
  OpRegistry::RegisterBuiltins(&r);
  OpDef d;
  d.name = "tile.fillpad_inplace";
  d.min_args = d.max_args = 1;
  d.memory = MemoryBehavior::kWritesInto;
  d.writes_into_arg = 0;
  d.result_type = [](const Call&) -> absl::StatusOr<TypePtr> { return MakeIndex(); };
  ASSERT_TRUE(r.Register(d).ok());
  EXPECT_NE(r.Find("tile.fillpad_inplace"), nullptr);
  EXPECT_EQ(r.Register(d).code(), absl::StatusCode::kAlreadyExists);
  OpDef bad = d;
  bad.name = "tile.bad";
  bad.writes_into_arg = 3;
  EXPECT_EQ(r.Register(bad).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(OpRegistry::Global().Find("tile.fillpad_inplace"), nullptr);  // private registry
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
