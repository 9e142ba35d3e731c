#include "passes/allocate_memory_addr.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "backends/backend.h"
#include "ir/checked_math.h"
#include "ir/mutator.h"
#include "ir/visitor.h"
#include "passes/liveness.h"
#include "passes/memory_reuse.h"
#include "policy/lifetime_planner.h"
#include "policy/memory_allocator_policy.h"
#include "policy/placement_checker.h"

namespace accelmem {
namespace passes {
namespace {

using ir::MemRef;
using ir::MemRefPtr;
using ir::StmtPtr;
using ir::VarPtr;

const ir::Call* ReserveCall(const ir::Stmt& s) {
  const ir::Expr* e = nullptr;
  if (const ir::AssignStmt* a = ir::AsAssign(&s)) e = a->value.get();
  if (const ir::EvalStmt* ev = ir::AsEval(&s)) e = ev->expr.get();
  const ir::Call* c = e != nullptr ? ir::AsCall(e) : nullptr;
  return c != nullptr && c->op == "system.reserve_buffer" ? c : nullptr;
}

// The reserve calls of a function in statement order.
class ReserveCollector final : public ir::IRVisitor {
 public:
  void VisitAssign(const ir::AssignStmt& s) override { Note(s); }
  void VisitEval(const ir::EvalStmt& s) override { Note(s); }
  void VisitYield(const ir::YieldStmt&) override {}
  void VisitReturn(const ir::ReturnStmt&) override {}
  std::vector<const ir::Call*> reserves;

 private:
  void Note(const ir::Stmt& s) {
    if (const ir::Call* c = ReserveCall(s)) reserves.push_back(c);
  }
};

// Plans addresses (roots remapped to their addressed copies, see ir/mutator.h) and writes each
// reserve call's resolved base.
class AddressWriter final : public ir::IRMutator {
 public:
  explicit AddressWriter(const absl::flat_hash_map<const ir::Call*, int64_t>& resolved)
      : resolved_(resolved) {}

  StmtPtr MutateAssign(const std::shared_ptr<const ir::AssignStmt>& s) override {
    ir::ExprPtr call = WithBase(*s);
    if (call == nullptr) return IRMutator::MutateAssign(s);
    return std::make_shared<ir::AssignStmt>(MutateVarDef(s->var), call, s->loc);
  }

  StmtPtr MutateEval(const std::shared_ptr<const ir::EvalStmt>& s) override {
    ir::ExprPtr call = WithBase(*s);
    if (call == nullptr) return IRMutator::MutateEval(s);
    return std::make_shared<ir::EvalStmt>(call, s->loc);
  }

 private:
  // The reserve call of `s` with `base=` set to its resolved base; null when `s` is no reserve
  // call or already says so.
  ir::ExprPtr WithBase(const ir::Stmt& s) const {
    const ir::Call* c = ReserveCall(s);
    if (c == nullptr) return nullptr;
    const int64_t base = resolved_.at(c);
    const ir::ExprPtr* kw = c->FindKwarg("base");
    if (kw != nullptr && ir::AsInt(kw->get()) != nullptr && ir::AsInt(kw->get())->value == base) {
      return nullptr;
    }
    ir::Kwargs kwargs;
    bool set = false;
    for (const auto& [key, value] : c->kwargs) {
      if (key == "base") {
        kwargs.emplace_back(key, ir::MakeInt(base));
        set = true;
      } else {
        kwargs.emplace_back(key, value);
      }
    }
    if (!set) kwargs.emplace_back("base", ir::MakeInt(base));
    return ir::MakeCall(c->op, c->args, std::move(kwargs), c->loc);
  }

