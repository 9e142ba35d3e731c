#include "passes/memory_reuse.h"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/op_registry.h"
#include "passes/internal/rewrite.h"

namespace accelmem {
namespace passes {
namespace {

using ir::MemRef;
using ir::MemRefPtr;
using ir::StmtPtr;
using ir::VarPtr;

// ---------------------------------------------------------------------------------------------
// Lifetime analysis.

struct Life {
  VarPtr var;
  MemRefPtr memref;
  int64_t start = 0;
  int64_t end = 0;
  int64_t last = -1;
  size_t depth = 0;
  std::vector<int> extend;
  int parent = -1;       // the value this one took its MemRef from (init-memref's sharing rules)
  bool carried = false;  // an iter-arg or an if result
};

struct LoopInfo {
  const ir::ForStmt* stmt;
  int64_t entry;
  const ir::YieldStmt* yield;
  int64_t yield_at;
};

struct IfInfo {
  const ir::IfStmt* stmt;
  int64_t entry;
  const ir::YieldStmt* then_yield;
  const ir::YieldStmt* else_yield;
  int64_t then_yield_at;
  int64_t else_yield_at;
};

class Lifetimes {
 public:
  explicit Lifetimes(const ir::Function& f) {
    for (const VarPtr& p : f.params) Def(p, 1, -1, false);
    n_ = 1;
    Stmt(f.body);
    for (Life& v : values) {
      v.end = v.last >= 0 ? std::max(3 * v.last + 1, v.start + 1) : v.start + 1;
      for (int l : v.extend) v.end = std::max(v.end, 3 * loop_end_[l] + 2);
    }
  }

  int IndexOf(const ir::Expr* e) const {
    const ir::Var* v = e ? ir::AsVar(e) : nullptr;
    if (v == nullptr) return -1;
    auto it = index.find(v);
    return it == index.end() ? -1 : it->second;
  }

  std::vector<Life> values;
  absl::flat_hash_map<const ir::Var*, int> index;
  std::vector<LoopInfo> loops;  // post-order (inner loops first)
  std::vector<IfInfo> ifs;      // post-order
  // Loops and ifs together in post-order: (true, index into loops) or (false, index into ifs).
  std::vector<std::pair<bool, size_t>> constructs;

 private:
  void Def(const VarPtr& v, int64_t start, int parent, bool carried) {
    const ir::TileType* t = ir::AsTile(v->type);
    if (t == nullptr) return;
    Life l;
    l.var = v;
    l.memref = t->memref;
    l.start = start;
    l.depth = loops_.size();
    l.parent = parent;
    l.carried = carried;
    index[v.get()] = static_cast<int>(values.size());
    values.push_back(std::move(l));
  }

  void Read(const ir::Expr* e, int64_t t) {
    if (e == nullptr) return;
    if (const ir::Var* v = ir::AsVar(e)) {
      auto it = index.find(v);
      if (it == index.end()) return;
      Life& l = values[it->second];
      l.last = std::max(l.last, t);
      if (loops_.size() > l.depth && (l.extend.empty() || l.extend.back() != loops_[l.depth])) {
        l.extend.push_back(loops_[l.depth]);
      }
    } else if (const ir::ListExpr* list = ir::AsList(e)) {
      for (const auto& x : list->items) Read(x.get(), t);
    } else if (const ir::Call* c = ir::AsCall(e)) {
      for (const auto& x : c->args) Read(x.get(), t);
      for (const auto& kv : c->kwargs) Read(kv.second.get(), t);
    }
  }

