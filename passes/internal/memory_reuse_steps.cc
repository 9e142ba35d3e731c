#include "passes/internal/memory_reuse_steps.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/mutator.h"
#include "ir/op_registry.h"
#include "ir/visitor.h"
#include "passes/liveness.h"
#include "passes/pass.h"

namespace accelmem {
namespace passes {
namespace internal {
namespace {

using ir::MemRef;
using ir::MemRefPtr;
using ir::StmtPtr;
using ir::VarPtr;

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

// `v`'s type with its MemRef mapped (the type itself when the mapper keeps it).
ir::TypePtr RetypeTile(const ir::Var& v, MemRefMapper& mapper) {
  const ir::TileType* t = ir::AsTile(v.type);
  if (t == nullptr || t->memref == nullptr) return v.type;
  MemRefPtr m = mapper.Map(t->memref);
  return m == t->memref ? v.type : t->WithMemRef(m);
}

// The layout class of a value (index of its backends::SeparatedLayout), or kAnyLayout where its
// space does not separate layouts (or it is no tile).
constexpr int kAnyLayout = -1;
int LayoutClass(const ValueLife& v, const backends::Backend* backend) {
  const ir::TileType* t = ir::AsTile(v.var->type);
  if (t == nullptr) return kAnyLayout;
  std::optional<ir::TileLayout> l = backends::SeparatedLayout(backend, *t);
  return l ? static_cast<int>(*l) : kAnyLayout;
}

// Whether roots of layout classes `a` and `b` may share bytes.
bool LayoutsMayShare(int a, int b) { return a == kAnyLayout || b == kAnyLayout || a == b; }

ir::StmtPtr MoveStmt(const VarPtr& dst, const ir::ExprPtr& src, ir::MemorySpace space) {
  return std::make_shared<ir::AssignStmt>(dst,
                                          ir::MakeCall("tile.move", {src, ir::MakeSpace(space)}));
}

VarPtr MoveVar(const std::string& name, const ir::TileType& like, MemRefPtr memref) {
  // The copy states `like`'s layout: it takes the place of a value of that type.
  return ir::MakeVar(name,
                     ir::MakeTile(like.shape, like.dtype, memref->space(), memref, like.layout));
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
void SourceForestOrder(const Liveness& lt, std::vector<int>* tin, std::vector<int>* tout) {
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

SplitPlan PlanSplits(const Liveness& lt, int64_t* next_id) {
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
  for (const LoopLife& loop : lt.loops) {
    for (size_t k = 0; k < loop.stmt->iter_args.size(); ++k) {
      const int acc = lt.IndexOf(loop.stmt->iter_args[k].get());
      if (acc < 0 || lt.values[acc].parent < 0) continue;
      if (source_busy(acc, 3 * loop.entry + 1)) {
        fresh_root(acc);
        plan.init_moves[loop.stmt].push_back(k);
      }
    }
  }
  for (const IfLife& info : lt.ifs) {
    for (const VarPtr& r : info.stmt->return_vars) {
      const int ri = lt.IndexOf(r.get());
      if (ri < 0 || lt.values[ri].parent < 0) continue;
      if (source_busy(ri, 3 * info.then_yield_at + 1)) fresh_root(ri);
    }
  }
  return plan;
}

ir::FunctionPtr ApplySplits(const ir::FunctionPtr& fn, const Liveness& lt, const SplitPlan& plan,
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
      new_root[lt.values[i].var] = plan.fresh.at(a);
    }
  }
  // Values moved to a fresh root are retyped; a loop with init moves gets them just before it.
  class Splitter final : public ir::IRMutator {
   public:
    Splitter(const Liveness& lt, const SplitPlan& plan,
             const absl::flat_hash_map<const ir::Var*, MemRefPtr>& new_root,
             absl::flat_hash_set<std::string>* names)
        : lt_(lt), plan_(plan), new_root_(new_root), names_(names) {}

    ir::TypePtr MutateDefType(const ir::Var& v) override {
      auto it = new_root_.find(&v);
      if (it == new_root_.end()) return v.type;
      const ir::TileType* t = ir::AsTile(v.type);
      return t->WithMemRef(OnRoot(it->second, *t->memref));
    }

    StmtPtr MutateFor(const std::shared_ptr<const ir::ForStmt>& f) override {
      auto it = plan_.init_moves.find(f.get());
      if (it == plan_.init_moves.end()) return IRMutator::MutateFor(f);
      std::vector<StmtPtr> out;
      std::vector<ir::ExprPtr> inits = f->inits;
      for (size_t k : it->second) {
        const int acc = lt_.IndexOf(f->iter_args[k].get());
        const ir::TileType* t = ir::AsTile(f->iter_args[k]->type);
        const ir::Var* init = ir::AsVar(inits[k].get());
        VarPtr mv = MoveVar(ir::FreshName(absl::StrCat(init ? init->name : "init", "_mv"), names_),
                            *t, OnRoot(plan_.fresh.at(acc), *t->memref));
        ir::ExprPtr src = MutateExpr(inits[k]);
        out.push_back(MoveStmt(MutateVarDef(mv), src, t->space));
        inits[k] = mv;
      }
      out.push_back(IRMutator::MutateFor(std::make_shared<ir::ForStmt>(
          f->loop_var, f->start, f->stop, f->step, f->iter_args, std::move(inits), f->body,
          f->return_vars, f->loc, f->pipeline)));
      return std::make_shared<ir::SeqStmts>(std::move(out), f->loc);
    }

   private:
    // `like`'s place on `root`: the root itself when it covers it, else one view per
    // (offset, size).
    MemRefPtr OnRoot(const MemRefPtr& root, const MemRef& like) {
      if (like.offset() == 0 && like.size() == root->size()) return root;
      auto key = std::make_tuple(root.get(), like.offset(), like.size());
      auto it = views_.find(key);
      if (it == views_.end()) {
        it = views_.emplace(key, MemRef::MakeView(root, like.offset(), like.size())).first;
      }
      return it->second;
    }

    const Liveness& lt_;
    const SplitPlan& plan_;
    const absl::flat_hash_map<const ir::Var*, MemRefPtr>& new_root_;
    absl::flat_hash_set<std::string>* names_;
    std::map<std::tuple<const MemRef*, int64_t, int64_t>, MemRefPtr> views_;
  };
  return Splitter(lt, plan, new_root, names).MutateFunction(fn);
}

// ---------------------------------------------------------------------------------------------
// Step 1b: yielded values join the carried buffer, or get moved into it.

class RootSets {
 public:
  RootSets(const Liveness& lt, const backends::Backend* backend) {
    for (size_t i = 0; i < lt.values.size(); ++i) {
      const ValueLife& v = lt.values[i];
      if (v.memref == nullptr) continue;
      const MemRef* r = v.memref->root();
      if (!parent_.contains(r)) {
        parent_[r] = r;
        roots_[r] = v.memref->root_ptr();
        layout_[r] = kAnyLayout;
      }
      intervals_[r].Add(v.start, v.end);
      const int l = LayoutClass(v, backend);
      if (l != kAnyLayout) layout_[r] = l;
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
    // A slotted root (a pipelined loop's stages) is its loop's alone: a value yielded from a slot
    // is moved into the carried buffer. A declared root (the author's) accepts nobody and joins
    // nobody (upstream's pinned intervals).
    if (into->is_slotted() || from->is_slotted()) return false;
    if (into->declared() || from->declared()) return false;
    // A yielded value of another layout class is moved (a layout-converting copy), not merged.
    if (!LayoutsMayShare(layout_[into], layout_[from])) return false;
    IntervalUnion& a = intervals_[into];
    IntervalUnion& b = intervals_[from];
    if (a.Intersects(b)) return false;
    a.Absorb(&b);
    parent_[from] = into;
    if (layout_[into] == kAnyLayout) layout_[into] = layout_[from];
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
  absl::flat_hash_map<const MemRef*, int> layout_;  // by set representative
  bool merged_ = false;
};

struct YieldMove {
  size_t k;
  MemRefPtr target;  // the carried MemRef (before remapping)
};

// Returns the rewritten function when moves were inserted (the caller re-analyses it). When the
// carries only merged groups, nothing is rewritten: the merged sets go to Pack in `*merged`.
ir::FunctionPtr ApplyCarries(const ir::FunctionPtr& fn, const Liveness& lt,
                             const backends::Backend* backend, bool* changed,
                             absl::flat_hash_set<std::string>* names, int64_t* next_id,
                             std::unique_ptr<RootSets>* merged) {
  RootSets sets(lt, backend);
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
      const LoopLife& loop = lt.loops[index];
      for (size_t k = 0; k < loop.stmt->iter_args.size(); ++k) {
        const ir::TileType* t = ir::AsTile(loop.stmt->iter_args[k]->type);
        if (t != nullptr) handle(loop.yield, loop.yield_at, k, t->memref);
      }
      continue;
    }
    const IfLife& info = lt.ifs[index];
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
  for (const ValueLife& v : lt.values) {
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
  // Retypes values onto the merged roots and puts the moves before their yields.
  class Carrier final : public ir::IRMutator {
   public:
    Carrier(const absl::flat_hash_map<const ir::YieldStmt*, std::vector<YieldMove>>& moves,
            RootSets& sets, MemRefMapper& mapper, int64_t* next_id,
            absl::flat_hash_set<std::string>* names)
        : moves_(moves), sets_(sets), mapper_(mapper), next_id_(next_id), names_(names) {}

    ir::TypePtr MutateDefType(const ir::Var& v) override { return RetypeTile(v, mapper_); }

    StmtPtr MutateYield(const std::shared_ptr<const ir::YieldStmt>& y) override {
      auto it = moves_.find(y.get());
      if (it == moves_.end()) return IRMutator::MutateYield(y);
      std::vector<StmtPtr> out;
      std::vector<ir::ExprPtr> values;
      for (const ir::ExprPtr& v : y->values) values.push_back(MutateExpr(v));
      // The moves act as one parallel copy: a source living in a buffer that another move of
      // this yield overwrites is first copied into a fresh buffer of its own.
      for (const YieldMove& m : it->second) {
        const ir::Var* src = ir::AsVar(y->values[m.k].get());
        const MemRefPtr& sm = ir::AsTile(src->type)->memref;
        bool clobbered = false;
        for (const YieldMove& other : it->second) {
          clobbered |= other.k != m.k && sets_.Find(other.target->root()) == sets_.Find(sm->root());
        }
        // A move into another part of its own source's buffer that overlaps the source would be
        // an overlapping copy, which tile.move (not in-place safe) may not do.
        clobbered |= sets_.Find(m.target->root()) == sets_.Find(sm->root()) &&
                     m.target->offset() < sm->end_offset() && sm->offset() < m.target->end_offset();
        if (!clobbered) continue;
        const int64_t id = (*next_id_)++;
        MemRefPtr tmp_root = MemRef::MakeRoot(MemRef::RootName(sm->space(), id), sm->space(),
                                              MemRef::kUnplanned, sm->size(), id);
        VarPtr tmp = MutateVarDef(MoveVar(ir::FreshName(absl::StrCat(src->name, "_tmp"), names_),
                                          *ir::AsTile(src->type), tmp_root));
        out.push_back(MoveStmt(tmp, values[m.k], sm->space()));
        values[m.k] = tmp;
      }
      for (const YieldMove& m : it->second) {
        const ir::Var* src = ir::AsVar(y->values[m.k].get());
        const ir::TileType* t = ir::AsTile(src->type);
        VarPtr mv = MutateVarDef(
            MoveVar(ir::FreshName(absl::StrCat(src->name, "_mv"), names_), *t, m.target));
        out.push_back(MoveStmt(mv, values[m.k], m.target->space()));
        values[m.k] = mv;
      }
      out.push_back(std::make_shared<ir::YieldStmt>(std::move(values), y->loc));
      return std::make_shared<ir::SeqStmts>(std::move(out), y->loc);
    }

   private:
    const absl::flat_hash_map<const ir::YieldStmt*, std::vector<YieldMove>>& moves_;
    RootSets& sets_;
    MemRefMapper& mapper_;
    int64_t* next_id_;
    absl::flat_hash_set<std::string>* names_;
  };
  return Carrier(moves, sets, mapper, next_id, names).MutateFunction(fn);
}

// ---------------------------------------------------------------------------------------------
// Step 2: first-fit decreasing packing of root groups, per space.

struct Group {
  MemRefPtr root;
  int64_t start = INT64_MAX, end = 0, slot = 0;
  int layout = kAnyLayout;  // its values' layout class where the space separates layouts
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
// `backend` (may be null): a group joins only a buffer of its own layout class where the backend
// separates layouts (backends::SeparatedLayout).
ir::FunctionPtr Pack(const ir::FunctionPtr& fn, const Liveness& lt, RootSets* sets, bool share,
                     const backends::Backend* backend, bool* changed) {
  auto key = [sets](const MemRef* r) { return sets != nullptr ? sets->Find(r) : r; };
  std::vector<Group> groups;
  absl::flat_hash_map<const MemRef*, size_t> index;
  for (const ValueLife& v : lt.values) {
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
    if (const int l = LayoutClass(v, backend); l != kAnyLayout) g.layout = l;
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
    int layout;  // the layout class of its groups
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
    // A slotted root keeps a buffer of its own: its slots rotate with a pipelined loop, and a
    // value packed into it would have to name a slot (or lose the stages' separation). So does
    // a declared root: the author's allocation is closed to every other root.
    const auto closed = [](const MemRef& r) { return r.is_slotted() || r.declared(); };
    if (share && !closed(*g.root) && g.root->space() != ir::MemorySpace::kDDR) {
      const size_t scan_end = std::min(buffers.size(), space_begin + kMaxFirstFitScan);
      for (size_t b = space_begin; b < scan_end; ++b) {
        if (closed(*groups[buffers[b].rep].root)) continue;
        if (LayoutsMayShare(buffers[b].layout, g.layout) && buffers[b].busy.Free(g.start, g.end)) {
          chosen = b;
          break;
        }
      }
    }
    if (chosen == buffers.size()) buffers.push_back({order[i], g.slot, IntervalSet(), g.layout});
    buffers[chosen].busy.Add(g.start, g.end);
    if (buffers[chosen].layout == kAnyLayout) buffers[chosen].layout = g.layout;
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
  class Retyper final : public ir::IRMutator {
   public:
    explicit Retyper(MemRefMapper& mapper) : mapper_(mapper) {}
    ir::TypePtr MutateDefType(const ir::Var& v) override { return RetypeTile(v, mapper_); }

   private:
    MemRefMapper& mapper_;
  };
  ir::FunctionPtr out = Retyper(mapper).MutateFunction(fn);

  // Rebuild the allocs: one per root still referenced, in id order. A declared allocation stays
  // even when no tile uses it: it is the author's, not one of ours.
  std::map<std::pair<int64_t, std::string>, MemRefPtr> used;
  ir::ForEachDef(*out, [&](const ir::Var& v) {
    const MemRefPtr& m = ir::MemRefOf(*v.type);
    if (m == nullptr || (ir::AsTile(v.type) == nullptr && !m->declared())) return;
    used.emplace(std::make_pair(m->id(), m->name()), m->root_ptr());
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

}  // namespace

// Steps 1 (and 2 when `share`) on an unplanned, non-Orchestration function.
FunctionResult Reuse(const ir::FunctionPtr& function, bool share,
                     const backends::Backend* backend) {
  if (function->type == ir::FunctionType::kOrchestration) return FunctionResult{function, false};
  bool any = false, planned = false;
  int64_t max_id = -1;
  ir::ForEachDef(*function, [&](const ir::Var& v) {
    const MemRefPtr& m = ir::MemRefOf(*v.type);
    if (m == nullptr) return;
    any = true;
    planned |= m->is_planned();
    max_id = std::max(max_id, m->id());
  });
  if (!any || planned) return FunctionResult{function, false};

  bool changed = false;
  ir::FunctionPtr fn = function;
  absl::flat_hash_set<std::string> names = ir::DefinedNames(*fn);
  int64_t next_id = max_id + 1;
  // Each step re-analyses only if the previous one inserted statements.
  auto lt = std::make_unique<Liveness>(*fn);
  SplitPlan plan = PlanSplits(*lt, &next_id);
  if (!plan.fresh.empty()) {
    fn = ApplySplits(fn, *lt, plan, &names);
    changed = true;
    lt = std::make_unique<Liveness>(*fn);
  }
  std::unique_ptr<RootSets> merged;
  ir::FunctionPtr carried = ApplyCarries(fn, *lt, backend, &changed, &names, &next_id, &merged);
  if (carried != fn) {
    fn = carried;
    lt = std::make_unique<Liveness>(*fn);
  }
  fn = Pack(fn, *lt, merged.get(), share, backend, &changed);
  if (!changed) return FunctionResult{function, false};
  return FunctionResult{fn, true};
}

}  // namespace internal
}  // namespace passes
}  // namespace accelmem
