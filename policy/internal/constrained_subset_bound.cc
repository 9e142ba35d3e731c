// SubsetBound of constrained_bounds.h: the reuse bound from exactly solved parts of a pool.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "policy/internal/constrained_bounds.h"

namespace accelmem {
namespace policy {
namespace internal {
namespace {

// Pair variables: x_XY, the cost any placement pays on penalties between groups X and Y, is at
// most the total weight there (`upper`). Pairs inside a group conflict, so they are never
// paid. Beside it, what the incumbent pays there: a set of groups it pays nothing in needs no
// solving.
struct PairVariables {
  std::vector<std::vector<int>> var_of;  // Group x group -> variable, or -1.
  std::vector<uint64_t> upper;
  std::vector<uint64_t> incumbent;
};

PairVariables GroupPairs(const PoolModel& m, const std::vector<std::vector<int>>& groups,
                         const std::vector<uint64_t>& offsets) {
  const size_t g = groups.size();
  std::vector<int> group_of(m.items.size(), 0);
  for (size_t x = 0; x < g; ++x) {
    for (int k : groups[x]) group_of[k] = static_cast<int>(x);
  }
  PairVariables p;
  p.var_of.assign(g, std::vector<int>(g, -1));
  for (size_t i = 0; i < m.items.size(); ++i) {
    for (const auto& [k, w] : m.penalties_of[i]) {
      if (k <= static_cast<int>(i)) continue;
      int& v = p.var_of[group_of[i]][group_of[k]];
      if (v < 0) {
        v = p.var_of[group_of[k]][group_of[i]] = static_cast<int>(p.upper.size());
        p.upper.push_back(0);
        p.incumbent.push_back(0);
      }
      p.upper[v] += w;
      if (Overlap(offsets[i], m.items[i].extent, offsets[k], m.items[k].extent)) {
        p.incumbent[v] += w;
      }
    }
  }
  return p;
}

// A set S of groups whose part is worth solving: the incumbent pays something between them.
// The placement restricted to S's items is a placement of the pool holding only those items,
// so it pays at least that pool's least reuse cost v(S) on the pairs between S's groups.
struct Candidate {
  std::vector<int> groups;
  std::vector<int> vars;
  uint64_t paid = 0;  // By the incumbent: v(S) is at most this.
  bool solved = false;
};

// The sets of 2..kSubsetSize groups (never all of them: that is the pool itself) in which the
// incumbent pays something (a set it pays nothing in has optimum 0).
std::vector<Candidate> Candidates(size_t g, const PairVariables& p) {
  std::vector<Candidate> candidates;
  std::vector<int> chosen;
  std::function<void(size_t, size_t)> enumerate = [&](size_t from, size_t size) {
    if (chosen.size() == size) {
      Candidate c;
      c.groups = chosen;
      for (size_t a = 0; a < size; ++a) {
        for (size_t b = a + 1; b < size; ++b) {
          const int v = p.var_of[chosen[a]][chosen[b]];
          if (v < 0) continue;
          c.vars.push_back(v);
          c.paid += p.incumbent[v];
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
  for (size_t size = 2; size <= kSubsetSize && size < g; ++size) enumerate(0, size);
  return candidates;
}

// The master problem: the least total of integers 0 <= x_XY <= upper_XY meeting
// sum over S's pairs >= v(S) for every solved S bounds the reuse cost.
class Master {
 public:
  Master(const std::vector<uint64_t>& upper, absl::Time deadline)
      : upper_(upper),
        deadline_(deadline),
        value_(upper.size(), 0),
        solution_(upper.size(), 0),
        frozen_(upper.size(), 0),
        taken_(upper.size(), 0) {}

  void Add(std::vector<int> vars, uint64_t least) {
    constraints_.push_back({std::move(vars), least});
  }
  bool gave_up() const { return gave_up_; }
  // The variables of the last total found feasible.
  const std::vector<uint64_t>& solution() const { return solution_; }

  // Can the constraints be met by raising the variables from `value_` by `budget` in all? Takes
  // the constraint furthest from met and branches on which of its variables rises by one (a
  // variable whose branch failed stays put in the later branches). Out of nodes or time: "yes",
  // and every later call answers "yes" at once.
  bool Feasible(uint64_t budget) {
    if (++nodes_ > kSubsetNodes || ((nodes_ & 1023) == 0 && absl::Now() > deadline_)) {
      gave_up_ = true;
      return true;
    }
    std::vector<std::pair<uint64_t, int>> short_of = ShortOf();
    if (short_of.empty()) {
      solution_ = value_;
      return true;
    }
    std::sort(short_of.rbegin(), short_of.rend());
    if (DisjointShortfall(short_of) > budget) return false;
    const Constraint& worst = constraints_[short_of.front().second];
    std::vector<int> left_out;
    bool ok = false;
    for (int v : worst.vars) {
      if (frozen_[v] || value_[v] >= upper_[v]) continue;
      ++value_[v];
      ok = Feasible(budget - 1);
      --value_[v];
      if (ok) break;
      frozen_[v] = 1;
      left_out.push_back(v);
    }
    for (int v : left_out) frozen_[v] = 0;
    return ok;
  }

 private:
  struct Constraint {
    std::vector<int> vars;
    uint64_t least = 0;
  };

  // (Shortfall, constraint) of every constraint not met at `value_`.
  std::vector<std::pair<uint64_t, int>> ShortOf() const {
    std::vector<std::pair<uint64_t, int>> short_of;
    for (size_t c = 0; c < constraints_.size(); ++c) {
      uint64_t have = 0;
      for (int v : constraints_[c].vars) have += value_[v];
      if (have < constraints_[c].least) {
        short_of.push_back({constraints_[c].least - have, static_cast<int>(c)});
      }
    }
    return short_of;
  }

  // Constraints over disjoint variables need their shortfalls paid separately: the sum over a
  // greedy disjoint choice (largest shortfall first) is a bound on what must still be added.
  uint64_t DisjointShortfall(const std::vector<std::pair<uint64_t, int>>& short_of) {
    std::fill(taken_.begin(), taken_.end(), 0);
    uint64_t needed = 0;
    for (const auto& [gap, c] : short_of) {
      bool disjoint = true;
      for (int v : constraints_[c].vars) disjoint = disjoint && !taken_[v];
      if (!disjoint) continue;
      for (int v : constraints_[c].vars) taken_[v] = 1;
      needed += gap;
    }
    return needed;
  }

  const std::vector<uint64_t>& upper_;
  const absl::Time deadline_;
  std::vector<Constraint> constraints_;
  std::vector<uint64_t> value_, solution_;
  std::vector<uint8_t> frozen_, taken_;
  int64_t nodes_ = 0;
  bool gave_up_ = false;
};

// The unsolved candidate the master's solution falls furthest short in, fewest groups first;
// -1 when the solution meets every candidate's incumbent cost (no candidate can cut it off).
int PickCandidate(const std::vector<Candidate>& candidates, const std::vector<uint64_t>& solution) {
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
  return pick;
}

}  // namespace

std::vector<std::vector<int>> CliqueGroups(const PoolModel& m) {
  const size_t n = m.items.size();
  std::vector<uint8_t> assigned(n, 0);
  std::vector<std::vector<int>> groups;
  for (size_t left = n; left > 0;) {
    std::vector<int> best;
    uint64_t best_total = 0;
    for (size_t i = 0; i < n; ++i) {
      if (assigned[i]) continue;
      std::vector<int> candidates{static_cast<int>(i)};
      for (int k : m.conflicts_of[i]) {
        if (!assigned[k]) candidates.push_back(k);
      }
      std::vector<int> clique = GreedyClique(m, candidates);
      const uint64_t total = TotalExtent(m, clique);
      if (total > best_total) {
        best_total = total;
        best = std::move(clique);
      }
    }
    for (int k : best) assigned[k] = 1;
    left -= best.size();
    groups.push_back(std::move(best));
  }
  return groups;
}

uint64_t SubsetBound(const PoolModel& m, const std::vector<uint64_t>& incumbent,
                     uint64_t incumbent_reuse, absl::Time deadline, const PartBound& part_bound) {
  const absl::Time start = absl::Now();
  // At most half the time left for the parts: the search for placements needs the rest.
  const absl::Time stage_deadline = start + (deadline - start) / 2;
  const std::vector<std::vector<int>> groups = CliqueGroups(m);
  const size_t g = groups.size();
  if (g < 2 || g > kSubsetGroups) return 0;
  const PairVariables pairs = GroupPairs(m, groups, incumbent);
  std::vector<Candidate> candidates = Candidates(g, pairs);
  // The master's constraints are added lazily: solve the master, then solve a candidate the
  // master's solution pays less in than the incumbent does (only such an S can cut it off), add
  // its constraint, and repeat until no candidate can cut, the bound meets the incumbent, or the
  // time ends. The master's optimum only rises as constraints are added. Every total below
  // `target` is refuted by a complete search (one that gives up answers "feasible", which ends
  // the raising), so `target` is proven whichever way the loop ends.
  Master master(pairs.upper, deadline);
  uint64_t target = 0;
  while (true) {
    while (target < incumbent_reuse && target < kSubsetMaxTotal && !master.Feasible(target)) {
      ++target;
    }
    if (master.gave_up() || target >= incumbent_reuse || target >= kSubsetMaxTotal) break;
    const int pick = PickCandidate(candidates, master.solution());
    const absl::Time now = absl::Now();
    if (pick < 0 || now >= stage_deadline) break;
    Candidate& candidate = candidates[pick];
    candidate.solved = true;
    std::vector<int> items;
    for (int x : candidate.groups) items.insert(items.end(), groups[x].begin(), groups[x].end());
    std::sort(items.begin(), items.end());
    // A proven bound (the optimum when the part's search ended).
    const uint64_t least =
        part_bound(RestrictModel(m, items), std::min(stage_deadline, now + kSubsetTime));
    if (least > 0) master.Add(candidate.vars, least);
  }
  return target;
}

}  // namespace internal
}  // namespace policy
}  // namespace accelmem
