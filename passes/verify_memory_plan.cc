#include "passes/verify_memory_plan.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "backends/backend.h"
#include "ir/checked_math.h"
#include "ir/op_registry.h"
#include "ir/visitor.h"
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
  int pipelined = -1;       // the innermost pipelined loop around the definition (-1: none)
};

struct Copy {
  std::string name;
  MemRefPtr target;
  int64_t stmt;
  int layouts;  // the target tile's layout bit
};

// Bit 1 << TileLayout of a tile's layout, ND when it states none.
int LayoutBit(const ir::TileType& t) {
  return 1 << static_cast<int>(t.layout.value_or(ir::TileLayout::kND));
}

// The checker's own walk (it shares no lifetime code with the passes: a planner bug repeated in
// a shared model would prove itself right).
class Analyzer final : public ir::IRVisitor {
 public:
  explicit Analyzer(const ir::Function& f) : fn_(f) {}

  void Run() {
    for (const ir::VarPtr& p : fn_.params) Def(*p, 1);
    n_ = 1;
    if (fn_.body != nullptr) VisitStmt(*fn_.body);
  }

  int Find(int i) {
    while (values_[i].parent != i) i = values_[i].parent = values_[values_[i].parent].parent;
    return i;
  }

  std::vector<Value> values_;
  std::vector<int64_t> loop_start_;
  std::vector<int64_t> loop_end_;
  std::vector<int64_t> loop_depth_;  // pipeline depth (0: an ordinary loop)
  std::vector<Copy> copies_;
  int64_t n_ = 0;

  void VisitVarUse(const ir::Var& v) override {
    auto it = index_.find(&v);
    if (it == index_.end()) return;
    Value& val = values_[it->second];
    val.last = std::max(val.last, reading_at_);
    if (loops_.size() > val.depth &&
        (val.extend.empty() || val.extend.back() != loops_[val.depth])) {
      val.extend.push_back(loops_[val.depth]);
    }
  }

  void VisitAssign(const ir::AssignStmt& a) override {
    const int64_t t = Number();
    VisitExpr(*a.value);
    bool safe = true;
    const ir::Call* call = ir::AsCall(a.value.get());
    const ir::OpDef* def = call ? ir::OpRegistry::Global().Find(call->op) : nullptr;
    if (def != nullptr) safe = def->IsInplaceSafe(*call);
    Def(*a.var, 3 * t + (safe ? 1 : 0));
    if (def != nullptr && def->IsView() && !call->args.empty()) {
      const ir::Var* src = ir::AsVar(call->args[0].get());
      auto d = index_.find(a.var.get());
      auto si = src ? index_.find(src) : index_.end();
      if (d != index_.end() && si != index_.end()) {
        values_[Find(d->second)].parent = Find(si->second);
      }
    }
  }

  void VisitEval(const ir::EvalStmt& s) override {
    Number();
    VisitExpr(*s.expr);
  }

  void VisitReturn(const ir::ReturnStmt& s) override {
    Number();
    for (const auto& v : s.values) VisitExpr(*v);
  }

  void VisitYield(const ir::YieldStmt& s) override {
    last_yield_stmt_ = Number();
    for (const auto& v : s.values) VisitExpr(*v);
    last_yield_ = &s;
  }

  void VisitFor(const ir::ForStmt& f) override {
    const int64_t t = Number();
    VisitExpr(*f.start);
    VisitExpr(*f.stop);
    VisitExpr(*f.step);
    for (const auto& i : f.inits) VisitExpr(*i);
    const int id = static_cast<int>(loop_end_.size());
    loop_start_.push_back(t);
    loop_end_.push_back(t);
    loop_depth_.push_back(f.pipeline);
    loops_.push_back(id);
    for (const auto& v : f.iter_args) Def(*v, 3 * t + 1);
    last_yield_ = nullptr;
    if (f.body != nullptr) VisitStmt(*f.body);
    loops_.pop_back();
    loop_end_[id] = n_ - 1;
    Copies(f.iter_args, last_yield_, last_yield_stmt_);
    const int64_t x = n_++;
    for (const auto& v : f.return_vars) Def(*v, 3 * x + 1);
  }

