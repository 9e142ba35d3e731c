#include "policy/internal/constrained_model.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace accelmem {
namespace policy {
namespace internal {
namespace {

// The pool's capacity and its reserved ranges, sorted and merged.
void SetCapacityAndReserved(const DsaPool& pool, PoolModel* m) {
  if (pool.capacity) {
    m->capacity = *pool.capacity;
    m->has_capacity = true;
  }
  std::vector<DsaAddressRange> sorted = pool.reserved_ranges;
  std::sort(sorted.begin(), sorted.end(),
            [](const DsaAddressRange& a, const DsaAddressRange& b) { return a.begin < b.begin; });
  for (const DsaAddressRange& r : sorted) {
    if (!m->reserved.empty() && r.begin <= m->reserved.back().end) {
      m->reserved.back().end = std::max(m->reserved.back().end, r.end);
    } else {
      m->reserved.push_back(r);
    }
  }
  for (const DsaAddressRange& r : m->reserved) {
    m->reserved_total += r.end - r.begin;
    m->reserved_end = std::max(m->reserved_end, r.end);
  }
}

// The pool's buffers and the items they make.
struct Members {
  const DsaProblem& problem;
  const std::vector<int>& buffers;
  std::map<uint32_t, int> local;  // Buffer id -> position in `buffers`.
  std::vector<int> item_of;       // Position in `buffers` -> item.

  // The position in `buffers` of buffer `id`, or -1 when it is in another pool.
  int Local(uint32_t id) const {
    auto it = local.find(id);
    return it == local.end() ? -1 : it->second;
  }
};

// One item per colocation class (union-find over the colocations inside the pool), in the order
// of each class's first buffer: the largest size and alignment, every member's intervals.
void BuildItems(Members* members, PoolModel* m) {
  const DsaProblem& problem = members->problem;
  const std::vector<int>& buffers = members->buffers;
  for (size_t i = 0; i < buffers.size(); ++i) members->local[problem.buffers[buffers[i]].id] = i;
  std::vector<int> parent(buffers.size());
  std::iota(parent.begin(), parent.end(), 0);
  for (const DsaPair& pair : problem.constraints.colocations) {
    const int a = members->Local(pair.first), b = members->Local(pair.second);
    if (a < 0 || b < 0) continue;
    parent[FindRoot(parent, a)] = FindRoot(parent, b);
  }
  std::map<int, int> item_of_root;
  members->item_of.assign(buffers.size(), 0);
  for (size_t i = 0; i < buffers.size(); ++i) {
    auto [it, inserted] =
        item_of_root.emplace(FindRoot(parent, i), static_cast<int>(m->items.size()));
    if (inserted) m->items.emplace_back();
    members->item_of[i] = it->second;
    Item& item = m->items[it->second];
    const DsaBuffer& buffer = problem.buffers[buffers[i]];
    item.buffers.push_back(buffers[i]);
    item.extent = std::max(item.extent, buffer.size);
    item.alignment = std::max(item.alignment, buffer.alignment);
    item.intervals.insert(item.intervals.end(), buffer.live_intervals.begin(),
                          buffer.live_intervals.end());
  }
  for (Item& item : m->items) {
    std::sort(item.intervals.begin(), item.intervals.end(),
              [](const DsaInterval& a, const DsaInterval& b) { return a.lower < b.lower; });
  }
}

// A pin fixes its whole class.
absl::Status ApplyPins(const Members& members, PoolModel* m) {
  for (const DsaPinnedAllocation& pin : members.problem.constraints.pinned_allocations) {
    const int a = members.Local(pin.buffer);
    if (a < 0) continue;
    Item& item = m->items[members.item_of[a]];
    if (item.pinned && item.pin_offset != pin.offset) {
      return absl::FailedPreconditionError(absl::StrCat(
          "conflicting pins: colocated buffers pinned at ", item.pin_offset, " and ", pin.offset));
    }
    item.pinned = true;
    item.pin_offset = pin.offset;
    item.exclusive = item.exclusive || pin.exclusive_for_all_time;
  }
  return absl::OkStatus();
}

// Do the buffers at positions a and b of `buffers` live together (no temporal exclusion)?
class Temporal {
 public:
  explicit Temporal(const Members& members) : members_(members) {
    for (const DsaPair& pair : members.problem.constraints.temporal_exclusions) {
      excluded_.insert(std::minmax(pair.first, pair.second));
    }
  }
  bool operator()(int a, int b) const {
    const DsaBuffer& x = members_.problem.buffers[members_.buffers[a]];
    const DsaBuffer& y = members_.problem.buffers[members_.buffers[b]];
    return !excluded_.count(std::minmax(x.id, y.id)) &&
           IntervalsOverlap(x.live_intervals, y.live_intervals);
  }

