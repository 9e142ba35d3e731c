#include "ir/stmt.h"

namespace accelmem {
namespace ir {

#define ACCELMEM_IR_AS(Name, Class, Kind)                                                      \
  const Class* Name(const Stmt* s) {                                                           \
    return s != nullptr && s->kind == StmtKind::Kind ? static_cast<const Class*>(s) : nullptr; \
  }
ACCELMEM_IR_AS(AsAssign, AssignStmt, kAssign)
ACCELMEM_IR_AS(AsEval, EvalStmt, kEval)
ACCELMEM_IR_AS(AsSeq, SeqStmts, kSeq)
ACCELMEM_IR_AS(AsFor, ForStmt, kFor)
ACCELMEM_IR_AS(AsIf, IfStmt, kIf)
ACCELMEM_IR_AS(AsYield, YieldStmt, kYield)
ACCELMEM_IR_AS(AsReturn, ReturnStmt, kReturn)
#undef ACCELMEM_IR_AS

std::vector<StmtPtr> BodyStmts(const StmtPtr& body) {
  if (body == nullptr) return {};
  if (const SeqStmts* seq = AsSeq(body.get())) return seq->stmts;
  return {body};
}

const YieldStmt* FinalYield(const StmtPtr& body) {
  if (body == nullptr) return nullptr;
  const SeqStmts* seq = AsSeq(body.get());
  if (seq == nullptr) return AsYield(body.get());
  return seq->stmts.empty() ? nullptr : AsYield(seq->stmts.back().get());
}

namespace {
void Flatten(const std::vector<StmtPtr>& in, std::vector<StmtPtr>* out) {
  for (const StmtPtr& s : in) {
    if (const SeqStmts* seq = AsSeq(s.get())) {
      Flatten(seq->stmts, out);
    } else if (s != nullptr) {
      out->push_back(s);
    }
  }
}
}  // namespace

StmtPtr FlattenSeq(const std::vector<StmtPtr>& stmts, SourceLoc loc) {
  std::vector<StmtPtr> out;
  out.reserve(stmts.size());
  Flatten(stmts, &out);
  return std::make_shared<SeqStmts>(std::move(out), loc);
}

const Call* AsAllocCall(const Stmt& s) {
  const AssignStmt* assign = AsAssign(&s);
  if (assign == nullptr) return nullptr;
  const Call* call = AsCall(assign->value.get());
  return call != nullptr && call->op == "tile.alloc" ? call : nullptr;
}

CallPtr MakeAllocCall(const MemRef& root) {
  Kwargs kwargs;
  if (root.is_slotted()) kwargs.emplace_back("slots", MakeInt(root.slots()));
  if (root.declared()) kwargs.emplace_back("declared", MakeInt(1));
  return MakeCall("tile.alloc",
                  {MakeSpace(root.space()), MakeInt(root.root()->addr()), MakeInt(root.size()),
                   MakeInt(root.id())},
                  std::move(kwargs));
}

StmtPtr MakeAllocStmt(const MemRefPtr& root) {
  return std::make_shared<AssignStmt>(MakeVar(root->name(), MakeMemRefType(root)),
                                      MakeAllocCall(*root));
}

}  // namespace ir
}  // namespace accelmem