  void VisitIf(const ir::IfStmt& i) override {
    Number();
    VisitExpr(*i.cond);
    last_yield_ = nullptr;
    if (i.then_body != nullptr) VisitStmt(*i.then_body);
    Copies(i.return_vars, last_yield_, last_yield_stmt_);
    last_yield_ = nullptr;
    if (i.else_body != nullptr) VisitStmt(*i.else_body);
    Copies(i.return_vars, last_yield_, last_yield_stmt_);
    const int64_t x = n_++;
    for (const auto& v : i.return_vars) Def(*v, 3 * x + 1);
  }

 private:
  // The next statement number; the statement's reads happen at it.
  int64_t Number() {
    reading_at_ = n_++;
    return reading_at_;
  }

  void Def(const ir::Var& v, int64_t start) {
    if (ir::AsTile(v.type) == nullptr) return;
    const int i = static_cast<int>(values_.size());
    int pipelined = -1;
    for (int loop : loops_) {
      if (loop_depth_[loop] > 0) pipelined = loop;
    }
    values_.push_back({&v, start, -1, loops_.size(), {}, i, pipelined});
    index_[&v] = i;
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
      copies_.push_back(
          {absl::StrCat("copy into ", targets[k]->name), tt->memref, t, LayoutBit(*tt)});
    }
  }

  const ir::Function& fn_;
  absl::flat_hash_map<const ir::Var*, int> index_;
  std::vector<int> loops_;
  int64_t reading_at_ = 0;
  const ir::YieldStmt* last_yield_ = nullptr;
  int64_t last_yield_stmt_ = 0;
};

// Every MemRef the function's definitions hold, in definition order (for the alignment check).
class DefinedMemRefs final : public ir::IRVisitor {
 public:
  void VisitVarDef(const ir::Var& v) override {
    if (const ir::MemRefPtr& m = ir::MemRefOf(*v.type)) memrefs.push_back(m.get());
  }
  void VisitAssign(const ir::AssignStmt& s) override { VisitVarDef(*s.var); }
  void VisitEval(const ir::EvalStmt&) override {}
  void VisitYield(const ir::YieldStmt&) override {}
  void VisitReturn(const ir::ReturnStmt&) override {}
  std::vector<const ir::MemRef*> memrefs;
};

// Reads of statement t happen at 3t, so a value read last at t is dead from 3t + 1 on; a value
// used in a loop it was defined outside of lives to that loop's end.
int64_t ValueEnd(const Analyzer& an, const Value& v) {
  int64_t end = v.last >= 0 ? std::max(3 * v.last + 1, v.start + 1) : v.start + 1;
  for (int loop : v.extend) end = std::max(end, 3 * an.loop_end_[loop] + 2);
  return end;
}

// Classes (a value and its views): hull of lifetimes and address ranges.
struct Class {
  std::string name;
  const ir::MemRef* root = nullptr;
  int64_t start = INT64_MAX, end = 0, lo = INT64_MAX, hi = 0;
  int layouts = 0;
  // A class in a slot that rotates with a pipelined loop: the loop, the slot, its bytes in the
  // slot.
  int loop = -1;
  int64_t slot = -1, in_lo = INT64_MAX, in_hi = 0;
  int64_t block_slots = 0;  // after MergeRotatingSlots: the merged block's slot count
};

