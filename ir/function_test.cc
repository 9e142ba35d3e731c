#include "ir/function.h"

#include "gtest/gtest.h"

namespace accelmem {
namespace ir {
namespace {

// Function types parse and print; only InCore/AIC/AIV are in-core.
TEST(FunctionTest, TypesParseAndClassify) {
  for (const char* n : {"Opaque", "InCore", "AIC", "AIV", "Orchestration"}) {
    auto t = FunctionTypeFromName(n);
    ASSERT_TRUE(t.ok()) << n;
    EXPECT_EQ(FunctionTypeName(*t), n);
  }
  auto bad = FunctionTypeFromName("Cube");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "unknown function type 'Cube'");
  EXPECT_TRUE(IsInCoreType(FunctionType::kAIC));
  EXPECT_FALSE(IsInCoreType(FunctionType::kOpaque));
  EXPECT_FALSE(IsInCoreType(FunctionType::kOrchestration));
}

// WithBody shares everything but the body.
TEST(FunctionTest, WithBodySharesTheRest) {
  VarPtr p = MakeVar("p", MakeIndex());
  auto f = std::make_shared<Function>("f", FunctionType::kAIV, std::vector<VarPtr>{p},
                                      std::vector<TypePtr>{}, FlattenSeq({}));
  StmtPtr body = FlattenSeq({std::make_shared<ReturnStmt>(std::vector<ExprPtr>{})});
  FunctionPtr g = f->WithBody(body);
  EXPECT_EQ(g->params[0], p);
  EXPECT_EQ(g->body, body);
  EXPECT_EQ(g->type, FunctionType::kAIV);
  EXPECT_NE(f->body, body);
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
