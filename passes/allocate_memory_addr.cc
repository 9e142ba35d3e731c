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
#include "passes/carry_fixups.h"
#include "passes/liveness.h"
#include "passes/memory_problem.h"
#include "policy/constrained_planner.h"
#include "policy/dsa_validator.h"
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

// One candidate plan of a space: root addresses, its aligned end (lifeless roots stacked above)
// and its cost.
struct Candidate {
  std::string method;
  absl::flat_hash_map<const MemRef*, int64_t> addr;
  int64_t end = 0;
  uint64_t reuse = 0;
};

// Addresses of the roots of `space` from `offsets`, lifeless roots stacked above them; false
// when an address is not aligned for the policy or overflows.
bool CandidateFromOffsets(const MemoryProblem& problem, ir::MemorySpace space,
                          const std::vector<uint64_t>& offsets, const std::vector<RootInfo>& infos,
                          const absl::flat_hash_map<const MemRef*, size_t>& index, int64_t floor,
                          const policy::MemoryAllocatorPolicy& pol, Candidate* c) {
  int64_t high = floor;
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    if (problem.buffers[i].space != space) continue;
    const int64_t a = static_cast<int64_t>(offsets[i]);
    if (a < 0 || Align(pol, a, space) != a) return false;
    c->addr[problem.buffers[i].root] = a;
    std::optional<int64_t> end =
        AlignedEnd(pol, a, static_cast<int64_t>(problem.document.problem.buffers[i].size), space);
    if (!end) return false;
    high = std::max(high, *end);
  }
  for (const MemRef* r : problem.lifeless) {
    if (r->space() != space) continue;
    c->addr[r] = high;
    std::optional<int64_t> end = AlignedEnd(pol, high, infos[index.at(r)].slot, space);
    if (!end) return false;
    high = *end;
  }
  c->end = high;
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
    case PlacementStrategy::kConstrained:
      return "constrained";
    case PlacementStrategy::kReplay:
      return "replay";
  }
  return "sequential";
}