// Slots of a pipelined loop (ir/memref.h): the value of iteration j in slot k lives in slot
// (k + j) mod N, and N iterations are in flight at once. So the classes of one root that rotate
// in one loop become one buffer, the whole root over the whole loop: nothing else may use any of
// its slots while the loop runs. Inside it, two classes in the same slot may share bytes only
// when their lifetimes are disjoint (an iteration reuses its own slot), two in different slots
// never (they meet one iteration apart, both in flight).
void MergeRotatingSlots(const Analyzer& an, std::map<int, Class>* classes,
                        MemoryPlanReport* report) {
  // (root name, loop) -> classes; names are unique (each is a tile.alloc's value), ids need not be.
  std::map<std::pair<std::string, int>, std::vector<int>> groups;
  for (const auto& [id, c] : *classes) {
    if (c.loop >= 0) groups[{c.root->name(), c.loop}].push_back(id);
  }
  for (const auto& [key, ids] : groups) {
    Class& first = classes->at(ids[0]);
    const ir::MemRef* root = first.root;
    for (size_t i = 0; i < ids.size(); ++i) {
      for (size_t j = i + 1; j < ids.size(); ++j) {
        const Class& a = classes->at(ids[i]);
        const Class& b = classes->at(ids[j]);
        if (a.in_hi <= b.in_lo || b.in_hi <= a.in_lo) continue;
        if (a.slot == b.slot && (a.end <= b.start || b.end <= a.start)) continue;
        report->slot_conflicts.push_back(absl::StrCat(
            "values '", a.name, "' (slot ", a.slot, ") and '", b.name, "' (slot ", b.slot, ") of '",
            root->name(), "' share bytes ",
            a.slot == b.slot ? "while both are live"
                             : "one iteration apart, both in flight in the pipelined loop"));
      }
    }
    first.name = absl::StrCat(first.name, " (slots of ", root->name(), ")");
    first.start = 3 * an.loop_start_[key.second];
    first.end = 3 * an.loop_end_[key.second] + 2;
    first.lo = root->addr();
    first.hi = ir::SaturatingAdd(root->addr(), root->size());
    first.block_slots = root->slots();
    for (size_t i = 1; i < ids.size(); ++i) {
      first.layouts |= classes->at(ids[i]).layouts;
      classes->erase(ids[i]);
    }
  }
}

}  // namespace

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
    c.layouts |= LayoutBit(*tile);
    if (m.slot() >= 0 && v.pipelined >= 0 && an.loop_depth_[v.pipelined] >= m.slots()) {
      c.loop = v.pipelined;
      c.slot = m.slot();
      c.in_lo = std::min(c.in_lo, m.offset_in_slot());
      c.in_hi = std::max(c.in_hi, ir::SaturatingAdd(m.offset_in_slot(), m.size()));
    }
  }
  MergeRotatingSlots(an, &classes, &report);

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
    b.memref = c.root->name();
    b.layouts = c.layouts;
    b.slots = c.block_slots;
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
    b.memref = ir::MemRefToString(*cp.target);
    b.layouts = cp.layouts;
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

