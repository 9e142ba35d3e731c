#include "ir/proto_convert.h"

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"

namespace accelmem {
namespace ir {
namespace {

constexpr char kText[] = R"(@function(type=AIV)
def f(p: Tile[[4, 4], FP32, memref=mem_vec_0], x: Tensor[[n, 4], FP32], n: Index):
    mem_vec_0: MemRefType = tile.alloc(Vec, 64, 64, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 128, 64, 1)
    a: Tile[[4, 4], FP32, memref=mem_vec_1] = tile.exp(p)
    s: Tile[[1, 4], FP32, memref=mem_vec_1+16] = tile.slice(a, [1, 4], [1, 0])
    for i, (c,) in range(0, n, 1, init=(a,)) -> (o: Tile[[4, 4], FP32, memref=mem_vec_1],):
        yield (c,)
    system.reserve_buffer(name="r\n", size=32, base=-1)
    b: Tile[[4, 4], FP32, memref=mem_vec_1] = tile.muls(o, 0.25)
    z: Tile[[4, 4], FP32, Vec, layout=NZ] = tile.move(b, Vec)
    y: Tile[[4, 4], FP32, Vec, layout=ND] = tile.move(z, Vec)
    return
)";

// Text -> proto -> IR is structurally equal including MemRefs, sharing and addresses, and
// prints the same text.
TEST(ProtoConvertTest, RoundTrip) {
  auto p = ParseProgram(kText);
  ASSERT_TRUE(p.ok()) << p.status();
  pb::Program proto = ToProto(**p);
  EXPECT_EQ(proto.functions(0).memrefs_size(), 2);
  std::string bytes;
  ASSERT_TRUE(proto.SerializeToString(&bytes));
  pb::Program back_proto;
  ASSERT_TRUE(back_proto.ParseFromString(bytes));
  auto back = FromProto(back_proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(StructuralEqual(**p, **back)) << FirstDifference(**p, **back);
  EXPECT_EQ(PrintProgram(**back), PrintProgram(**p));
  EXPECT_EQ(PrintProgram(**back), kText);  // layouts included
  // Sharing survives: the param and the alloc hold the same root object.
  const Function& f = *(*back)->functions[0];
  EXPECT_EQ(AsTile(f.params[0]->type)->memref,
            AsMemRefType(AsAssign(BodyStmts(f.body)[0].get())->var->type)->memref);
}

constexpr char kPipelined[] = R"(@function(type=AIV)
def f(x: Tensor[[4], FP32]):
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 48, 0, slots=3)
    for i in range(0, 6, 1, pipeline=3):
        a: Tile[[4], FP32, memref=mem_vec_0[2]] = tile.load(x, [0], [4])
        s: Tile[[2], FP32, memref=mem_vec_0[2]+8] = tile.slice(a, [2], [2])
    return
)";

// Slot counts, slots (with their offsets in the slot) and pipeline depths survive the proto.
TEST(ProtoConvertTest, RoundTripsSlotsAndPipelines) {
  auto p = ParseProgram(kPipelined);
  ASSERT_TRUE(p.ok()) << p.status();
  pb::Program proto = ToProto(**p);
  EXPECT_EQ(proto.functions(0).memrefs(0).slots(), 3);
  auto back = FromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(PrintProgram(**back), kPipelined);
  EXPECT_TRUE(StructuralEqual(**p, **back)) << FirstDifference(**p, **back);
  pb::Program bad_slots = proto;
  bad_slots.mutable_functions(0)->mutable_memrefs(0)->set_slots(5);
  EXPECT_EQ(FromProto(bad_slots).status().message(),
            "invalid IR proto in function 'f': memref 'mem_vec_0': 5 slots do not divide its 48 "
            "bytes");
  pb::Program bad_slot = proto;
  for (pb::Var& v : *bad_slot.mutable_functions(0)->mutable_vars()) {
    if (v.type().memref().in_slot()) v.mutable_type()->mutable_memref()->set_slot(3);
  }
  EXPECT_EQ(FromProto(bad_slot).status().message(),
            "invalid IR proto in function 'f': slot 3 of memref 'mem_vec_0' with 3 slots");
}

constexpr char kDeclared[] = R"(@function(type=AIV)
def f(x: Tensor[[4], FP32]):
    stash: MemRefType = tile.alloc(Vec, -1, 32, 3, slots=2, declared=1)
    plain: MemRefType = tile.alloc(Vec, -1, 16, 4)
    a: Tile[[4], FP32, memref=stash[1]] = tile.load(x, [0], [4])
    b: Tile[[4], FP32, memref=plain] = tile.load(x, [0], [4])
    return
)";

// A declared allocation stays declared through the proto (and a plain one stays plain).
TEST(ProtoConvertTest, RoundTripsDeclaredAllocations) {
  auto p = ParseProgram(kDeclared);
  ASSERT_TRUE(p.ok()) << p.status();
  pb::Program proto = ToProto(**p);
  EXPECT_TRUE(proto.functions(0).memrefs(0).declared());
  EXPECT_FALSE(proto.functions(0).memrefs(1).declared());
  auto back = FromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(PrintProgram(**back), kDeclared);
  EXPECT_TRUE(StructuralEqual(**p, **back)) << FirstDifference(**p, **back);
  const Function& f = *(*back)->functions[0];
  EXPECT_TRUE(AsTile(AsAssign(BodyStmts(f.body)[2].get())->var->type)->memref->declared());
  EXPECT_FALSE(AsTile(AsAssign(BodyStmts(f.body)[3].get())->var->type)->memref->declared());
}

// Malformed messages are errors, not crashes.
TEST(ProtoConvertTest, RejectsMalformed) {
  auto p = ParseProgram(kText);
  ASSERT_TRUE(p.ok());
  pb::Program proto = ToProto(**p);
  pb::Program bad_index = proto;
  bad_index.mutable_functions(0)->set_params(0, 99);
  EXPECT_EQ(FromProto(bad_index).status().message(),
            "invalid IR proto in function 'f': value index 99 out of range");
  pb::Program bad_space = proto;
  bad_space.mutable_functions(0)->mutable_memrefs(0)->set_space("UB");
  EXPECT_EQ(FromProto(bad_space).status().message(),
            "invalid IR proto in function 'f': unknown memory space 'UB'");
  pb::Program bad_layout = proto;
  bad_layout.mutable_functions(0)->mutable_vars(0)->mutable_type()->set_layout("ZN");
  EXPECT_EQ(FromProto(bad_layout).status().message(),
            "invalid IR proto in function 'f': unknown tile layout 'ZN' (known: ND, NZ)");
  pb::Program no_body = proto;
  no_body.mutable_functions(0)->clear_body();
  EXPECT_FALSE(FromProto(no_body).ok());
  pb::Program empty_stmt = proto;
  empty_stmt.mutable_functions(0)->mutable_body()->mutable_seq()->add_stmts();
  EXPECT_EQ(FromProto(empty_stmt).status().message(),
            "invalid IR proto in function 'f': empty statement");
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
