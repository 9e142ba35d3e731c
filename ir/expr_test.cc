#include "ir/expr.h"

#include "gtest/gtest.h"

namespace accelmem {
namespace ir {
namespace {

// Down-casts succeed only for the matching kind.
TEST(ExprTest, CheckedCasts) {
  VarPtr v = MakeVar("a", MakeIndex());
  ExprPtr i = MakeInt(-3);
  EXPECT_NE(AsVar(v.get()), nullptr);
  EXPECT_EQ(AsInt(v.get()), nullptr);
  EXPECT_EQ(AsInt(i.get())->value, -3);
  EXPECT_EQ(AsVarPtr(i), nullptr);
  EXPECT_EQ(AsVarPtr(v), v);
  EXPECT_EQ(AsFloat(MakeFloat(0.5).get())->value, 0.5);
  EXPECT_EQ(AsString(MakeString("x").get())->value, "x");
  EXPECT_EQ(AsSpace(MakeSpace(MemorySpace::kMat).get())->space, MemorySpace::kMat);
  EXPECT_EQ(AsDType(MakeDType(DType::kBF16).get())->dtype, DType::kBF16);
}

// Keyword lookup and int lists.
TEST(ExprTest, CallKwargsAndIntLists) {
  CallPtr c = MakeCall("tile.load", {MakeVar("t", MakeIndex()), MakeIntList({0, 0})},
                       {{"space", MakeSpace(MemorySpace::kMat)}});
  ASSERT_NE(c->FindKwarg("space"), nullptr);
  EXPECT_EQ(AsSpace(c->FindKwarg("space")->get())->space, MemorySpace::kMat);
  EXPECT_EQ(c->FindKwarg("shape"), nullptr);
  std::vector<int64_t> ints;
  EXPECT_TRUE(GetIntList(*c->args[1], &ints));
  EXPECT_EQ(ints, (std::vector<int64_t>{0, 0}));
  EXPECT_FALSE(GetIntList(*c->args[0], &ints));
  EXPECT_FALSE(GetIntList(*MakeList({MakeString("s")}), &ints));
}

// A Var's type is its declared type; literals have none.
TEST(ExprTest, TypeOfExpr) {
  VarPtr v = MakeVar("s", MakeScalar(DType::kINT32));
  EXPECT_EQ(TypeOfExpr(*v), v->type.get());
  EXPECT_EQ(TypeOfExpr(*MakeInt(1)), nullptr);
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
