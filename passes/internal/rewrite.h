// A small copy-on-write rewriter for tile-IR functions, used by the memory passes.
//
// Why here: the memory passes change the types of values (their MemRefs) and insert or drop a
// few statements; because Vars are identified by object, retyping a value means making a new
// Var and substituting every use. Rewriter walks a function once in definition order, asks
// `retype` for the new type of each defined value (params, assignments, loop variables, carried
// values, loop and branch results), substitutes uses, and rebuilds only the nodes that change.
// It also keeps `tile.alloc` statements in step with the root MemRef their value holds (address
// and size arguments), so a pass only maps MemRefs. Statement hooks let a pass replace a
// statement (e.g. insert a tile.move before a yield). (A local helper until ir/ has a mutator.)
#ifndef ACCELMEM_PASSES_INTERNAL_REWRITE_H_
#define ACCELMEM_PASSES_INTERNAL_REWRITE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ir/expr.h"
#include "ir/function.h"
#include "ir/memref.h"
#include "ir/stmt.h"
#include "ir/types.h"

namespace accelmem {
namespace passes {
namespace internal {

class Rewriter {
 public:
  // New type for a definition of `var`; return null (or var.type) to keep it.
  using RetypeFn = std::function<ir::TypePtr(const ir::Var& var)>;
  // Called for every statement before the default rewrite. Return true after appending the
  // replacement statements to `out` (already rewritten: call RewriteStmt on children yourself);
  // false to let the default rewrite run.
  using StmtHook =
      std::function<bool(Rewriter& rw, const ir::StmtPtr& stmt, std::vector<ir::StmtPtr>* out)>;

  explicit Rewriter(RetypeFn retype = nullptr, StmtHook hook = nullptr)
      : retype_(std::move(retype)), hook_(std::move(hook)) {}

  ir::FunctionPtr RewriteFunction(const ir::FunctionPtr& f);

  // Building blocks for hooks.
  ir::VarPtr Def(const ir::VarPtr& v);  // at a definition: the (possibly new) Var
  ir::VarPtr Use(const ir::VarPtr& v);  // the Var that replaced `v`, or `v`
  ir::ExprPtr RewriteExpr(const ir::ExprPtr& e);
  // Appends the rewrite of `s` (usually one statement) to `out`.
  void RewriteStmt(const ir::StmtPtr& s, std::vector<ir::StmtPtr>* out);
  ir::StmtPtr RewriteBody(const ir::StmtPtr& body);

  // True if anything changed so far.
  bool changed() const { return changed_; }
  void MarkChanged() { changed_ = true; }

 private:
  ir::StmtPtr DefaultRewrite(const ir::StmtPtr& s);

  RetypeFn retype_;
  StmtHook hook_;
  absl::flat_hash_map<const ir::Var*, ir::VarPtr> map_;
  // The replaced Vars, kept alive while the rewriter lives: map_ is keyed by address, and a Var
  // a hook made and dropped could otherwise be freed and its address reused by another new Var,
  // which would then be taken for the first one.
  std::vector<ir::VarPtr> replaced_;
  bool changed_ = false;
};

// Calls `fn` on every Var defined in the function (params first, then the body in order).
void ForEachDef(const ir::Function& f, const std::function<void(const ir::VarPtr&)>& fn);
// Every name defined in the function (for making fresh names).
absl::flat_hash_set<std::string> DefinedNames(const ir::Function& f);
// `base` if unused, else base_1, base_2, ...; the result is added to `used`.
std::string FreshName(const std::string& base, absl::flat_hash_set<std::string>* used);

}  // namespace internal
}  // namespace passes
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_INTERNAL_REWRITE_H_