  void Stmt(const StmtPtr& s) {
    if (s == nullptr) return;
    switch (s->kind) {
      case ir::StmtKind::kSeq:
        for (const StmtPtr& c : static_cast<const ir::SeqStmts*>(s.get())->stmts) Stmt(c);
        return;
      case ir::StmtKind::kAssign: {
        const auto* a = static_cast<const ir::AssignStmt*>(s.get());
        const int64_t t = n_++;
        Read(a->value.get(), t);
        const ir::Call* call = ir::AsCall(a->value.get());
        const ir::OpDef* def = call ? ir::OpRegistry::Global().Find(call->op) : nullptr;
        bool safe = def == nullptr || def->IsInplaceSafe(*call);
        int parent = -1;
        if (def != nullptr && def->IsView() && !call->args.empty()) {
          parent = IndexOf(call->args[0].get());
        } else if (def != nullptr && def->memory == ir::MemoryBehavior::kWritesInto &&
                   def->writes_into_arg < static_cast<int>(call->args.size())) {
          parent = IndexOf(call->args[def->writes_into_arg].get());
        }
        Def(a->var, 3 * t + (safe ? 1 : 0), parent, false);
        return;
      }
      case ir::StmtKind::kEval:
        Read(static_cast<const ir::EvalStmt*>(s.get())->expr.get(), n_++);
        return;
      case ir::StmtKind::kReturn: {
        const int64_t t = n_++;
        for (const auto& v : static_cast<const ir::ReturnStmt*>(s.get())->values) {
          Read(v.get(), t);
        }
        return;
      }
      case ir::StmtKind::kYield: {
        const int64_t t = n_++;
        for (const auto& v : static_cast<const ir::YieldStmt*>(s.get())->values) {
          Read(v.get(), t);
        }
        last_yield_ = static_cast<const ir::YieldStmt*>(s.get());
        last_yield_at_ = t;
        return;
      }
      case ir::StmtKind::kFor: {
        const auto* f = static_cast<const ir::ForStmt*>(s.get());
        const int64_t t = n_++;
        Read(f->start.get(), t);
        Read(f->stop.get(), t);
        Read(f->step.get(), t);
        for (const auto& i : f->inits) Read(i.get(), t);
        const int id = static_cast<int>(loop_end_.size());
        loop_end_.push_back(t);
        loops_.push_back(id);
        std::vector<int> iters;
        for (size_t k = 0; k < f->iter_args.size(); ++k) {
          Def(f->iter_args[k], 3 * t + 1, k < f->inits.size() ? IndexOf(f->inits[k].get()) : -1,
              true);
          iters.push_back(IndexOf(f->iter_args[k].get()));
        }
        last_yield_ = nullptr;
        Stmt(f->body);
        const ir::YieldStmt* y = last_yield_;
        loops_.pop_back();
        loop_end_[id] = n_ - 1;
        constructs.emplace_back(true, loops.size());
        loops.push_back({f, t, y, last_yield_at_});
        const int64_t x = n_++;
        for (size_t k = 0; k < f->return_vars.size(); ++k) {
          Def(f->return_vars[k], 3 * x + 1, k < iters.size() ? iters[k] : -1, false);
        }
        return;
      }
      case ir::StmtKind::kIf: {
        const auto* i = static_cast<const ir::IfStmt*>(s.get());
        const int64_t t = n_++;
        Read(i->cond.get(), t);
        last_yield_ = nullptr;
        Stmt(i->then_body);
        const ir::YieldStmt* ty = last_yield_;
        const int64_t ty_at = last_yield_at_;
        last_yield_ = nullptr;
        Stmt(i->else_body);
        const ir::YieldStmt* ey = last_yield_;
        constructs.emplace_back(false, ifs.size());
        ifs.push_back({i, t, ty, ey, ty_at, last_yield_at_});
        const int64_t x = n_++;
        for (size_t k = 0; k < i->return_vars.size(); ++k) {
          int parent = ty != nullptr && k < ty->values.size() ? IndexOf(ty->values[k].get()) : -1;
          if (parent < 0 && ey != nullptr && k < ey->values.size()) {
            parent = IndexOf(ey->values[k].get());
          }
          Def(i->return_vars[k], 3 * x + 1, parent, true);
        }
        return;
      }
    }
  }

  std::vector<int> loops_;
  std::vector<int64_t> loop_end_;
  int64_t n_ = 0;
  const ir::YieldStmt* last_yield_ = nullptr;
  int64_t last_yield_at_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Helpers.

// The union of a group's half-open lifetimes as disjoint intervals (touching ones joined).
// Two groups may share a buffer iff their unions do not intersect; merging absorbs the smaller
// union into the larger, so building a group by merges costs O(n log^2 n) overall.
class IntervalUnion {
 public:
  void Add(int64_t s, int64_t e) {
    if (s >= e) return;
    auto it = set_.upper_bound(s);
    if (it != set_.begin()) {
      auto prev = std::prev(it);
      if (prev->second >= s) {
        s = prev->first;
        e = std::max(e, prev->second);
        set_.erase(prev);
      }
    }
    while (it != set_.end() && it->first <= e) {
      e = std::max(e, it->second);
      it = set_.erase(it);
    }
    set_.emplace(s, e);
  }
  bool Intersects(int64_t s, int64_t e) const {
    if (s >= e) return false;
    auto it = set_.lower_bound(s);
    if (it != set_.end() && it->first < e) return true;
    return it != set_.begin() && std::prev(it)->second > s;
  }
  bool Intersects(const IntervalUnion& o) const {
    const IntervalUnion& small = set_.size() <= o.set_.size() ? *this : o;
    const IntervalUnion& large = set_.size() <= o.set_.size() ? o : *this;
    for (const auto& [s, e] : small.set_) {
      if (large.Intersects(s, e)) return true;
    }
    return false;
  }
  // Moves every interval of `o` into this union (swapping first if `o` is larger).
  void Absorb(IntervalUnion* o) {
    if (o->set_.size() > set_.size()) set_.swap(o->set_);
    for (const auto& [s, e] : o->set_) Add(s, e);
    o->set_.clear();
  }