 private:
  const Members& members_;
  std::set<std::pair<uint32_t, uint32_t>> excluded_;
};

// Items conflict when two of their buffers live together, when one is pinned exclusive for all
// time, or when a separation names them.
absl::Status BuildConflicts(const Members& members, const Temporal& temporal, PoolModel* m) {
  const size_t n = m->items.size();
  m->conflict.assign(n, std::vector<uint8_t>(n, 0));
  for (size_t a = 0; a < members.buffers.size(); ++a) {
    for (size_t b = a + 1; b < members.buffers.size(); ++b) {
      const int i = members.item_of[a], j = members.item_of[b];
      if (i != j && temporal(a, b)) m->conflict[i][j] = m->conflict[j][i] = 1;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (!m->items[i].exclusive) continue;
    for (size_t j = 0; j < n; ++j) {
      if (i != j) m->conflict[i][j] = m->conflict[j][i] = 1;
    }
  }
  for (const DsaSeparation& separation : members.problem.constraints.separations) {
    const int a = members.Local(separation.first), b = members.Local(separation.second);
    if (a < 0 || b < 0) continue;
    const int i = members.item_of[a], j = members.item_of[b];
    if (i == j) {
      // Colocated (perhaps through other buffers) yet separated: no placement exists.
      return absl::FailedPreconditionError(
          absl::StrCat("buffers ", separation.first, " and ", separation.second,
                       " are separated but colocated (they share one offset)"));
    }
    const bool pipeline_only = separation.reasons.size() == 1 &&
                               separation.reasons[0] == DsaSeparationReason::kPipelineStage;
    if (pipeline_only && !m->conflict[i][j]) m->pipeline_only.insert(std::minmax(i, j));
    m->conflict[i][j] = m->conflict[j][i] = 1;
  }
  return absl::OkStatus();
}

// Penalties between items; a penalty inside a class or between buffers live together is never
// paid (they cannot overlap), so it is dropped.
void BuildWeights(const Members& members, const Temporal& temporal, PoolModel* m) {
  const size_t n = m->items.size();
  m->weight.assign(n, std::vector<uint64_t>(n, 0));
  if (!members.problem.cost_model) return;
  for (const DsaReusePenalty& penalty : members.problem.cost_model->reuse_penalties) {
    const int a = members.Local(penalty.first), b = members.Local(penalty.second);
    if (a < 0 || b < 0) continue;
    const int i = members.item_of[a], j = members.item_of[b];
    if (i == j || temporal(a, b)) continue;  // Never activated.
    m->weight[i][j] += penalty.cost;
    m->weight[j][i] += penalty.cost;
  }
}

// Exact-or-disjoint pairs between two items of the pool (IndexPairs drops those that conflict).
void BuildExactPairs(const Members& members, PoolModel* m) {
  for (const DsaPair& pair : members.problem.extensions.exact_or_disjoint) {
    const int a = members.Local(pair.first), b = members.Local(pair.second);
    if (a < 0 || b < 0) continue;
    const int i = members.item_of[a], j = members.item_of[b];
    if (i != j) m->exact_pairs.insert(std::minmax(i, j));
  }
}

// The exact_* fields of IndexPairs.
void IndexExactPairs(PoolModel* m) {
  const size_t n = m->items.size();
  m->exact_of.assign(n, {});
  m->exact_group.assign(n, -1);
  m->exact_members.clear();
  m->exact_alignments.clear();
  for (auto it = m->exact_pairs.begin(); it != m->exact_pairs.end();) {
    if (m->conflict[it->first][it->second]) {
      it = m->exact_pairs.erase(it);
    } else {
      ++it;
    }
  }
  if (m->exact_pairs.empty()) return;
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (const auto& [i, j] : m->exact_pairs) {
    m->exact_of[i].push_back(j);
    m->exact_of[j].push_back(i);
    parent[FindRoot(parent, i)] = FindRoot(parent, j);
  }
  std::map<int, int> group_of_root;
  for (size_t i = 0; i < n; ++i) {
    if (m->exact_of[i].empty()) continue;
    auto [it, inserted] =
        group_of_root.emplace(FindRoot(parent, i), static_cast<int>(m->exact_members.size()));
    if (inserted) {
      m->exact_members.emplace_back();
      m->exact_alignments.emplace_back();
    }
    m->exact_group[i] = it->second;
    m->exact_members[it->second].push_back(static_cast<int>(i));
    m->exact_alignments[it->second].push_back(m->items[i].alignment);
  }
  for (std::vector<uint64_t>& alignments : m->exact_alignments) {
    std::sort(alignments.begin(), alignments.end());
    alignments.erase(std::unique(alignments.begin(), alignments.end()), alignments.end());
  }
}

}  // namespace

bool IntervalsOverlap(const std::vector<DsaInterval>& a, const std::vector<DsaInterval>& b) {
  for (const DsaInterval& x : a) {
    for (const DsaInterval& y : b) {
      if (x.lower < y.upper && y.lower < x.upper) return true;
    }
  }
  return false;
}

void IndexPairs(PoolModel* m) {
  const size_t n = m->items.size();
  m->conflicts_of.assign(n, {});
  m->penalties_of.assign(n, {});
  m->any_penalty = false;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      if (m->conflict[i][j]) {
        m->conflicts_of[i].push_back(static_cast<int>(j));
        m->weight[i][j] = 0;
      } else if (m->weight[i][j] > 0) {
        m->penalties_of[i].push_back({static_cast<int>(j), m->weight[i][j]});
        m->any_penalty = true;
      }
    }
  }
  IndexExactPairs(m);
}

absl::StatusOr<PoolModel> BuildPoolModel(const DsaProblem& problem, int pool_index,
                                         const std::vector<int>& buffers) {
  PoolModel m;
  m.pool_index = pool_index;
  SetCapacityAndReserved(problem.pools[pool_index], &m);
  Members members{problem, buffers, {}, {}};
  BuildItems(&members, &m);
  absl::Status status = ApplyPins(members, &m);
  if (!status.ok()) return status;
  const Temporal temporal(members);
  status = BuildConflicts(members, temporal, &m);
  if (!status.ok()) return status;
  BuildWeights(members, temporal, &m);
  BuildExactPairs(members, &m);
  IndexPairs(&m);
  return m;
}

PoolModel RestrictModel(const PoolModel& m, const std::vector<int>& items) {
  PoolModel s;
  s.pool_index = m.pool_index;
  s.capacity = m.capacity;
  s.has_capacity = m.has_capacity;
  s.reserved = m.reserved;
  s.reserved_total = m.reserved_total;
  s.reserved_end = m.reserved_end;
  const size_t k = items.size();
  std::vector<int> local(m.items.size(), -1);
  for (size_t a = 0; a < k; ++a) {
    local[items[a]] = static_cast<int>(a);
    s.items.push_back(m.items[items[a]]);
  }
  s.conflict.assign(k, std::vector<uint8_t>(k, 0));
  s.weight.assign(k, std::vector<uint64_t>(k, 0));
  for (size_t a = 0; a < k; ++a) {
    for (size_t b = 0; b < k; ++b) {
      s.conflict[a][b] = m.conflict[items[a]][items[b]];
      s.weight[a][b] = m.weight[items[a]][items[b]];
    }
  }
  for (const auto& [i, j] : m.exact_pairs) {
    if (local[i] >= 0 && local[j] >= 0) s.exact_pairs.insert(std::minmax(local[i], local[j]));
  }
  IndexPairs(&s);
  for (const auto& [i, j] : m.pipeline_only) {
    if (local[i] >= 0 && local[j] >= 0) s.pipeline_only.insert(std::minmax(local[i], local[j]));
  }
  return s;
}

uint64_t UsableCapacity(const PoolModel& m) {
  if (!m.has_capacity) return kNoCapacity;
  return m.capacity >= m.reserved_total ? m.capacity - m.reserved_total : 0;
}

uint64_t TotalExtent(const PoolModel& m, const std::vector<int>& items) {
  uint64_t total = 0;
  for (int i : items) total += m.items[i].extent;
  return total;
}

std::vector<LiveSet> LiveSets(const PoolModel& m) {
  std::vector<int64_t> times;
  for (const Item& item : m.items) {
    for (const DsaInterval& interval : item.intervals) times.push_back(interval.lower);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  std::vector<LiveSet> sets;
  sets.reserve(times.size());
  for (int64_t t : times) {
    LiveSet live;
    live.time = t;
    for (size_t i = 0; i < m.items.size(); ++i) {
      for (const DsaInterval& interval : m.items[i].intervals) {
        if (interval.lower <= t && t < interval.upper) {
          live.items.push_back(static_cast<int>(i));
          break;
        }
      }
    }
    sets.push_back(std::move(live));
  }
  return sets;
}

int FindRoot(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace internal
}  // namespace policy
}  // namespace accelmem
