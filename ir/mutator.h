// IRMutator: copy-on-write rewriting, the base of every pass.
//
// Each Mutate* hook returns the node itself when nothing below it changed, so unchanged
// subtrees are shared, not copied. Rebuilt nodes keep their source locations.
//
// Values: a definition goes through MutateVarDef, which asks MutateDefType for its new type (by
// default MutateType of its type; a pass that retypes by value, e.g. giving each tile its
// MemRef, overrides MutateDefType); if the type changes, a new Var with the same name replaces
// it and every later use sees the new Var (var_remap_). RemapVar(old, new) substitutes uses
// explicitly. Vars are keyed by address, so every replaced Var is kept alive as long as the
// mutator: a Var a pass makes and drops (e.g. a temporary it defines through MutateVarDef) could
// otherwise be freed and its address taken by another new Var, which would then be mistaken for
// the first one.
//
// MemRefs: MutateType rewrites the MemRef of tile and MemRefType types with MutateMemRef, which
// (by default) maps roots through RemapMemRef(old_root, new_root) and rebuilds views of a
// remapped root at the same offset. A `tile.alloc` whose MemRef changes gets its arguments
// rebuilt from the new MemRef, so planning addresses is:
//
//   IRMutator m;
//   m.RemapMemRef(root, root->WithAddr(4096));   // for each root
//   FunctionPtr planned = m.MutateFunction(f);    // types, views and allocs all updated
//
// Statements: a statement hook may return null to delete the statement, or a SeqStmts to put
// several statements in its place (spliced into the enclosing sequence). A hook that inserts
// statements builds them from already mutated expressions (MutateExpr, MutateVarDef) and may
// hand a modified copy of its statement to the base hook to mutate the rest.
#ifndef ACCELMEM_IR_MUTATOR_H_
#define ACCELMEM_IR_MUTATOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ir/expr.h"
#include "ir/function.h"
#include "ir/program.h"
#include "ir/stmt.h"

namespace accelmem {
namespace ir {

class IRMutator {
 public:
  virtual ~IRMutator() = default;

  ProgramPtr MutateProgram(const ProgramPtr& p);
  // Per function: the value maps are kept (call ResetMaps between independent functions if
  // the same Var objects could appear in both, which the parser never produces).
  virtual FunctionPtr MutateFunction(const FunctionPtr& f);

  StmtPtr MutateStmt(const StmtPtr& s);  // dispatches on the kind
  virtual StmtPtr MutateAssign(const std::shared_ptr<const AssignStmt>& s);
  virtual StmtPtr MutateEval(const std::shared_ptr<const EvalStmt>& s);
  virtual StmtPtr MutateSeq(const std::shared_ptr<const SeqStmts>& s);
  virtual StmtPtr MutateFor(const std::shared_ptr<const ForStmt>& s);
  virtual StmtPtr MutateIf(const std::shared_ptr<const IfStmt>& s);
  virtual StmtPtr MutateYield(const std::shared_ptr<const YieldStmt>& s);
  virtual StmtPtr MutateReturn(const std::shared_ptr<const ReturnStmt>& s);

  ExprPtr MutateExpr(const ExprPtr& e);  // dispatches on the kind
  virtual ExprPtr MutateVarUse(const VarPtr& v);
  virtual ExprPtr MutateCall(const CallPtr& c);
  virtual ExprPtr MutateList(const std::shared_ptr<const ListExpr>& l);

  virtual VarPtr MutateVarDef(const VarPtr& v);
  // The type a definition of `v` gets; the default is MutateType(v.type).
  virtual TypePtr MutateDefType(const Var& v);
  virtual TypePtr MutateType(const TypePtr& t);
  virtual MemRefPtr MutateMemRef(const MemRefPtr& m);

  // Uses of `from` become `to` (from here on); `from` is kept alive with the mutator.
  void RemapVar(const VarPtr& from, VarPtr to);
  // The root `from` becomes `to` everywhere (types, views, its tile.alloc).
  void RemapMemRef(const MemRef* from_root, MemRefPtr to_root) {
    memref_remap_[from_root] = std::move(to_root);
  }
  void ResetMaps();

 protected:
  // Mutates a list of definitions; true if any changed.
  bool MutateDefs(const std::vector<VarPtr>& in, std::vector<VarPtr>* out);
  bool MutateExprs(const std::vector<ExprPtr>& in, std::vector<ExprPtr>* out);
  // Mutates a body; the result is a SeqStmts when statements were spliced or deleted.
  StmtPtr MutateBody(const StmtPtr& body);

  absl::flat_hash_map<const Var*, VarPtr> var_remap_;
  std::vector<VarPtr> replaced_;  // the keys of var_remap_, kept alive (see above)
  absl::flat_hash_map<const MemRef*, MemRefPtr> memref_remap_;  // roots
  absl::flat_hash_map<const MemRef*, MemRefPtr> view_memo_;     // rebuilt views
};

// `base` if not in `used`, else base_1, base_2, ...; the result is added to `used` (fresh names
// for values a pass inserts; ir::DefinedNames gives a function's names).
std::string FreshName(const std::string& base, absl::flat_hash_set<std::string>* used);

// `f` with each root MemRef in `roots` replaced (types, views and tile.alloc arguments).
FunctionPtr RemapMemRefs(const FunctionPtr& f,
                         const absl::flat_hash_map<const MemRef*, MemRefPtr>& roots);

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_MUTATOR_H_