bool ParsePlacementStrategy(absl::string_view name, PlacementStrategy* out) {
  for (PlacementStrategy s :
       {PlacementStrategy::kSequential, PlacementStrategy::kGreedy, PlacementStrategy::kSearch,
        PlacementStrategy::kConstrained, PlacementStrategy::kReplay}) {
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
  // The schema-v1 problem (kConstrained, kReplay, the hooks, a capacity error's diagnosis) is
  // built from the same fixed-up function.
  const PlacementStrategy strategy = options_.strategy;
  const bool planner = strategy != PlacementStrategy::kSequential;
  const bool constrained = strategy == PlacementStrategy::kConstrained;
  const bool replay = strategy == PlacementStrategy::kReplay;
  policy::MemoryAllocatorPolicyPtr policy = backends::CreatePolicy(options_.backend.get());
  std::optional<Liveness> liveness;
  ir::FunctionPtr fixed = input;
  auto prepare = [&] {
    if (liveness) return;
    liveness.emplace(*input);
    if (!liveness->copies.empty() || !CheckRootsConflictFree(*input, *liveness, *policy).ok()) {
      fixed = ApplyCarryFixups(input).function;
      if (fixed != input) liveness.emplace(*fixed);
    }
  };
  if (planner) prepare();
  ir::FunctionPtr function = planner ? fixed : input;
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

  std::optional<MemoryProblem> problem;
  auto get_problem = [&]() -> const MemoryProblem& {
    if (!problem) {
      prepare();
      MemoryProblemOptions mo;
      mo.policy = policy.get();
      mo.backend = options_.backend.get();
      mo.reserve_space = reserve_space;
      for (const auto& [b, e] : ranges) {
        mo.reserved.push_back({static_cast<uint64_t>(b), static_cast<uint64_t>(e)});
      }
      if (options_.backend != nullptr) mo.backend_name = options_.backend->Name();
      problem = BuildMemoryProblem(*fixed, *liveness, mo);
    }
    return *problem;
  };
  if (constrained || replay || options_.on_problem || options_.on_stats || options_.export_only) {
    get_problem();
  }
  // A function with nothing to place in a planned space has no problem to export or solve.
  const bool has_pools = problem && !problem->document.problem.pools.empty();
  if (options_.on_problem && has_pools) options_.on_problem(problem->document);
  if (options_.export_only) return FunctionResult{input, false};
  ConstrainedPlans plans;
  std::optional<policy::DsaProblem> relaxed;
  std::vector<uint64_t> replayed;
  if ((constrained || replay) && has_pools) {
    // Reserves past the capacity: nothing can fit (and the problem would be malformed).
    const int64_t limit = backends::MemSize(options_.backend.get(), reserve_space);
    if (limit != 0 && reserved_end > limit) {
      return FunctionError(
          fname, absl::StrCat(ir::MemorySpaceName(reserve_space), " buffer usage (", reserved_end,
                              " bytes) exceeds platform limit (", limit,
                              " bytes): the system.reserve_buffer ranges alone end there; no fit "
                              "is proven"));
    }
  }
  if (constrained && has_pools) {
    plans = SolveFunctionProblem(*problem, options_.budget);
    if (!plans.relaxed.ok()) return FunctionError(fname, plans.relaxed.status().message());
    relaxed = WithoutInPlaceSeparations(*problem);
  }
  if (replay && has_pools) {
    const policy::DsaSolutionDocument* solution = nullptr;
    if (options_.replay != nullptr) {
      auto it = options_.replay->find(fname);
      if (it != options_.replay->end()) solution = &it->second;
    }
    if (solution == nullptr) {
      return FunctionError(
          fname, "the replayed solutions have none for this function (instance '" + fname + "')");
    }
    if (absl::Status s = policy::CheckDsaSolutionDocument(problem->document, *solution); !s.ok()) {
      return FunctionError(fname, absl::StrCat("the replayed solution does not solve the "
                                               "function's problem: ",
                                               s.message()));
    }
    replayed.assign(problem->buffers.size(), 0);
    for (const policy::DsaPlacement& pl : solution->placements) replayed[pl.buffer] = pl.offset;
    relaxed = WithoutInPlaceSeparations(*problem);
  }
  std::vector<SpacePlanStats> stats;

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
    std::string method = "sequential";
    std::string status = "heuristic";
    uint64_t reuse_lower_bound = 0;
    std::string no_fit;  // why nothing fits, when the plan is over capacity
    const int64_t limit = backends::MemSize(options_.backend.get(), space);
    if ((strategy == PlacementStrategy::kGreedy || strategy == PlacementStrategy::kSearch) &&
        !refs.empty()) {
      absl::flat_hash_map<const MemRef*, int64_t> planned;
      int64_t planned_end = 0, planned_water = 0;
      // The plan is kept only when it uses no more bytes than the sequential one.
      if (PlanByLifetime(refs, infos, index, life, start, space, *policy, options_, &planned,
                         &planned_end, &planned_water) &&
          planned_water <= water && planned_end <= cursor) {
        for (const auto& [root, a] : planned) addr[root] = a;
        cursor = planned_end;
        method = PlacementStrategyName(strategy);
      }
    }
    if ((constrained || replay) && !refs.empty() && relaxed.has_value()) {
      const MemoryProblem& mp = *problem;
      const uint32_t pool = static_cast<uint32_t>(space);
      std::vector<Candidate> candidates;
      auto add = [&](Candidate c) {
        const std::vector<uint64_t> offsets = OffsetsById(mp, c.addr);
        if (!ValidInPool(mp, *relaxed, pool, offsets)) return;
        c.reuse = PoolReuseCost(mp, pool, offsets);
        candidates.push_back(std::move(c));
      };
      auto from_offsets = [&](const char* name, const std::vector<uint64_t>& offsets) {
        Candidate c;
        c.method = name;
        if (!offsets.empty() &&
            CandidateFromOffsets(mp, space, offsets, infos, index, start, *policy, &c)) {
          add(std::move(c));
        }
      };
      if (replay) {
        from_offsets("replay", replayed);
        if (candidates.empty()) {
          return FunctionError(fname, absl::StrCat("the replayed ", ir::MemorySpaceName(space),
                                                   " addresses are not aligned for the target"));
        }
      } else {
        // An already planned function keeps its plan while it is valid and fits (idempotence:
        // a budget-cut search may end elsewhere on another run). To re-plan, reset the
        // addresses to -1.
        bool all_planned = true;
        Candidate kept;
        kept.method = "constrained";
        kept.end = start;
        for (const MemRefPtr& r : refs) {
          all_planned = all_planned && r->addr() >= 0;
          if (!all_planned) break;
          kept.addr[r.get()] = r->addr();
          std::optional<int64_t> e =
              AlignedEnd(*policy, r->addr(), infos[index[r.get()]].slot, space);
          if (!e)
            all_planned = false;
          else
            kept.end = std::max(kept.end, *e);
        }
        if (all_planned) add(std::move(kept));
        const bool keep_old = !candidates.empty() && (limit == 0 || candidates[0].end <= limit);
        if (!keep_old) {
          from_offsets("constrained", plans.relaxed_offsets);
          from_offsets("constrained", plans.strict_offsets);
          Candidate greedy;
          greedy.method = "greedy";
          AllocateMemoryAddrOptions greedy_options = options_;
          greedy_options.strategy = PlacementStrategy::kGreedy;
          int64_t greedy_water = 0;
          if (PlanByLifetime(refs, infos, index, life, start, space, *policy, greedy_options,
                             &greedy.addr, &greedy.end, &greedy_water)) {
            add(std::move(greedy));
          }
          Candidate sequential;
          sequential.method = "sequential";
          sequential.end = cursor;
          for (const MemRefPtr& r : refs) sequential.addr[r.get()] = addr[r.get()];
          add(std::move(sequential));
        }
      }
      // Lexicographic: fits, least reuse cost, least peak; the first of equals (kept, then the
      // planner's own plans).
      auto key = [&](const Candidate& c) {
        return std::make_tuple(limit != 0 && c.end > limit, c.reuse, c.end);
      };
      const Candidate* best = nullptr;
      for (const Candidate& c : candidates) {
        if (best == nullptr || key(c) < key(*best)) best = &c;
      }
      if (best == nullptr) {
        return FunctionError(fname, absl::StrCat("no valid ", ir::MemorySpaceName(space),
                                                 " plan: even the sequential one breaks a "
                                                 "constraint of the problem"));
      }
      for (const auto& [root, a] : best->addr) addr[root] = a;
      cursor = best->end;
      method = best->method;
      if (replay) {
        status = "replayed";
      } else {
        const policy::PoolResult* pr = nullptr;
        if (plans.relaxed.ok()) {
          for (const policy::PoolResult& r : plans.relaxed->pools) {
            if (r.pool == pool) pr = &r;
          }
        }
        if (pr != nullptr) {
          reuse_lower_bound = pr->reuse_lower_bound;
          // The relaxation's optimum reached under the true rules is optimal for them too.
          const uint64_t peak = PoolPeakBytes(mp, pool, OffsetsById(mp, best->addr));
          status = pr->status == policy::ConstrainedStatus::kOptimal &&
                           best->reuse == pr->reuse_cost && peak <= pr->peak
                       ? "optimal"
                       : "feasible";
          if (pr->status == policy::ConstrainedStatus::kInfeasible) {
            no_fit = absl::StrCat("no fit is proven: ", pr->reason);
          } else {
            no_fit =
                "no fit was found within the planner's budget; it is not proven that none "
                "exists";
          }
        }
      }
    }
    if (limit != 0 && cursor > limit) {
      std::string msg = absl::StrCat(ir::MemorySpaceName(space), " buffer usage (", cursor,
                                     " bytes) exceeds platform limit (", limit, " bytes)");
      if (start > 0 && !constrained) {
        absl::StrAppend(&msg, ". The first ", start,
                        " bytes of that space are reserved by system.reserve_buffer, so tiles "
                        "are allocated above them");
      }
      const MemoryProblem& mp = get_problem();
      const PoolPeak peak = ComputePoolPeak(mp, static_cast<uint32_t>(space));
      absl::StrAppend(&msg, "; ", DescribePoolPeak(mp, static_cast<uint32_t>(space)), "; ");
      if (peak.load > static_cast<uint64_t>(limit)) {
        absl::StrAppend(&msg, "no fit is proven: LOAD exceeds the capacity");
      } else if (!no_fit.empty()) {
        absl::StrAppend(&msg, no_fit);
      } else {
        absl::StrAppend(&msg, "it is not proven that nothing fits: the ",
                        PlacementStrategyName(strategy),
                        " placement found none (--planner=constrained searches and proves)");
      }
      return FunctionError(fname, msg);
    }
    if (options_.on_stats) {
      const MemoryProblem& mp = *problem;
      SpacePlanStats st;
      st.function = fname;
      st.space = space;
      st.peak = cursor;
      st.load = static_cast<int64_t>(ComputePoolPeak(mp, static_cast<uint32_t>(space)).load);
      st.capacity = limit;
      st.reuse_cost = PoolReuseCost(mp, static_cast<uint32_t>(space), OffsetsById(mp, addr));
      st.reuse_lower_bound = reuse_lower_bound;
      st.status = status;
      st.method = method;
      stats.push_back(std::move(st));
    }
  }

  // 3. Rewrite: new roots, views on them, alloc statements, reserve bases.
  AddressWriter writer(resolved);
  for (const auto& [root, a] : addr) {
    if (a != root->addr()) writer.RemapMemRef(root, root->WithAddr(a));
  }
  ir::FunctionPtr out = writer.MutateFunction(function);
  if (options_.on_stats) {
    for (const SpacePlanStats& st : stats) options_.on_stats(st);
  }
  return FunctionResult{out, out != input};
}

PassPtr CreateAllocateMemoryAddrPass(const AllocateMemoryAddrOptions& options) {
  return std::make_unique<AllocateMemoryAddrPass>(options);
}

}  // namespace passes
}  // namespace accelmem
