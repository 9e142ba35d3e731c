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
#include "ir/mutator.h"
#include "ir/visitor.h"
#include "passes/carry_fixups.h"
#include "passes/internal/space_planner.h"
#include "passes/liveness.h"
#include "passes/memory_problem.h"
#include "policy/memory_allocator_policy.h"

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

// The function the planners and the problem see, with its liveness: the input, or where a root
// holds two values that conflict or a yield copies into its carried root, the input after
// memory-reuse's carry fix-ups (see allocate_memory_addr.h). Computed on first use: the sequential
// strategy needs it only for a hook or a capacity error's diagnosis.
class FixedFunction {
 public:
  FixedFunction(ir::FunctionPtr input, const policy::MemoryAllocatorPolicy& policy,
                const backends::Backend* backend)
      : input_(std::move(input)), policy_(policy), backend_(backend) {}
  const ir::FunctionPtr& function() {
    Compute();
    return fixed_;
  }
  const Liveness& liveness() {
    Compute();
    return *liveness_;
  }

 private:
  void Compute() {
    if (liveness_) return;
    fixed_ = input_;
    liveness_.emplace(*input_);
    if (!liveness_->copies.empty() || !CheckRootsConflictFree(*input_, *liveness_, policy_).ok()) {
      fixed_ = ApplyCarryFixups(input_, backend_).function;
      if (fixed_ != input_) liveness_.emplace(*fixed_);
    }
  }

  const ir::FunctionPtr input_;
  const policy::MemoryAllocatorPolicy& policy_;
  const backends::Backend* backend_;  // its layout rule for the carry merges
  ir::FunctionPtr fixed_;
  std::optional<Liveness> liveness_;
};

// The resolved system.reserve_buffer ranges of a function.
struct Reserves {
  std::map<int64_t, int64_t> ranges;  // disjoint [begin, aligned end), by begin
  absl::flat_hash_map<const ir::Call*, int64_t> resolved;  // each call's base
  int64_t end = 0;  // the highest aligned end: tiles of the reserve space start there
};

// Step 1 of the pass (allocate_memory_addr.h): each reserve call in statement order takes
// [base, align(base + size)) of `space`, AUTO bases the next free address.
absl::StatusOr<Reserves> ResolveReserves(const ir::Function& function,
                                         const policy::MemoryAllocatorPolicy& policy,
                                         ir::MemorySpace space) {
  const std::string& fname = function.name;
  ReserveCollector collector;
  collector.VisitFunction(function);
  Reserves out;
  int64_t next_base = 0;
  // Each new range is checked against its two neighbours, so n reserves cost O(n log n).
  for (const ir::Call* c : collector.reserves) {
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
    std::optional<int64_t> aligned_end = internal::AlignedEnd(policy, base, size, space);
    if (!aligned_end) {
      return FunctionError(
          fname, absl::StrCat("reserve_buffer '", name, "' at base ", base, " with size ", size,
                              " ends past the largest 64-bit address"));
    }
    const int64_t end = *aligned_end;
    auto after = out.ranges.lower_bound(base);
    auto clash = out.ranges.end();
    if (after != out.ranges.end() && after->first < end) clash = after;
    if (after != out.ranges.begin() && std::prev(after)->second > base) clash = std::prev(after);
    if (clash != out.ranges.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("overlapping reserve_buffer ranges in function '", fname, "': [", base, ", ",
                       end, ") overlaps with [", clash->first, ", ", clash->second, ")"));
    }
    out.ranges.emplace(base, end);
    out.resolved[c] = base;
    next_base = std::max(next_base, end);
    out.end = std::max(out.end, end);
  }
  return out;
}

// Step 4: the over-capacity error of `space`, with the peak's program point, LOAD and largest
// buffers, and whether no fit is proven.
absl::Status CapacityError(const std::string& fname, ir::MemorySpace space,
                           const internal::SpacePlan& plan, int64_t start, int64_t limit,
                           PlacementStrategy strategy, const MemoryProblem& problem) {
  std::string msg = absl::StrCat(ir::MemorySpaceName(space), " buffer usage (", plan.end,
                                 " bytes) exceeds platform limit (", limit, " bytes)");
  if (start > 0 && strategy != PlacementStrategy::kConstrained) {
    absl::StrAppend(&msg, ". The first ", start,
                    " bytes of that space are reserved by system.reserve_buffer, so tiles "
                    "are allocated above them");
  }
  const uint32_t pool = static_cast<uint32_t>(space);
  absl::StrAppend(&msg, "; ", DescribePoolPeak(problem, pool), "; ");
  if (ComputePoolPeak(problem, pool).load > static_cast<uint64_t>(limit)) {
    absl::StrAppend(&msg, "no fit is proven: LOAD exceeds the capacity");
  } else if (!plan.no_fit.empty()) {
    absl::StrAppend(&msg, plan.no_fit);
  } else {
    absl::StrAppend(&msg, "it is not proven that nothing fits: the ",
                    PlacementStrategyName(strategy),
                    " placement found none (--planner=constrained searches and proves)");
  }
  return FunctionError(fname, msg);
}

