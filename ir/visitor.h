// IRVisitor: a read-only walk over programs, functions, statements and expressions.
//
// Override the Visit* hooks you need and call the base to keep walking. Definitions (params,
// assigned values, loop variables, carried values, results) go to VisitVarDef, uses to
// VisitVarUse, so analyses such as lifetimes need no bookkeeping of their own. Order: a
// statement's uses before its definitions; a loop's bounds and inits, then its loop variable
// and carried values, its body, then its results.
//
// An analysis that needs more than defs and uses (statement numbers, loop nesting) overrides the
// per-kind hooks (VisitAssign, VisitFor, ...) and walks the children it wants with VisitExpr and
// VisitStmt (VisitStmt takes a statement, never null: check an absent else branch first).
#ifndef ACCELMEM_IR_VISITOR_H_
#define ACCELMEM_IR_VISITOR_H_

#include <functional>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "ir/expr.h"
#include "ir/function.h"
#include "ir/program.h"
#include "ir/stmt.h"

namespace accelmem {
namespace ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;

  virtual void VisitProgram(const Program& p);
  virtual void VisitFunction(const Function& f);

  void VisitStmt(const Stmt& s);  // dispatches on the kind
  virtual void VisitAssign(const AssignStmt& s);
  virtual void VisitEval(const EvalStmt& s);
  virtual void VisitSeq(const SeqStmts& s);
  virtual void VisitFor(const ForStmt& s);
  virtual void VisitIf(const IfStmt& s);
  virtual void VisitYield(const YieldStmt& s);
  virtual void VisitReturn(const ReturnStmt& s);

  void VisitExpr(const Expr& e);  // dispatches on the kind
  virtual void VisitVarUse(const Var& v) {}
  virtual void VisitVarDef(const Var& v) {}
  // Called for every definition with its shared pointer; the default calls VisitVarDef.
  virtual void VisitVarDefPtr(const VarPtr& v) { VisitVarDef(*v); }
  virtual void VisitCall(const Call& c);
  virtual void VisitList(const ListExpr& l);
  virtual void VisitLiteral(const Expr& e) {}  // int, float, string, space, dtype
};

// Calls `fn` on every Var the function defines, in VisitVarDef order: params first, then the
// body (assigned values; a loop's variable, carried values, body, results; an if's branches,
// then its results).
void ForEachDef(const Function& f, const std::function<void(const Var&)>& fn);
// The same walk with the Vars' shared pointers (for code that keeps them, as the Python bindings).
void ForEachDefPtr(const Function& f, const std::function<void(const VarPtr&)>& fn);
// Every name defined in the function (to make fresh names with FreshName, ir/mutator.h).
absl::flat_hash_set<std::string> DefinedNames(const Function& f);

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_VISITOR_H_
