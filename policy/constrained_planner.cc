#include "policy/constrained_planner.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "policy/dsa_validator.h"
#include "policy/internal/constrained_model.h"
#include "policy/internal/constrained_search.h"
#include "policy/lifetime_planner.h"
#include "policy/memory_allocator_policy.h"
#include "policy/placement_checker.h"

namespace accelmem {
namespace policy {
namespace {

using internal::FindRoot;
using internal::IntervalsOverlap;
using internal::Item;
using internal::kInfinity;
using internal::kNoCapacity;
using internal::PoolModel;
using internal::PoolSearch;

bool HasTerm(const DsaProblem& problem, DsaObjectiveTerm term) {
  return std::find(problem.objective.terms.begin(), problem.objective.terms.end(), term) !=
         problem.objective.terms.end();
}

bool ReuseBeforePeak(const DsaProblem& problem) {
  for (DsaObjectiveTerm term : problem.objective.terms) {
    if (term == DsaObjectiveTerm::kReuseCost) return true;
    if (term == DsaObjectiveTerm::kTotalPeak || term == DsaObjectiveTerm::kMaxPeak) return false;
  }
  return true;
}

int Severity(ConstrainedStatus status) {
  switch (status) {
    case ConstrainedStatus::kOptimal:
      return 0;
    case ConstrainedStatus::kFeasible:
      return 1;
    case ConstrainedStatus::kNoFitWithinBudget:
      return 2;
    case ConstrainedStatus::kInfeasible:
      return 3;
  }
  return 3;
}

// Plain placement (conflicts are exactly the lifetime overlaps of single intervals; nothing
// reserved, pinned, colocated, excluded, penalised or paired exact-or-disjoint; one alignment)
// of more than this many
// items goes to the lifetime planner's search, built for thousands of buffers.
constexpr size_t kPlainItems = 40;

bool IsPlainPlacement(const DsaProblem& problem, const PoolModel& model) {
  if (model.any_penalty || !model.reserved.empty() || !model.pipeline_only.empty() ||
      !model.exact_pairs.empty()) {
    return false;
  }
  if (!problem.constraints.temporal_exclusions.empty() ||
      !problem.constraints.colocations.empty() || !problem.constraints.separations.empty()) {
    return false;
  }
  for (const Item& item : model.items) {
    if (item.pinned || item.buffers.size() != 1 || item.intervals.size() != 1 ||
        item.alignment != model.items[0].alignment) {
      return false;
    }
  }
  return true;
}

void SolvePlain(const PoolModel& model, absl::Time deadline, PoolResult* out,
                std::vector<uint64_t>* item_offsets) {
  std::vector<PlacementBuffer> buffers;
  for (size_t i = 0; i < model.items.size(); ++i) {
    const Item& item = model.items[i];
    buffers.push_back({absl::StrCat(i), item.intervals[0].lower, item.intervals[0].upper,
                       static_cast<int64_t>(item.extent)});
  }
  PlannerOptions options;
  options.mode = PlannerMode::kSearch;
  options.alignment = static_cast<int64_t>(model.items[0].alignment);
  options.capacity = model.has_capacity ? static_cast<int64_t>(model.capacity) : 0;
  options.budget = std::max(absl::Milliseconds(1), deadline - absl::Now());
  options.search_threads = 1;  // Deterministic, and one thread as the planner promises.
  absl::StatusOr<PlacementPlan> plan = PlanPlacement(buffers, options);
  if (!plan.ok()) {
    out->status = ConstrainedStatus::kNoFitWithinBudget;
    out->reason = std::string(plan.status().message());
    return;
  }
  out->load = plan->load;
  out->peak_lower_bound = plan->lower_bound;
  out->search_nodes = plan->search_nodes;
  out->method = absl::StrCat("lifetime_planner:", plan->method);
  if (model.has_capacity && static_cast<uint64_t>(plan->lower_bound) > model.capacity) {
    out->status = ConstrainedStatus::kInfeasible;
    out->reason = absl::StrCat("no placement is lower than ", plan->lower_bound,
                               " bytes (proven), over the capacity ", model.capacity);
    return;
  }
  if (!plan->within_capacity) {
    out->status = ConstrainedStatus::kNoFitWithinBudget;
    out->reason = "no placement under the capacity found within the budget";
    return;
  }
  item_offsets->assign(plan->offsets.begin(), plan->offsets.end());
  out->peak = static_cast<uint64_t>(plan->height);
  out->status = plan->proven_optimal ? ConstrainedStatus::kOptimal : ConstrainedStatus::kFeasible;
  if (!plan->proven_optimal) {
    out->reason = absl::StrCat("height ", plan->height, ", proven lower bound ", plan->lower_bound);
  }
}

// How one pool is to be solved: which term comes first, and an optional cap on its peak (the
// coupled max_peak order, below).
struct PoolGoal {
  bool reuse_first = true;
  bool reuse_matters = true;
  bool peak_matters = false;
  std::optional<uint64_t> peak_cap;
};

PoolGoal GoalOf(const DsaProblem& problem) {
  PoolGoal goal;
  goal.reuse_first = ReuseBeforePeak(problem);
  goal.reuse_matters = HasTerm(problem, DsaObjectiveTerm::kReuseCost);
  goal.peak_matters = HasTerm(problem, DsaObjectiveTerm::kTotalPeak) ||
                      HasTerm(problem, DsaObjectiveTerm::kMaxPeak);
  return goal;
}

void SolvePool(const DsaProblem& problem, int pool_index, const std::vector<int>& buffers,
               const PoolGoal& goal, const ConstrainedOptions& options, absl::Time deadline,
               PoolResult* out, std::vector<uint64_t>* item_offsets, PoolModel* model_out) {
  absl::StatusOr<PoolModel> model = internal::BuildPoolModel(problem, pool_index, buffers);
  if (!model.ok()) {
    out->status = ConstrainedStatus::kInfeasible;
    out->reason = std::string(model.status().message());
    return;
  }
  if (goal.peak_cap && (!model->has_capacity || *goal.peak_cap < model->capacity)) {
    // A peak of at most `cap` is a capacity of `cap`: every bound and proof holds for it.
    model->capacity = *goal.peak_cap;
    model->has_capacity = true;
  }
  if (IsPlainPlacement(problem, *model) && goal.peak_matters && model->items.size() > kPlainItems) {
    SolvePlain(*model, deadline, out, item_offsets);
  } else {
    PoolSearch search(*model, goal.reuse_first, goal.reuse_matters, goal.peak_matters, deadline);
    search.set_subset_bound(options.subset_bound);
    search.set_search(options.search);
    search.Run(out, item_offsets);
  }
  *model_out = std::move(*model);
}

// True when the objective ranks max_peak before reuse_cost with no total_peak before reuse_cost:
// the least largest peak is set by one pool, and every other pool may then rise up to it to
// avoid penalties, so the pools are no longer independent. (total_peak first fixes every pool's
// peak at its least; reuse_cost first is a sum over pools.)
bool CoupledMaxPeak(const DsaProblem& problem) {
  bool max_peak_seen = false;
  for (DsaObjectiveTerm term : problem.objective.terms) {
    if (term == DsaObjectiveTerm::kTotalPeak) return false;
    if (term == DsaObjectiveTerm::kMaxPeak) max_peak_seen = true;
    if (term == DsaObjectiveTerm::kReuseCost) return max_peak_seen;
  }
  return false;
}

// Colocation classes over the whole problem (union-find over the colocations): class_of[b] for
// each buffer index, and each class's pools (indices into problem.pools): those every member
// allows and every pin of the class names, in the order of the class's first member.
struct Classes {
  std::vector<int> class_of;
  std::vector<std::vector<int>> members;
  std::vector<std::vector<int>> pools;
};

Classes ColocationClasses(const DsaProblem& problem) {
  const size_t n = problem.buffers.size();
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (const DsaPair& pair : problem.constraints.colocations) {
    parent[FindRoot(parent, FindDsaBuffer(problem, pair.first))] =
        FindRoot(parent, FindDsaBuffer(problem, pair.second));
  }
  Classes c;
  c.class_of.assign(n, -1);
  std::map<int, int> class_of_root;
  for (size_t b = 0; b < n; ++b) {
    auto [it, inserted] = class_of_root.emplace(FindRoot(parent, b), c.members.size());
    if (inserted) c.members.emplace_back();
    c.class_of[b] = it->second;
    c.members[it->second].push_back(b);
  }
  c.pools.resize(c.members.size());
  for (size_t k = 0; k < c.members.size(); ++k) {
    for (uint32_t id : problem.buffers[c.members[k][0]].allowed_pools) {
      bool everyone = true;
      for (int b : c.members[k]) {
        const std::vector<uint32_t>& allowed = problem.buffers[b].allowed_pools;
        everyone = everyone && std::find(allowed.begin(), allowed.end(), id) != allowed.end();
      }
      for (const DsaPinnedAllocation& pin : problem.constraints.pinned_allocations) {
        if (c.class_of[FindDsaBuffer(problem, pin.buffer)] == static_cast<int>(k)) {
          everyone = everyone && pin.pool == id;
        }
      }
      if (everyone) c.pools[k].push_back(FindDsaPool(problem, id));
    }
  }
  return c;
}

// The free ranges of a bounded pool: below the capacity, clear of the reserved ranges.
struct FreeSpace {
  uint64_t total = 0;    // Usable bytes.
  uint64_t largest = 0;  // The largest free range.
  bool fits = false;     // Some free range holds the extent at its alignment.
};

FreeSpace FreeSpaceOf(const DsaPool& pool, uint64_t extent, uint64_t alignment) {
  std::vector<DsaAddressRange> reserved = pool.reserved_ranges;
  std::sort(reserved.begin(), reserved.end(),
            [](const DsaAddressRange& a, const DsaAddressRange& b) { return a.begin < b.begin; });
  reserved.push_back({*pool.capacity, *pool.capacity});  // Ends the last free range.
  FreeSpace space;
  uint64_t cursor = 0;
  for (const DsaAddressRange& r : reserved) {
    const uint64_t end = std::min(r.begin, *pool.capacity);
    if (end > cursor) {
      space.total += end - cursor;
      space.largest = std::max(space.largest, end - cursor);
      const uint64_t start = AlignUp(cursor, alignment);
      space.fits = space.fits || (start <= end && end - start >= extent);
    }
    cursor = std::max(cursor, r.end);
  }
  return space;
}

// A colocation class larger than every pool it may go to: the proof names its largest buffer
// and what each pool can hold (issue 51: a 256 KiB operand against a 64 KiB L0B is a proof, not
// a search). "" when every class fits some pool.
std::string OversizeClass(const DsaProblem& problem, const Classes& classes) {
  for (size_t k = 0; k < classes.members.size(); ++k) {
    int largest = classes.members[k][0];
    uint64_t alignment = 1;
    for (int b : classes.members[k]) {
      if (problem.buffers[b].size > problem.buffers[largest].size) largest = b;
      alignment = std::max(alignment, problem.buffers[b].alignment);
    }
    const DsaBuffer& buffer = problem.buffers[largest];
    std::vector<std::string> pools;
    bool fits = classes.pools[k].empty();  // Reported as such above.
    for (int p : classes.pools[k]) {
      const DsaPool& pool = problem.pools[p];
      if (!pool.capacity) {
        fits = true;
        break;
      }
      const FreeSpace space = FreeSpaceOf(pool, buffer.size, alignment);
      fits = fits || space.fits;
      pools.push_back(absl::StrCat(
          "pool ", pool.id, " '", pool.name, "' has ", space.total, " usable bytes (capacity ",
          *pool.capacity,
          pool.reserved_ranges.empty() ? "" : absl::StrCat(", largest free range ", space.largest),
          ")"));
    }
    if (fits) continue;
    return absl::StrCat(
        "buffer ", buffer.id, " '", buffer.name, "' of ", buffer.size, " bytes",
        classes.members[k].size() > 1 ? " (the largest of its colocation class)" : "",
        alignment > 1 ? absl::StrCat(", aligned to ", alignment) : "",
        ", fits in no pool it may go to: ", absl::StrJoin(pools, "; "));
  }
  return "";
}

// What no placement can meet whatever the pools chosen, found from the colocation classes alone:
// a class whose members (and pins) allow no common pool, a class larger than every pool it may
// go to, or a separation inside a class.
std::string StructuralInfeasibility(const DsaProblem& problem, const Classes& classes) {
  for (size_t k = 0; k < classes.members.size(); ++k) {
    if (!classes.pools[k].empty()) continue;
    std::vector<std::string> ids;
    for (int b : classes.members[k]) ids.push_back(absl::StrCat(problem.buffers[b].id));
    return absl::StrCat("colocated buffers ", absl::StrJoin(ids, ", "),
                        " share one pool and offset, but their allowed pools (and pins) have no "
                        "pool in common");
  }
  if (std::string reason = OversizeClass(problem, classes); !reason.empty()) return reason;
  for (const DsaSeparation& separation : problem.constraints.separations) {
    if (classes.class_of[FindDsaBuffer(problem, separation.first)] ==
        classes.class_of[FindDsaBuffer(problem, separation.second)]) {
      return absl::StrCat("buffers ", separation.first, " and ", separation.second,
                          " are separated but colocated (through the colocations, they share "
                          "one offset)");
    }
  }
  return "";
}

// The answer for one choice of pool per buffer (pool_of: buffer index -> pool index).
struct Assigned {
  ConstrainedResult result;
  uint64_t total_peak_lower_bound = 0;
  uint64_t max_peak_lower_bound = 0;
  // Pools proven infeasible that hold separations only pipeline depth asks for.
  std::set<uint32_t> pipeline_infeasible_pools;
};

// Sums the pools into `assigned->result`; placements when every pool with buffers has one.
void Combine(const DsaProblem& problem, const std::vector<int>& pool_of,
             const std::vector<std::vector<int>>& pool_buffers,
             std::vector<PoolResult> pool_results, const std::vector<uint64_t>& offsets,
             Assigned* assigned) {
  ConstrainedResult& result = assigned->result;
  result.status = ConstrainedStatus::kOptimal;
  bool all_placed = true;
  for (size_t p = 0; p < pool_results.size(); ++p) {
    PoolResult& pool_result = pool_results[p];
    if (!pool_buffers[p].empty() && pool_result.status != ConstrainedStatus::kOptimal &&
        pool_result.status != ConstrainedStatus::kFeasible) {
      all_placed = false;
    }
    if (Severity(pool_result.status) > Severity(result.status)) result.status = pool_result.status;
    if (result.reason.empty() && pool_result.status != ConstrainedStatus::kOptimal) {
      result.reason = absl::StrCat("pool ", pool_result.pool, " '", pool_result.name,
                                   "': ", pool_result.reason);
    }
    result.reuse_cost += pool_result.reuse_cost;
    result.reuse_lower_bound += pool_result.reuse_lower_bound;
    result.total_peak += pool_result.peak;
    result.max_peak = std::max(result.max_peak, pool_result.peak);
    assigned->total_peak_lower_bound += pool_result.peak_lower_bound;
    assigned->max_peak_lower_bound =
        std::max(assigned->max_peak_lower_bound, pool_result.peak_lower_bound);
    result.pools.push_back(std::move(pool_result));
  }
  if (all_placed) {
    for (size_t b = 0; b < problem.buffers.size(); ++b) {
      result.placements.push_back(
          {problem.buffers[b].id, problem.pools[pool_of[b]].id, offsets[b]});
    }
    std::sort(result.placements.begin(), result.placements.end(),
              [](const DsaPlacement& a, const DsaPlacement& b) { return a.buffer < b.buffer; });
  }
}

// The buffers (indices) of each pool (index) for a choice of pool per buffer.
std::vector<std::vector<int>> BuffersByPool(const DsaProblem& problem,
                                            const std::vector<int>& pool_of) {
  std::vector<std::vector<int>> pool_buffers(problem.pools.size());
  for (size_t b = 0; b < problem.buffers.size(); ++b) pool_buffers[pool_of[b]].push_back(b);
  return pool_buffers;
}

// Every buffer of a pool's items at its item's offset.
void WriteOffsets(const PoolModel& model, const std::vector<uint64_t>& item_offsets,
                  std::vector<uint64_t>* offsets) {
  for (size_t i = 0; i < model.items.size(); ++i) {
    for (int b : model.items[i].buffers) (*offsets)[b] = item_offsets[i];
  }
}

PoolResult EmptyPool(const DsaPool& pool) {
  PoolResult out;
  out.pool = pool.id;
  out.name = pool.name;
  out.status = ConstrainedStatus::kOptimal;
  for (const DsaAddressRange& r : pool.reserved_ranges) out.peak = std::max(out.peak, r.end);
  out.peak_lower_bound = out.peak;
  return out;
}

// Pools solved one by one: small pools first, each with an equal share of what is left of the
// time, then the pools left open share what the others left.
Assigned SolveIndependent(const DsaProblem& problem, const std::vector<int>& pool_of,
                          const ConstrainedOptions& options, absl::Time deadline) {
  const std::vector<std::vector<int>> pool_buffers = BuffersByPool(problem, pool_of);
  const PoolGoal goal = GoalOf(problem);
  int pools_left = 0;
  for (const auto& list : pool_buffers) pools_left += !list.empty();
  std::vector<uint64_t> offsets(problem.buffers.size(), 0);
  std::vector<size_t> pool_order(problem.pools.size());
  std::iota(pool_order.begin(), pool_order.end(), 0);
  std::stable_sort(pool_order.begin(), pool_order.end(), [&](size_t a, size_t b) {
    return pool_buffers[a].size() < pool_buffers[b].size();
  });
  Assigned assigned;
  std::vector<PoolResult> pool_results(problem.pools.size());
  auto write_offsets = [&](const PoolModel& model, const std::vector<uint64_t>& item_offsets) {
    WriteOffsets(model, item_offsets, &offsets);
  };
  for (size_t p : pool_order) {
    if (pool_buffers[p].empty()) {
      pool_results[p] = EmptyPool(problem.pools[p]);
      continue;
    }
    PoolResult pool_result;
    pool_result.pool = problem.pools[p].id;
    pool_result.name = problem.pools[p].name;
    const absl::Time now = absl::Now();
    const absl::Time pool_deadline =
        now + std::max(absl::ZeroDuration(), deadline - now) / std::max(1, pools_left);
    --pools_left;
    std::vector<uint64_t> item_offsets;
    PoolModel model;
    SolvePool(problem, p, pool_buffers[p], goal, options, pool_deadline, &pool_result,
              &item_offsets, &model);
    if (pool_result.status == ConstrainedStatus::kInfeasible && !model.pipeline_only.empty()) {
      assigned.pipeline_infeasible_pools.insert(problem.pools[p].id);
    }
    if (!item_offsets.empty()) write_offsets(model, item_offsets);
    pool_results[p] = std::move(pool_result);
  }
  // Pools that ended early leave time: the pools left open get it, shared equally, and keep a
  // second result that is better (proven, or no worse in cost, peak and bounds). A proof of
  // infeasibility replaces a pool that found nothing.
  std::vector<size_t> open;
  for (size_t p : pool_order) {
    const ConstrainedStatus status = pool_results[p].status;
    if (status == ConstrainedStatus::kFeasible || status == ConstrainedStatus::kNoFitWithinBudget) {
      open.push_back(p);
    }
  }
  for (size_t k = 0; k < open.size(); ++k) {
    const size_t p = open[k];
    const absl::Duration left = deadline - absl::Now();
    if (left < absl::Milliseconds(1)) break;
    PoolResult second;
    second.pool = problem.pools[p].id;
    second.name = problem.pools[p].name;
    std::vector<uint64_t> item_offsets;
    PoolModel model;
    SolvePool(problem, p, pool_buffers[p], goal, options, absl::Now() + left / (open.size() - k),
              &second, &item_offsets, &model);
    const PoolResult& first = pool_results[p];
    const bool proof = first.status == ConstrainedStatus::kNoFitWithinBudget &&
                       second.status == ConstrainedStatus::kInfeasible;
    const bool better =
        proof ||
        (!item_offsets.empty() &&
         (Severity(second.status) < Severity(first.status) ||
          (second.status == first.status && second.reuse_cost <= first.reuse_cost &&
           second.peak <= first.peak && second.reuse_lower_bound >= first.reuse_lower_bound &&
           second.peak_lower_bound >= first.peak_lower_bound)));
    if (!better) continue;
    if (!item_offsets.empty()) write_offsets(model, item_offsets);
    if (proof && !model.pipeline_only.empty()) {
      assigned.pipeline_infeasible_pools.insert(problem.pools[p].id);
    }
    pool_results[p] = std::move(second);
  }
  Combine(problem, pool_of, pool_buffers, std::move(pool_results), offsets, &assigned);
  return assigned;
}

// The coupled order (CoupledMaxPeak): first every pool's least peak (peak first); their largest,
// M, is the least max_peak when every pool's is proven. Then every pool's least reuse cost with
// its peak capped at M (reuse first). Each pool of the lexicographic optimum has a peak of at most
// M* <= M, so the capped pools' reuse bounds hold for it; the result is optimal only when M is
// proven and every capped pool is optimal.
Assigned SolveCoupled(const DsaProblem& problem, const std::vector<int>& pool_of,
                      const ConstrainedOptions& options, absl::Time deadline) {
  const std::vector<std::vector<int>> pool_buffers = BuffersByPool(problem, pool_of);
  int busy = 0;
  for (const auto& list : pool_buffers) busy += !list.empty();
  const absl::Time start = absl::Now();
  const absl::Time first_deadline = start + (deadline - start) / 2;
  PoolGoal peak_goal = GoalOf(problem);
  peak_goal.reuse_first = false;
  std::vector<PoolResult> first(problem.pools.size());
  std::vector<std::vector<uint64_t>> first_offsets(problem.pools.size());
  std::vector<PoolModel> first_models(problem.pools.size());
  Assigned assigned;
  uint64_t most = 0, most_lower_bound = 0;
  bool all_placed = true;
  int left = busy;
  for (size_t p = 0; p < problem.pools.size(); ++p) {
    if (pool_buffers[p].empty()) {
      first[p] = EmptyPool(problem.pools[p]);
    } else {
      first[p].pool = problem.pools[p].id;
      first[p].name = problem.pools[p].name;
      const absl::Time now = absl::Now();
      SolvePool(problem, p, pool_buffers[p], peak_goal, options,
                now + std::max(absl::ZeroDuration(), first_deadline - now) / std::max(1, left--),
                &first[p], &first_offsets[p], &first_models[p]);
      if (first_offsets[p].empty()) {
        all_placed = false;
        if (first[p].status == ConstrainedStatus::kInfeasible &&
            !first_models[p].pipeline_only.empty()) {
          assigned.pipeline_infeasible_pools.insert(problem.pools[p].id);
        }
      }
    }
    most = std::max(most, first[p].peak);
    most_lower_bound = std::max(most_lower_bound, first[p].peak_lower_bound);
  }
  std::vector<uint64_t> offsets(problem.buffers.size(), 0);
  auto write_offsets = [&](const PoolModel& model, const std::vector<uint64_t>& item_offsets) {
    WriteOffsets(model, item_offsets, &offsets);
  };
  if (!all_placed) {  // Nothing to couple: report the pools as they stand.
    for (size_t p = 0; p < problem.pools.size(); ++p) {
      if (!first_offsets[p].empty()) write_offsets(first_models[p], first_offsets[p]);
    }
    Combine(problem, pool_of, pool_buffers, std::move(first), offsets, &assigned);
    return assigned;
  }
  PoolGoal capped = GoalOf(problem);
  capped.reuse_first = true;
  capped.peak_cap = most;
  std::vector<PoolResult> second(problem.pools.size());
  left = busy;
  for (size_t p = 0; p < problem.pools.size(); ++p) {
    if (pool_buffers[p].empty()) {
      second[p] = first[p];
      continue;
    }
    PoolResult out;
    out.pool = problem.pools[p].id;
    out.name = problem.pools[p].name;
    std::vector<uint64_t> item_offsets;
    PoolModel model;
    const absl::Time now = absl::Now();
    SolvePool(problem, p, pool_buffers[p], capped, options,
              now + std::max(absl::ZeroDuration(), deadline - now) / std::max(1, left--), &out,
              &item_offsets, &model);
    if (item_offsets.empty()) {
      // The capped search found nothing in its time (the first placement is under the cap, so
      // it is no proof): keep the first placement, with the capped search's proven bound.
      out.status = ConstrainedStatus::kFeasible;
      out.reuse_lower_bound = std::min(out.reuse_lower_bound, first[p].reuse_cost);
      out.reuse_cost = first[p].reuse_cost;
      out.peak = first[p].peak;
      out.reason = "the budget ran out before the capped search found a placement";
      write_offsets(first_models[p], first_offsets[p]);
    } else {
      write_offsets(model, item_offsets);
    }
    // Only the least peak of the pool alone holds for every placement, whatever M* is.
    out.peak_lower_bound = first[p].peak_lower_bound;
    if (most != most_lower_bound && out.status == ConstrainedStatus::kOptimal) {
      out.status = ConstrainedStatus::kFeasible;
      out.reason = absl::StrCat("max peak ", most, ", proven lower bound ", most_lower_bound,
                                " (reuse cost optimal under that peak)");
    }
    second[p] = std::move(out);
  }
  Combine(problem, pool_of, pool_buffers, std::move(second), offsets, &assigned);
  return assigned;
}

Assigned SolveAssigned(const DsaProblem& problem, const std::vector<int>& pool_of,
                       const ConstrainedOptions& options, absl::Time deadline) {
  if (CoupledMaxPeak(problem) && problem.pools.size() > 1) {
    return SolveCoupled(problem, pool_of, options, deadline);
  }
  return SolveIndependent(problem, pool_of, options, deadline);
}

// The objective's terms of a placed result, in the problem's order (capacity_overflow is 0: the
// capacity is hard), for comparing choices of pools lexicographically.
std::vector<uint64_t> TermValues(const DsaProblem& problem, const ConstrainedResult& result) {
  std::vector<uint64_t> values;
  for (DsaObjectiveTerm term : problem.objective.terms) {
    switch (term) {
      case DsaObjectiveTerm::kReuseCost:
        values.push_back(result.reuse_cost);
        break;
      case DsaObjectiveTerm::kTotalPeak:
        values.push_back(result.total_peak);
        break;
      case DsaObjectiveTerm::kMaxPeak:
        values.push_back(result.max_peak);
        break;
      default:
        values.push_back(0);
        break;
    }
  }
  return values;
}

// Choices of pools tried one by one, at most this many; beyond it one greedy choice.
constexpr uint64_t kMaxPoolChoices = 64;

// More than kMaxPoolChoices choices: one greedy choice (largest classes with a choice first,
// each to the allowed pool with the most capacity left), solved; at best feasible, with bounds of
// 0 (valid, and all that is proven). `pool_of` holds the classes without a choice.
Assigned SolveOneChoice(const DsaProblem& problem, const Classes& classes, std::vector<size_t> open,
                        std::vector<int>* pool_of, const ConstrainedOptions& options,
                        absl::Time deadline) {
  std::vector<uint64_t> room(problem.pools.size(), std::numeric_limits<uint64_t>::max());
  auto extent = [&](size_t k) {
    uint64_t e = 0;
    for (int b : classes.members[k]) e = std::max(e, problem.buffers[b].size);
    return e;
  };
  for (size_t p = 0; p < problem.pools.size(); ++p) {
    if (problem.pools[p].capacity) room[p] = *problem.pools[p].capacity;
  }
  for (size_t k = 0; k < classes.pools.size(); ++k) {
    if (classes.pools[k].size() == 1) {
      const int p = classes.pools[k][0];
      room[p] -= std::min(room[p], extent(k));
    }
  }
  std::stable_sort(open.begin(), open.end(),
                   [&](size_t a, size_t b) { return extent(a) > extent(b); });
  for (size_t k : open) {
    int best = classes.pools[k][0];
    for (int p : classes.pools[k]) {
      if (room[p] > room[best]) best = p;
    }
    for (int b : classes.members[k]) (*pool_of)[b] = best;
    room[best] -= std::min(room[best], extent(k));
  }
  Assigned one = SolveAssigned(problem, *pool_of, options, deadline);
  ConstrainedResult& r = one.result;
  if (r.status == ConstrainedStatus::kOptimal) r.status = ConstrainedStatus::kFeasible;
  if (r.status == ConstrainedStatus::kInfeasible) {
    r.status = ConstrainedStatus::kNoFitWithinBudget;  // Other choices were not tried.
  }
  r.reason =
      absl::StrCat("one of more than ", kMaxPoolChoices, " choices of pools tried; ", r.reason);
  r.reuse_lower_bound = 0;
  one.total_peak_lower_bound = one.max_peak_lower_bound = 0;
  for (PoolResult& pool : r.pools) pool.reuse_lower_bound = pool.peak_lower_bound = 0;
  return one;
}

// Solves the problem with the pool of every buffer allowed in several a part of the answer.
// Every choice is solved when there are at most kMaxPoolChoices: the best placed one is the
// answer, optimal when every choice is proven (optimal or infeasible); the bounds are the least
// over the choices not proven infeasible, so they hold whichever choice the optimum makes.
// Beyond that, one choice (each class in the allowed pool with the most room left) is solved and
// the answer is at best feasible, with bounds of 0 (valid, and all that is proven).
Assigned SolveChoices(const DsaProblem& problem, const Classes& classes,
                      const ConstrainedOptions& options, absl::Time deadline) {
  std::vector<size_t> open;  // Classes with a choice.
  uint64_t choices = 1;
  for (size_t k = 0; k < classes.pools.size(); ++k) {
    if (classes.pools[k].size() < 2) continue;
    open.push_back(k);
    choices = std::min(kMaxPoolChoices + 1, choices * classes.pools[k].size());
  }
  std::vector<int> pool_of(problem.buffers.size());
  auto assign = [&](size_t k, int pool) {
    for (int b : classes.members[k]) pool_of[b] = pool;
  };
  for (size_t k = 0; k < classes.pools.size(); ++k) assign(k, classes.pools[k][0]);
  if (open.empty()) return SolveAssigned(problem, pool_of, options, deadline);
  if (choices > kMaxPoolChoices) {
    return SolveOneChoice(problem, classes, std::move(open), &pool_of, options, deadline);
  }
  std::vector<size_t> digit(open.size(), 0);
  std::optional<Assigned> best;
  std::vector<uint64_t> best_values;
  bool all_proven = true;
  uint64_t reuse_lb = std::numeric_limits<uint64_t>::max();
  uint64_t total_lb = reuse_lb, max_lb = reuse_lb;
  std::set<uint32_t> pipeline_pools;
  std::string first_reason;
  for (uint64_t c = 0; c < choices; ++c) {
    for (size_t d = 0; d < open.size(); ++d) assign(open[d], classes.pools[open[d]][digit[d]]);
    const absl::Time now = absl::Now();
    Assigned a = SolveAssigned(
        problem, pool_of, options,
        now + std::max(absl::ZeroDuration(), deadline - now) / static_cast<int64_t>(choices - c));
    const ConstrainedStatus status = a.result.status;
    if (status != ConstrainedStatus::kOptimal && status != ConstrainedStatus::kInfeasible) {
      all_proven = false;
    }
    if (status != ConstrainedStatus::kInfeasible) {
      reuse_lb = std::min(reuse_lb, a.result.reuse_lower_bound);
      total_lb = std::min(total_lb, a.total_peak_lower_bound);
      max_lb = std::min(max_lb, a.max_peak_lower_bound);
    } else {
      pipeline_pools.insert(a.pipeline_infeasible_pools.begin(), a.pipeline_infeasible_pools.end());
      if (first_reason.empty()) first_reason = a.result.reason;
    }
    if (!a.result.placements.empty()) {
      std::vector<uint64_t> values = TermValues(problem, a.result);
      if (!best || values < best_values) {
        best = std::move(a);
        best_values = std::move(values);
      }
    } else if (status != ConstrainedStatus::kInfeasible) {
      if (!best) best = std::move(a);
    }
    for (size_t d = 0; d < open.size() && ++digit[d] == classes.pools[open[d]].size(); ++d) {
      digit[d] = 0;
    }
  }
  if (!best) {  // Every choice proven infeasible.
    Assigned none;
    none.result.status = ConstrainedStatus::kInfeasible;
    none.result.reason = absl::StrCat("every one of the ", choices,
                                      " choices of pools is infeasible; the first: ", first_reason);
    none.pipeline_infeasible_pools = std::move(pipeline_pools);
    return none;
  }
  Assigned out = std::move(*best);
  ConstrainedResult& r = out.result;
  if (!r.placements.empty()) {
    r.status = all_proven ? ConstrainedStatus::kOptimal : ConstrainedStatus::kFeasible;
  } else {
    r.status = ConstrainedStatus::kNoFitWithinBudget;
  }
  // The least over the choices: whichever one the optimum makes, its bounds hold.
  out.total_peak_lower_bound = total_lb;
  out.max_peak_lower_bound = max_lb;
  r.reuse_lower_bound = all_proven ? r.reuse_cost : reuse_lb;
  if (!all_proven && r.reason.empty()) {
    r.reason = "not every choice of pools was proven within the budget";
  }
  return out;
}

// The problem with the pipeline_stage-only separations touching `pools` (pool ids) removed, a
// pipeline_serialization penalty of weight 1 for each removed pair that may share bytes, and
// reuse cost right after fitting in the objective. `groups` receives (pool, group) of the
// pipeline groups whose members lost a separation.
DsaProblem RelaxPipelineDepth(const DsaProblem& problem, const std::set<uint32_t>& pools,
                              std::vector<std::pair<uint32_t, uint32_t>>* groups) {
  DsaProblem relaxed = problem;
  auto touches = [&](uint32_t id) {
    for (uint32_t pool : problem.buffers[FindDsaBuffer(problem, id)].allowed_pools) {
      if (pools.count(pool)) return true;
    }
    return false;
  };
  std::set<std::pair<uint32_t, uint32_t>> excluded;
  for (const DsaPair& pair : problem.constraints.temporal_exclusions) {
    excluded.insert(std::minmax(pair.first, pair.second));
  }
  std::set<uint32_t> members;
  std::vector<DsaSeparation> kept;
  for (const DsaSeparation& separation : problem.constraints.separations) {
    const bool pipeline_only = separation.reasons.size() == 1 &&
                               separation.reasons[0] == DsaSeparationReason::kPipelineStage;
    if (!pipeline_only || !(touches(separation.first) || touches(separation.second))) {
      kept.push_back(separation);
      continue;
    }
    members.insert(separation.first);
    members.insert(separation.second);
    const DsaBuffer& a = problem.buffers[FindDsaBuffer(problem, separation.first)];
    const DsaBuffer& b = problem.buffers[FindDsaBuffer(problem, separation.second)];
    const bool conflict = !excluded.count(std::minmax(a.id, b.id)) &&
                          IntervalsOverlap(a.live_intervals, b.live_intervals);
    if (!conflict) {
      if (!relaxed.cost_model) relaxed.cost_model.emplace();
      relaxed.cost_model->reuse_penalties.push_back(
          {a.id, b.id, 1, DsaPenaltyReason::kPipelineSerialization});
    }
  }
  relaxed.constraints.separations = std::move(kept);
  std::vector<DsaObjectiveTerm> terms = {DsaObjectiveTerm::kCapacityOverflow,
                                         DsaObjectiveTerm::kReuseCost};
  for (DsaObjectiveTerm term : problem.objective.terms) {
    if (std::find(terms.begin(), terms.end(), term) == terms.end()) terms.push_back(term);
  }
  relaxed.objective.terms = terms;
  if (problem.pypto_structure) {
    for (const DsaPipelineGroup& group : problem.pypto_structure->pipeline_groups) {
      if (!pools.count(group.pool)) continue;
      for (const DsaPipelineMember& member : group.members) {
        if (members.count(member.buffer)) {
          groups->push_back({group.pool, group.group});
          break;
        }
      }
    }
  }
  return relaxed;
}

// The independent validator's word on a result, before any entry point hands it out: a placement
// exactly when the status says one fits, every hard constraint met, the costs and peaks the
// result reports, and no bound above what the placement reaches.
absl::Status Verify(const DsaProblem& problem, const ConstrainedResult& result,
                    const std::string& what) {
  const bool fits =
      result.status == ConstrainedStatus::kOptimal || result.status == ConstrainedStatus::kFeasible;
  if (fits == result.placements.empty()) {
    return absl::InternalError(absl::StrCat(what, ": status ", ConstrainedStatusName(result.status),
                                            fits ? " without" : " with", " a placement"));
  }
  if (!fits) return absl::OkStatus();
  const DsaSolutionCheck check = CheckDsaSolution(problem, result.placements);
  if (!check.ok()) {
    return absl::InternalError(absl::StrCat(what, ": the planner's placement fails the validator (",
                                            check.errors.size(),
                                            " violations): ", absl::StrJoin(check.errors, "; ")));
  }
  if (check.reuse_cost != result.reuse_cost || check.total_peak != result.total_peak ||
      check.max_peak != result.max_peak) {
    return absl::InternalError(
        absl::StrCat(what, ": the planner reports reuse cost ", result.reuse_cost, ", total peak ",
                     result.total_peak, ", max peak ", result.max_peak, "; the validator computes ",
                     check.reuse_cost, ", ", check.total_peak, ", ", check.max_peak));
  }
  if (result.reuse_lower_bound > result.reuse_cost ||
      result.total_peak_lower_bound > result.total_peak ||
      result.max_peak_lower_bound > result.max_peak) {
    return absl::InternalError(absl::StrCat(what, ": a lower bound above the placement's value"));
  }
  return absl::OkStatus();
}
}  // namespace

absl::StatusOr<ConstrainedResult> SolveConstrained(const DsaProblem& problem,
                                                   const ConstrainedOptions& options) {
  const std::vector<std::string> errors = ValidateDsaProblem(problem);
  if (!errors.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid problem (", errors.size(), " errors): ", errors.front()));
  }
  if (HasTerm(problem, DsaObjectiveTerm::kBankCost)) {
    return absl::UnimplementedError("the bank_cost objective term is not supported");
  }
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + options.budget;
  const Classes classes = ColocationClasses(problem);
  Assigned strict;
  if (std::string reason = StructuralInfeasibility(problem, classes); !reason.empty()) {
    strict.result.status = ConstrainedStatus::kInfeasible;
    strict.result.reason = std::move(reason);
    for (const DsaPool& pool : problem.pools) {
      PoolResult out;
      out.pool = pool.id;
      out.name = pool.name;
      out.status = ConstrainedStatus::kInfeasible;
      out.reason = strict.result.reason;
      strict.result.pools.push_back(std::move(out));
    }
  } else {
    strict = SolveChoices(problem, classes, options, deadline);
  }
  ConstrainedResult result = std::move(strict.result);
  result.total_peak_lower_bound = strict.total_peak_lower_bound;
  result.max_peak_lower_bound = strict.max_peak_lower_bound;
  if (absl::Status s = Verify(problem, result, "the problem as given"); !s.ok()) return s;

  if (result.status == ConstrainedStatus::kInfeasible && options.relax_pipeline_when_infeasible &&
      !strict.pipeline_infeasible_pools.empty()) {
    // Proven infeasible with pipeline depth hard. The problem with that depth relaxed is a
    // different problem: its answer is offered beside this one, never in its place.
    auto relaxed = std::make_shared<RelaxedAnswer>();
    relaxed->problem =
        RelaxPipelineDepth(problem, strict.pipeline_infeasible_pools, &relaxed->groups);
    ConstrainedOptions inner = options;
    inner.relax_pipeline_when_infeasible = false;
    const absl::Time relaxed_deadline =
        std::max(deadline, absl::Now() + std::max(absl::Milliseconds(1), options.budget / 4));
    Assigned answer = SolveChoices(relaxed->problem, ColocationClasses(relaxed->problem), inner,
                                   relaxed_deadline);
    relaxed->result = std::move(answer.result);
    relaxed->result.total_peak_lower_bound = answer.total_peak_lower_bound;
    relaxed->result.max_peak_lower_bound = answer.max_peak_lower_bound;
    for (PoolResult& pool : relaxed->result.pools) {
      for (const auto& [pool_id, group] : relaxed->groups) {
        if (pool_id == pool.pool) pool.relaxed_pipeline_groups.push_back(group);
      }
    }
    if (!relaxed->result.placements.empty()) {
      if (absl::Status s =
              Verify(relaxed->problem, relaxed->result, "the pipeline-relaxed problem");
          !s.ok()) {
        return s;
      }
      result.relaxed = std::move(relaxed);
    }
  }
  return result;
}

DsaProblemDocument RelaxedDocument(const DsaProblemDocument& document,
                                   const RelaxedAnswer& relaxed) {
  DsaProblemDocument out = document;
  out.problem = relaxed.problem;
  out.metadata["accelmem_pipeline_depth_relaxed"] = "true";
  return out;
}

namespace {

DsaSolutionDocument SolutionDocument(const DsaProblemDocument& solved,
                                     const ConstrainedResult& result) {
  DsaSolutionDocument solution;
  solution.schema_version = solved.schema_version;
  solution.profile = solved.profile;
  solution.instance = solved.instance;
  solution.problem_fingerprint = DsaProblemFingerprint(solved);
  solution.metadata["planner"] = "accelmem constrained_planner";
  solution.metadata["status"] = ConstrainedStatusName(result.status);
  solution.metadata["reuse_cost"] = absl::StrCat(result.reuse_cost);
  solution.metadata["reuse_lower_bound"] = absl::StrCat(result.reuse_lower_bound);
  solution.metadata["total_peak"] = absl::StrCat(result.total_peak);
  solution.placements = result.placements;
  return solution;
}

}  // namespace

DsaSolutionDocument MakeSolutionDocument(const DsaProblemDocument& document,
                                         const ConstrainedResult& result) {
  return SolutionDocument(document, result);
}

DsaSolutionDocument MakeRelaxedSolutionDocument(const DsaProblemDocument& document,
                                                const ConstrainedResult& result) {
  const RelaxedAnswer& relaxed = *result.relaxed;
  DsaSolutionDocument solution =
      SolutionDocument(RelaxedDocument(document, relaxed), relaxed.result);
  solution.metadata["solves"] = "the pipeline-relaxed problem, not the problem as given";
  solution.metadata["status_as_given"] = ConstrainedStatusName(result.status);
  std::vector<std::string> groups;
  for (const auto& [pool, group] : relaxed.groups) groups.push_back(absl::StrCat(pool, ":", group));
  solution.metadata["relaxed_pipeline_groups"] = absl::StrJoin(groups, ",");
  return solution;
}

}  // namespace policy
}  // namespace accelmem
