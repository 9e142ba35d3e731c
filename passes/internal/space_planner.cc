#include "passes/internal/space_planner.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/checked_math.h"
#include "ir/visitor.h"
#include "policy/dsa_validator.h"
#include "policy/lifetime_planner.h"
#include "policy/placement_checker.h"

namespace accelmem {
namespace passes {
namespace internal {
namespace {

using ir::MemRef;
using ir::MemRefPtr;

// Offsets by buffer id of `problem` from root addresses (0 for a root without one).
std::vector<uint64_t> OffsetsById(const MemoryProblem& problem, const RootAddresses& addr) {
  std::vector<uint64_t> out(problem.buffers.size(), 0);
  for (size_t i = 0; i < out.size(); ++i) {
    auto it = addr.find(problem.buffers[i].root);
    if (it != addr.end() && it->second >= 0) out[i] = static_cast<uint64_t>(it->second);
  }
  return out;
}

// Whether `offsets` is a valid plan of `pool`, capacity aside: every constraint of the function's
// problem (the in-place rule included, as exact_or_disjoint pairs) by policy/dsa_validator, which
// shares no code with the planners.
bool ValidInPool(const MemoryProblem& problem, uint32_t pool,
                 const std::vector<uint64_t>& offsets) {
  std::vector<uint32_t> ids;
  policy::DsaProblem sub = policy::RestrictDsaProblemToPool(problem.document.problem, pool, &ids);
  // Capacity is the candidates' first criterion, not a validity rule.
  for (policy::DsaPool& pl : sub.pools) pl.capacity.reset();
  std::vector<policy::DsaPlacement> placements;
  for (size_t i = 0; i < ids.size(); ++i) {
    placements.push_back({static_cast<uint32_t>(i), pool, offsets[ids[i]]});
  }
  return policy::CheckDsaSolution(sub, placements).ok();
}

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

// What one space's planning works on.
struct Space {
  ir::MemorySpace space;
  const std::vector<MemRefPtr>& refs;  // in the policy's order
  int64_t start;
  const FunctionPlanning& function;
  const SpacePlanOptions& options;
  const policy::MemoryAllocatorPolicy& policy() const { return *options.policy; }
  int64_t slot(const MemRef* r) const { return function.roots->slot(r); }
};

// A plan of a space with its unaligned high-water mark (the last byte in use, plus one).
struct Placed {
  SpacePlan plan;
  int64_t water = 0;
};

// Upstream's placement: the roots one after another from the start, each at the aligned end of
// the one before.
absl::StatusOr<Placed> PlanSequential(const Space& s) {
  Placed out;
  int64_t cursor = s.start;
  out.water = s.start;
  for (const MemRefPtr& r : s.refs) {
    out.plan.addr[r.get()] = cursor;
    const int64_t slot = s.slot(r.get());
    std::optional<int64_t> next = AlignedEnd(s.policy(), cursor, slot, s.space);
    if (!next) {
      return absl::InvalidArgumentError(
          absl::StrCat(ir::MemorySpaceName(s.space), " buffer '", r->name(), "' of ", slot,
                       " bytes at address ", cursor, " ends past the largest 64-bit address"));
    }
    out.water = cursor + slot;  // <= *next, so no overflow
    cursor = *next;
  }
  out.plan.end = cursor;
  return out;
}

// The lifetime planner's placement (policy::PlanPlacement in `mode`) of the roots above the
// start, roots no tile value lives in stacked above it; nullopt when it is not usable (the policy
// aligns differently from a fixed multiple, the planner fails, or an address overflows).
std::optional<Placed> PlanByLifetime(const Space& s, policy::PlannerMode mode) {
  std::vector<policy::PlacementBuffer> buffers;
  std::vector<const MemRef*> placed, unused;
  for (const MemRefPtr& r : s.refs) {
    auto it = s.function.life->find(r.get());
    if (it == s.function.life->end()) {
      unused.push_back(r.get());  // no tile value lives in it: stacked above the plan
      continue;
    }
    placed.push_back(r.get());
    buffers.push_back({r->name(), it->second.first,
                       std::max(it->second.second, it->second.first + 1), s.slot(r.get())});
  }
  policy::PlannerOptions po;
  po.mode = mode;
  po.alignment = std::max<int64_t>(1, static_cast<int64_t>(s.policy().AlignAddress(1, s.space)));
  po.budget = s.options.budget;
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
      return std::nullopt;
    } else {
      for (size_t a : shifted) ++buffers[a].end;
    }
    // Repairs re-plan greedily: a search would spend its whole budget again every round.
    po.mode = policy::PlannerMode::kGreedy;
    plan = policy::PlanPlacement(buffers, po);
  }
  if (!plan.ok()) return std::nullopt;
  std::vector<int64_t> offsets = plan->offsets;
  // An already planned function keeps its plan while it is valid: running the pass again must not
  // move buffers (a time-budgeted search ends wherever the clock stops it). To re-plan, reset the
  // addresses to -1 first.
  std::vector<int64_t> old(placed.size());
  bool all_planned = !placed.empty();
  for (size_t i = 0; i < placed.size() && all_planned; ++i) {
    all_planned = placed[i]->addr() >= s.start;
    if (all_planned) old[i] = placed[i]->addr() - s.start;
  }
  if (all_planned) {
    policy::PlacementLimits limits;
    limits.alignment = po.alignment;
    if (ShiftedInPlacePairs(buffers, old).empty() &&
        policy::CheckPlacement(buffers, old, limits).ok()) {
      offsets = std::move(old);
    }
  }
  Placed out;
  int64_t high = s.start;  // aligned
  out.water = s.start;
  for (size_t i = 0; i < placed.size(); ++i) {
    std::optional<int64_t> a = ir::CheckedAdd(s.start, offsets[i]);
    if (!a || offsets[i] < 0 || Align(s.policy(), *a, s.space) != a) return std::nullopt;
    out.plan.addr[placed[i]] = *a;
    std::optional<int64_t> end = AlignedEnd(s.policy(), *a, buffers[i].size, s.space);
    if (!end) return std::nullopt;
    high = std::max(high, *end);
    out.water = std::max(out.water, *a + buffers[i].size);
  }
  for (const MemRef* r : unused) {
    out.plan.addr[r] = high;
    std::optional<int64_t> end = AlignedEnd(s.policy(), high, s.slot(r), s.space);
    if (!end) return std::nullopt;
    out.water = std::max(out.water, high + s.slot(r));
    high = *end;
  }
  out.plan.end = high;
  return out;
}

// PlanByLifetime, where the space separates layouts once per layout class (in the order of
// RootSlots::layouts: roots without tiles, ND, NZ, then roots holding both, which
// verify_memory_plan rejects), each class in the address range above the one before, with the
// search budget shared among them. Roots of two classes never overlap; the price is that they
// never share bytes either, which is the rule.
std::optional<Placed> PlanByLifetimeSeparated(const Space& s, policy::PlannerMode mode) {
  if (!s.options.separate_layouts) return PlanByLifetime(s, mode);
  std::map<int, std::vector<MemRefPtr>> classes;
  for (const MemRefPtr& r : s.refs) classes[s.function.roots->layouts(r.get())].push_back(r);
  if (classes.size() <= 1) return PlanByLifetime(s, mode);
  SpacePlanOptions options = s.options;
  options.budget = s.options.budget / static_cast<int64_t>(classes.size());
  Placed out;
  out.water = s.start;
  int64_t start = s.start;
  for (const auto& [layouts, refs] : classes) {
    const Space sub{s.space, refs, start, s.function, options};
    std::optional<Placed> part = PlanByLifetime(sub, mode);
    if (!part) return std::nullopt;
    for (const auto& [root, a] : part->plan.addr) out.plan.addr[root] = a;
    out.water = std::max(out.water, part->water);
    start = part->plan.end;
  }
  out.plan.end = start;
  return out;
}

// kGreedy and kSearch: the lifetime planner's plan when it uses no more bytes than the
// sequential one.
absl::StatusOr<SpacePlan> PlanLifetime(const Space& s, Placed sequential) {
  if (s.refs.empty()) return std::move(sequential.plan);
  const policy::PlannerMode mode = s.options.strategy == PlacementStrategy::kSearch
                                       ? policy::PlannerMode::kSearch
                                       : policy::PlannerMode::kGreedy;
  std::optional<Placed> planned = PlanByLifetimeSeparated(s, mode);
  if (!planned || planned->water > sequential.water || planned->plan.end > sequential.plan.end) {
    return std::move(sequential.plan);
  }
  planned->plan.method = PlacementStrategyName(s.options.strategy);
  return std::move(planned->plan);
}

// Candidate plans of a space under the function's problem, validated, with the choice among
// them.
class Candidates {
 public:
  explicit Candidates(const Space& s) : s_(s), pool_(static_cast<uint32_t>(s.space)) {}