  const absl::flat_hash_map<const ir::Call*, int64_t>& resolved_;
};

std::string StringKwarg(const ir::Call& c, absl::string_view key) {
  const ir::ExprPtr* kw = c.FindKwarg(key);
  if (kw == nullptr) return "";
  const ir::StringImm* v = ir::AsString(kw->get());
  return v != nullptr ? v->value : "";
}

int64_t IntKwarg(const ir::Call& c, absl::string_view key, int64_t dflt) {
  const ir::ExprPtr* kw = c.FindKwarg(key);
  if (kw == nullptr) return dflt;
  const ir::IntImm* v = ir::AsInt(kw->get());
  return v != nullptr ? v->value : dflt;
}

// `policy`'s alignment of `addr` in `space`, or nullopt when it does not fit in int64.
std::optional<int64_t> Align(const policy::MemoryAllocatorPolicy& policy, int64_t addr,
                             ir::MemorySpace space) {
  if (addr < 0) return std::nullopt;
  const uint64_t aligned = policy.AlignAddress(static_cast<uint64_t>(addr), space);
  if (aligned < static_cast<uint64_t>(addr) ||
      aligned > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return std::nullopt;
  }
  return static_cast<int64_t>(aligned);
}

// `a + b` aligned by the policy, or nullopt on overflow.
std::optional<int64_t> AlignedEnd(const policy::MemoryAllocatorPolicy& policy, int64_t a, int64_t b,
                                  ir::MemorySpace space) {
  std::optional<int64_t> end = ir::CheckedAdd(a, b);
  return end ? Align(policy, *end, space) : std::nullopt;
}

struct RootInfo {
  MemRefPtr root;
  int64_t slot = 0;  // max(offset + size) over the root and its views
};

// Pairs (a, b) of buffers where a dies at the statement that defines b (a.end == b.start): b
// may take a's bytes in place, but only at the same start. At another start an element-wise op
// writes its result ahead of (or behind) operand elements it has not read yet. Returns the
// indices `a` of the pairs that overlap at different starts in `offsets`.
std::vector<size_t> ShiftedInPlacePairs(const std::vector<policy::PlacementBuffer>& buffers,
                                        const std::vector<int64_t>& offsets) {
  std::map<int64_t, std::vector<size_t>> born;
  for (size_t i = 0; i < buffers.size(); ++i) born[buffers[i].start].push_back(i);
  std::vector<size_t> out;
  for (size_t a = 0; a < buffers.size(); ++a) {
    auto it = born.find(buffers[a].end);
    if (it == born.end()) continue;
    for (size_t b : it->second) {
      const bool overlap =
          offsets[a] < offsets[b] + buffers[b].size && offsets[b] < offsets[a] + buffers[a].size;
      if (overlap && offsets[a] != offsets[b]) {
        out.push_back(a);
        break;
      }
    }
  }
  return out;
}

// The planner's placement of `refs` above `start` (roots no tile value lives in are stacked above
// it), or false when it is not usable (the policy aligns differently from a fixed multiple, or
// the planner fails, or an address overflows). `*end` gets the aligned high-water mark.
bool PlanByLifetime(const std::vector<MemRefPtr>& refs, const std::vector<RootInfo>& infos,
                    const absl::flat_hash_map<const MemRef*, size_t>& index,
                    const absl::flat_hash_map<const MemRef*, std::pair<int64_t, int64_t>>& life,
                    int64_t start, ir::MemorySpace space, const policy::MemoryAllocatorPolicy& pol,
                    const AllocateMemoryAddrOptions& opts,
                    absl::flat_hash_map<const MemRef*, int64_t>* addr, int64_t* end,
                    int64_t* high_water) {
  std::vector<policy::PlacementBuffer> buffers;
  std::vector<const MemRef*> placed, unused;
  for (const MemRefPtr& r : refs) {
    auto it = life.find(r.get());
    if (it == life.end()) {
      unused.push_back(r.get());  // no tile value lives in it: stacked above the plan
      continue;
    }
    placed.push_back(r.get());
    buffers.push_back({r->name(), it->second.first,
                       std::max(it->second.second, it->second.first + 1),
                       infos[index.at(r.get())].slot});
  }
  policy::PlannerOptions po;
  po.mode = opts.strategy == PlacementStrategy::kSearch ? policy::PlannerMode::kSearch
                                                        : policy::PlannerMode::kGreedy;
  po.alignment = std::max<int64_t>(1, static_cast<int64_t>(pol.AlignAddress(1, space)));
  po.budget = opts.budget;
  absl::StatusOr<policy::PlacementPlan> plan = policy::PlanPlacement(buffers, po);
  // A buffer the planner put over its in-place successor at another start is made to outlive
  // it by one step, so that the next plan keeps them apart; a few rounds settle it (each round
  // only adds such steps), and the last round keeps every dying buffer apart from its result.
  constexpr int kInPlaceRounds = 4;
  for (int round = 0; plan.ok(); ++round) {
    std::vector<size_t> shifted = ShiftedInPlacePairs(buffers, plan->offsets);
    if (shifted.empty()) break;
    if (round + 1 == kInPlaceRounds) {
      std::map<int64_t, int> born;
      for (const policy::PlacementBuffer& b : buffers) ++born[b.start];
      for (policy::PlacementBuffer& b : buffers) b.end += born.count(b.end);
    } else if (round + 1 > kInPlaceRounds) {
      return false;
    } else {
      for (size_t a : shifted) ++buffers[a].end;
    }
    // Repairs re-plan greedily: a search would spend its whole budget again every round.
    po.mode = policy::PlannerMode::kGreedy;
    plan = policy::PlanPlacement(buffers, po);
  }
  if (!plan.ok()) return false;
  std::vector<int64_t> offsets = plan->offsets;
  // An already planned function keeps its plan while it is valid: running the pass again must not
  // move buffers (a time-budgeted search ends wherever the clock stops it). To re-plan, reset the
  // addresses to -1 first.
  std::vector<int64_t> old(placed.size());
  bool all_planned = !placed.empty();
  for (size_t i = 0; i < placed.size() && all_planned; ++i) {
    all_planned = placed[i]->addr() >= start;
    if (all_planned) old[i] = placed[i]->addr() - start;
  }
  if (all_planned) {
    policy::PlacementLimits limits;
    limits.alignment = po.alignment;
    if (ShiftedInPlacePairs(buffers, old).empty() &&
        policy::CheckPlacement(buffers, old, limits).ok()) {
      offsets = std::move(old);
    }
  }
  int64_t high = start;   // aligned
  int64_t water = start;  // unaligned: the last byte in use, plus one
  for (size_t i = 0; i < placed.size(); ++i) {
    std::optional<int64_t> a = ir::CheckedAdd(start, offsets[i]);
    if (!a || offsets[i] < 0 || Align(pol, *a, space) != a) return false;
    (*addr)[placed[i]] = *a;
    std::optional<int64_t> end = AlignedEnd(pol, *a, buffers[i].size, space);
    if (!end) return false;
    high = std::max(high, *end);
    water = std::max(water, *a + buffers[i].size);
  }
  for (const MemRef* r : unused) {
    (*addr)[r] = high;
    std::optional<int64_t> end = AlignedEnd(pol, high, infos[index.at(r)].slot, space);
    if (!end) return false;
    water = std::max(water, high + infos[index.at(r)].slot);
    high = *end;
  }
  *end = high;
  *high_water = water;
  return true;
}

}  // namespace

const char* PlacementStrategyName(PlacementStrategy s) {
  switch (s) {
    case PlacementStrategy::kSequential:
      return "sequential";
    case PlacementStrategy::kGreedy:
      return "greedy";
    case PlacementStrategy::kSearch:
      return "search";
  }
  return "sequential";
}

bool ParsePlacementStrategy(absl::string_view name, PlacementStrategy* out) {
  for (PlacementStrategy s :
       {PlacementStrategy::kSequential, PlacementStrategy::kGreedy, PlacementStrategy::kSearch}) {
    if (name == PlacementStrategyName(s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

ir::MemorySpace ReserveSpace(ir::FunctionType t) {
  return t == ir::FunctionType::kAIC ? ir::MemorySpace::kMat : ir::MemorySpace::kVec;
}

absl::StatusOr<FunctionResult> AllocateMemoryAddrPass::RunOnFunction(
    const ir::FunctionPtr& input) const {
  if (input->type == ir::FunctionType::kOrchestration) return FunctionResult{input, false};
  // Planner strategies place roots by their lifetimes, which is safe only if no root holds two
  // values that conflict (memory-reuse guarantees it, init-memref alone does not), and tight only
  // if yields write their carried root in place (an implicit yield copy keeps the yielded value
  // and the carried root live together). Where either fails, memory-reuse's carry fix-ups run
  // first (unplanned functions only; memory-reuse's own output needs none).
  const bool planner = options_.strategy != PlacementStrategy::kSequential;
  policy::MemoryAllocatorPolicyPtr policy = backends::CreatePolicy(options_.backend.get());
  std::optional<Liveness> liveness;
  if (planner) liveness.emplace(*input);
  ir::FunctionPtr function = input;
  if (planner &&
      (!liveness->copies.empty() || !CheckRootsConflictFree(*input, *liveness, *policy).ok())) {
    function = ApplyCarryFixups(input).function;
    if (function != input) liveness.emplace(*function);
  }
  const std::string& fname = function->name;

  // 1. Reserve buffers.
  const ir::MemorySpace reserve_space = ReserveSpace(function->type);
  ReserveCollector collector;
  collector.VisitFunction(*function);
  const std::vector<const ir::Call*>& reserves = collector.reserves;
  // Resolved ranges so far, disjoint, by begin: each new range is checked against its two
  // neighbours, so n reserves cost O(n log n).
  std::map<int64_t, int64_t> ranges;
  absl::flat_hash_map<const ir::Call*, int64_t> resolved;
  int64_t next_base = 0;
  int64_t reserved_end = 0;
  for (const ir::Call* c : reserves) {
    const std::string name = StringKwarg(*c, "name");
    const int64_t size = IntKwarg(*c, "size", 0);
    if (size <= 0) {
      return FunctionError(
          fname, absl::StrCat("reserve_buffer '", name, "' requires size > 0, got ", size));
    }
    const int64_t requested = IntKwarg(*c, "base", -1);
    if (requested < -1) {
      return FunctionError(
          fname, absl::StrCat("reserve_buffer '", name, "' base must be >= 0 or -1 (AUTO), got ",
                              requested));
    }
    const int64_t base = requested >= 0 ? requested : next_base;
    std::optional<int64_t> aligned_end = AlignedEnd(*policy, base, size, reserve_space);
    if (!aligned_end) {
      return FunctionError(
          fname, absl::StrCat("reserve_buffer '", name, "' at base ", base, " with size ", size,
                              " ends past the largest 64-bit address"));
    }
    const int64_t end = *aligned_end;
    auto after = ranges.lower_bound(base);
    auto clash = ranges.end();
    if (after != ranges.end() && after->first < end) clash = after;
    if (after != ranges.begin() && std::prev(after)->second > base) clash = std::prev(after);
    if (clash != ranges.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("overlapping reserve_buffer ranges in function '", fname, "': [", base, ", ",
                       end, ") overlaps with [", clash->first, ", ", clash->second, ")"));
    }
    ranges.emplace(base, end);
    resolved[c] = base;
    next_base = std::max(next_base, end);
    reserved_end = std::max(reserved_end, end);
  }
  const int64_t floor = reserved_end;  // already aligned for the reserve space

  // 2. Roots and slots, per space.
  std::vector<RootInfo> infos;
  absl::flat_hash_map<const MemRef*, size_t> index;
  auto note = [&](const MemRefPtr& m) {
    if (m == nullptr) return;
    const MemRef* root = m->root();
    auto it = index.find(root);
    if (it == index.end()) {
      it = index.emplace(root, infos.size()).first;
      infos.push_back({m->root_ptr(), root->size()});
    }
    RootInfo& info = infos[it->second];
    info.slot = std::max(info.slot, m->end_offset());
  };
  ir::ForEachDef(*function, [&](const ir::Var& v) { note(ir::MemRefOf(*v.type)); });

  std::map<int, std::vector<MemRefPtr>> by_space;
  for (const RootInfo& info : infos) {
    by_space[static_cast<int>(info.root->space())].push_back(info.root);
  }
  if (!reserves.empty()) by_space[static_cast<int>(reserve_space)];  // capacity check too
  absl::flat_hash_map<const MemRef*, std::pair<int64_t, int64_t>> life;
  if (planner) {
    for (const RootLifetime& l : ComputeRootLifetimes(*liveness)) {
      life[l.root] = {l.start, l.end};
    }
  }
  absl::flat_hash_map<const MemRef*, int64_t> addr;
  for (auto& [space_index, refs] : by_space) {
    const auto space = static_cast<ir::MemorySpace>(space_index);
    if (!policy->ShouldAllocate(space)) continue;
    policy->OrderMemRefs(refs);
    const int64_t start = space == reserve_space ? floor : 0;
    int64_t cursor = start;
    int64_t water = start;  // unaligned high-water mark of the sequential placement
    for (const MemRefPtr& r : refs) {
      addr[r.get()] = cursor;
      const int64_t slot = infos[index[r.get()]].slot;
      std::optional<int64_t> next = AlignedEnd(*policy, cursor, slot, space);
      if (!next) {
        return FunctionError(fname, absl::StrCat(ir::MemorySpaceName(space), " buffer '", r->name(),
                                                 "' of ", slot, " bytes at address ", cursor,
                                                 " ends past the largest 64-bit address"));
      }
      water = cursor + slot;  // <= *next, so no overflow
      cursor = *next;
    }
    if (options_.strategy != PlacementStrategy::kSequential && !refs.empty()) {
      absl::flat_hash_map<const MemRef*, int64_t> planned;
      int64_t planned_end = 0, planned_water = 0;
      // The plan is kept only when it uses no more bytes than the sequential one.
      if (PlanByLifetime(refs, infos, index, life, start, space, *policy, options_, &planned,
                         &planned_end, &planned_water) &&
          planned_water <= water && planned_end <= cursor) {
        for (const auto& [root, a] : planned) addr[root] = a;
        cursor = planned_end;
      }
    }
    const int64_t limit = backends::MemSize(options_.backend.get(), space);
    if (limit != 0 && cursor > limit) {
      std::string msg = absl::StrCat(ir::MemorySpaceName(space), " buffer usage (", cursor,
                                     " bytes) exceeds platform limit (", limit, " bytes)");
      if (start > 0) {
        absl::StrAppend(&msg, ". The first ", start,
                        " bytes of that space are reserved by system.reserve_buffer, so tiles "
                        "are allocated above them");
      }
      return FunctionError(fname, msg);
    }
  }

  // 3. Rewrite: new roots, views on them, alloc statements, reserve bases.
  AddressWriter writer(resolved);
  for (const auto& [root, a] : addr) {
    if (a != root->addr()) writer.RemapMemRef(root, root->WithAddr(a));
  }
  ir::FunctionPtr out = writer.MutateFunction(function);
  return FunctionResult{out, out != input};
}

PassPtr CreateAllocateMemoryAddrPass(const AllocateMemoryAddrOptions& options) {
  return std::make_unique<AllocateMemoryAddrPass>(options);
}

}  // namespace passes
}  // namespace accelmem
