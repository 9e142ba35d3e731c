#include "ir/mutator.h"

#include <cstddef>
#include <utility>

#include "absl/strings/str_cat.h"

namespace accelmem {
namespace ir {

void IRMutator::ResetMaps() {
  var_remap_.clear();
  replaced_.clear();
  memref_remap_.clear();
  view_memo_.clear();
}

ProgramPtr IRMutator::MutateProgram(const ProgramPtr& p) {
  std::vector<FunctionPtr> fs;
  fs.reserve(p->functions.size());
  bool changed = false;
  for (const FunctionPtr& f : p->functions) {
    fs.push_back(MutateFunction(f));
    changed |= fs.back() != f;
  }
  return changed ? std::make_shared<Program>(std::move(fs)) : p;
}

FunctionPtr IRMutator::MutateFunction(const FunctionPtr& f) {
  std::vector<VarPtr> params;
  bool changed = MutateDefs(f->params, &params);
  std::vector<TypePtr> rets;
  for (const TypePtr& t : f->return_types) {
    rets.push_back(MutateType(t));
    changed |= rets.back() != t;
  }
  StmtPtr body = MutateBody(f->body);
  changed |= body != f->body;
  if (!changed) return f;
  return std::make_shared<Function>(f->name, f->type, std::move(params), std::move(rets),
                                    std::move(body), f->loc);
}

StmtPtr IRMutator::MutateStmt(const StmtPtr& s) {
  switch (s->kind) {
    case StmtKind::kAssign:
      return MutateAssign(std::static_pointer_cast<const AssignStmt>(s));
    case StmtKind::kEval:
      return MutateEval(std::static_pointer_cast<const EvalStmt>(s));
    case StmtKind::kSeq:
      return MutateSeq(std::static_pointer_cast<const SeqStmts>(s));
    case StmtKind::kFor:
      return MutateFor(std::static_pointer_cast<const ForStmt>(s));
    case StmtKind::kIf:
      return MutateIf(std::static_pointer_cast<const IfStmt>(s));
    case StmtKind::kYield:
      return MutateYield(std::static_pointer_cast<const YieldStmt>(s));
    case StmtKind::kReturn:
      return MutateReturn(std::static_pointer_cast<const ReturnStmt>(s));
  }
  return s;
}

StmtPtr IRMutator::MutateBody(const StmtPtr& body) {
  if (body == nullptr) return body;
  return MutateStmt(body);
}

StmtPtr IRMutator::MutateAssign(const std::shared_ptr<const AssignStmt>& s) {
  ExprPtr value = MutateExpr(s->value);
  VarPtr var = MutateVarDef(s->var);
  // An alloc whose MemRef changed takes its arguments from the new MemRef.
  if (var != s->var && AsAllocCall(*s) != nullptr) {
    const MemRefType* mt = AsMemRefType(var->type);
    if (mt != nullptr && mt->memref != nullptr && mt->memref != MemRefOf(*s->var->type)) {
      CallPtr old = AsCallPtr(value);
      CallPtr fresh = MakeAllocCall(*mt->memref);
      // The slot count and the declared mark are the new MemRef's; any other keyword stays.
      Kwargs kwargs = fresh->kwargs;
      for (const auto& kv : old->kwargs) {
        if (kv.first != "slots" && kv.first != "declared") kwargs.push_back(kv);
      }
      value = MakeCall(fresh->op, fresh->args, std::move(kwargs), old->loc);
    }
  }
  if (value == s->value && var == s->var) return s;
  return std::make_shared<AssignStmt>(std::move(var), std::move(value), s->loc);
}

StmtPtr IRMutator::MutateEval(const std::shared_ptr<const EvalStmt>& s) {
  ExprPtr e = MutateExpr(s->expr);
  if (e == s->expr) return s;
  return std::make_shared<EvalStmt>(std::move(e), s->loc);
}

StmtPtr IRMutator::MutateSeq(const std::shared_ptr<const SeqStmts>& s) {
  std::vector<StmtPtr> out;
  out.reserve(s->stmts.size());
  bool changed = false;
  for (const StmtPtr& c : s->stmts) {
    StmtPtr m = MutateStmt(c);
    if (m == c) {
      out.push_back(c);
      continue;
    }
    changed = true;
    if (m == nullptr) continue;  // deleted
    if (const SeqStmts* seq = AsSeq(m.get())) {
      out.insert(out.end(), seq->stmts.begin(), seq->stmts.end());  // spliced
    } else {
      out.push_back(std::move(m));
    }
  }
  if (!changed) return s;
  return std::make_shared<SeqStmts>(std::move(out), s->loc);
}

StmtPtr IRMutator::MutateFor(const std::shared_ptr<const ForStmt>& s) {
  ExprPtr start = MutateExpr(s->start);
  ExprPtr stop = MutateExpr(s->stop);
  ExprPtr step = MutateExpr(s->step);
  std::vector<ExprPtr> inits;
  bool changed = MutateExprs(s->inits, &inits);
  VarPtr loop_var = MutateVarDef(s->loop_var);
  std::vector<VarPtr> iter_args;
  changed |= MutateDefs(s->iter_args, &iter_args);
  StmtPtr body = MutateBody(s->body);
  std::vector<VarPtr> results;
  changed |= MutateDefs(s->return_vars, &results);
  changed |= start != s->start || stop != s->stop || step != s->step || loop_var != s->loop_var ||
             body != s->body;
  if (!changed) return s;
  return std::make_shared<ForStmt>(std::move(loop_var), std::move(start), std::move(stop),
                                   std::move(step), std::move(iter_args), std::move(inits),
                                   std::move(body), std::move(results), s->loc, s->pipeline);
}

StmtPtr IRMutator::MutateIf(const std::shared_ptr<const IfStmt>& s) {
  ExprPtr cond = MutateExpr(s->cond);
  StmtPtr then_body = MutateBody(s->then_body);
  StmtPtr else_body = MutateBody(s->else_body);
  std::vector<VarPtr> results;
  bool changed = MutateDefs(s->return_vars, &results);
  changed |= cond != s->cond || then_body != s->then_body || else_body != s->else_body;
  if (!changed) return s;
  return std::make_shared<IfStmt>(std::move(cond), std::move(then_body), std::move(else_body),
                                  std::move(results), s->loc);
}

StmtPtr IRMutator::MutateYield(const std::shared_ptr<const YieldStmt>& s) {
  std::vector<ExprPtr> values;
  if (!MutateExprs(s->values, &values)) return s;
  return std::make_shared<YieldStmt>(std::move(values), s->loc);
}

StmtPtr IRMutator::MutateReturn(const std::shared_ptr<const ReturnStmt>& s) {
  std::vector<ExprPtr> values;
  if (!MutateExprs(s->values, &values)) return s;
  return std::make_shared<ReturnStmt>(std::move(values), s->loc);
}

ExprPtr IRMutator::MutateExpr(const ExprPtr& e) {
  switch (e->kind) {
    case ExprKind::kVar:
      return MutateVarUse(std::static_pointer_cast<const Var>(e));
    case ExprKind::kCall:
      return MutateCall(std::static_pointer_cast<const Call>(e));
    case ExprKind::kList:
      return MutateList(std::static_pointer_cast<const ListExpr>(e));
    default:
      return e;
  }
}

ExprPtr IRMutator::MutateVarUse(const VarPtr& v) {
  if (var_remap_.empty()) return v;
  auto it = var_remap_.find(v.get());
  return it == var_remap_.end() ? v : it->second;
}

ExprPtr IRMutator::MutateCall(const CallPtr& c) {
  // The hot path of every pass: nothing is allocated until an argument changes.
  std::vector<ExprPtr> args;
  bool changed = false;
  for (size_t i = 0; i < c->args.size(); ++i) {
    ExprPtr a = MutateExpr(c->args[i]);
    if (!changed && a == c->args[i]) continue;
    if (!changed) {
      args.reserve(c->args.size());
      args.assign(c->args.begin(), c->args.begin() + static_cast<std::ptrdiff_t>(i));
      changed = true;
    }
    args.push_back(std::move(a));
  }
  Kwargs kwargs;
  bool kw_changed = false;
  for (size_t i = 0; i < c->kwargs.size(); ++i) {
    ExprPtr v = MutateExpr(c->kwargs[i].second);
    if (!kw_changed && v == c->kwargs[i].second) continue;
    if (!kw_changed) {
      kwargs.reserve(c->kwargs.size());
      kwargs.assign(c->kwargs.begin(), c->kwargs.begin() + static_cast<std::ptrdiff_t>(i));
      kw_changed = true;
    }
    kwargs.emplace_back(c->kwargs[i].first, std::move(v));
  }
  if (!changed && !kw_changed) return c;
  return MakeCall(c->op, changed ? std::move(args) : c->args,
                  kw_changed ? std::move(kwargs) : c->kwargs, c->loc);
}

ExprPtr IRMutator::MutateList(const std::shared_ptr<const ListExpr>& l) {
  std::vector<ExprPtr> items;
  if (!MutateExprs(l->items, &items)) return l;
  return MakeList(std::move(items));
}

void IRMutator::RemapVar(const VarPtr& from, VarPtr to) {
  auto [it, inserted] = var_remap_.insert_or_assign(from.get(), std::move(to));
  (void)it;
  if (inserted) replaced_.push_back(from);
}

VarPtr IRMutator::MutateVarDef(const VarPtr& v) {
  if (v == nullptr) return v;
  auto it = var_remap_.find(v.get());
  if (it != var_remap_.end()) return it->second;
  TypePtr t = MutateDefType(*v);
  if (t == nullptr || t == v->type) return v;
  VarPtr fresh = MakeVar(v->name, std::move(t), v->loc);
  var_remap_.emplace(v.get(), fresh);
  replaced_.push_back(v);
  return fresh;
}

TypePtr IRMutator::MutateDefType(const Var& v) { return MutateType(v.type); }

TypePtr IRMutator::MutateType(const TypePtr& t) {
  if (const TileType* tile = AsTile(t)) {
    if (tile->memref == nullptr) return t;
    MemRefPtr m = MutateMemRef(tile->memref);
    return m == tile->memref ? t : tile->WithMemRef(std::move(m));
  }
  if (const MemRefType* mt = AsMemRefType(t)) {
    if (mt->memref == nullptr) return t;
    MemRefPtr m = MutateMemRef(mt->memref);
    return m == mt->memref ? t : MakeMemRefType(std::move(m));
  }
  return t;
}

MemRefPtr IRMutator::MutateMemRef(const MemRefPtr& m) {
  if (m->is_root()) {
    auto it = memref_remap_.find(m.get());
    return it == memref_remap_.end() ? m : it->second;
  }
  auto memo = view_memo_.find(m.get());
  if (memo != view_memo_.end()) return memo->second;
  MemRefPtr root = m->root_ptr();
  MemRefPtr new_root = MutateMemRef(root);
  MemRefPtr out = new_root == root ? m : MemRef::Rebase(*m, new_root);
  view_memo_.emplace(m.get(), out);
  return out;
}

bool IRMutator::MutateDefs(const std::vector<VarPtr>& in, std::vector<VarPtr>* out) {
  bool changed = false;
  out->reserve(in.size());
  for (const VarPtr& v : in) {
    out->push_back(MutateVarDef(v));
    changed |= out->back() != v;
  }
  return changed;
}

bool IRMutator::MutateExprs(const std::vector<ExprPtr>& in, std::vector<ExprPtr>* out) {
  bool changed = false;
  out->reserve(in.size());
  for (const ExprPtr& e : in) {
    out->push_back(MutateExpr(e));
    changed |= out->back() != e;
  }
  return changed;
}

std::string FreshName(const std::string& base, absl::flat_hash_set<std::string>* used) {
  std::string name = base;
  for (int i = 1; used->contains(name); ++i) name = absl::StrCat(base, "_", i);
  used->insert(name);
  return name;
}

FunctionPtr RemapMemRefs(const FunctionPtr& f,
                         const absl::flat_hash_map<const MemRef*, MemRefPtr>& roots) {
  IRMutator m;
  for (const auto& kv : roots) m.RemapMemRef(kv.first, kv.second);
  return m.MutateFunction(f);
}

}  // namespace ir
}  // namespace accelmem