  // Adds `plan` (its method set) when it is valid in the pool under the true rules.
  void Add(SpacePlan plan) {
    const MemoryProblem& mp = *s_.function.problem;
    const std::vector<uint64_t> offsets = OffsetsById(mp, plan.addr);
    if (!ValidInPool(mp, pool_, offsets)) return;
    plan.reuse_cost = policy::DsaPoolReuseCost(mp.document.problem, pool_, offsets);
    plans_.push_back(std::move(plan));
  }

  // Adds the plan of `offsets` (by buffer id), roots without a buffer stacked above it; nothing
  // when `offsets` is empty, an address is not aligned for the policy or overflows.
  void AddOffsets(const char* method, const std::vector<uint64_t>& offsets) {
    if (offsets.empty()) return;
    const MemoryProblem& mp = *s_.function.problem;
    SpacePlan plan;
    plan.method = method;
    int64_t high = s_.start;
    for (size_t i = 0; i < mp.buffers.size(); ++i) {
      if (mp.buffers[i].space != s_.space) continue;
      const int64_t a = static_cast<int64_t>(offsets[i]);
      if (a < 0 || Align(s_.policy(), a, s_.space) != a) return;
      plan.addr[mp.buffers[i].root] = a;
      std::optional<int64_t> end = AlignedEnd(
          s_.policy(), a, static_cast<int64_t>(mp.document.problem.buffers[i].size), s_.space);
      if (!end) return;
      high = std::max(high, *end);
    }
    for (const MemRef* r : mp.lifeless) {
      if (r->space() != s_.space) continue;
      plan.addr[r] = high;
      std::optional<int64_t> end = AlignedEnd(s_.policy(), high, s_.slot(r), s_.space);
      if (!end) return;
      high = *end;
    }
    plan.end = high;
    Add(std::move(plan));
  }

