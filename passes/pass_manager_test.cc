#include "passes/pass_manager.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/stmt.h"

namespace accelmem {
namespace passes {
namespace {

// Appends a function called `add` to the program's first function name list by replacing the
// body of function 0 with a copy; records its name in a shared log when run.
class LogPass final : public Pass {
 public:
  LogPass(std::string name, bool change, std::vector<std::string>* log)
      : name_(std::move(name)), change_(change), log_(log) {}
  std::string Name() const override { return name_; }
  absl::StatusOr<FunctionResult> RunOnFunction(const ir::FunctionPtr& fn) const override {
    log_->push_back(name_);
    if (!change_) return FunctionResult{fn, false};
    return FunctionResult{fn->WithBody(ir::FlattenSeq(ir::BodyStmts(fn->body))), true};
  }

 private:
  std::string name_;
  bool change_;
  std::vector<std::string>* log_;
};

ir::ProgramPtr OneFunction() {
  auto fn = std::make_shared<ir::Function>(
      "f", ir::FunctionType::kOpaque, std::vector<ir::VarPtr>{}, std::vector<ir::TypePtr>{},
      std::make_shared<ir::SeqStmts>(
          std::vector<ir::StmtPtr>{std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{})}));
  return std::make_shared<ir::Program>(std::vector<ir::FunctionPtr>{fn});
}

// Passes run in the order added; the verifier runs on the input and after changing passes only;
// after_pass sees every pass.
TEST(PassManagerTest, OrderVerifyAndPrintAfterAll) {
  std::vector<std::string> log;
  int verified = 0;
  std::vector<std::string> printed;
  PassManagerOptions opts;
  opts.verifier = [&](const ir::Program&) {
    ++verified;
    return absl::OkStatus();
  };
  opts.after_pass = [&](absl::string_view name, const ir::Program&) { printed.emplace_back(name); };
  PassManager pm(opts);
  pm.AddPass(std::make_unique<LogPass>("a", true, &log));
  pm.AddPass(std::make_unique<LogPass>("b", false, &log));
  pm.AddPass(std::make_unique<LogPass>("c", true, &log));
  absl::StatusOr<ProgramResult> r = pm.Run(OneFunction());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->changed);
  EXPECT_EQ(log, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(printed, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(verified, 3);  // input, after a, after c
  EXPECT_EQ(pm.PassNames(), (std::vector<std::string>{"a", "b", "c"}));
}

// A verifier failure after a pass names that pass and stops the pipeline.
TEST(PassManagerTest, VerifierFailureNamesPass) {
  std::vector<std::string> log;
  int calls = 0;
  PassManagerOptions opts;
  opts.verifier = [&](const ir::Program&) {
    return ++calls == 2 ? absl::InvalidArgumentError("broken") : absl::OkStatus();
  };
  PassManager pm(opts);
  pm.AddPass(std::make_unique<LogPass>("first", true, &log));
  pm.AddPass(std::make_unique<LogPass>("second", true, &log));
  absl::StatusOr<ProgramResult> r = pm.Run(OneFunction());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "IR verification failed after pass 'first': broken");
  EXPECT_EQ(log, (std::vector<std::string>{"first"}));
}

// With verify=false the verifier is never called; an invalid input is not rejected.
TEST(PassManagerTest, VerifyOff) {
  std::vector<std::string> log;
  PassManagerOptions opts;
  opts.verify = false;
  opts.verifier = [](const ir::Program&) { return absl::InvalidArgumentError("bad input"); };
  PassManager pm(opts);
  pm.AddPass(std::make_unique<LogPass>("a", false, &log));
  absl::StatusOr<ProgramResult> r = pm.Run(OneFunction());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->changed);
}

// The input is verified before any pass runs.
TEST(PassManagerTest, InputVerified) {
  std::vector<std::string> log;
  PassManagerOptions opts;
  opts.verifier = [](const ir::Program&) { return absl::InvalidArgumentError("bad input"); };
  PassManager pm(opts);
  pm.AddPass(std::make_unique<LogPass>("a", true, &log));
  EXPECT_EQ(pm.Run(OneFunction()).status().message(), "bad input");
  EXPECT_TRUE(log.empty());
}

}  // namespace
}  // namespace passes
}  // namespace accelmem

namespace accelmem {
namespace passes {
namespace {

// By default the manager verifies with ir::VerifyProgram: an ill-typed input is rejected.
TEST(PassManagerTest, DefaultVerifierRejectsBadInput) {
  // `b` is declared FP16 but tile.load of an FP32 tensor gives FP32.
  auto x = ir::MakeVar("x", ir::MakeTensor(ir::StaticShape({4}), ir::DType::kFP32));
  auto b =
      ir::MakeVar("b", ir::MakeTile(ir::StaticShape({4}), ir::DType::kFP16, ir::MemorySpace::kVec));
  auto load = ir::MakeCall("tile.load", {x, ir::MakeIntList({0}), ir::MakeIntList({4})});
  auto body = std::make_shared<ir::SeqStmts>(
      std::vector<ir::StmtPtr>{std::make_shared<ir::AssignStmt>(b, load),
                               std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{x})});
  auto fn =
      std::make_shared<ir::Function>("f", ir::FunctionType::kOpaque, std::vector<ir::VarPtr>{x},
                                     std::vector<ir::TypePtr>{x->type}, body);
  auto program = std::make_shared<ir::Program>(std::vector<ir::FunctionPtr>{fn});
  PassManager pm;
  absl::StatusOr<ProgramResult> r = pm.Run(program);
  EXPECT_FALSE(r.ok());
  PassManagerOptions off;
  off.verify = false;
  EXPECT_TRUE(PassManager(off).Run(program).ok());
}

}  // namespace
}  // namespace passes
}  // namespace accelmem
