#include "policy/testing/dsa_problem_generator.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace accelmem {
namespace policy_testing {
namespace {

using policy::DsaAddressRange;
using policy::DsaBuffer;
using policy::DsaInterval;
using policy::DsaObjectiveTerm;
using policy::DsaPair;
using policy::DsaPenaltyReason;
using policy::DsaPinnedAllocation;
using policy::DsaPool;
using policy::DsaProblem;
using policy::DsaReusePenalty;
using policy::DsaSeparation;
using policy::DsaSeparationReason;

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  // Uniform in [lo, hi] (hi >= lo); the modulo bias is irrelevant here.
  int64_t Uniform(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(engine_() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(double p) { return static_cast<double>(engine_() >> 11) * 0x1.0p-53 < p; }

 private:
  std::mt19937_64 engine_;
};

bool LiveTogether(const DsaBuffer& a, const DsaBuffer& b) {
  for (const DsaInterval& x : a.live_intervals) {
    for (const DsaInterval& y : b.live_intervals) {
      if (x.lower < y.upper && y.lower < x.upper) return true;
    }
  }
  return false;
}

bool Live(const DsaBuffer& b, int64_t t) {
  for (const DsaInterval& x : b.live_intervals) {
    if (x.lower <= t && t < x.upper) return true;
  }
  return false;
}

// Colocation classes over buffer indices (union-find).
struct Classes {
  std::vector<int> parent;
  explicit Classes(int n) : parent(n) {
    for (int i = 0; i < n; ++i) parent[i] = i;
  }
  int Find(int i) { return parent[i] == i ? i : parent[i] = Find(parent[i]); }
  void Join(int a, int b) { parent[Find(a)] = Find(b); }
};

// The edge cases of DsaGeneratorOptions, each drawn only when its probability is above 0.
void AddEdgeCases(const DsaGeneratorOptions& options, const std::vector<int>& pool_of,
                  Classes* classes, Random* rng, DsaProblem* problem) {
  const int n = static_cast<int>(problem->buffers.size());
  const uint64_t unit = options.size_unit;
  std::vector<DsaBuffer>& buffers = problem->buffers;
  const bool two_pools = problem->pools.size() == 2;
  auto index_of = [&](uint32_t id) {
    int i = 0;
    while (buffers[i].id != id) ++i;
    return i;
  };
  auto class_pinned = [&](int i) {
    for (const DsaPinnedAllocation& pin : problem->constraints.pinned_allocations) {
      if (classes->Find(index_of(pin.buffer)) == classes->Find(i)) return true;
    }
    return false;
  };
  if (two_pools && options.cross_pool_colocation_probability > 0 &&
      rng->Chance(options.cross_pool_colocation_probability)) {
    std::vector<int> first, second;
    for (int i = 0; i < n; ++i) (pool_of[i] == 0 ? first : second).push_back(i);
    if (!first.empty() && !second.empty()) {
      const int a = first[rng->Uniform(0, first.size() - 1)];
      const int b = second[rng->Uniform(0, second.size() - 1)];
      if (!class_pinned(a) || !class_pinned(b)) {
        problem->constraints.colocations.push_back({buffers[a].id, buffers[b].id});
        classes->Join(a, b);
      }
    }
  }
  if (options.chained_separation_probability > 0 &&
      rng->Chance(options.chained_separation_probability) &&
      !problem->constraints.colocations.empty()) {
    const DsaPair chain = problem->constraints.colocations[0];
    const int a = index_of(chain.first), b = index_of(chain.second);
    std::vector<int> others;
    for (int i = 0; i < n; ++i) {
      bool separated_from_b = false;  // Colocating a separated pair would be invalid.
      for (const DsaSeparation& s : problem->constraints.separations) {
        separated_from_b = separated_from_b ||
                           (s.first == buffers[b].id && s.second == buffers[i].id) ||
                           (s.first == buffers[i].id && s.second == buffers[b].id);
      }
      if (pool_of[i] == pool_of[b] && classes->Find(i) != classes->Find(a) && !class_pinned(i) &&
          !separated_from_b) {
        others.push_back(i);
      }
    }
    if (!others.empty()) {
      const int c = others[rng->Uniform(0, others.size() - 1)];
      problem->constraints.colocations.push_back({buffers[b].id, buffers[c].id});
      classes->Join(b, c);
      // A separation may not join a directly colocated pair (that is invalid), only the chain's
      // ends.
      problem->constraints.separations.push_back(
          {buffers[a].id, buffers[c].id, {DsaSeparationReason::kGeneric}});
    }
  }
  if (options.edge_pin_probability > 0) {
    for (DsaPinnedAllocation& pin : problem->constraints.pinned_allocations) {
      if (!rng->Chance(options.edge_pin_probability)) continue;
      const DsaPool& pool = problem->pools[pin.pool == problem->pools[0].id ? 0 : 1];
      if (!pool.capacity) continue;
      const int i = index_of(pin.buffer);
      uint64_t extent = 0;
      for (int j = 0; j < n; ++j) {
        if (classes->Find(j) == classes->Find(i)) extent = std::max(extent, buffers[j].size);
      }
      const uint64_t top = *pool.capacity >= buffers[i].size ? *pool.capacity - buffers[i].size : 0;
      const uint64_t low = std::min(top, *pool.capacity >= extent ? *pool.capacity - extent : 0);
      // The pin itself must stay clear of the reserved ranges (else the problem is invalid);
      // its class may not.
      std::vector<uint64_t> candidates;
      for (uint64_t offset = low - low % unit; offset <= top; offset += unit) {
        bool clear = true;
        for (const DsaAddressRange& r : pool.reserved_ranges) {
          if (offset < r.end && r.begin < offset + buffers[i].size) clear = false;
        }
        if (clear) candidates.push_back(offset);
      }
      if (!candidates.empty()) pin.offset = candidates[rng->Uniform(0, candidates.size() - 1)];
    }
  }
  if (options.pipeline_probability > 0) {
    for (size_t p = 0; p < problem->pools.size(); ++p) {
      if (!rng->Chance(options.pipeline_probability)) continue;
      std::vector<std::pair<int, int>> pairs;
      for (int i = 0; i < n; ++i) {
        for (int j = i + 1; j < n; ++j) {
          if (pool_of[i] == static_cast<int>(p) && pool_of[j] == static_cast<int>(p) &&
              classes->Find(i) != classes->Find(j) && !LiveTogether(buffers[i], buffers[j])) {
            pairs.push_back({i, j});
          }
        }
      }
      if (pairs.empty()) continue;
      const auto [i, j] = pairs[rng->Uniform(0, pairs.size() - 1)];
      problem->constraints.separations.push_back(
          {buffers[i].id, buffers[j].id, {DsaSeparationReason::kPipelineStage}});
      if (!problem->pypto_structure) problem->pypto_structure.emplace();
      policy::DsaPipelineGroup group;
      group.group = static_cast<uint32_t>(problem->pypto_structure->pipeline_groups.size());
      group.pool = problem->pools[p].id;
      group.slot_size = std::max(buffers[i].size, buffers[j].size);
      group.depth = group.effective_depth = 2;
      group.members = {{buffers[i].id, 0, 0}, {buffers[j].id, 1, 1}};
      problem->pypto_structure->pipeline_groups.push_back(group);
    }
  }
  if (two_pools && options.multi_pool_probability > 0) {
    for (int i = 0; i < n; ++i) {
      if (class_pinned(i) || !rng->Chance(options.multi_pool_probability)) continue;
      buffers[i].allowed_pools = {problem->pools[pool_of[i]].id, problem->pools[1 - pool_of[i]].id};
    }
  }
  if (options.every_objective_order) {
    std::vector<DsaObjectiveTerm> terms = {
        DsaObjectiveTerm::kCapacityOverflow, DsaObjectiveTerm::kReuseCost,
        DsaObjectiveTerm::kTotalPeak, DsaObjectiveTerm::kMaxPeak};
    for (size_t k = terms.size(); k > 1; --k) {  // Fisher-Yates on our own generator.
      std::swap(terms[k - 1], terms[rng->Uniform(0, k - 1)]);
    }
    terms.resize(rng->Uniform(1, 4));
    if (terms.size() == 1 && terms[0] == DsaObjectiveTerm::kCapacityOverflow) {
      terms.push_back(DsaObjectiveTerm::kReuseCost);
    }
    problem->objective.terms = terms;
  }
}

// Exact-or-disjoint pairs (problem.extensions): per pair of buffers of one pool in different
// colocation classes, never live together (an in-place pair: one dies where the other is
// defined), with options.exact_or_disjoint_probability. Drawn last and only when that is above
// 0, so every other problem stays as it was.
void AddExactOrDisjoint(const DsaGeneratorOptions& options, const std::vector<int>& pool_of,
                        Classes* classes, Random* rng, DsaProblem* problem) {
  if (options.exact_or_disjoint_probability <= 0) return;
  const std::vector<DsaBuffer>& buffers = problem->buffers;
  const int n = static_cast<int>(buffers.size());
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      if (pool_of[i] != pool_of[j] || classes->Find(i) == classes->Find(j) ||
          LiveTogether(buffers[i], buffers[j])) {
        continue;
      }
      if (rng->Chance(options.exact_or_disjoint_probability)) {
        problem->extensions.exact_or_disjoint.push_back({buffers[i].id, buffers[j].id});
      }
    }
  }
}

}  // namespace

