#include "passes/liveness.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "ir/checked_math.h"
#include "ir/op_registry.h"
#include "ir/visitor.h"
#include "passes/pass.h"
#include "policy/placement_checker.h"

namespace accelmem {
namespace passes {

// Walks the function once, numbering statements; uses arrive through VisitVarUse at the number
// of the statement being walked.
class LivenessBuilder final : public ir::IRVisitor {
 public:
  explicit LivenessBuilder(Liveness* lv) : lv_(lv) {}

  void Run(const ir::Function& f) {
    for (const ir::VarPtr& p : f.params) Def(*p, 1, -1, false);
    n_ = 1;
    if (f.body != nullptr) VisitStmt(*f.body);
    for (ValueLife& v : lv_->values) {
      v.end = v.last >= 0 ? std::max(3 * v.last + 1, v.start + 1) : v.start + 1;
      for (int l : v.extend) v.end = std::max(v.end, 3 * loop_end_[l] + 2);
    }
    lv_->num_statements = n_;
  }

  void VisitVarUse(const ir::Var& v) override {
    auto it = lv_->index.find(&v);
    if (it == lv_->index.end()) return;
    ValueLife& l = lv_->values[it->second];
    l.last = std::max(l.last, now_);
    if (loops_.size() > l.depth && (l.extend.empty() || l.extend.back() != loops_[l.depth])) {
      l.extend.push_back(loops_[l.depth]);
    }
  }

  void VisitAssign(const ir::AssignStmt& a) override {
    const int64_t t = Begin();
    VisitExpr(*a.value);
    const ir::Call* call = ir::AsCall(a.value.get());
    const ir::OpDef* def = call != nullptr ? ir::OpRegistry::Global().Find(call->op) : nullptr;
    const bool safe = def == nullptr || def->IsInplaceSafe(*call);
    const bool view = def != nullptr && def->IsView() && !call->args.empty();
    int parent = -1;
    if (view) {
      parent = lv_->IndexOf(call->args[0].get());
    } else if (def != nullptr && def->memory == ir::MemoryBehavior::kWritesInto &&
               def->writes_into_arg < static_cast<int>(call->args.size())) {
      parent = lv_->IndexOf(call->args[def->writes_into_arg].get());
    }
    const int d = Def(*a.var, 3 * t + (safe ? 1 : 0), parent, false);
    if (view && d >= 0 && parent >= 0) lv_->view_parent_[d] = lv_->ViewClass(parent);
  }

  void VisitEval(const ir::EvalStmt& s) override {
    Begin();
    VisitExpr(*s.expr);
  }

  void VisitReturn(const ir::ReturnStmt& s) override {
    Begin();
    for (const ir::ExprPtr& v : s.values) VisitExpr(*v);
  }

  void VisitYield(const ir::YieldStmt& s) override {
    last_yield_at_ = Begin();
    for (const ir::ExprPtr& v : s.values) VisitExpr(*v);
    last_yield_ = &s;
  }

  void VisitFor(const ir::ForStmt& f) override {
    const int64_t t = Begin();
    VisitExpr(*f.start);
    VisitExpr(*f.stop);
    VisitExpr(*f.step);
    for (const ir::ExprPtr& i : f.inits) VisitExpr(*i);
    const int id = static_cast<int>(loop_end_.size());
    loop_end_.push_back(t);
    loops_.push_back(id);
    if (f.pipeline > 0) pipelined_.push_back({id, t, f.pipeline});
    std::vector<int> iters;
    for (size_t k = 0; k < f.iter_args.size(); ++k) {
      iters.push_back(Def(*f.iter_args[k], 3 * t + 1,
                          k < f.inits.size() ? lv_->IndexOf(f.inits[k].get()) : -1, true));
    }
    last_yield_ = nullptr;
    if (f.body != nullptr) VisitStmt(*f.body);
    const ir::YieldStmt* y = last_yield_;
    if (f.pipeline > 0) pipelined_.pop_back();
    loops_.pop_back();
    loop_end_[id] = n_ - 1;
    Copies(f.iter_args, y, last_yield_at_);
    lv_->constructs.emplace_back(true, lv_->loops.size());
    lv_->loops.push_back({&f, t, y, last_yield_at_});
    const int64_t x = n_++;
    for (size_t k = 0; k < f.return_vars.size(); ++k) {
      Def(*f.return_vars[k], 3 * x + 1, k < iters.size() ? iters[k] : -1, false);
    }
  }

