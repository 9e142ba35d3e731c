#include "policy/constrained_planner.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "policy/internal/constrained_pool_search.h"
#include "policy/lifetime_planner.h"
#include "policy/placement_checker.h"

namespace accelmem {
namespace policy {
namespace {

using internal::AlignUp;
using internal::IntervalsOverlap;
using internal::Item;
using internal::kInfinity;
using internal::kNoCapacity;
using internal::PoolModel;
using internal::PoolSearch;

int Find(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

// Builds the model of pool `pool_index`. `drop_pipeline` ignores pipeline_stage reasons (a
// separation left with no reason is dropped, its pair gets a pipeline_serialization penalty).
absl::StatusOr<PoolModel> BuildPool(const DsaProblem& problem, int pool_index,
                                    const std::vector<int>& buffers, bool drop_pipeline) {
  PoolModel m;
  m.pool_index = pool_index;
  const DsaPool& pool = problem.pools[pool_index];
  if (pool.capacity) {
    m.capacity = *pool.capacity;
    m.has_capacity = true;
  }
  m.reserved = pool.reserved_ranges;
  std::sort(m.reserved.begin(), m.reserved.end(),
            [](const DsaAddressRange& a, const DsaAddressRange& b) { return a.begin < b.begin; });
  std::vector<DsaAddressRange> merged;
  for (const DsaAddressRange& r : m.reserved) {
    if (!merged.empty() && r.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, r.end);
    } else {
      merged.push_back(r);
    }
  }
  m.reserved = merged;
  for (const DsaAddressRange& r : m.reserved) {
    m.reserved_total += r.end - r.begin;
    m.reserved_end = std::max(m.reserved_end, r.end);
  }
  std::map<uint32_t, int> local;  // Buffer id -> position in `buffers`.
  for (size_t i = 0; i < buffers.size(); ++i) local[problem.buffers[buffers[i]].id] = i;
  std::vector<int> parent(buffers.size());
  std::iota(parent.begin(), parent.end(), 0);
  for (const DsaPair& pair : problem.constraints.colocations) {
    auto a = local.find(pair.first), b = local.find(pair.second);
    if (a == local.end() || b == local.end()) continue;
    parent[Find(parent, a->second)] = Find(parent, b->second);
  }
  std::map<int, int> item_of_root;
  std::vector<int> item_of(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    const int root = Find(parent, i);
    auto [it, inserted] = item_of_root.emplace(root, static_cast<int>(m.items.size()));
    if (inserted) m.items.emplace_back();
    item_of[i] = it->second;
    Item& item = m.items[it->second];
    const DsaBuffer& buffer = problem.buffers[buffers[i]];
    item.buffers.push_back(buffers[i]);
    item.extent = std::max(item.extent, buffer.size);
    item.alignment = std::max(item.alignment, buffer.alignment);
    item.intervals.insert(item.intervals.end(), buffer.live_intervals.begin(),
                          buffer.live_intervals.end());
  }
  for (Item& item : m.items) {
    std::sort(item.intervals.begin(), item.intervals.end(),
              [](const DsaInterval& a, const DsaInterval& b) { return a.lower < b.lower; });
  }
  for (const DsaPinnedAllocation& pin : problem.constraints.pinned_allocations) {
    auto a = local.find(pin.buffer);
    if (a == local.end()) continue;
    Item& item = m.items[item_of[a->second]];
    if (item.pinned && item.pin_offset != pin.offset) {
      return absl::FailedPreconditionError(absl::StrCat(
          "conflicting pins: colocated buffers pinned at ", item.pin_offset, " and ", pin.offset));
    }
    item.pinned = true;
    item.pin_offset = pin.offset;
    item.exclusive = item.exclusive || pin.exclusive_for_all_time;
  }
  const size_t n = m.items.size();
  m.conflict.assign(n, std::vector<uint8_t>(n, 0));
  m.weight.assign(n, std::vector<uint64_t>(n, 0));
  std::set<std::pair<uint32_t, uint32_t>> excluded;
  for (const DsaPair& pair : problem.constraints.temporal_exclusions) {
    excluded.insert(std::minmax(pair.first, pair.second));
  }
  auto temporal = [&](int a, int b) {  // Positions in `buffers`.
    const DsaBuffer& x = problem.buffers[buffers[a]];
    const DsaBuffer& y = problem.buffers[buffers[b]];
    return !excluded.count(std::minmax(x.id, y.id)) &&
           IntervalsOverlap(x.live_intervals, y.live_intervals);
  };
  for (size_t a = 0; a < buffers.size(); ++a) {
    for (size_t b = a + 1; b < buffers.size(); ++b) {
      const int i = item_of[a], j = item_of[b];
      if (i != j && temporal(a, b)) m.conflict[i][j] = m.conflict[j][i] = 1;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (!m.items[i].exclusive) continue;
    for (size_t j = 0; j < n; ++j) {
      if (i != j) m.conflict[i][j] = m.conflict[j][i] = 1;
    }
  }
  std::vector<std::pair<int, int>> relaxed_pairs;
  for (const DsaSeparation& separation : problem.constraints.separations) {
    auto a = local.find(separation.first), b = local.find(separation.second);
    if (a == local.end() || b == local.end()) continue;
    const int i = item_of[a->second], j = item_of[b->second];
    if (i == j) continue;  // Rejected by validation (colocated and separated).
    const bool pipeline_only = separation.reasons.size() == 1 &&
                               separation.reasons[0] == DsaSeparationReason::kPipelineStage;
    if (pipeline_only && drop_pipeline) {
      if (!temporal(a->second, b->second)) relaxed_pairs.push_back({i, j});
      continue;
    }
    if (pipeline_only && !m.conflict[i][j]) m.pipeline_only.insert(std::minmax(i, j));
    m.conflict[i][j] = m.conflict[j][i] = 1;
  }
  if (problem.cost_model) {
    for (const DsaReusePenalty& penalty : problem.cost_model->reuse_penalties) {
      auto a = local.find(penalty.first), b = local.find(penalty.second);
      if (a == local.end() || b == local.end()) continue;
      const int i = item_of[a->second], j = item_of[b->second];
      if (i == j || temporal(a->second, b->second)) continue;  // Never activated.
      m.weight[i][j] += penalty.cost;
      m.weight[j][i] += penalty.cost;
    }
  }
  for (const auto& [i, j] : relaxed_pairs) {
    m.weight[i][j] += 1;
    m.weight[j][i] += 1;
  }
  IndexPairs(&m);
  return m;
}

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
// reserved, pinned, colocated, excluded or penalised; one alignment) of more than this many
// items goes to the lifetime planner's search, built for thousands of buffers.
constexpr size_t kPlainItems = 40;

bool IsPlainPlacement(const DsaProblem& problem, const PoolModel& model) {
  if (model.any_penalty || !model.reserved.empty() || !model.pipeline_only.empty()) return false;
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

void SolvePool(const DsaProblem& problem, int pool_index, const std::vector<int>& buffers,
               bool drop_pipeline, const ConstrainedOptions& options, absl::Time deadline,
               PoolResult* out, std::vector<uint64_t>* item_offsets, PoolModel* model_out) {
  absl::StatusOr<PoolModel> model = BuildPool(problem, pool_index, buffers, drop_pipeline);
  if (!model.ok()) {
    out->status = ConstrainedStatus::kInfeasible;
    out->reason = std::string(model.status().message());
    return;
  }
  const bool reuse_first = ReuseBeforePeak(problem);
  const bool reuse_matters = HasTerm(problem, DsaObjectiveTerm::kReuseCost) ||
                             drop_pipeline;  // Relaxed depth is paid as reuse.
  const bool peak_matters = HasTerm(problem, DsaObjectiveTerm::kTotalPeak) ||
                            HasTerm(problem, DsaObjectiveTerm::kMaxPeak);
  if (IsPlainPlacement(problem, *model) && peak_matters && model->items.size() > kPlainItems) {
    SolvePlain(*model, deadline, out, item_offsets);
  } else {
    PoolSearch search(*model, reuse_first || drop_pipeline, reuse_matters, peak_matters, deadline);
    search.set_subset_bound(options.subset_bound);
    search.set_search(options.search);
    search.Run(out, item_offsets);
  }
  *model_out = std::move(*model);
}

// Writes into result->relaxed_problem the problem with the pipeline_stage-only separations of
// `pool` removed and a pipeline_serialization penalty of weight 1 for each removed pair that may
// share bytes; the objective puts reuse cost right after fitting.
void RelaxPipelineDepth(const DsaProblem& problem, uint32_t pool, ConstrainedResult* result) {
  if (!result->relaxed_problem) result->relaxed_problem = problem;
  DsaProblem& relaxed = *result->relaxed_problem;
  auto in_pool = [&](uint32_t id) {
    const int b = FindDsaBuffer(problem, id);
    return b >= 0 && problem.buffers[b].allowed_pools[0] == pool;
  };
  std::set<std::pair<uint32_t, uint32_t>> excluded;
  for (const DsaPair& pair : problem.constraints.temporal_exclusions) {
    excluded.insert(std::minmax(pair.first, pair.second));
  }
  std::vector<DsaSeparation> kept;
  for (const DsaSeparation& separation : relaxed.constraints.separations) {
    const bool pipeline_only = separation.reasons.size() == 1 &&
                               separation.reasons[0] == DsaSeparationReason::kPipelineStage;
    if (!pipeline_only || !in_pool(separation.first)) {
      kept.push_back(separation);
      continue;
    }
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
}

}  // namespace

const char* ConstrainedStatusName(ConstrainedStatus status) {
  switch (status) {
    case ConstrainedStatus::kOptimal:
      return "optimal";
    case ConstrainedStatus::kFeasible:
      return "feasible";
    case ConstrainedStatus::kInfeasible:
      return "infeasible";
    case ConstrainedStatus::kNoFitWithinBudget:
      return "no_fit_within_budget";
  }
  return "unknown";
}

absl::StatusOr<ConstrainedResult> SolveConstrained(const DsaProblem& problem,
                                                   const ConstrainedOptions& options) {
  const std::vector<std::string> errors = ValidateDsaProblem(problem);
  if (!errors.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid problem (", errors.size(), " errors): ", errors.front()));
  }
  for (const DsaBuffer& buffer : problem.buffers) {
    if (buffer.allowed_pools.size() != 1) {
      return absl::UnimplementedError(
          absl::StrCat("buffer ", buffer.id, " '", buffer.name,
                       "' may go to more than one pool; the planner needs one pool per buffer"));
    }
  }
  if (HasTerm(problem, DsaObjectiveTerm::kBankCost)) {
    return absl::UnimplementedError("the bank_cost objective term is not supported");
  }
  const absl::Time start = absl::Now();
  ConstrainedResult result;
  std::vector<std::vector<int>> pool_buffers(problem.pools.size());
  for (size_t b = 0; b < problem.buffers.size(); ++b) {
    pool_buffers[FindDsaPool(problem, problem.buffers[b].allowed_pools[0])].push_back(b);
  }
  // Each pool gets an equal share of what is left of the budget, in order.
  int pools_left = 0;
  for (const auto& list : pool_buffers) pools_left += !list.empty();
  std::vector<uint64_t> offsets(problem.buffers.size(), 0);
  bool all_placed = true;
  result.status = ConstrainedStatus::kOptimal;
  // Small pools first, each with an equal share of what is left: the ones that end early leave
  // their time to the larger ones after them.
  std::vector<size_t> pool_order(problem.pools.size());
  std::iota(pool_order.begin(), pool_order.end(), 0);
  std::stable_sort(pool_order.begin(), pool_order.end(), [&](size_t a, size_t b) {
    return pool_buffers[a].size() < pool_buffers[b].size();
  });
  std::vector<PoolResult> pool_results(problem.pools.size());
  for (size_t p : pool_order) {
    PoolResult pool_result;
    pool_result.pool = problem.pools[p].id;
    pool_result.name = problem.pools[p].name;
    if (pool_buffers[p].empty()) {
      pool_result.status = ConstrainedStatus::kOptimal;
      for (const DsaAddressRange& r : problem.pools[p].reserved_ranges) {
        pool_result.peak = std::max(pool_result.peak, r.end);
      }
      pool_result.peak_lower_bound = pool_result.peak;
      pool_results[p] = pool_result;
      continue;
    }
    const absl::Duration left = options.budget - (absl::Now() - start);
    const absl::Time deadline = absl::Now() + std::max(absl::ZeroDuration(), left / pools_left);
    --pools_left;
    std::vector<uint64_t> item_offsets;
    PoolModel model;
    SolvePool(problem, p, pool_buffers[p], false, options, deadline, &pool_result, &item_offsets,
              &model);
    if (pool_result.status == ConstrainedStatus::kInfeasible &&
        options.relax_pipeline_when_infeasible && !model.pipeline_only.empty()) {
      // Proven infeasible with pipeline depth hard: relax it, and say which groups.
      PoolResult relaxed = pool_result;
      std::vector<uint64_t> relaxed_offsets;
      PoolModel relaxed_model;
      const absl::Time relaxed_deadline = absl::Now() + std::max(absl::Milliseconds(1), left / 4);
      SolvePool(problem, p, pool_buffers[p], true, options, relaxed_deadline, &relaxed,
                &relaxed_offsets, &relaxed_model);
      if (!relaxed_offsets.empty()) {
        std::set<uint32_t> members;
        for (const auto& [i, j] : model.pipeline_only) {
          for (int b : model.items[i].buffers) members.insert(problem.buffers[b].id);
          for (int b : model.items[j].buffers) members.insert(problem.buffers[b].id);
        }
        if (problem.pypto_structure) {
          for (const DsaPipelineGroup& group : problem.pypto_structure->pipeline_groups) {
            if (group.pool != problem.pools[p].id) continue;
            for (const DsaPipelineMember& member : group.members) {
              if (members.count(member.buffer)) {
                relaxed.relaxed_pipeline_groups.push_back(group.group);
                break;
              }
            }
          }
        }
        RelaxPipelineDepth(problem, problem.pools[p].id, &result);
        relaxed.reason = absl::StrCat(
            "pipeline depth relaxed (strict placement proven "
            "infeasible: ",
            pool_result.reason, ")");
        pool_result = relaxed;
        item_offsets = relaxed_offsets;
        model = std::move(relaxed_model);
      }
    }
    if (item_offsets.empty()) {
      all_placed = false;
    } else {
      for (size_t i = 0; i < model.items.size(); ++i) {
        for (int b : model.items[i].buffers) offsets[b] = item_offsets[i];
      }
    }
    pool_results[p] = std::move(pool_result);
  }
  // Pools that ended early leave time: the pools left open get it, shared equally, and keep a
  // second result that is better (proven, or no worse in cost, peak and bound).
  std::vector<size_t> open;
  for (size_t p : pool_order) {
    const ConstrainedStatus status = pool_results[p].status;
    if ((status == ConstrainedStatus::kFeasible ||
         status == ConstrainedStatus::kNoFitWithinBudget) &&
        pool_results[p].relaxed_pipeline_groups.empty()) {
      open.push_back(p);
    }
  }
  for (size_t k = 0; k < open.size(); ++k) {
    const size_t p = open[k];
    const absl::Duration left = options.budget - (absl::Now() - start);
    if (left < absl::Milliseconds(1)) break;
    PoolResult second;
    second.pool = problem.pools[p].id;
    second.name = problem.pools[p].name;
    std::vector<uint64_t> item_offsets;
    PoolModel model;
    SolvePool(problem, p, pool_buffers[p], false, options, absl::Now() + left / (open.size() - k),
              &second, &item_offsets, &model);
    const PoolResult& first = pool_results[p];
    const bool better =
        !item_offsets.empty() &&
        (Severity(second.status) < Severity(first.status) ||
         (second.status == first.status && second.reuse_cost <= first.reuse_cost &&
          second.peak <= first.peak && second.reuse_lower_bound >= first.reuse_lower_bound &&
          second.peak_lower_bound >= first.peak_lower_bound));
    if (!better) continue;
    for (size_t i = 0; i < model.items.size(); ++i) {
      for (int b : model.items[i].buffers) offsets[b] = item_offsets[i];
    }
    pool_results[p] = std::move(second);
  }
  all_placed = true;  // Every pool with buffers has a placement (optimal or feasible).
  for (size_t p = 0; p < problem.pools.size(); ++p) {
    const ConstrainedStatus status = pool_results[p].status;
    if (!pool_buffers[p].empty() && status != ConstrainedStatus::kOptimal &&
        status != ConstrainedStatus::kFeasible) {
      all_placed = false;
    }
  }
  for (PoolResult& pool_result : pool_results) {
    if (Severity(pool_result.status) > Severity(result.status)) result.status = pool_result.status;
    if (result.reason.empty() && pool_result.status != ConstrainedStatus::kOptimal) {
      result.reason = absl::StrCat("pool ", pool_result.pool, " '", pool_result.name,
                                   "': ", pool_result.reason);
    }
    result.reuse_cost += pool_result.reuse_cost;
    result.reuse_lower_bound += pool_result.reuse_lower_bound;
    result.total_peak += pool_result.peak;
    result.max_peak = std::max(result.max_peak, pool_result.peak);
    result.pools.push_back(std::move(pool_result));
  }
  if (all_placed) {
    for (size_t b = 0; b < problem.buffers.size(); ++b) {
      result.placements.push_back(
          {problem.buffers[b].id, problem.buffers[b].allowed_pools[0], offsets[b]});
    }
    std::sort(result.placements.begin(), result.placements.end(),
              [](const DsaPlacement& a, const DsaPlacement& b) { return a.buffer < b.buffer; });
  }
  return result;
}

DsaProblemDocument SolvedDocument(const DsaProblemDocument& document,
                                  const ConstrainedResult& result) {
  if (!result.relaxed_problem) return document;
  DsaProblemDocument relaxed = document;
  relaxed.problem = *result.relaxed_problem;
  relaxed.metadata["accelmem_pipeline_depth_relaxed"] = "true";
  return relaxed;
}

DsaSolutionDocument MakeSolutionDocument(const DsaProblemDocument& document,
                                         const ConstrainedResult& result) {
  DsaSolutionDocument solution;
  solution.schema_version = document.schema_version;
  solution.profile = document.profile;
  solution.instance = document.instance;
  solution.problem_fingerprint = DsaProblemFingerprint(SolvedDocument(document, result));
  solution.metadata["planner"] = "accelmem constrained_planner";
  solution.metadata["status"] = ConstrainedStatusName(result.status);
  solution.metadata["reuse_cost"] = absl::StrCat(result.reuse_cost);
  solution.metadata["reuse_lower_bound"] = absl::StrCat(result.reuse_lower_bound);
  solution.metadata["total_peak"] = absl::StrCat(result.total_peak);
  std::vector<std::string> relaxed;
  for (const PoolResult& pool : result.pools) {
    for (uint32_t group : pool.relaxed_pipeline_groups) {
      relaxed.push_back(absl::StrCat(pool.pool, ":", group));
    }
  }
  if (!relaxed.empty()) solution.metadata["relaxed_pipeline_groups"] = absl::StrJoin(relaxed, ",");
  solution.placements = result.placements;
  return solution;
}

}  // namespace policy
}  // namespace accelmem