 private:
  std::map<int64_t, int64_t> set_;
};

// Maps old MemRefs to MemRefs on new roots, keeping one object per (root, offset, size).
class MemRefMapper {
 public:
  // `root_of(old root)` gives the new root (or null to keep the MemRef).
  explicit MemRefMapper(std::function<MemRefPtr(const MemRef*)> root_of)
      : root_of_(std::move(root_of)) {}
  MemRefPtr Map(const MemRefPtr& m) {
    if (m == nullptr) return m;
    MemRefPtr root = root_of_(m->root());
    if (root == nullptr) return m;
    if (m->offset() == 0 && (m->is_root() || m->size() == root->size())) return root;
    auto key = std::make_tuple(root.get(), m->offset(), m->size());
    auto it = views_.find(key);
    if (it == views_.end())
      it = views_.emplace(key, MemRef::MakeView(root, m->offset(), m->size())).first;
    return it->second;
  }

 private:
  std::function<MemRefPtr(const MemRef*)> root_of_;
  std::map<std::tuple<const MemRef*, int64_t, int64_t>, MemRefPtr> views_;
};

ir::TypePtr RetypeTile(const ir::Var& v, MemRefMapper& mapper) {
  const ir::TileType* t = ir::AsTile(v.type);
  if (t == nullptr || t->memref == nullptr) return nullptr;
  MemRefPtr m = mapper.Map(t->memref);
  return m == t->memref ? nullptr : t->WithMemRef(m);
}

ir::StmtPtr MoveStmt(const VarPtr& dst, const ir::ExprPtr& src, ir::MemorySpace space) {
  return std::make_shared<ir::AssignStmt>(dst,
                                          ir::MakeCall("tile.move", {src, ir::MakeSpace(space)}));
}

VarPtr MoveVar(const std::string& name, const ir::TileType& like, MemRefPtr memref) {
  return ir::MakeVar(name, ir::MakeTile(like.shape, like.dtype, memref->space(), memref));
}

// ---------------------------------------------------------------------------------------------
// Step 1a: give a carried value a fresh root when its source buffer is still needed.

struct SplitPlan {
  // carried value index -> fresh root
  absl::flat_hash_map<int, MemRefPtr> fresh;
  // loops whose init k must be moved into the fresh root: stmt -> list of k
  absl::flat_hash_map<const ir::ForStmt*, std::vector<size_t>> init_moves;
};

// Preorder interval [tin, tout) of every value in the forest of MemRef sources (Life::parent):
// the family of a carried value (itself and every value that took its MemRef from it, directly
// or not) is exactly the values whose tin lies in its interval. Parents precede children.
void SourceForestOrder(const Lifetimes& lt, std::vector<int>* tin, std::vector<int>* tout) {
  const int n = static_cast<int>(lt.values.size());
  std::vector<std::vector<int>> children(n);
  for (int i = 0; i < n; ++i) {
    if (lt.values[i].parent >= 0) children[lt.values[i].parent].push_back(i);
  }
  tin->assign(n, 0);
  tout->assign(n, 0);
  int clock = 0;
  std::vector<std::pair<int, size_t>> stack;
  for (int r = 0; r < n; ++r) {
    if (lt.values[r].parent >= 0) continue;
    (*tin)[r] = clock++;
    stack.emplace_back(r, 0);
    while (!stack.empty()) {
      auto& [v, next] = stack.back();
      if (next < children[v].size()) {
        const int c = children[v][next++];
        (*tin)[c] = clock++;
        stack.emplace_back(c, 0);
      } else {
        (*tout)[v] = clock;
        stack.pop_back();
      }
    }
  }
}

SplitPlan PlanSplits(const Lifetimes& lt, int64_t* next_id) {
  SplitPlan plan;
  std::vector<int> tin, tout;
  SourceForestOrder(lt, &tin, &tout);
  // Per root: its values by tin, with prefix and suffix maxima of their ends.
  struct RootMembers {
    std::vector<std::pair<int, int64_t>> by_tin;  // (tin, end)
    std::vector<int64_t> prefix, suffix;
  };
  absl::flat_hash_map<const MemRef*, RootMembers> members;
  for (size_t i = 0; i < lt.values.size(); ++i) {
    if (lt.values[i].memref) {
      members[lt.values[i].memref->root()].by_tin.emplace_back(tin[i], lt.values[i].end);
    }
  }
  for (auto& [root, m] : members) {
    std::sort(m.by_tin.begin(), m.by_tin.end());
    const size_t k = m.by_tin.size();
    m.prefix.assign(k + 1, INT64_MIN);
    m.suffix.assign(k + 1, INT64_MIN);
    for (size_t i = 0; i < k; ++i) m.prefix[i + 1] = std::max(m.prefix[i], m.by_tin[i].second);
    for (size_t i = k; i > 0; --i) m.suffix[i - 1] = std::max(m.suffix[i], m.by_tin[i - 1].second);
  }
  // True if a value in `carried`'s root but outside its family lives past `after`: O(log n).
  auto source_busy = [&](int carried, int64_t after) {
    const MemRefPtr& mr = lt.values[carried].memref;
    if (mr == nullptr) return false;
    const RootMembers& m = members.at(mr->root());
    auto cmp = [](const std::pair<int, int64_t>& p, int t) { return p.first < t; };
    const size_t lo =
        std::lower_bound(m.by_tin.begin(), m.by_tin.end(), tin[carried], cmp) - m.by_tin.begin();
    const size_t hi =
        std::lower_bound(m.by_tin.begin(), m.by_tin.end(), tout[carried], cmp) - m.by_tin.begin();
    return std::max(m.prefix[lo], m.suffix[hi]) > after;
  };
  auto fresh_root = [&](int carried) {
    const MemRef* old = lt.values[carried].memref->root();
    const int64_t id = (*next_id)++;
    plan.fresh[carried] = MemRef::MakeRoot(MemRef::RootName(old->space(), id), old->space(),
                                           MemRef::kUnplanned, old->size(), id);
  };
  for (const LoopInfo& loop : lt.loops) {
    for (size_t k = 0; k < loop.stmt->iter_args.size(); ++k) {
      const int acc = lt.IndexOf(loop.stmt->iter_args[k].get());
      if (acc < 0 || lt.values[acc].parent < 0) continue;
      if (source_busy(acc, 3 * loop.entry + 1)) {
        fresh_root(acc);
        plan.init_moves[loop.stmt].push_back(k);
      }
    }
  }
  for (const IfInfo& info : lt.ifs) {
    for (const VarPtr& r : info.stmt->return_vars) {
      const int ri = lt.IndexOf(r.get());
      if (ri < 0 || lt.values[ri].parent < 0) continue;
      if (source_busy(ri, 3 * info.then_yield_at + 1)) fresh_root(ri);
    }
  }
  return plan;
}

ir::FunctionPtr ApplySplits(const ir::FunctionPtr& fn, const Lifetimes& lt, const SplitPlan& plan,
                            absl::flat_hash_set<std::string>* names) {
  // Each value's nearest split ancestor (one forward pass: parents precede children), and the
  // fresh root if the value still lives in that ancestor's old root.
  std::vector<int> split_of(lt.values.size(), -1);
  absl::flat_hash_map<const ir::Var*, MemRefPtr> new_root;
  for (size_t i = 0; i < lt.values.size(); ++i) {
    const int p = lt.values[i].parent;
    split_of[i] = plan.fresh.contains(static_cast<int>(i)) ? static_cast<int>(i)
                  : p >= 0                                 ? split_of[p]
                                                           : -1;
    const MemRefPtr& m = lt.values[i].memref;
    const int a = split_of[i];
    if (m != nullptr && a >= 0 && lt.values[a].memref->root() == m->root()) {
      new_root[lt.values[i].var.get()] = plan.fresh.at(a);
    }
  }
  std::map<std::tuple<const MemRef*, int64_t, int64_t>, MemRefPtr> views;
  auto on_root = [&views](const MemRefPtr& root, const MemRef& like) -> MemRefPtr {
    if (like.offset() == 0 && like.size() == root->size()) return root;
    auto key = std::make_tuple(root.get(), like.offset(), like.size());
    auto it = views.find(key);
    if (it == views.end())
      it = views.emplace(key, MemRef::MakeView(root, like.offset(), like.size())).first;
    return it->second;
  };
  internal::Rewriter::RetypeFn retype = [&](const ir::Var& v) -> ir::TypePtr {
    auto it = new_root.find(&v);
    if (it == new_root.end()) return nullptr;
    const ir::TileType* t = ir::AsTile(v.type);
    return t->WithMemRef(on_root(it->second, *t->memref));
  };
  internal::Rewriter::StmtHook hook = [&](internal::Rewriter& rw, const StmtPtr& s,
                                          std::vector<StmtPtr>* out) {
    const ir::ForStmt* f = ir::AsFor(s.get());
    if (f == nullptr) return false;
    auto it = plan.init_moves.find(f);
    if (it == plan.init_moves.end()) return false;
    std::vector<ir::ExprPtr> inits = f->inits;
    for (size_t k : it->second) {
      const int acc = lt.IndexOf(f->iter_args[k].get());
      const ir::TileType* t = ir::AsTile(f->iter_args[k]->type);
      const ir::Var* init = ir::AsVar(inits[k].get());
      VarPtr mv =
          MoveVar(internal::FreshName(absl::StrCat(init ? init->name : "init", "_mv"), names), *t,
                  on_root(plan.fresh.at(acc), *t->memref));
      out->push_back(MoveStmt(rw.Def(mv), rw.RewriteExpr(inits[k]), t->space));
      inits[k] = mv;
    }
    auto copy = std::make_shared<ir::ForStmt>(f->loop_var, f->start, f->stop, f->step, f->iter_args,
                                              std::move(inits), f->body, f->return_vars, s->loc);
    rw.RewriteStmt(copy, out);
    rw.MarkChanged();
    return true;
  };
  internal::Rewriter rw(retype, hook);
  return rw.RewriteFunction(fn);
}

// ---------------------------------------------------------------------------------------------
// Step 1b: yielded values join the carried buffer, or get moved into it.

class RootSets {
 public:
  explicit RootSets(const Lifetimes& lt) {
    for (size_t i = 0; i < lt.values.size(); ++i) {
      const Life& v = lt.values[i];
      if (v.memref == nullptr) continue;
      const MemRef* r = v.memref->root();
      if (!parent_.contains(r)) {
        parent_[r] = r;
        roots_[r] = v.memref->root_ptr();
      }
      intervals_[r].Add(v.start, v.end);
    }
  }