  void VisitIf(const ir::IfStmt& i) override {
    const int64_t t = Begin();
    VisitExpr(*i.cond);
    last_yield_ = nullptr;
    if (i.then_body != nullptr) VisitStmt(*i.then_body);
    const ir::YieldStmt* ty = last_yield_;
    const int64_t ty_at = last_yield_at_;
    Copies(i.return_vars, ty, ty_at);
    last_yield_ = nullptr;
    if (i.else_body != nullptr) VisitStmt(*i.else_body);
    const ir::YieldStmt* ey = last_yield_;
    Copies(i.return_vars, ey, last_yield_at_);
    lv_->constructs.emplace_back(false, lv_->ifs.size());
    lv_->ifs.push_back({&i, t, ty, ey, ty_at, last_yield_at_});
    const int64_t x = n_++;
    for (size_t k = 0; k < i.return_vars.size(); ++k) {
      int parent = ty != nullptr && k < ty->values.size() ? lv_->IndexOf(ty->values[k].get()) : -1;
      if (parent < 0 && ey != nullptr && k < ey->values.size()) {
        parent = lv_->IndexOf(ey->values[k].get());
      }
      Def(*i.return_vars[k], 3 * x + 1, parent, true);
    }
  }

 private:
  // Numbers the statement about to be walked; its reads happen at that number.
  int64_t Begin() {
    now_ = n_++;
    return now_;
  }

  // Records a tile value; returns its index, -1 for a non-tile value.
  int Def(const ir::Var& v, int64_t start, int parent, bool carried) {
    const ir::TileType* t = ir::AsTile(v.type);
    if (t == nullptr) return -1;
    ValueLife l;
    l.var = &v;
    l.memref = t->memref;
    l.start = start;
    l.depth = loops_.size();
    l.parent = parent;
    l.carried = carried;
    // A value in a slot that rotates with a pipelined loop is in flight beside the values of the
    // other iterations: it holds its slot over the whole loop, from just after the entry (where
    // the inits are last read) to the loop's end.
    if (!pipelined_.empty() && t->memref != nullptr && t->memref->slot() >= 0 &&
        t->memref->slots() <= pipelined_.back().depth) {
      l.start = 3 * pipelined_.back().entry + 2;
      l.extend.push_back(pipelined_.back().id);
    }
    const int i = static_cast<int>(lv_->values.size());
    lv_->index[&v] = i;
    lv_->values.push_back(std::move(l));
    lv_->view_parent_.push_back(i);
    return i;
  }

  // An implicit copy for each yielded value not already at the target's root and offset.
  void Copies(const std::vector<ir::VarPtr>& targets, const ir::YieldStmt* y, int64_t at) {
    if (y == nullptr) return;
    for (size_t k = 0; k < targets.size() && k < y->values.size(); ++k) {
      const ir::TileType* tt = ir::AsTile(targets[k]->type);
      if (tt == nullptr || tt->memref == nullptr) continue;
      const ir::Type* st = ir::TypeOfExpr(*y->values[k]);
      const ir::MemRef* src = st != nullptr ? ir::MemRefOf(*st).get() : nullptr;
      const ir::MemRef& dst = *tt->memref;
      if (src != nullptr && src->root() == dst.root() && src->offset() == dst.offset()) continue;
      lv_->copies.push_back({absl::StrCat("copy into ", targets[k]->name), tt->memref, at});
    }
  }