DsaProblem GenerateDsaProblem(uint64_t seed, const DsaGeneratorOptions& options) {
  Random rng(seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull);
  const uint64_t unit = options.size_unit;
  const int horizon = std::max(options.horizon, 4);
  DsaProblem problem;

  const int num_pools = rng.Chance(options.two_pools_probability) ? 2 : 1;
  for (int p = 0; p < num_pools; ++p) {
    DsaPool pool;
    pool.id = static_cast<uint32_t>(1 + 3 * p);
    pool.name = "pool" + std::to_string(pool.id);
    problem.pools.push_back(pool);
  }

  const int n = static_cast<int>(rng.Uniform(options.min_buffers, options.max_buffers));
  std::vector<int> pool_of(n);
  for (int i = 0; i < n; ++i) {
    DsaBuffer b;
    b.id = static_cast<uint32_t>(2 * i + 1);
    b.name = "b" + std::to_string(b.id);
    b.size = unit * static_cast<uint64_t>(rng.Uniform(1, options.max_size_units));
    b.alignment = rng.Chance(options.aligned_probability) ? unit : 1;
    const int64_t start = rng.Uniform(0, horizon - 2);
    const int64_t end =
        std::min<int64_t>(start + rng.Uniform(1, std::max(1, horizon / 3)), horizon);
    b.live_intervals.push_back({start, end});
    if (rng.Chance(options.multi_interval_probability) && end + 1 < horizon) {
      const int64_t start2 = rng.Uniform(end + 1, horizon - 1);
      const int64_t end2 = std::min<int64_t>(start2 + rng.Uniform(1, 3), horizon);
      b.live_intervals.push_back({start2, end2});
    }
    pool_of[i] = static_cast<int>(rng.Uniform(0, num_pools - 1));
    b.allowed_pools.push_back(problem.pools[pool_of[i]].id);
    problem.buffers.push_back(b);
  }
  const std::vector<DsaBuffer>& buffers = problem.buffers;

  // Colocations first (pins and separations avoid what they would contradict).
  Classes classes(n);
  for (int p = 0; p < num_pools; ++p) {
    std::vector<int> members;
    for (int i = 0; i < n; ++i) {
      if (pool_of[i] == p) members.push_back(i);
    }
    if (members.size() < 2) continue;
    int pairs = rng.Chance(options.colocation_probability) ? 1 : 0;
    if (pairs > 0 && members.size() >= 4 && rng.Chance(0.3)) pairs = 2;
    for (int k = 0; k < pairs; ++k) {
      const int a = members[rng.Uniform(0, members.size() - 1)];
      const int b = members[rng.Uniform(0, members.size() - 1)];
      if (a == b || classes.Find(a) == classes.Find(b)) continue;
      problem.constraints.colocations.push_back({buffers[a].id, buffers[b].id});
      classes.Join(a, b);
    }
  }

  // Capacities and reserved ranges.
  for (int p = 0; p < num_pools; ++p) {
    uint64_t total = 0;  // Everything side by side.
    uint64_t load = 0;   // Largest total live at one time.
    uint64_t largest = unit;
    for (int i = 0; i < n; ++i) {
      if (pool_of[i] != p) continue;
      total += buffers[i].size;
      largest = std::max(largest, buffers[i].size);
    }
    for (int64_t t = 0; t < horizon; ++t) {
      uint64_t live = 0;
      for (int i = 0; i < n; ++i) {
        if (pool_of[i] == p && Live(buffers[i], t)) live += buffers[i].size;
      }
      load = std::max(load, live);
    }
    const double mode = static_cast<double>(rng.Uniform(0, 999)) / 1000.0;
    bool bounded = true;
    uint64_t free_bytes = 0;  // Capacity less the reserved bytes.
    if (mode < options.unbounded_probability) {
      bounded = false;
      free_bytes = std::max(total, unit);
    } else if (mode < options.unbounded_probability + options.loose_probability) {
      free_bytes = std::max(total, unit);
    } else if (mode < options.unbounded_probability + options.loose_probability +
                          options.tight_probability) {
      free_bytes = std::max(load + unit * static_cast<uint64_t>(rng.Uniform(0, 1)), largest);
    } else {
      free_bytes = std::max(load > unit ? load - unit : unit, unit);
    }

    std::vector<uint64_t> gaps;  // Free bytes below each reserved range, on the grid.
    std::vector<uint64_t> lengths;
    if (rng.Chance(options.reserved_probability)) {
      const int count = rng.Chance(0.3) ? 2 : 1;
      for (int k = 0; k < count; ++k) {
        gaps.push_back(unit * static_cast<uint64_t>(rng.Uniform(0, free_bytes / unit)));
        lengths.push_back(unit * static_cast<uint64_t>(rng.Uniform(1, 2)));
      }
      if (count == 2 && gaps[0] > gaps[1]) std::swap(gaps[0], gaps[1]);
      if (count == 2 && gaps[0] == gaps[1]) {  // Adjacent: one range.
        lengths[0] += lengths[1];
        gaps.pop_back();
        lengths.pop_back();
      }
    }
    uint64_t reserved_bytes = 0;
    DsaPool& pool = problem.pools[p];
    for (size_t k = 0; k < gaps.size(); ++k) {
      const uint64_t begin = gaps[k] + reserved_bytes;
      pool.reserved_ranges.push_back({begin, begin + lengths[k]});
      reserved_bytes += lengths[k];
    }
    if (bounded) pool.capacity = free_bytes + reserved_bytes;
  }

  // Pins: on the grid, inside the capacity (or the free bytes of an unbounded pool), clear of
  // the reserved ranges; at most one pinned buffer per colocation class.
  std::vector<bool> class_pinned(n, false);
  for (int p = 0; p < num_pools; ++p) {
    if (!rng.Chance(options.pin_probability)) continue;
    std::vector<int> members;
    for (int i = 0; i < n; ++i) {
      if (pool_of[i] == p && !class_pinned[classes.Find(i)]) members.push_back(i);
    }
    if (members.empty()) continue;
    const int i = members[rng.Uniform(0, members.size() - 1)];
    const DsaPool& pool = problem.pools[p];
    uint64_t limit = 0;
    if (pool.capacity) {
      limit = *pool.capacity;
    } else {
      for (int j = 0; j < n; ++j) {
        if (pool_of[j] == p) limit += buffers[j].size;
      }
      for (const DsaAddressRange& r : pool.reserved_ranges) limit += r.end - r.begin;
    }
    std::vector<uint64_t> candidates;
    for (uint64_t offset = 0; offset + buffers[i].size <= limit; offset += unit) {
      bool clear = true;
      for (const DsaAddressRange& r : pool.reserved_ranges) {
        if (offset < r.end && r.begin < offset + buffers[i].size) clear = false;
      }
      if (clear) candidates.push_back(offset);
    }
    if (candidates.empty()) continue;
    DsaPinnedAllocation pin;
    pin.buffer = buffers[i].id;
    pin.pool = pool.id;
    pin.offset = candidates[rng.Uniform(0, candidates.size() - 1)];
    pin.exclusive_for_all_time = rng.Chance(options.exclusive_pin_probability);
    problem.constraints.pinned_allocations.push_back(pin);
    class_pinned[classes.Find(i)] = true;
  }

  // Pairwise constraints and penalties, within a pool, between colocation classes.
  static const DsaSeparationReason kSeparationReasons[] = {
      DsaSeparationReason::kGeneric, DsaSeparationReason::kPipelineStage,
      DsaSeparationReason::kTargetHazard, DsaSeparationReason::kSemanticNoAlias,
      DsaSeparationReason::kCrossPipe};
  static const DsaPenaltyReason kPenaltyReasons[] = {DsaPenaltyReason::kGeneric,
                                                     DsaPenaltyReason::kPipelineSerialization,
                                                     DsaPenaltyReason::kLoadMotionSerialization,
                                                     DsaPenaltyReason::kCrossPipe,
                                                     DsaPenaltyReason::kCrossCore,
                                                     DsaPenaltyReason::kEventBudget};
  std::vector<DsaReusePenalty> penalties;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      if (pool_of[i] != pool_of[j] || classes.Find(i) == classes.Find(j)) continue;
      const DsaPair pair = {buffers[i].id, buffers[j].id};
      if (rng.Chance(options.separation_probability)) {
        DsaSeparation separation;
        separation.first = pair.first;
        separation.second = pair.second;
        if (rng.Chance(0.5)) separation.reasons.push_back(kSeparationReasons[rng.Uniform(0, 4)]);
        problem.constraints.separations.push_back(separation);
      }
      if (LiveTogether(buffers[i], buffers[j])) {
        if (rng.Chance(options.exclusion_probability)) {
          problem.constraints.temporal_exclusions.push_back(pair);
        }
      } else if (rng.Chance(options.penalty_probability)) {
        DsaReusePenalty penalty;
        penalty.first = pair.first;
        penalty.second = pair.second;
        penalty.cost = static_cast<uint64_t>(rng.Uniform(1, std::max(1, options.max_penalty_cost)));
        penalty.reason = kPenaltyReasons[rng.Uniform(0, 5)];
        penalties.push_back(penalty);
      }
    }
  }

  switch (rng.Uniform(0, 2)) {
    case 0:
      problem.objective.terms = {DsaObjectiveTerm::kCapacityOverflow, DsaObjectiveTerm::kReuseCost};
      break;
    case 1:
      problem.objective.terms = {DsaObjectiveTerm::kTotalPeak, DsaObjectiveTerm::kMaxPeak};
      break;
    default:
      problem.objective.terms = {DsaObjectiveTerm::kCapacityOverflow, DsaObjectiveTerm::kReuseCost,
                                 DsaObjectiveTerm::kTotalPeak};
      break;
  }
  if (!penalties.empty()) {
    problem.cost_model.emplace();
    problem.cost_model->reuse_penalties = std::move(penalties);
  }
  AddEdgeCases(options, pool_of, &classes, &rng, &problem);
  AddExactOrDisjoint(options, pool_of, &classes, &rng, &problem);
  return problem;
}

}  // namespace policy_testing
}  // namespace accelmem