  // The roots' own addresses when every root has one: an already planned function keeps its plan
  // while it is valid and fits (idempotence: a budget-cut search may end elsewhere on another
  // run). To re-plan, reset the addresses to -1.
  void AddKept() {
    SpacePlan kept;
    kept.method = "constrained";
    kept.end = s_.start;
    for (const MemRefPtr& r : s_.refs) {
      if (r->addr() < 0) return;
      kept.addr[r.get()] = r->addr();
      std::optional<int64_t> e = AlignedEnd(s_.policy(), r->addr(), s_.slot(r.get()), s_.space);
      if (!e) return;
      kept.end = std::max(kept.end, *e);
    }
    Add(std::move(kept));
  }

  bool empty() const { return plans_.empty(); }
  bool FirstFits() const {
    return !plans_.empty() && (s_.options.capacity == 0 || plans_[0].end <= s_.options.capacity);
  }

  // Lexicographic: fits, least reuse cost, least peak; the first of equals (kept, then the
  // planner's own plans). Null when there is none.
  SpacePlan* Best() {
    const int64_t limit = s_.options.capacity;
    auto key = [&](const SpacePlan& c) {
      return std::make_tuple(limit != 0 && c.end > limit, c.reuse_cost, c.end);
    };
    SpacePlan* best = nullptr;
    for (SpacePlan& c : plans_) {
      if (best == nullptr || key(c) < key(*best)) best = &c;
    }
    return best;
  }

