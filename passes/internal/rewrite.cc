#include "passes/internal/rewrite.h"

#include <cstddef>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace accelmem {
namespace passes {
namespace internal {

using ir::ExprPtr;
using ir::StmtPtr;
using ir::VarPtr;

VarPtr Rewriter::Def(const VarPtr& v) {
  if (v == nullptr) return v;
  auto it = map_.find(v.get());
  if (it != map_.end()) return it->second;
  // Values are defined once, so only replaced ones need remembering (for their uses).
  if (!retype_) return v;
  ir::TypePtr t = retype_(*v);
  if (t == nullptr || t == v->type) return v;
  VarPtr out = ir::MakeVar(v->name, std::move(t), v->loc);
  changed_ = true;
  map_.emplace(v.get(), out);
  replaced_.push_back(v);
  return out;
}

VarPtr Rewriter::Use(const VarPtr& v) {
  auto it = map_.find(v.get());
  return it == map_.end() ? v : it->second;
}

namespace {

// Rewrites `items` with `fn`; allocates a new vector only once an item changes.
template <typename Fn>
bool RewriteAll(const std::vector<ExprPtr>& items, Fn fn, std::vector<ExprPtr>* out) {
  for (size_t i = 0; i < items.size(); ++i) {
    ExprPtr x = fn(items[i]);
    if (x == items[i]) continue;
    out->reserve(items.size());
    out->assign(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(i));
    out->push_back(std::move(x));
    for (size_t j = i + 1; j < items.size(); ++j) out->push_back(fn(items[j]));
    return true;
  }
  return false;
}

}  // namespace

ExprPtr Rewriter::RewriteExpr(const ExprPtr& e) {
  if (e == nullptr || map_.empty()) return e;
  auto fn = [this](const ExprPtr& x) { return RewriteExpr(x); };
  switch (e->kind) {
    case ir::ExprKind::kVar: {
      auto it = map_.find(static_cast<const ir::Var*>(e.get()));
      return it == map_.end() ? e : it->second;
    }
    case ir::ExprKind::kList: {
      const auto* list = static_cast<const ir::ListExpr*>(e.get());
      std::vector<ExprPtr> items;
      return RewriteAll(list->items, fn, &items) ? ir::MakeList(std::move(items)) : e;
    }
    case ir::ExprKind::kCall: {
      const auto* call = static_cast<const ir::Call*>(e.get());
      std::vector<ExprPtr> args;
      bool diff = RewriteAll(call->args, fn, &args);
      if (!diff) args = call->args;
      ir::Kwargs kwargs;
      bool kw_diff = false;
      for (const auto& kv : call->kwargs) {
        if (fn(kv.second) != kv.second) kw_diff = true;
      }
      if (!diff && !kw_diff) return e;
      for (const auto& kv : call->kwargs) kwargs.emplace_back(kv.first, fn(kv.second));
      return ir::MakeCall(call->op, std::move(args), std::move(kwargs), call->loc);
    }
    default:
      return e;
  }
}

void Rewriter::RewriteStmt(const StmtPtr& s, std::vector<StmtPtr>* out) {
  if (hook_ && hook_(*this, s, out)) return;
  if (const ir::SeqStmts* seq = ir::AsSeq(s.get())) {
    for (const StmtPtr& c : seq->stmts) RewriteStmt(c, out);
    return;
  }
  out->push_back(DefaultRewrite(s));
}

StmtPtr Rewriter::RewriteBody(const StmtPtr& body) {
  if (body == nullptr) return body;
  std::vector<StmtPtr> stmts;
  RewriteStmt(body, &stmts);
  const ir::SeqStmts* seq = ir::AsSeq(body.get());
  if (seq != nullptr && seq->stmts == stmts) return body;
  if (seq == nullptr && stmts.size() == 1 && stmts[0] == body) return body;
  return std::make_shared<ir::SeqStmts>(std::move(stmts), body->loc);
}

StmtPtr Rewriter::DefaultRewrite(const StmtPtr& s) {
  switch (s->kind) {
    case ir::StmtKind::kAssign: {
      const auto* a = static_cast<const ir::AssignStmt*>(s.get());
      ExprPtr value = RewriteExpr(a->value);
      VarPtr var = Def(a->var);
      // Keep a tile.alloc's arguments equal to the root its value holds.
      if (const ir::Call* call = ir::AsCall(value.get());
          call != nullptr && call->op == "tile.alloc") {
        const ir::MemRefType* mt = ir::AsMemRefType(var->type);
        if (mt != nullptr && mt->memref != nullptr && var != a->var) {
          value = ir::MakeAllocCall(*mt->memref);
        }
      }
      if (var == a->var && value == a->value) return s;
      return std::make_shared<ir::AssignStmt>(std::move(var), std::move(value), s->loc);
    }
    case ir::StmtKind::kEval: {
      const auto* e = static_cast<const ir::EvalStmt*>(s.get());
      ExprPtr x = RewriteExpr(e->expr);
      return x == e->expr ? s : std::make_shared<ir::EvalStmt>(std::move(x), s->loc);
    }
    case ir::StmtKind::kFor: {
      const auto* f = static_cast<const ir::ForStmt*>(s.get());
      ExprPtr start = RewriteExpr(f->start), stop = RewriteExpr(f->stop),
              step = RewriteExpr(f->step);
      std::vector<ExprPtr> inits;
      bool diff = start != f->start || stop != f->stop || step != f->step;
      for (const ExprPtr& i : f->inits) {
        inits.push_back(RewriteExpr(i));
        diff |= inits.back() != i;
      }
      VarPtr loop_var = Def(f->loop_var);
      diff |= loop_var != f->loop_var;
      std::vector<VarPtr> iter_args;
      for (const VarPtr& v : f->iter_args) {
        iter_args.push_back(Def(v));
        diff |= iter_args.back() != v;
      }
      StmtPtr body = RewriteBody(f->body);
      diff |= body != f->body;
      std::vector<VarPtr> rets;
      for (const VarPtr& v : f->return_vars) {
        rets.push_back(Def(v));
        diff |= rets.back() != v;
      }
      if (!diff) return s;
      return std::make_shared<ir::ForStmt>(std::move(loop_var), std::move(start), std::move(stop),
                                           std::move(step), std::move(iter_args), std::move(inits),
                                           std::move(body), std::move(rets), s->loc);
    }
    case ir::StmtKind::kIf: {
      const auto* i = static_cast<const ir::IfStmt*>(s.get());
      ExprPtr cond = RewriteExpr(i->cond);
      StmtPtr then_body = RewriteBody(i->then_body);
      StmtPtr else_body = RewriteBody(i->else_body);
      bool diff = cond != i->cond || then_body != i->then_body || else_body != i->else_body;
      std::vector<VarPtr> rets;
      for (const VarPtr& v : i->return_vars) {
        rets.push_back(Def(v));
        diff |= rets.back() != v;
      }
      if (!diff) return s;
      return std::make_shared<ir::IfStmt>(std::move(cond), std::move(then_body),
                                          std::move(else_body), std::move(rets), s->loc);
    }
    case ir::StmtKind::kYield: {
      const auto* y = static_cast<const ir::YieldStmt*>(s.get());
      std::vector<ExprPtr> values;
      bool diff = false;
      for (const ExprPtr& v : y->values) {
        values.push_back(RewriteExpr(v));
        diff |= values.back() != v;
      }
      return diff ? std::make_shared<ir::YieldStmt>(std::move(values), s->loc) : s;
    }
    case ir::StmtKind::kReturn: {
      const auto* r = static_cast<const ir::ReturnStmt*>(s.get());
      std::vector<ExprPtr> values;
      bool diff = false;
      for (const ExprPtr& v : r->values) {
        values.push_back(RewriteExpr(v));
        diff |= values.back() != v;
      }
      return diff ? std::make_shared<ir::ReturnStmt>(std::move(values), s->loc) : s;
    }
    case ir::StmtKind::kSeq:
      return RewriteBody(s);
  }
  return s;
}

ir::FunctionPtr Rewriter::RewriteFunction(const ir::FunctionPtr& f) {
  std::vector<VarPtr> params;
  bool diff = false;
  for (const VarPtr& p : f->params) {
    params.push_back(Def(p));
    diff |= params.back() != p;
  }
  StmtPtr body = RewriteBody(f->body);
  if (!diff && body == f->body) return f;
  changed_ = true;
  return std::make_shared<ir::Function>(f->name, f->type, std::move(params), f->return_types,
                                        std::move(body), f->loc);
}

namespace {
void DefsInStmt(const StmtPtr& s, const std::function<void(const VarPtr&)>& fn) {
  if (s == nullptr) return;
  switch (s->kind) {
    case ir::StmtKind::kAssign:
      fn(static_cast<const ir::AssignStmt*>(s.get())->var);
      break;
    case ir::StmtKind::kSeq:
      for (const StmtPtr& c : static_cast<const ir::SeqStmts*>(s.get())->stmts) DefsInStmt(c, fn);
      break;
    case ir::StmtKind::kFor: {
      const auto* f = static_cast<const ir::ForStmt*>(s.get());
      if (f->loop_var) fn(f->loop_var);
      for (const VarPtr& v : f->iter_args) fn(v);
      DefsInStmt(f->body, fn);
      for (const VarPtr& v : f->return_vars) fn(v);
      break;
    }
    case ir::StmtKind::kIf: {
      const auto* i = static_cast<const ir::IfStmt*>(s.get());
      DefsInStmt(i->then_body, fn);
      DefsInStmt(i->else_body, fn);
      for (const VarPtr& v : i->return_vars) fn(v);
      break;
    }
    default:
      break;
  }
}
}  // namespace

void ForEachDef(const ir::Function& f, const std::function<void(const VarPtr&)>& fn) {
  for (const VarPtr& p : f.params) fn(p);
  DefsInStmt(f.body, fn);
}

absl::flat_hash_set<std::string> DefinedNames(const ir::Function& f) {
  absl::flat_hash_set<std::string> names;
  ForEachDef(f, [&names](const VarPtr& v) { names.insert(v->name); });
  return names;
}

std::string FreshName(const std::string& base, absl::flat_hash_set<std::string>* used) {
  std::string name = base;
  for (int i = 1; used->contains(name); ++i) name = absl::StrCat(base, "_", i);
  used->insert(name);
  return name;
}

}  // namespace internal
}  // namespace passes
}  // namespace accelmem