  // The representative of `r`'s set; a root the analysis never saw is its own.
  const MemRef* Find(const MemRef* r) {
    auto it = parent_.find(r);
    if (it == parent_.end()) return r;
    while (it->second != r) {
      const MemRef* up = parent_[it->second];
      it->second = up;
      r = up;
      it = parent_.find(r);
    }
    return r;
  }
  bool Known(const MemRef* r) const { return parent_.contains(r); }

  bool TryMerge(const MemRef* into, const MemRef* from) {
    into = Find(into);
    from = Find(from);
    if (into == from) return true;
    if (into->space() != from->space() || into->space() == ir::MemorySpace::kDDR) return false;
    IntervalUnion& a = intervals_[into];
    IntervalUnion& b = intervals_[from];
    if (a.Intersects(b)) return false;
    a.Absorb(&b);
    parent_[from] = into;
    merged_ = true;
    return true;
  }

  // Marks `root`'s buffer as written over [s, e) (a tile.move about to be inserted).
  void AddInterval(const MemRef* root, int64_t s, int64_t e) { intervals_[Find(root)].Add(s, e); }

  bool merged() const { return merged_; }
  const MemRefPtr& RootPtr(const MemRef* r) { return roots_[r]; }

 private:
  absl::flat_hash_map<const MemRef*, const MemRef*> parent_;
  absl::flat_hash_map<const MemRef*, MemRefPtr> roots_;
  absl::flat_hash_map<const MemRef*, IntervalUnion> intervals_;
  bool merged_ = false;
};

struct YieldMove {
  size_t k;
  MemRefPtr target;  // the carried MemRef (before remapping)
};

// Returns the rewritten function when moves were inserted (the caller re-analyses it). When the
// carries only merged groups, nothing is rewritten: the merged sets go to Pack in `*merged`.
ir::FunctionPtr ApplyCarries(const ir::FunctionPtr& fn, const Lifetimes& lt, bool* changed,
                             absl::flat_hash_set<std::string>* names, int64_t* next_id,
                             std::unique_ptr<RootSets>* merged) {
  RootSets sets(lt);
  absl::flat_hash_map<const ir::YieldStmt*, std::vector<YieldMove>> moves;
  auto handle = [&](const ir::YieldStmt* y, int64_t yield_at, size_t k, const MemRefPtr& target) {
    if (y == nullptr || k >= y->values.size() || target == nullptr) return;
    const int yi = lt.IndexOf(y->values[k].get());
    if (yi < 0) return;
    const MemRefPtr& m = lt.values[yi].memref;
    if (m == nullptr) return;
    if (sets.Find(m->root()) == sets.Find(target->root()) && m->offset() == target->offset() &&
        m->size() == target->size()) {
      return;  // already in place
    }
    if (m->root() != target->root() && m->offset() == target->offset() &&
        m->size() == target->size() && sets.TryMerge(target->root(), m->root())) {
      return;
    }
    moves[y].push_back({k, target});
    // The move writes the target at the yield (not in place): later decisions must see it.
    if (sets.Known(target->root()))
      sets.AddInterval(target->root(), 3 * yield_at, 3 * yield_at + 2);
  };
  // Inner constructs first, in program order, so that an enclosing loop sees the moves its
  // inner branches write into the buffers it considers.
  for (const auto& [is_loop, index] : lt.constructs) {
    if (is_loop) {
      const LoopInfo& loop = lt.loops[index];
      for (size_t k = 0; k < loop.stmt->iter_args.size(); ++k) {
        const ir::TileType* t = ir::AsTile(loop.stmt->iter_args[k]->type);
        if (t != nullptr) handle(loop.yield, loop.yield_at, k, t->memref);
      }
      continue;
    }
    const IfInfo& info = lt.ifs[index];
    for (size_t k = 0; k < info.stmt->return_vars.size(); ++k) {
      const ir::TileType* t = ir::AsTile(info.stmt->return_vars[k]->type);
      if (t == nullptr) continue;
      handle(info.then_yield, info.then_yield_at, k, t->memref);
      handle(info.else_yield, info.else_yield_at, k, t->memref);
    }
  }
  if (!sets.merged() && moves.empty()) return fn;
  *changed = true;
  if (moves.empty()) {
    *merged = std::make_unique<RootSets>(std::move(sets));
    return fn;
  }

  // Merged roots are as large as their largest member root.
  absl::flat_hash_map<const MemRef*, int64_t> size;
  for (const Life& v : lt.values) {
    if (v.memref == nullptr) continue;
    int64_t& s = size[sets.Find(v.memref->root())];
    s = std::max({s, v.memref->root()->size(), v.memref->end_offset()});
  }
  absl::flat_hash_map<const MemRef*, MemRefPtr> new_roots;
  MemRefMapper mapper([&](const MemRef* r) -> MemRefPtr {
    if (!sets.Known(r)) return nullptr;
    const MemRef* rep = sets.Find(r);
    if (rep == r && size[rep] == r->size()) return nullptr;
    auto it = new_roots.find(rep);
    if (it == new_roots.end()) {
      MemRefPtr root = size[rep] == rep->size()
                           ? sets.RootPtr(rep)
                           : MemRef::MakeRoot(rep->name(), rep->space(), MemRef::kUnplanned,
                                              size[rep], rep->id());
      it = new_roots.emplace(rep, root).first;
    }
    return it->second;
  });
  internal::Rewriter::RetypeFn retype = [&](const ir::Var& v) { return RetypeTile(v, mapper); };
  internal::Rewriter::StmtHook hook = [&](internal::Rewriter& rw, const StmtPtr& s,
                                          std::vector<StmtPtr>* out) {
    const ir::YieldStmt* y = ir::AsYield(s.get());
    if (y == nullptr) return false;
    auto it = moves.find(y);
    if (it == moves.end()) return false;
    std::vector<ir::ExprPtr> values;
    for (const ir::ExprPtr& v : y->values) values.push_back(rw.RewriteExpr(v));
    // The moves act as one parallel copy: a source living in a buffer that another move of this
    // yield overwrites is first copied into a fresh buffer of its own.
    for (const YieldMove& m : it->second) {
      const ir::Var* src = ir::AsVar(y->values[m.k].get());
      const MemRefPtr& sm = ir::AsTile(src->type)->memref;
      bool clobbered = false;
      for (const YieldMove& other : it->second) {
        clobbered |= other.k != m.k && sets.Find(other.target->root()) == sets.Find(sm->root());
      }
      // A move into another part of its own source's buffer that overlaps the source would be
      // an overlapping copy, which tile.move (not in-place safe) may not do.
      clobbered |= sets.Find(m.target->root()) == sets.Find(sm->root()) &&
                   m.target->offset() < sm->end_offset() && sm->offset() < m.target->end_offset();
      if (!clobbered) continue;
      const int64_t id = (*next_id)++;
      MemRefPtr tmp_root = MemRef::MakeRoot(MemRef::RootName(sm->space(), id), sm->space(),
                                            MemRef::kUnplanned, sm->size(), id);
      VarPtr tmp = rw.Def(MoveVar(internal::FreshName(absl::StrCat(src->name, "_tmp"), names),
                                  *ir::AsTile(src->type), tmp_root));
      out->push_back(MoveStmt(tmp, values[m.k], sm->space()));
      values[m.k] = tmp;
    }
    for (const YieldMove& m : it->second) {
      const ir::Var* src = ir::AsVar(y->values[m.k].get());
      const ir::TileType* t = ir::AsTile(src->type);
      VarPtr mv =
          rw.Def(MoveVar(internal::FreshName(absl::StrCat(src->name, "_mv"), names), *t, m.target));
      out->push_back(MoveStmt(mv, values[m.k], m.target->space()));
      values[m.k] = mv;
    }
    out->push_back(std::make_shared<ir::YieldStmt>(std::move(values), s->loc));
    rw.MarkChanged();
    return true;
  };
  internal::Rewriter rw(retype, hook);
  return rw.RewriteFunction(fn);
}

// ---------------------------------------------------------------------------------------------
// Step 2: first-fit decreasing packing of root groups, per space.

struct Group {
  MemRefPtr root;
  int64_t start = INT64_MAX, end = 0, slot = 0;
};

// Disjoint half-open intervals; Free() tells whether [s, e) touches none.
// First-fit looks at the first this many buffers of a space (the largest ones: buffers are
// opened in decreasing size); a group that fits none of them opens a new buffer. This bounds the
// packing step to O(n log n); programs with fewer buffers per space get exact first-fit.
constexpr size_t kMaxFirstFitScan = 1024;

class IntervalSet {
 public:
  bool Free(int64_t s, int64_t e) const {
    auto it = set_.lower_bound(s);  // first interval starting at or after s
    if (it != set_.end() && it->first < e) return false;
    if (it != set_.begin() && std::prev(it)->second > s) return false;
    return true;
  }
  void Add(int64_t s, int64_t e) { set_.emplace(s, e); }

