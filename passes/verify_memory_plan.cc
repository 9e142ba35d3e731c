#include "passes/verify_memory_plan.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "backends/backend.h"
#include "ir/checked_math.h"
#include "ir/op_registry.h"
#include "passes/pass.h"
#include "policy/placement_checker.h"

namespace accelmem {
namespace passes {
namespace {

using ir::MemRefPtr;
using ir::StmtPtr;

struct Value {
  const ir::Var* var;
  int64_t start;            // first time unit of the value's write
  int64_t last = -1;        // statement number of the last read (-1: never read)
  size_t depth;             // number of loops around the definition
  std::vector<int> extend;  // loops the value must survive
  int parent;               // union-find over views
};

struct Copy {
  std::string name;
  MemRefPtr target;
  int64_t stmt;
};

class Analyzer {
 public:
  explicit Analyzer(const ir::Function& f) : fn_(f) {}

  void Run() {
    for (const ir::VarPtr& p : fn_.params) Def(*p, 1);
    n_ = 1;
    Stmt(fn_.body);
  }

  int Find(int i) {
    while (values_[i].parent != i) i = values_[i].parent = values_[values_[i].parent].parent;
    return i;
  }

  std::vector<Value> values_;
  std::vector<int64_t> loop_end_;
  std::vector<Copy> copies_;
  int64_t n_ = 0;

 private:
  void Def(const ir::Var& v, int64_t start) {
    if (ir::AsTile(v.type) == nullptr) return;
    const int i = static_cast<int>(values_.size());
    values_.push_back({&v, start, -1, loops_.size(), {}, i});
    index_[&v] = i;
  }

  void Read(const ir::Expr* e, int64_t t) {
    if (e == nullptr) return;
    if (const ir::Var* v = ir::AsVar(e)) {
      auto it = index_.find(v);
      if (it == index_.end()) return;
      Value& val = values_[it->second];
      val.last = std::max(val.last, t);
      if (loops_.size() > val.depth &&
          (val.extend.empty() || val.extend.back() != loops_[val.depth])) {
        val.extend.push_back(loops_[val.depth]);
      }
    } else if (const ir::ListExpr* l = ir::AsList(e)) {
      for (const auto& x : l->items) Read(x.get(), t);
    } else if (const ir::Call* c = ir::AsCall(e)) {
      for (const auto& x : c->args) Read(x.get(), t);
      for (const auto& kv : c->kwargs) Read(kv.second.get(), t);
    }
  }

  const ir::MemRef* MemRefOfExpr(const ir::ExprPtr& e) {
    const ir::Type* t = ir::TypeOfExpr(*e);
    return t != nullptr ? ir::MemRefOf(*t).get() : nullptr;
  }

  // An implicit copy for each yielded value not already in the target's MemRef.
  void Copies(const std::vector<ir::VarPtr>& targets, const ir::YieldStmt* y, int64_t t) {
    if (y == nullptr) return;
    for (size_t k = 0; k < targets.size() && k < y->values.size(); ++k) {
      const ir::TileType* tt = ir::AsTile(targets[k]->type);
      if (tt == nullptr || tt->memref == nullptr) continue;
      const ir::MemRef* src = MemRefOfExpr(y->values[k]);
      const ir::MemRef& dst = *tt->memref;
      if (src != nullptr && src->root() == dst.root() && src->offset() == dst.offset()) continue;
      copies_.push_back({absl::StrCat("copy into ", targets[k]->name), tt->memref, t});
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
        bool safe = true;
        const ir::Call* call = ir::AsCall(a->value.get());
        const ir::OpDef* def = call ? ir::OpRegistry::Global().Find(call->op) : nullptr;
        if (def != nullptr) safe = def->IsInplaceSafe(*call);
        Def(*a->var, 3 * t + (safe ? 1 : 0));
        if (def != nullptr && def->IsView() && !call->args.empty()) {
          const ir::Var* src = ir::AsVar(call->args[0].get());
          auto d = index_.find(a->var.get());
          auto si = src ? index_.find(src) : index_.end();
          if (d != index_.end() && si != index_.end()) {
            values_[Find(d->second)].parent = Find(si->second);
          }
        }
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
        last_yield_stmt_ = t;
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
        for (const auto& v : f->iter_args) Def(*v, 3 * t + 1);
        last_yield_ = nullptr;
        Stmt(f->body);
        loops_.pop_back();
        loop_end_[id] = n_ - 1;
        Copies(f->iter_args, last_yield_, last_yield_stmt_);
        const int64_t x = n_++;
        for (const auto& v : f->return_vars) Def(*v, 3 * x + 1);
        return;
      }
      case ir::StmtKind::kIf: {
        const auto* i = static_cast<const ir::IfStmt*>(s.get());
        Read(i->cond.get(), n_++);
        last_yield_ = nullptr;
        Stmt(i->then_body);
        Copies(i->return_vars, last_yield_, last_yield_stmt_);
        last_yield_ = nullptr;
        Stmt(i->else_body);
        Copies(i->return_vars, last_yield_, last_yield_stmt_);
        const int64_t x = n_++;
        for (const auto& v : i->return_vars) Def(*v, 3 * x + 1);
        return;
      }
    }
  }

