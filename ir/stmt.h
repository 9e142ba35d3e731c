// Statements of the tile IR: assignment, evaluation, sequences, `for` loops with
// carried values, `if` with results, `yield` and `return`.
//
// Immutable nodes shared by pointer (StmtPtr). Bodies of functions, loops and branches are
// SeqStmts. A loop's carried values are iter_args (visible in the body, initialised from
// inits) and return_vars (visible after the loop); the body ends with a YieldStmt giving the
// next values. An IfStmt with return_vars ends both branches with a YieldStmt.
#ifndef ACCELMEM_IR_STMT_H_
#define ACCELMEM_IR_STMT_H_

#include <memory>
#include <utility>
#include <vector>

#include "ir/expr.h"

namespace accelmem {
namespace ir {

enum class StmtKind : uint8_t { kAssign, kEval, kSeq, kFor, kIf, kYield, kReturn };

class Stmt {
 public:
  Stmt(StmtKind kind, SourceLoc loc) : kind(kind), loc(loc) {}
  virtual ~Stmt() = default;
  const StmtKind kind;
  const SourceLoc loc;  // of the statement's first token
};
using StmtPtr = std::shared_ptr<const Stmt>;

// `var: Type = value`
class AssignStmt final : public Stmt {
 public:
  AssignStmt(VarPtr var, ExprPtr value, SourceLoc loc = {})
      : Stmt(StmtKind::kAssign, loc), var(std::move(var)), value(std::move(value)) {}
  const VarPtr var;
  const ExprPtr value;
};

// `op(args)` evaluated for its effect.
class EvalStmt final : public Stmt {
 public:
  explicit EvalStmt(ExprPtr expr, SourceLoc loc = {})
      : Stmt(StmtKind::kEval, loc), expr(std::move(expr)) {}
  const ExprPtr expr;
};

class SeqStmts final : public Stmt {
 public:
  explicit SeqStmts(std::vector<StmtPtr> stmts, SourceLoc loc = {})
      : Stmt(StmtKind::kSeq, loc), stmts(std::move(stmts)) {}
  const std::vector<StmtPtr> stmts;
};

// for loop_var, (iter_args...) in range(start, stop, step, init=(inits...)) -> (return_vars...):
class ForStmt final : public Stmt {
 public:
  ForStmt(VarPtr loop_var, ExprPtr start, ExprPtr stop, ExprPtr step, std::vector<VarPtr> iter_args,
          std::vector<ExprPtr> inits, StmtPtr body, std::vector<VarPtr> return_vars,
          SourceLoc loc = {}, int64_t pipeline = 0)
      : Stmt(StmtKind::kFor, loc),
        loop_var(std::move(loop_var)),
        start(std::move(start)),
        stop(std::move(stop)),
        step(std::move(step)),
        iter_args(std::move(iter_args)),
        inits(std::move(inits)),
        body(std::move(body)),
        return_vars(std::move(return_vars)),
        pipeline(pipeline) {}
  const VarPtr loop_var;
  const ExprPtr start, stop, step;
  const std::vector<VarPtr> iter_args;
  const std::vector<ExprPtr> inits;  // parallel to iter_args
  const StmtPtr body;
  const std::vector<VarPtr> return_vars;  // parallel to iter_args
  // `pipeline=N`: 0 for an ordinary loop, else the depth N (2..16) of a software-pipelined loop
  // (upstream PyPTO's pl.pipeline): iteration j is stage j mod N, and up to N consecutive
  // iterations are in flight at once, so a tile of the body needs N buffers (the slots of a
  // slotted MemRef, ir/memref.h) for the stages not to overwrite each other.
  const int64_t pipeline;
};

// if cond -> (return_vars...): then_body else: else_body
class IfStmt final : public Stmt {
 public:
  IfStmt(ExprPtr cond, StmtPtr then_body, StmtPtr else_body, std::vector<VarPtr> return_vars,
         SourceLoc loc = {})
      : Stmt(StmtKind::kIf, loc),
        cond(std::move(cond)),
        then_body(std::move(then_body)),
        else_body(std::move(else_body)),
        return_vars(std::move(return_vars)) {}
  const ExprPtr cond;
  const StmtPtr then_body;
  const StmtPtr else_body;  // may be null when there are no return_vars
  const std::vector<VarPtr> return_vars;
};

// `yield (a, b)`: last statement of a loop body or branch that carries values.
class YieldStmt final : public Stmt {
 public:
  explicit YieldStmt(std::vector<ExprPtr> values, SourceLoc loc = {})
      : Stmt(StmtKind::kYield, loc), values(std::move(values)) {}
  const std::vector<ExprPtr> values;
};

// `return a, b`: last statement of a function body.
class ReturnStmt final : public Stmt {
 public:
  explicit ReturnStmt(std::vector<ExprPtr> values, SourceLoc loc = {})
      : Stmt(StmtKind::kReturn, loc), values(std::move(values)) {}
  const std::vector<ExprPtr> values;
};

// Checked down-casts: null when the kind differs.
const AssignStmt* AsAssign(const Stmt* s);
const EvalStmt* AsEval(const Stmt* s);
const SeqStmts* AsSeq(const Stmt* s);
const ForStmt* AsFor(const Stmt* s);
const IfStmt* AsIf(const Stmt* s);
const YieldStmt* AsYield(const Stmt* s);
const ReturnStmt* AsReturn(const Stmt* s);

// The statements of a body: a SeqStmts' children, or the statement itself.
std::vector<StmtPtr> BodyStmts(const StmtPtr& body);
// The yield that ends a loop body or branch, or null when the body does not end with one.
const YieldStmt* FinalYield(const StmtPtr& body);
// A SeqStmts of `stmts` with nested SeqStmts spliced in.
StmtPtr FlattenSeq(const std::vector<StmtPtr>& stmts, SourceLoc loc = {});

// If `s` is `name: MemRefType = tile.alloc(...)`, the call, else null.
const Call* AsAllocCall(const Stmt& s);
// `tile.alloc(Space, addr, size, id)` from a root MemRef's fields.
CallPtr MakeAllocCall(const MemRef& root);
// `NAME: MemRefType = tile.alloc(...)` defining `root` (named by root->name()).
StmtPtr MakeAllocStmt(const MemRefPtr& root);

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_STMT_H_