 private:
  std::map<int64_t, int64_t> set_;
};

// `sets` (may be null): groups already merged by the carry step; a group is then a set of roots.
// `share` false: every group keeps a buffer of its own (only the carry step's merges are
// materialized; see ApplyCarryFixups).
ir::FunctionPtr Pack(const ir::FunctionPtr& fn, const Lifetimes& lt, RootSets* sets, bool share,
                     bool* changed) {
  auto key = [sets](const MemRef* r) { return sets != nullptr ? sets->Find(r) : r; };
  std::vector<Group> groups;
  absl::flat_hash_map<const MemRef*, size_t> index;
  for (const Life& v : lt.values) {
    if (v.memref == nullptr) continue;
    const MemRef* r = key(v.memref->root());
    auto it = index.find(r);
    if (it == index.end()) {
      it = index.emplace(r, groups.size()).first;
      groups.push_back(
          {sets != nullptr ? sets->RootPtr(r) : v.memref->root_ptr(), INT64_MAX, 0, r->size()});
    }
    Group& g = groups[it->second];
    g.start = std::min(g.start, v.start);
    g.end = std::max(g.end, v.end);
    g.slot = std::max({g.slot, v.memref->end_offset(), v.memref->root()->size()});
  }
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Group& x = groups[a];
    const Group& y = groups[b];
    if (x.root->space() != y.root->space()) return x.root->space() < y.root->space();
    if (x.slot != y.slot) return x.slot > y.slot;
    if (x.start != y.start) return x.start < y.start;
    return x.root->id() < y.root->id();
  });
  struct Buffer {
    size_t rep;
    int64_t size;
    IntervalSet busy;
  };
  std::vector<Buffer> buffers;
  size_t space_begin = 0;
  absl::flat_hash_map<const MemRef*, size_t> rep_of;  // root -> representative group
  for (size_t i = 0; i < order.size(); ++i) {
    const Group& g = groups[order[i]];
    if (i > 0 && groups[order[i - 1]].root->space() != g.root->space()) {
      space_begin = buffers.size();
    }
    size_t chosen = buffers.size();
    if (share && g.root->space() != ir::MemorySpace::kDDR) {
      const size_t scan_end = std::min(buffers.size(), space_begin + kMaxFirstFitScan);
      for (size_t b = space_begin; b < scan_end; ++b) {
        if (buffers[b].busy.Free(g.start, g.end)) {
          chosen = b;
          break;
        }
      }
    }
    if (chosen == buffers.size()) buffers.push_back({order[i], g.slot, IntervalSet()});
    buffers[chosen].busy.Add(g.start, g.end);
    buffers[chosen].size = std::max(buffers[chosen].size, g.slot);
    rep_of[g.root.get()] = chosen;
  }