 private:
  const Space& s_;
  const uint32_t pool_;
  std::vector<SpacePlan> plans_;
};

absl::Status NoValidPlan(ir::MemorySpace space) {
  return absl::InvalidArgumentError(absl::StrCat("no valid ", ir::MemorySpaceName(space),
                                                 " plan: even the sequential one breaks a "
                                                 "constraint of the problem"));
}

// kConstrained: the best valid plan among the kept one (while it fits), the constrained
// planner's, the greedy and the sequential one; its status says whether it is proven optimal.
absl::StatusOr<SpacePlan> PlanConstrained(const Space& s, Placed sequential) {
  if (s.refs.empty() || !s.function.prepared) return std::move(sequential.plan);
  Candidates candidates(s);
  candidates.AddKept();
  if (!candidates.FirstFits()) {
    candidates.AddOffsets("constrained", s.function.constrained.offsets);
    if (std::optional<Placed> greedy = PlanByLifetimeSeparated(s, policy::PlannerMode::kGreedy)) {
      greedy->plan.method = "greedy";
      candidates.Add(std::move(greedy->plan));
    }
    candidates.Add(std::move(sequential.plan));
  }
  SpacePlan* best = candidates.Best();
  if (best == nullptr) return NoValidPlan(s.space);
  const MemoryProblem& mp = *s.function.problem;
  const uint32_t pool = static_cast<uint32_t>(s.space);
  const policy::PoolResult* pr = nullptr;
  if (s.function.constrained.result.ok()) {
    for (const policy::PoolResult& r : s.function.constrained.result->pools) {
      if (r.pool == pool) pr = &r;
    }
  }
  if (pr != nullptr) {
    best->reuse_lower_bound = pr->reuse_lower_bound;
    // The planner's optimum, or a plan as good under the objective, is optimal.
    const uint64_t peak =
        policy::DsaPoolPeak(mp.document.problem, pool, OffsetsById(mp, best->addr));
    best->status = pr->status == policy::ConstrainedStatus::kOptimal &&
                           best->reuse_cost == pr->reuse_cost && peak <= pr->peak
                       ? "optimal"
                       : "feasible";
    best->no_fit = pr->status == policy::ConstrainedStatus::kInfeasible
                       ? absl::StrCat("no fit is proven: ", pr->reason)
                       : "no fit was found within the planner's budget; it is not proven that "
                         "none exists";
  }
  return std::move(*best);
}

// kReplay: the replayed offsets, checked once more against this space's rules.
absl::StatusOr<SpacePlan> PlanReplay(const Space& s, Placed sequential) {
  if (s.refs.empty() || !s.function.prepared) return std::move(sequential.plan);
  Candidates candidates(s);
  candidates.AddOffsets("replay", s.function.replayed);
  if (candidates.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("the replayed ", ir::MemorySpaceName(s.space),
                                                   " addresses are not aligned for the target"));
  }
  SpacePlan* best = candidates.Best();
  best->status = "replayed";
  return std::move(*best);
}

absl::StatusOr<SpacePlan> KeepSequential(const Space&, Placed sequential) {
  return std::move(sequential.plan);
}

// One row per strategy: its name and how it plans a space from the sequential placement.
struct StrategyRow {
  PlacementStrategy strategy;
  const char* name;
  absl::StatusOr<SpacePlan> (*plan)(const Space&, Placed sequential);
};
constexpr StrategyRow kStrategies[] = {
    {PlacementStrategy::kSequential, "sequential", KeepSequential},
    {PlacementStrategy::kGreedy, "greedy", PlanLifetime},
    {PlacementStrategy::kSearch, "search", PlanLifetime},
    {PlacementStrategy::kConstrained, "constrained", PlanConstrained},
    {PlacementStrategy::kReplay, "replay", PlanReplay},
};

const StrategyRow& RowOf(PlacementStrategy s) {
  for (const StrategyRow& row : kStrategies) {
    if (row.strategy == s) return row;
  }
  return kStrategies[0];
}

}  // namespace