  Liveness* lv_;
  std::vector<int> loops_;  // enclosing loops, outermost first
  struct Pipelined {
    int id;
    int64_t entry;
    int64_t depth;
  };
  std::vector<Pipelined> pipelined_;  // enclosing pipelined loops, innermost last
  std::vector<int64_t> loop_end_;     // by loop id: the last statement number of its body
  int64_t n_ = 0;
  int64_t now_ = 0;
  const ir::YieldStmt* last_yield_ = nullptr;
  int64_t last_yield_at_ = 0;
};

Liveness::Liveness(const ir::Function& function) { LivenessBuilder(this).Run(function); }

int Liveness::IndexOf(const ir::Expr* e) const {
  const ir::Var* v = e != nullptr ? ir::AsVar(e) : nullptr;
  if (v == nullptr) return -1;
  auto it = index.find(v);
  return it == index.end() ? -1 : it->second;
}

int Liveness::ViewClass(int i) const {
  while (view_parent_[i] != i) i = view_parent_[i] = view_parent_[view_parent_[i]];
  return i;
}

std::vector<RootLifetime> ComputeRootLifetimes(const Liveness& lv) {
  std::vector<RootLifetime> out;
  absl::flat_hash_map<const ir::MemRef*, size_t> index;
  auto add = [&](const ir::MemRef* root, int64_t start, int64_t end) {
    auto it = index.find(root);
    if (it == index.end()) {
      index.emplace(root, out.size());
      out.push_back({root, start, end});
      return;
    }
    RootLifetime& r = out[it->second];
    r.start = std::min(r.start, start);
    r.end = std::max(r.end, end);
  };
  for (const ValueLife& v : lv.values) {
    if (v.memref != nullptr) add(v.memref->root(), v.start, v.end);
  }
  for (const YieldCopy& cp : lv.copies) add(cp.target->root(), 3 * cp.stmt, 3 * cp.stmt + 2);
  return out;
}

absl::Status CheckRootsConflictFree(const ir::Function& function, const Liveness& lv,
                                    const policy::MemoryAllocatorPolicy& pol) {
  // View classes with byte ranges relative to their root.
  struct Class {
    const ir::MemRef* root = nullptr;
    std::string name;
    int64_t start = INT64_MAX, end = 0, lo = INT64_MAX, hi = 0;
  };
  std::map<int, Class> classes;
  absl::flat_hash_map<const ir::MemRef*, int64_t> slot;
  std::vector<const ir::MemRef*> roots;  // first-seen order
  auto note_root = [&](const ir::MemRef& m) {
    auto [it, fresh] = slot.emplace(m.root(), 0);
    if (fresh) roots.push_back(m.root());
    it->second = std::max({it->second, m.root()->size(), m.end_offset()});
  };
  for (size_t i = 0; i < lv.values.size(); ++i) {
    const ValueLife& v = lv.values[i];
    const ir::MemRefPtr& m = v.memref;
    if (m == nullptr || !pol.ShouldAllocate(m->space())) continue;
    note_root(*m);
    const int rep = lv.ViewClass(static_cast<int>(i));
    Class& c = classes[rep];
    if (c.root == nullptr) {
      c.root = m->root();
      c.name = lv.values[rep].var->name;
    }
    c.start = std::min(c.start, v.start);
    c.end = std::max(c.end, v.end);
    c.lo = std::min(c.lo, m->offset());
    c.hi = std::max(c.hi, ir::SaturatingAdd(m->offset(), m->size()));
  }
  // Every root in a slot of its own: one instance per space.
  absl::flat_hash_map<const ir::MemRef*, int64_t> base;
  std::map<int, int64_t> next;
  for (const ir::MemRef* r : roots) {
    int64_t& n = next[static_cast<int>(r->space())];
    base[r] = n;
    n += slot[r];
  }
  std::map<int, std::pair<std::vector<policy::PlacementBuffer>, std::vector<int64_t>>> spaces;
  for (const auto& [id, c] : classes) {
    auto& [instance, offsets] = spaces[static_cast<int>(c.root->space())];
    instance.push_back({absl::StrCat(c.name, " in ", c.root->name()), c.start, c.end, c.hi - c.lo});
    offsets.push_back(ir::SaturatingAdd(base[c.root], c.lo));
  }
  for (const YieldCopy& cp : lv.copies) {
    auto it = base.find(cp.target->root());
    if (it == base.end()) continue;
    auto& [instance, offsets] = spaces[static_cast<int>(cp.target->space())];
    instance.push_back({absl::StrCat(cp.name, " in ", cp.target->root()->name()), 3 * cp.stmt,
                        3 * cp.stmt + 2, cp.target->size()});
    offsets.push_back(ir::SaturatingAdd(it->second, cp.target->offset()));
  }
  for (const auto& [space, io] : spaces) {
    absl::Status s = policy::CheckPlacement(io.first, io.second);
    if (!s.ok()) return FunctionError(function.name, s.message());
  }
  return absl::OkStatus();
}

}  // namespace passes
}  // namespace accelmem
