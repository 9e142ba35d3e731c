#include "ir/program.h"

#include "gtest/gtest.h"

namespace accelmem {
namespace ir {
namespace {

FunctionPtr Fn(const std::string& name) {
  return std::make_shared<Function>(name, FunctionType::kOpaque, std::vector<VarPtr>{},
                                    std::vector<TypePtr>{}, FlattenSeq({}));
}

// Functions keep text order and are found by name; WithFunction replaces one.
TEST(ProgramTest, FindAndReplace) {
  Program p({Fn("b"), Fn("a")});
  EXPECT_EQ(p.functions[0]->name, "b");
  EXPECT_EQ(p.Find("a"), p.functions[1]);
  EXPECT_EQ(p.Find("c"), nullptr);
  FunctionPtr c = Fn("c");
  auto q = p.WithFunction(1, c);
  EXPECT_EQ(q->functions[1], c);
  EXPECT_EQ(q->functions[0], p.functions[0]);
  EXPECT_EQ(p.functions[1]->name, "a");
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