namespace {

// Where `space` keeps storage layouts apart: no buffer of `buffers` (indices into the report)
// holds two layout classes, and no two of different classes overlap in address, whatever their
// lifetimes. One sweep by address: a buffer overlaps an earlier one of the other class iff the
// furthest-reaching earlier one of that class ends past its start.
absl::Status CheckLayoutSeparation(const std::string& function, ir::MemorySpace space,
                                   const std::vector<PlannedBuffer>& all,
                                   const std::vector<size_t>& buffers) {
  auto names = [](int layouts) {
    std::string out;
    for (int l = 0; l < ir::kNumTileLayouts; ++l) {
      if (layouts & (1 << l)) {
        absl::StrAppend(&out, out.empty() ? "" : " and ",
                        ir::TileLayoutName(static_cast<ir::TileLayout>(l)));
      }
    }
    return out;
  };
  auto describe = [&](const PlannedBuffer& b) {
    return absl::StrCat(names(b.layouts), " buffer '", b.name, "' (", b.memref, ", bytes [", b.addr,
                        ", ", ir::SaturatingAdd(b.addr, b.size), "), statements ", b.first_stmt,
                        "..", b.last_stmt, ")");
  };
  std::vector<size_t> order;
  for (size_t i : buffers) {
    const PlannedBuffer& b = all[i];
    if ((b.layouts & (b.layouts - 1)) != 0) {
      return FunctionError(
          function, absl::StrCat(ir::MemorySpaceName(space), ": buffer '", b.name, "' (", b.memref,
                                 ") holds tiles of layouts ", names(b.layouts),
                                 "; the backend keeps storage layouts apart in ",
                                 ir::MemorySpaceName(space)));
    }
    if (b.size > 0 && b.layouts != 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return all[x].addr < all[y].addr; });
  std::map<int, size_t> reach;  // layout bit -> earlier buffer of that class ending last
  for (size_t i : order) {
    const PlannedBuffer& b = all[i];
    for (const auto& [layouts, j] : reach) {
      const PlannedBuffer& o = all[j];
      const int64_t o_end = ir::SaturatingAdd(o.addr, o.size);
      if (layouts == b.layouts || o_end <= b.addr) continue;
      return FunctionError(function,
                           absl::StrCat(ir::MemorySpaceName(space), ": ", describe(o), " and ",
                                        describe(b), " overlap in bytes [", b.addr, ", ",
                                        std::min(o_end, ir::SaturatingAdd(b.addr, b.size)),
                                        "); the backend keeps storage layouts apart in ",
                                        ir::MemorySpaceName(space), ", whatever the lifetimes"));
    }
    auto [it, fresh] = reach.emplace(b.layouts, i);
    if (!fresh && ir::SaturatingAdd(all[it->second].addr, all[it->second].size) <
                      ir::SaturatingAdd(b.addr, b.size)) {
      it->second = i;
    }
  }
  return absl::OkStatus();
}

// A declared allocation (ir/memref.h) is closed to every other root of its space, whatever the
// lifetimes: no root's bytes [addr, addr + size) meet a declared root's. One sweep by address
// per space, as above: a root overlaps an earlier one iff the furthest-reaching earlier one ends
// past its start, and a pair with a declared member is an error.
absl::Status CheckDeclaredAllocations(const std::string& function,
                                      const std::vector<const ir::MemRef*>& defined,
                                      const policy::MemoryAllocatorPolicy& policy) {
  std::map<int, std::vector<const ir::MemRef*>> by_space;
  absl::flat_hash_set<const ir::MemRef*> seen;
  bool any_declared = false;
  for (const ir::MemRef* m : defined) {
    const ir::MemRef* r = m->root();
    if (!policy.ShouldAllocate(r->space()) || r->addr() < 0 || !seen.insert(r).second) continue;
    by_space[static_cast<int>(r->space())].push_back(r);
    any_declared |= r->declared();
  }
  if (!any_declared) return absl::OkStatus();
  auto end = [](const ir::MemRef* r) { return ir::SaturatingAdd(r->addr(), r->size()); };
  auto describe = [&](const ir::MemRef* r) {
    return absl::StrCat(r->declared() ? "declared allocation '" : "'", r->name(), "' (bytes [",
                        r->addr(), ", ", end(r), "))");
  };
  for (auto& [space, roots] : by_space) {
    std::sort(roots.begin(), roots.end(), [](const ir::MemRef* a, const ir::MemRef* b) {
      return a->addr() != b->addr() ? a->addr() < b->addr() : a->declared() > b->declared();
    });
    // The earlier roots still open at the sweep point: the declared one reaching furthest and
    // the one reaching furthest of any kind.
    const ir::MemRef* declared_reach = nullptr;
    const ir::MemRef* any_reach = nullptr;
    for (const ir::MemRef* r : roots) {
      const ir::MemRef* other = nullptr;
      if (declared_reach != nullptr && end(declared_reach) > r->addr()) other = declared_reach;
      if (other == nullptr && r->declared() && any_reach != nullptr && end(any_reach) > r->addr()) {
        other = any_reach;
      }
      if (other != nullptr) {
        return FunctionError(
            function,
            absl::StrCat(ir::MemorySpaceName(r->space()), ": ", describe(other), " and ",
                         describe(r), " overlap in bytes [", r->addr(), ", ",
                         std::min(end(other), end(r)),
                         "); a declared allocation shares no byte with another buffer, whatever "
                         "the lifetimes"));
      }
      if (any_reach == nullptr || end(r) > end(any_reach)) any_reach = r;
      if (r->declared() && (declared_reach == nullptr || end(r) > end(declared_reach))) {
        declared_reach = r;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

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
  if (!report->slot_conflicts.empty()) {
    return FunctionError(function.name, report->slot_conflicts.front());
  }

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
      return;
    }
    // Each slot of a slotted root is a buffer of its own: its start is aligned too.
    const uint64_t slot_addr = static_cast<uint64_t>(r->addr() + r->slot_size());
    if (r->is_slotted() && !policy::IsAligned(*opts.policy, slot_addr, r->space())) {
      misaligned = true;
      what = absl::StrCat("slot 1 of MemRef '", r->name(), "' in ", ir::MemorySpaceName(r->space()),
                          " is at address ", slot_addr, ", which the allocator policy aligns to ",
                          opts.policy->AlignAddress(slot_addr, r->space()));
    }
  };
  DefinedMemRefs defined;
  defined.VisitFunction(function);
  for (const ir::MemRef* m : defined.memrefs) check_root(*m);
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

  if (absl::Status s = CheckDeclaredAllocations(function.name, defined.memrefs, *opts.policy);
      !s.ok()) {
    return s;
  }

  // Storage layouts apart where the backend says so, whatever the lifetimes.
  for (const auto& [space_index, subset] : by_space) {
    const auto space = static_cast<ir::MemorySpace>(space_index);
    const bool separate = opts.separate_layouts ? opts.separate_layouts(space)
                                                : backends::ActiveSeparatesLayouts(space);
    if (!separate) continue;
    if (absl::Status s = CheckLayoutSeparation(function.name, space, report->buffers, subset);
        !s.ok()) {
      return s;
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