// What on_stats reports of a space's plan (`problem` is the function's).
SpacePlanStats Stats(const std::string& fname, ir::MemorySpace space,
                     const internal::SpacePlan& plan, int64_t capacity,
                     const MemoryProblem& problem) {
  SpacePlanStats st;
  st.function = fname;
  st.space = space;
  st.peak = plan.end;
  st.load = static_cast<int64_t>(ComputePoolPeak(problem, static_cast<uint32_t>(space)).load);
  st.capacity = capacity;
  st.reuse_cost = plan.reuse_cost;
  st.reuse_lower_bound = plan.reuse_lower_bound;
  st.status = plan.status;
  st.method = plan.method;
  return st;
}

// A slotted root is one block of N slots, slot k at its address + k x the slot size; the slot
// size is padded to the space's alignment so that every slot starts aligned, as the root does.
absl::StatusOr<ir::FunctionPtr> PadSlots(const ir::FunctionPtr& f,
                                         const policy::MemoryAllocatorPolicy& policy) {
  absl::flat_hash_map<const MemRef*, MemRefPtr> remap;
  std::string error;
  ir::ForEachDef(*f, [&](const ir::Var& v) {
    const MemRefPtr& m = ir::MemRefOf(*v.type);
    if (m == nullptr || !m->is_slotted() || !policy.ShouldAllocate(m->space()) ||
        remap.contains(m->root())) {
      return;
    }
    const auto slot = static_cast<uint64_t>(m->slot_size());
    const uint64_t aligned = policy.AlignAddress(slot, m->space());
    if (aligned == slot) return;
    std::optional<int64_t> size = ir::CheckedMul(static_cast<int64_t>(aligned), m->slots());
    if (!size && error.empty()) {
      error = absl::StrCat("the ", m->slots(), " slots of MemRef '", m->name(), "' in ",
                           ir::MemorySpaceName(m->space()), ", padded to ", aligned,
                           " bytes each, overflow int64");
    }
    if (size) remap[m->root()] = m->root()->WithAddrAndSize(m->root()->addr(), *size);
  });
  if (!error.empty()) return FunctionError(f->name, error);
  return remap.empty() ? f : ir::RemapMemRefs(f, remap);
}

}  // namespace

ir::MemorySpace ReserveSpace(ir::FunctionType t) {
  return t == ir::FunctionType::kAIC ? ir::MemorySpace::kMat : ir::MemorySpace::kVec;
}