  // New roots: the representative's name and id, the buffer's size.
  std::vector<MemRefPtr> buffer_root(buffers.size());
  for (size_t b = 0; b < buffers.size(); ++b) {
    const MemRefPtr& rep = groups[buffers[b].rep].root;
    buffer_root[b] = buffers[b].size == rep->size()
                         ? rep
                         : MemRef::MakeRoot(rep->name(), rep->space(), MemRef::kUnplanned,
                                            buffers[b].size, rep->id());
  }
  bool merged = buffers.size() != groups.size() || (sets != nullptr && sets->merged());
  for (size_t b = 0; b < buffers.size(); ++b)
    merged |= buffer_root[b] != groups[buffers[b].rep].root;
  MemRefMapper mapper([&](const MemRef* r) -> MemRefPtr {
    auto it = rep_of.find(key(r));
    if (it == rep_of.end()) return nullptr;
    const MemRefPtr& nr = buffer_root[it->second];
    return nr.get() == r ? nullptr : nr;
  });
  internal::Rewriter rw([&](const ir::Var& v) { return RetypeTile(v, mapper); });
  ir::FunctionPtr out = rw.RewriteFunction(fn);

  // Rebuild the allocs: one per root still referenced, in id order.
  std::map<std::pair<int64_t, std::string>, MemRefPtr> used;
  internal::ForEachDef(*out, [&](const VarPtr& v) {
    if (ir::AsTile(v->type) == nullptr) return;
    const MemRefPtr& m = ir::MemRefOf(*v->type);
    if (m != nullptr) used.emplace(std::make_pair(m->id(), m->name()), m->root_ptr());
  });
  std::vector<StmtPtr> allocs;
  std::vector<StmtPtr> rest;
  std::vector<const ir::Call*> old_allocs;
  std::vector<MemRefPtr> old_roots;
  for (const StmtPtr& s : ir::BodyStmts(out->body)) {
    if (ir::AsAllocCall(*s) != nullptr) {
      old_roots.push_back(ir::MemRefOf(*ir::AsAssign(s.get())->var->type));
      allocs.push_back(s);
    } else {
      rest.push_back(s);
    }
  }
  std::vector<MemRefPtr> new_roots;
  for (const auto& kv : used) new_roots.push_back(kv.second);
  if (!merged && new_roots == old_roots) return out == fn ? fn : out;
  *changed = true;
  absl::flat_hash_map<const MemRef*, StmtPtr> existing;
  for (const StmtPtr& s : allocs) {
    const MemRefPtr& m = ir::MemRefOf(*ir::AsAssign(s.get())->var->type);
    if (m != nullptr) existing.emplace(m.get(), s);
  }
  std::vector<StmtPtr> body;
  for (const MemRefPtr& r : new_roots) {
    auto it = existing.find(r.get());
    body.push_back(it != existing.end() ? it->second : ir::MakeAllocStmt(r));
  }
  body.insert(body.end(), rest.begin(), rest.end());
  return std::make_shared<ir::Function>(out->name, out->type, out->params, out->return_types,
                                        ir::FlattenSeq(body, out->body->loc), out->loc);
}

// Steps 1 (and 2 when `share`) on an unplanned, non-Orchestration function.
FunctionResult Reuse(const ir::FunctionPtr& function, bool share) {
  if (function->type == ir::FunctionType::kOrchestration) return FunctionResult{function, false};
  bool any = false, planned = false;
  int64_t max_id = -1;
  internal::ForEachDef(*function, [&](const VarPtr& v) {
    const MemRefPtr& m = ir::MemRefOf(*v->type);
    if (m == nullptr) return;
    any = true;
    planned |= m->is_planned();
    max_id = std::max(max_id, m->id());
  });
  if (!any || planned) return FunctionResult{function, false};

  bool changed = false;
  ir::FunctionPtr fn = function;
  absl::flat_hash_set<std::string> names = internal::DefinedNames(*fn);
  int64_t next_id = max_id + 1;
  // Each step re-analyses only if the previous one inserted statements.
  auto lt = std::make_unique<Lifetimes>(*fn);
  SplitPlan plan = PlanSplits(*lt, &next_id);
  if (!plan.fresh.empty()) {
    fn = ApplySplits(fn, *lt, plan, &names);
    changed = true;
    lt = std::make_unique<Lifetimes>(*fn);
  }
  std::unique_ptr<RootSets> merged;
  ir::FunctionPtr carried = ApplyCarries(fn, *lt, &changed, &names, &next_id, &merged);
  if (carried != fn) {
    fn = carried;
    lt = std::make_unique<Lifetimes>(*fn);
  }
  fn = Pack(fn, *lt, merged.get(), share, &changed);
  if (!changed) return FunctionResult{function, false};
  return FunctionResult{fn, true};
}

}  // namespace

absl::StatusOr<FunctionResult> MemoryReusePass::RunOnFunction(
    const ir::FunctionPtr& function) const {
  return Reuse(function, /*share=*/true);
}

FunctionResult ApplyCarryFixups(const ir::FunctionPtr& function) {
  return Reuse(function, /*share=*/false);
}

PassPtr CreateMemoryReusePass() { return std::make_unique<MemoryReusePass>(); }

}  // namespace passes
}  // namespace accelmem
