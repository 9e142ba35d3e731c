#include "ir/visitor.h"

namespace accelmem {
namespace ir {

void IRVisitor::VisitProgram(const Program& p) {
  for (const FunctionPtr& f : p.functions) VisitFunction(*f);
}

void IRVisitor::VisitFunction(const Function& f) {
  for (const VarPtr& v : f.params) VisitVarDefPtr(v);
  if (f.body != nullptr) VisitStmt(*f.body);
}

void IRVisitor::VisitStmt(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::kAssign:
      return VisitAssign(static_cast<const AssignStmt&>(s));
    case StmtKind::kEval:
      return VisitEval(static_cast<const EvalStmt&>(s));
    case StmtKind::kSeq:
      return VisitSeq(static_cast<const SeqStmts&>(s));
    case StmtKind::kFor:
      return VisitFor(static_cast<const ForStmt&>(s));
    case StmtKind::kIf:
      return VisitIf(static_cast<const IfStmt&>(s));
    case StmtKind::kYield:
      return VisitYield(static_cast<const YieldStmt&>(s));
    case StmtKind::kReturn:
      return VisitReturn(static_cast<const ReturnStmt&>(s));
  }
}

void IRVisitor::VisitAssign(const AssignStmt& s) {
  VisitExpr(*s.value);
  VisitVarDefPtr(s.var);
}

void IRVisitor::VisitEval(const EvalStmt& s) { VisitExpr(*s.expr); }

void IRVisitor::VisitSeq(const SeqStmts& s) {
  for (const StmtPtr& c : s.stmts) VisitStmt(*c);
}

void IRVisitor::VisitFor(const ForStmt& s) {
  VisitExpr(*s.start);
  VisitExpr(*s.stop);
  VisitExpr(*s.step);
  for (const ExprPtr& e : s.inits) VisitExpr(*e);
  if (s.loop_var != nullptr) VisitVarDefPtr(s.loop_var);
  for (const VarPtr& v : s.iter_args) VisitVarDefPtr(v);
  VisitStmt(*s.body);
  for (const VarPtr& v : s.return_vars) VisitVarDefPtr(v);
}

void IRVisitor::VisitIf(const IfStmt& s) {
  VisitExpr(*s.cond);
  VisitStmt(*s.then_body);
  if (s.else_body != nullptr) VisitStmt(*s.else_body);
  for (const VarPtr& v : s.return_vars) VisitVarDefPtr(v);
}

void IRVisitor::VisitYield(const YieldStmt& s) {
  for (const ExprPtr& e : s.values) VisitExpr(*e);
}

void IRVisitor::VisitReturn(const ReturnStmt& s) {
  for (const ExprPtr& e : s.values) VisitExpr(*e);
}

void IRVisitor::VisitExpr(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kVar:
      return VisitVarUse(static_cast<const Var&>(e));
    case ExprKind::kCall:
      return VisitCall(static_cast<const Call&>(e));
    case ExprKind::kList:
      return VisitList(static_cast<const ListExpr&>(e));
    default:
      return VisitLiteral(e);
  }
}

void IRVisitor::VisitCall(const Call& c) {
  for (const ExprPtr& a : c.args) VisitExpr(*a);
  for (const auto& kv : c.kwargs) VisitExpr(*kv.second);
}

void IRVisitor::VisitList(const ListExpr& l) {
  for (const ExprPtr& e : l.items) VisitExpr(*e);
}

namespace {
class DefCollector final : public IRVisitor {
 public:
  explicit DefCollector(const std::function<void(const VarPtr&)>& fn) : fn_(fn) {}
  void VisitVarDefPtr(const VarPtr& v) override { fn_(v); }
  // Only definitions matter: statements that define nothing are skipped.
  void VisitAssign(const AssignStmt& s) override { fn_(s.var); }
  void VisitEval(const EvalStmt&) override {}
  void VisitYield(const YieldStmt&) override {}
  void VisitReturn(const ReturnStmt&) override {}

 private:
  const std::function<void(const VarPtr&)>& fn_;
};
}  // namespace

void ForEachDefPtr(const Function& f, const std::function<void(const VarPtr&)>& fn) {
  DefCollector c(fn);
  c.VisitFunction(f);
}

void ForEachDef(const Function& f, const std::function<void(const Var&)>& fn) {
  ForEachDefPtr(f, [&fn](const VarPtr& v) { fn(*v); });
}

absl::flat_hash_set<std::string> DefinedNames(const Function& f) {
  absl::flat_hash_set<std::string> names;
  ForEachDef(f, [&names](const Var& v) { names.insert(v.name); });
  return names;
}

}  // namespace ir
}  // namespace accelmem
