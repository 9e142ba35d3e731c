// PoolSearch::SubsetBound: the reuse bound from exactly solved groups of cliques (see
// constrained_pool_search.h).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "policy/internal/constrained_pool_search.h"

namespace accelmem {
namespace policy {
namespace internal {

bool PoolSearch::SubsetBoundApplies() const {
  return subset_bound_ && !nested_ && reuse_matters_ && m_.has_capacity && m_.any_penalty &&
         n_ <= kCoverItems && !best_offsets_.empty() && !Proven();
}

PoolModel PoolSearch::SubModel(const std::vector<int>& items) const {
  PoolModel s;
  s.pool_index = m_.pool_index;
  s.capacity = m_.capacity;
  s.has_capacity = m_.has_capacity;
  s.reserved = m_.reserved;
  s.reserved_total = m_.reserved_total;
  s.reserved_end = m_.reserved_end;
  const size_t k = items.size();
  std::vector<int> local(n_, -1);
  for (size_t a = 0; a < k; ++a) {
    local[items[a]] = static_cast<int>(a);
    s.items.push_back(m_.items[items[a]]);
  }
  s.conflict.assign(k, std::vector<uint8_t>(k, 0));
  s.weight.assign(k, std::vector<uint64_t>(k, 0));
  for (size_t a = 0; a < k; ++a) {
    for (size_t b = 0; b < k; ++b) {
      s.conflict[a][b] = m_.conflict[items[a]][items[b]];
      s.weight[a][b] = m_.weight[items[a]][items[b]];
    }
  }
  IndexPairs(&s);
  for (const auto& [i, j] : m_.pipeline_only) {
    if (local[i] >= 0 && local[j] >= 0) s.pipeline_only.insert(std::minmax(local[i], local[j]));
  }
  return s;
}

void PoolSearch::SubsetBound() {
  const absl::Time start = absl::Now();
  // At most half the time left: the search for placements needs the rest.
  const absl::Time stage_deadline = start + (deadline_ - start) / 2;

  // Disjoint cliques covering every item, heaviest first (a singleton is a clique).
  std::vector<uint8_t> assigned(n_, 0);
  std::vector<std::vector<int>> groups;
  for (size_t left = n_; left > 0;) {
    std::vector<int> best;
    uint64_t best_total = 0;
    for (size_t i = 0; i < n_; ++i) {
      if (assigned[i]) continue;
      std::vector<int> candidates{static_cast<int>(i)};
      for (int k : m_.conflicts_of[i]) {
        if (!assigned[k]) candidates.push_back(k);
      }
      std::vector<int> clique = GreedyClique(candidates);
      uint64_t total = 0;
      for (int k : clique) total += m_.items[k].extent;
      if (total > best_total) {
        best_total = total;
        best = std::move(clique);
      }
    }
    for (int k : best) assigned[k] = 1;
    left -= best.size();
    groups.push_back(std::move(best));
  }
  const size_t g = groups.size();
  if (g < 2 || g > kSubsetGroups) return;
  std::vector<int> group_of(n_, 0);
  for (size_t x = 0; x < g; ++x) {
    for (int k : groups[x]) group_of[k] = static_cast<int>(x);
  }
  // Pair variables: x_XY, the cost any placement pays on penalties between groups X and Y, is at
  // most the total weight there. Pairs inside a group conflict, so they are never paid. Beside
  // it, what the incumbent pays there: a set of groups it pays nothing in needs no solving.
  std::vector<std::vector<int>> var_of(g, std::vector<int>(g, -1));
  std::vector<uint64_t> upper, incumbent;
  for (size_t i = 0; i < n_; ++i) {
    for (const auto& [k, w] : m_.penalties_of[i]) {
      if (k <= static_cast<int>(i)) continue;
      int& v = var_of[group_of[i]][group_of[k]];
      if (v < 0) {
        v = var_of[group_of[k]][group_of[i]] = static_cast<int>(upper.size());
        upper.push_back(0);
        incumbent.push_back(0);
      }
      upper[v] += w;
      if (Overlap(best_offsets_[i], m_.items[i].extent, best_offsets_[k], m_.items[k].extent)) {
        incumbent[v] += w;
      }
    }
  }

  // Candidates: the sets S of 2..5 groups in which the incumbent pays something (a set it pays
  // nothing in has optimum 0). For each, the placement restricted to S's items is a placement
  // of the pool holding only those items, so it pays at least that pool's least reuse cost
  // v(S) on the pairs between S's groups.
  struct Candidate {
    std::vector<int> groups;
    std::vector<int> vars;
    uint64_t paid = 0;  // By the incumbent: v(S) is at most this.
    bool solved = false;
  };
  std::vector<Candidate> candidates;
  std::vector<int> chosen;
  std::function<void(size_t, size_t)> enumerate = [&](size_t from, size_t size) {
    if (chosen.size() == size) {
      Candidate c;
      c.groups = chosen;
      for (size_t a = 0; a < size; ++a) {
        for (size_t b = a + 1; b < size; ++b) {
          const int v = var_of[chosen[a]][chosen[b]];
          if (v < 0) continue;
          c.vars.push_back(v);
          c.paid += incumbent[v];
        }
      }
      if (c.paid > 0) candidates.push_back(std::move(c));
      return;
    }
    for (size_t x = from; x < g; ++x) {
      chosen.push_back(static_cast<int>(x));
      enumerate(x + 1, size);
      chosen.pop_back();
    }
  };
  // Up to five groups, never all of them (that would be the pool itself).
  for (size_t size = 2; size <= kSubsetSize && size < g; ++size) enumerate(0, size);

  // The master problem: the least total of integers 0 <= x_XY <= weight(X, Y) meeting
  // sum over S's pairs >= v(S) for every solved S bounds the reuse cost. Its constraints are
  // added lazily: solve the master, then solve (by a nested search, which skips this stage) a
  // candidate the master's solution pays less in than the incumbent does (only such an S can
  // cut it off), add its constraint, and repeat until no candidate can cut, the bound meets
  // the incumbent, or the time ends. The master's optimum only rises as constraints are added.
  struct Constraint {
    std::vector<int> vars;
    uint64_t least = 0;
  };
  std::vector<Constraint> constraints;
  std::vector<uint64_t> value(upper.size(), 0), solution(upper.size(), 0);
  std::vector<uint8_t> frozen(upper.size(), 0), taken(upper.size(), 0);
  int64_t nodes = 0;
  bool gave_up = false;  // Then every later call answers "feasible" at once.
  // Can the constraints be met by raising the variables from `value` by `budget` in all? Takes
  // the constraint furthest from met and branches on which of its variables rises by one (a
  // variable whose branch failed stays put in the later branches). Out of nodes or time: "yes".
  std::function<bool(uint64_t)> feasible = [&](uint64_t budget) -> bool {
    if (++nodes > kSubsetNodes || ((nodes & 1023) == 0 && absl::Now() > deadline_)) {
      gave_up = true;
      return true;
    }
    std::vector<std::pair<uint64_t, int>> short_of;
    for (size_t c = 0; c < constraints.size(); ++c) {
      uint64_t have = 0;
      for (int v : constraints[c].vars) have += value[v];
      if (have < constraints[c].least) {
        short_of.push_back({constraints[c].least - have, static_cast<int>(c)});
      }
    }
    if (short_of.empty()) {
      solution = value;
      return true;
    }
    // Constraints over disjoint variables need their shortfalls paid separately.
    std::sort(short_of.rbegin(), short_of.rend());
    std::fill(taken.begin(), taken.end(), 0);
    uint64_t needed = 0;
    for (const auto& [gap, c] : short_of) {
      bool disjoint = true;
      for (int v : constraints[c].vars) disjoint = disjoint && !taken[v];
      if (!disjoint) continue;
      for (int v : constraints[c].vars) taken[v] = 1;
      needed += gap;
    }
    if (needed > budget) return false;
    const Constraint& worst = constraints[short_of.front().second];
    std::vector<int> left_out;
    bool ok = false;
    for (int v : worst.vars) {
      if (frozen[v] || value[v] >= upper[v]) continue;
      ++value[v];
      ok = feasible(budget - 1);
      --value[v];
      if (ok) break;
      frozen[v] = 1;
      left_out.push_back(v);
    }
    for (int v : left_out) frozen[v] = 0;
    return ok;
  };
  // Every total below `target` is refuted by a complete search (one that gives up answers
  // "feasible", which ends the raising), so `target` is proven whichever way the loop ends.
  uint64_t target = 0;
  while (true) {
    while (target < best_reuse_ && target < kSubsetMaxTotal && !feasible(target)) ++target;
    if (gave_up || target >= best_reuse_ || target >= kSubsetMaxTotal) break;
    // The candidate the master's solution falls furthest short in, smallest first.
    int pick = -1;
    uint64_t pick_gap = 0;
    for (size_t c = 0; c < candidates.size(); ++c) {
      if (candidates[c].solved) continue;
      uint64_t have = 0;
      for (int v : candidates[c].vars) have += solution[v];
      if (have >= candidates[c].paid) continue;
      const uint64_t gap = candidates[c].paid - have;
      if (pick < 0 || candidates[c].groups.size() < candidates[pick].groups.size() ||
          (candidates[c].groups.size() == candidates[pick].groups.size() && gap > pick_gap)) {
        pick = static_cast<int>(c);
        pick_gap = gap;
      }
    }
    const absl::Time now = absl::Now();
    if (pick < 0 || now >= stage_deadline) break;
    Candidate& candidate = candidates[pick];
    candidate.solved = true;
    std::vector<int> items;
    for (int x : candidate.groups) items.insert(items.end(), groups[x].begin(), groups[x].end());
    std::sort(items.begin(), items.end());
    const PoolModel sub = SubModel(items);
    PoolSearch nested(sub, /*reuse_first=*/true, /*reuse_matters=*/true,
                      /*peak_matters=*/false, std::min(stage_deadline, now + kSubsetTime));
    nested.nested_ = true;
    PoolResult result;
    std::vector<uint64_t> offsets;
    nested.Run(&result, &offsets);
    // A proven bound either way (the optimum when the nested search ended). Infeasible cannot
    // happen (the incumbent restricted to S fits); it would claim nothing.
    if (result.status != ConstrainedStatus::kInfeasible && result.reuse_lower_bound > 0) {
      constraints.push_back({candidate.vars, result.reuse_lower_bound});
    }
  }
  reuse_lb_ = std::max(reuse_lb_, target);
}

}  // namespace internal
}  // namespace policy
}  // namespace accelmem