  const ir::Function& fn_;
  absl::flat_hash_map<const ir::Var*, int> index_;
  std::vector<int> loops_;
  const ir::YieldStmt* last_yield_ = nullptr;
  int64_t last_yield_stmt_ = 0;
};

// Reads of statement t happen at 3t, so a value read last at t is dead from 3t + 1 on; a value
// used in a loop it was defined outside of lives to that loop's end.
int64_t ValueEnd(const Analyzer& an, const Value& v) {
  int64_t end = v.last >= 0 ? std::max(3 * v.last + 1, v.start + 1) : v.start + 1;
  for (int loop : v.extend) end = std::max(end, 3 * an.loop_end_[loop] + 2);
  return end;
}

}  // namespace

std::vector<RootLifetime> ComputeRootLifetimes(const ir::Function& function) {
  Analyzer an(function);
  an.Run();
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
  for (const Value& v : an.values_) {
    const ir::TileType* tile = ir::AsTile(v.var->type);
    if (tile->memref == nullptr) continue;
    add(tile->memref->root(), v.start, ValueEnd(an, v));
  }
  for (const Copy& cp : an.copies_) add(cp.target->root(), 3 * cp.stmt, 3 * cp.stmt + 2);
  return out;
}

int64_t CountImplicitYieldCopies(const ir::Function& function) {
  Analyzer an(function);
  an.Run();
  return static_cast<int64_t>(an.copies_.size());
}

absl::Status CheckRootsConflictFree(const ir::Function& function) {
  policy::MemoryAllocatorPolicyPtr pol = backends::CreateActivePolicy();
  Analyzer an(function);
  an.Run();
  // Classes (a value and its views) with byte ranges relative to their root.
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
  for (size_t i = 0; i < an.values_.size(); ++i) {
    const Value& v = an.values_[i];
    const ir::MemRefPtr& m = ir::AsTile(v.var->type)->memref;
    if (m == nullptr || !pol->ShouldAllocate(m->space())) continue;
    note_root(*m);
    Class& c = classes[an.Find(static_cast<int>(i))];
    if (c.root == nullptr) {
      c.root = m->root();
      c.name = an.values_[an.Find(static_cast<int>(i))].var->name;
    }
    c.start = std::min(c.start, v.start);
    c.end = std::max(c.end, ValueEnd(an, v));
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
  for (const Copy& cp : an.copies_) {
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

absl::StatusOr<MemoryPlanReport> AnalyzeMemoryPlan(const ir::Function& function,
                                                   const MemoryPlanOptions& options) {
  policy::MemoryAllocatorPolicyPtr owned;
  const policy::MemoryAllocatorPolicy* pol = options.policy;
  if (pol == nullptr) {
    owned = backends::CreateActivePolicy();
    pol = owned.get();
  }
  MemoryPlanReport report;
  report.function = function.name;
  Analyzer an(function);
  an.Run();
  report.num_statements = an.n_;

  // Classes (a value and its views): hull of lifetimes and address ranges.
  struct Class {
    std::string name;
    const ir::MemRef* root = nullptr;
    int64_t start = INT64_MAX, end = 0, lo = INT64_MAX, hi = 0;
  };
  std::map<int, Class> classes;
  absl::flat_hash_map<const ir::MemRef*, int64_t> slot;  // root -> max(offset + size)
  for (size_t i = 0; i < an.values_.size(); ++i) {
    const Value& v = an.values_[i];
    const ir::TileType* tile = ir::AsTile(v.var->type);
    if (tile->memref == nullptr) {
      return FunctionError(function.name, absl::StrCat("value '", v.var->name, "' has no MemRef"));
    }
    const ir::MemRef& m = *tile->memref;
    int64_t& sl = slot[m.root()];
    sl = std::max({sl, m.root()->size(), m.end_offset()});
    const int64_t end = ValueEnd(an, v);
    Class& c = classes[an.Find(static_cast<int>(i))];
    if (c.root == nullptr) {
      c.root = m.root();
      c.name = an.values_[an.Find(static_cast<int>(i))].var->name;
    }
    c.start = std::min(c.start, v.start);
    c.end = std::max(c.end, end);
    c.lo = std::min(c.lo, m.addr());
    c.hi = std::max(c.hi, ir::SaturatingAdd(m.addr(), m.size()));
  }

  // Roots: planned, aligned.
  for (const auto& [root, sl] : slot) {
    if (!pol->ShouldAllocate(root->space())) continue;
    if (root->addr() < 0) {
      return FunctionError(function.name,
                           absl::StrCat("MemRef '", root->name(), "' in ",
                                        ir::MemorySpaceName(root->space()), " has no address"));
    }
  }

  for (const auto& [id, c] : classes) {
    if (!pol->ShouldAllocate(c.root->space())) continue;
    PlannedBuffer b;
    b.name = c.name;
    b.space = c.root->space();
    b.start = c.start;
    b.end = c.end;
    b.addr = c.lo;
    b.size = c.hi - c.lo;
    report.buffers.push_back(std::move(b));
  }
  for (const Copy& cp : an.copies_) {
    if (!pol->ShouldAllocate(cp.target->space()) || cp.target->addr() < 0) continue;
    PlannedBuffer b;
    b.name = cp.name;
    b.space = cp.target->space();
    b.start = 3 * cp.stmt;
    b.end = 3 * cp.stmt + 2;
    b.addr = cp.target->addr();
    b.size = cp.target->size();
    report.buffers.push_back(std::move(b));
  }
  for (PlannedBuffer& b : report.buffers) {
    b.first_stmt = b.start / 3;
    b.last_stmt = (std::max(b.end, b.start + 1) - 1) / 3;
  }

  // Per-space figures.
  std::map<int, SpaceUsage> spaces;
  for (const auto& [root, sl] : slot) {
    if (!pol->ShouldAllocate(root->space())) continue;
    SpaceUsage& u = spaces[static_cast<int>(root->space())];
    u.space = root->space();
    u.high_water = std::max(u.high_water, ir::SaturatingAdd(root->addr(), sl));
  }
  std::map<int, std::vector<size_t>> by_space;
  for (size_t i = 0; i < report.buffers.size(); ++i) {
    by_space[static_cast<int>(report.buffers[i].space)].push_back(i);
  }
  for (auto& [space, u] : spaces) {
    u.capacity = options.capacity ? options.capacity(u.space) : backends::ActiveMemSize(u.space);
    std::vector<policy::PlacementBuffer> instance;
    for (size_t i : by_space[space]) {
      const PlannedBuffer& b = report.buffers[i];
      instance.push_back({b.name, b.start, std::max(b.end, b.start), b.size});
    }
    u.load = policy::ComputeLoad(instance);
    report.spaces.push_back(u);
  }
  return report;
}

absl::Status VerifyMemoryPlan(const ir::Function& function, const MemoryPlanOptions& options) {
  if (function.type == ir::FunctionType::kOrchestration) return absl::OkStatus();
  policy::MemoryAllocatorPolicyPtr owned;
  MemoryPlanOptions opts = options;
  if (opts.policy == nullptr) {
    owned = backends::CreateActivePolicy();
    opts.policy = owned.get();
  }
  absl::StatusOr<MemoryPlanReport> report = AnalyzeMemoryPlan(function, opts);
  if (!report.ok()) return report.status();

  // Alignment of every planned root.
  bool misaligned = false;
  std::string what;
  auto check_root = [&](const ir::MemRef& m) {
    const ir::MemRef* r = m.root();
    if (misaligned || !opts.policy->ShouldAllocate(r->space()) || r->addr() < 0) return;
    if (!policy::IsAligned(*opts.policy, static_cast<uint64_t>(r->addr()), r->space())) {
      misaligned = true;
      what = absl::StrCat("MemRef '", r->name(), "' in ", ir::MemorySpaceName(r->space()),
                          " is at address ", r->addr(), ", which the allocator policy aligns to ",
                          opts.policy->AlignAddress(static_cast<uint64_t>(r->addr()), r->space()));
    }
  };
  for (const ir::VarPtr& p : function.params) {
    if (const ir::MemRefPtr& m = ir::MemRefOf(*p->type)) check_root(*m);
  }
  std::vector<StmtPtr> stack = {function.body};
  while (!stack.empty()) {
    StmtPtr s = stack.back();
    stack.pop_back();
    if (s == nullptr) continue;
    if (const ir::AssignStmt* a = ir::AsAssign(s.get())) {
      if (const ir::MemRefPtr& m = ir::MemRefOf(*a->var->type)) check_root(*m);
    } else if (const ir::SeqStmts* seq = ir::AsSeq(s.get())) {
      for (const StmtPtr& c : seq->stmts) stack.push_back(c);
    } else if (const ir::ForStmt* f = ir::AsFor(s.get())) {
      for (const auto& v : f->iter_args) {
        if (const ir::MemRefPtr& m = ir::MemRefOf(*v->type)) check_root(*m);
      }
      stack.push_back(f->body);
    } else if (const ir::IfStmt* i = ir::AsIf(s.get())) {
      stack.push_back(i->then_body);
      stack.push_back(i->else_body);
    }
  }
  if (misaligned) return FunctionError(function.name, what);

  for (const SpaceUsage& u : report->spaces) {
    if (u.capacity > 0 && u.high_water > u.capacity) {
      return FunctionError(
          function.name, absl::StrCat(ir::MemorySpaceName(u.space), " buffer usage (", u.high_water,
                                      " bytes) exceeds platform limit (", u.capacity, " bytes)"));
    }
  }

  // No two live buffers overlap: the generic placement checker (policy/placement_checker.h),
  // one instance per space; alignment and capacity were checked above with the IR's terms.
  std::map<int, std::vector<size_t>> by_space;
  for (size_t i = 0; i < report->buffers.size(); ++i) {
    by_space[static_cast<int>(report->buffers[i].space)].push_back(i);
  }
  for (const auto& [space, subset] : by_space) {
    std::vector<policy::PlacementBuffer> instance;
    std::vector<int64_t> offsets;
    instance.reserve(subset.size());
    offsets.reserve(subset.size());
    for (size_t i : subset) {
      const PlannedBuffer& b = report->buffers[i];
      instance.push_back({absl::StrCat(b.name, " @ statements ", b.first_stmt, "..", b.last_stmt),
                          b.start, b.end, b.size});
      offsets.push_back(b.addr);
    }
    absl::Status s = policy::CheckPlacement(instance, offsets);
    if (!s.ok()) {
      return FunctionError(
          function.name,
          absl::StrCat(ir::MemorySpaceName(report->buffers[subset[0]].space), ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyMemoryPlan(const ir::Program& program, const MemoryPlanOptions& options) {
  for (const ir::FunctionPtr& f : program.functions) {
    if (absl::Status s = VerifyMemoryPlan(*f, options); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace passes
}  // namespace accelmem