absl::StatusOr<FunctionResult> AllocateMemoryAddrPass::RunOnFunction(
    const ir::FunctionPtr& original) const {
  if (original->type == ir::FunctionType::kOrchestration) return FunctionResult{original, false};
  policy::MemoryAllocatorPolicyPtr policy = backends::CreatePolicy(options_.backend.get());
  absl::StatusOr<ir::FunctionPtr> padded = PadSlots(original, *policy);
  if (!padded.ok()) return padded.status();
  const ir::FunctionPtr& input = *padded;
  // Planner strategies place roots by their lifetimes, which is safe only on the fixed function
  // (FixedFunction). The schema-v1 problem (kConstrained, kReplay, the hooks, a capacity error's
  // diagnosis) is built from the same fixed function.
  const PlacementStrategy strategy = options_.strategy;
  const bool planner = strategy != PlacementStrategy::kSequential;
  const bool by_problem =
      strategy == PlacementStrategy::kConstrained || strategy == PlacementStrategy::kReplay;
  FixedFunction fixed(input, *policy, options_.backend.get());
  const ir::FunctionPtr function = planner ? fixed.function() : input;
  const std::string& fname = function->name;

  // 1. Reserve buffers.
  const ir::MemorySpace reserve_space = ReserveSpace(function->type);
  absl::StatusOr<Reserves> reserves = ResolveReserves(*function, *policy, reserve_space);
  if (!reserves.ok()) return reserves.status();
  std::optional<MemoryProblem> problem;
  auto get_problem = [&]() -> const MemoryProblem& {
    if (!problem) {
      MemoryProblemOptions mo;
      mo.policy = policy.get();
      mo.backend = options_.backend.get();
      mo.reserve_space = reserve_space;
      for (const auto& [b, e] : reserves->ranges) {
        mo.reserved.push_back({static_cast<uint64_t>(b), static_cast<uint64_t>(e)});
      }
      if (options_.backend != nullptr) mo.backend_name = options_.backend->Name();
      problem = BuildMemoryProblem(*fixed.function(), fixed.liveness(), mo);
    }
    return *problem;
  };
  if (by_problem || options_.on_problem || options_.on_stats || options_.export_only) {
    get_problem();
  }
  // A function with nothing to place in a planned space has no problem to export or solve.
  const bool has_pools = problem && !problem->document.problem.pools.empty();
  if (options_.on_problem && has_pools) options_.on_problem(problem->document);
  if (options_.export_only) return FunctionResult{original, false};
  internal::FunctionPlanning planning;
  planning.problem = problem ? &*problem : nullptr;
  if (by_problem && has_pools) {
    // Reserves past the capacity: nothing can fit (and the problem would be malformed).
    const int64_t limit = backends::MemSize(options_.backend.get(), reserve_space);
    if (limit != 0 && reserves->end > limit) {
      return FunctionError(
          fname, absl::StrCat(ir::MemorySpaceName(reserve_space), " buffer usage (", reserves->end,
                              " bytes) exceeds platform limit (", limit,
                              " bytes): the system.reserve_buffer ranges alone end there; no fit "
                              "is proven"));
    }
    absl::Status s = internal::PrepareFunctionPlanning(strategy, options_.budget,
                                                       options_.replay.get(), &planning);
    if (!s.ok()) return FunctionError(fname, s.message());
  }

  // 2. Roots and slots, per space; each planned space's plan.
  const internal::RootSlots roots(*function);
  planning.roots = &roots;
  std::map<int, std::vector<MemRefPtr>> by_space;
  for (const MemRefPtr& root : roots.roots()) {
    by_space[static_cast<int>(root->space())].push_back(root);
  }
  if (!reserves->resolved.empty()) by_space[static_cast<int>(reserve_space)];  // capacity too
  absl::flat_hash_map<const MemRef*, std::pair<int64_t, int64_t>> life;
  if (planner) {
    int64_t horizon = 0;
    for (const RootLifetime& l : ComputeRootLifetimes(fixed.liveness())) {
      life[l.root] = {l.start, l.end};
      horizon = std::max(horizon, l.end);
    }
    // A declared allocation is closed to every other root: to the lifetime planners it lives
    // over the whole function, so nothing shares its bytes (the problem states it as
    // separations, which the validator holds every candidate to).
    for (auto& [root, interval] : life) {
      if (root->declared()) interval = {0, horizon};
    }
  }
  planning.life = &life;
  internal::RootAddresses addr;
  std::vector<SpacePlanStats> stats;
  for (auto& [space_index, refs] : by_space) {
    const auto space = static_cast<ir::MemorySpace>(space_index);
    if (!policy->ShouldAllocate(space)) continue;
    internal::SpacePlanOptions so;
    so.strategy = strategy;
    so.budget = options_.budget;
    so.policy = policy.get();
    so.capacity = backends::MemSize(options_.backend.get(), space);
    so.separate_layouts = options_.backend != nullptr && options_.backend->SeparatesLayouts(space);
    const int64_t start = space == reserve_space ? reserves->end : 0;
    absl::StatusOr<internal::SpacePlan> plan =
        internal::PlanSpace(space, std::move(refs), start, planning, so);
    if (!plan.ok()) return FunctionError(fname, plan.status().message());
    if (so.capacity != 0 && plan->end > so.capacity) {
      return CapacityError(fname, space, *plan, start, so.capacity, strategy, get_problem());
    }
    for (const auto& [root, a] : plan->addr) addr[root] = a;
    if (options_.on_stats) stats.push_back(Stats(fname, space, *plan, so.capacity, *problem));
  }

  // 3. Rewrite: new roots, views on them, alloc statements, reserve bases.
  AddressWriter writer(reserves->resolved);
  for (const auto& [root, a] : addr) {
    if (a != root->addr()) writer.RemapMemRef(root, root->WithAddr(a));
  }
  ir::FunctionPtr out = writer.MutateFunction(function);
  if (options_.on_stats) {
    for (const SpacePlanStats& st : stats) options_.on_stats(st);
  }
  return FunctionResult{out, out != original};
}

PassPtr CreateAllocateMemoryAddrPass(const AllocateMemoryAddrOptions& options) {
  return std::make_unique<AllocateMemoryAddrPass>(options);
}

}  // namespace passes
}  // namespace accelmem