RootSlots::RootSlots(const ir::Function& function) {
  ir::ForEachDef(function, [&](const ir::Var& v) {
    const ir::MemRefPtr m = ir::MemRefOf(*v.type);
    if (m == nullptr) return;
    auto [it, added] = slots_.emplace(m->root(), m->root()->size());
    if (added) roots_.push_back(m->root_ptr());
    it->second = std::max(it->second, m->end_offset());
    int& layouts = layouts_[m->root()];
    if (const ir::TileType* t = ir::AsTile(v.type)) {
      layouts |= 1 << static_cast<int>(t->layout.value_or(ir::TileLayout::kND));
    }
  });
}

ConstrainedPlan SolveFunctionProblem(const MemoryProblem& problem, absl::Duration budget) {
  ConstrainedPlan out;
  policy::ConstrainedOptions co;
  co.budget = budget;
  co.relax_pipeline_when_infeasible = false;  // no pipeline groups here
  out.result = policy::SolveConstrained(problem.document.problem, co);
  if (out.result.ok() && out.result->placements.size() == problem.buffers.size()) {
    out.offsets.resize(problem.buffers.size());
    for (const policy::DsaPlacement& pl : out.result->placements)
      out.offsets[pl.buffer] = pl.offset;
  }
  return out;
}

absl::Status PrepareFunctionPlanning(
    PlacementStrategy strategy, absl::Duration budget,
    const std::map<std::string, policy::DsaSolutionDocument>* replay, FunctionPlanning* f) {
  const MemoryProblem& problem = *f->problem;
  if (strategy == PlacementStrategy::kConstrained) {
    f->constrained = SolveFunctionProblem(problem, budget);
    if (!f->constrained.result.ok()) {
      return absl::InvalidArgumentError(f->constrained.result.status().message());
    }
  } else if (strategy == PlacementStrategy::kReplay) {
    const std::string& instance = problem.document.instance;
    const policy::DsaSolutionDocument* solution = nullptr;
    if (replay != nullptr) {
      auto it = replay->find(instance);
      if (it != replay->end()) solution = &it->second;
    }
    if (solution == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the replayed solutions have none for this function (instance '", instance, "')"));
    }
    if (absl::Status s = policy::CheckDsaSolutionDocument(problem.document, *solution); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the replayed solution does not solve the function's problem: ", s.message()));
    }
    f->replayed.assign(problem.buffers.size(), 0);
    for (const policy::DsaPlacement& pl : solution->placements) f->replayed[pl.buffer] = pl.offset;
  } else {
    return absl::OkStatus();
  }
  f->prepared = true;
  return absl::OkStatus();
}

absl::StatusOr<SpacePlan> PlanSpace(ir::MemorySpace space, std::vector<ir::MemRefPtr> refs,
                                    int64_t start, const FunctionPlanning& function,
                                    const SpacePlanOptions& options) {
  options.policy->OrderMemRefs(refs);
  const Space s{space, refs, start, function, options};
  absl::StatusOr<Placed> sequential = PlanSequential(s);
  if (!sequential.ok()) return sequential.status();
  absl::StatusOr<SpacePlan> plan = RowOf(options.strategy).plan(s, *std::move(sequential));
  if (plan.ok() && function.problem != nullptr) {
    const MemoryProblem& mp = *function.problem;
    plan->reuse_cost = policy::DsaPoolReuseCost(mp.document.problem, static_cast<uint32_t>(space),
                                                OffsetsById(mp, plan->addr));
  }
  return plan;
}

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

std::optional<int64_t> AlignedEnd(const policy::MemoryAllocatorPolicy& policy, int64_t a, int64_t b,
                                  ir::MemorySpace space) {
  std::optional<int64_t> end = ir::CheckedAdd(a, b);
  return end ? Align(policy, *end, space) : std::nullopt;
}

}  // namespace internal

const char* PlacementStrategyName(PlacementStrategy s) { return internal::RowOf(s).name; }

bool ParsePlacementStrategy(absl::string_view name, PlacementStrategy* out) {
  for (const internal::StrategyRow& row : internal::kStrategies) {
    if (name == row.name) {
      *out = row.strategy;
      return true;
    }
  }
  return false;
}

}  // namespace passes
}  // namespace accelmem
