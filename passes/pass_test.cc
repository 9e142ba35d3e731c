#include "passes/pass.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/stmt.h"

namespace accelmem {
namespace passes {
namespace {

// Renames nothing, but replaces the body of functions called "f" by a fresh (equal) body and
// fails on functions called "bad".
class TouchF final : public Pass {
 public:
  std::string Name() const override { return "touch-f"; }
  absl::StatusOr<FunctionResult> RunOnFunction(const ir::FunctionPtr& fn) const override {
    if (fn->name == "bad") return FunctionError(fn->name, "cannot touch");
    if (fn->name != "f") return FunctionResult{fn, false};
    return FunctionResult{fn->WithBody(ir::FlattenSeq(ir::BodyStmts(fn->body))), true};
  }
};

ir::FunctionPtr Fn(const std::string& name) {
  return std::make_shared<ir::Function>(
      name, ir::FunctionType::kOpaque, std::vector<ir::VarPtr>{}, std::vector<ir::TypePtr>{},
      std::make_shared<ir::SeqStmts>(
          std::vector<ir::StmtPtr>{std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{})}));
}

// Run applies the pass per function, replaces only changed functions, and reports the change.
TEST(PassTest, RunReplacesOnlyChangedFunctions) {
  auto program = std::make_shared<ir::Program>(std::vector<ir::FunctionPtr>{Fn("f"), Fn("g")});
  TouchF pass;
  absl::StatusOr<ProgramResult> r = pass.Run(program);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->changed);
  EXPECT_NE(r->program->functions[0], program->functions[0]);
  EXPECT_EQ(r->program->functions[1], program->functions[1]);
}

// An unchanged program comes back as the same object, flagged unchanged.
TEST(PassTest, NoChangeKeepsProgram) {
  auto program = std::make_shared<ir::Program>(std::vector<ir::FunctionPtr>{Fn("g")});
  absl::StatusOr<ProgramResult> r = TouchF().Run(program);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->changed);
  EXPECT_EQ(r->program, program);
}

// Errors name the function and stop the run.
TEST(PassTest, ErrorsNameTheFunction) {
  auto program = std::make_shared<ir::Program>(std::vector<ir::FunctionPtr>{Fn("bad"), Fn("f")});
  absl::StatusOr<ProgramResult> r = TouchF().Run(program);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "in function 'bad': cannot touch");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace passes
}  // namespace accelmem
