#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "policy/internal/constrained_pool_search.h"

namespace accelmem {
namespace policy {
namespace internal {

// LOAD (a clique of items that pairwise conflict, live together) and the reuse-cost cores.
void PoolSearch::ComputeBounds() {
  std::vector<int64_t> times;
  for (const Item& item : m_.items) {
    for (const DsaInterval& interval : item.intervals) times.push_back(interval.lower);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  const uint64_t usable =
      m_.has_capacity ? (m_.capacity >= m_.reserved_total ? m_.capacity - m_.reserved_total : 0)
                      : kNoCapacity;
  std::vector<std::vector<int>> cliques;
  for (int64_t t : times) {
    std::vector<int> live;
    for (size_t i = 0; i < n_; ++i) {
      for (const DsaInterval& interval : m_.items[i].intervals) {
        if (interval.lower <= t && t < interval.upper) {
          live.push_back(static_cast<int>(i));
          break;
        }
      }
    }
    std::vector<int> clique = GreedyClique(live);
    uint64_t total = 0;
    for (int i : clique) total += m_.items[i].extent;
    if (total > load_) {
      load_ = total;
      load_time_ = t;
      load_is_separation_ = false;
    }
    cliques.push_back(std::move(clique));
  }
  // Exclusive pins and separations can make cliques across time too.
  for (size_t i = 0; i < n_; ++i) {
    if (!m_.conflicts_of[i].empty()) {
      std::vector<int> candidates = m_.conflicts_of[i];
      candidates.push_back(static_cast<int>(i));
      std::vector<int> clique = GreedyClique(candidates);
      uint64_t total = 0;
      for (int k : clique) total += m_.items[k].extent;
      if (total > load_) {
        load_ = total;
        load_time_ = m_.items[i].intervals.empty() ? 0 : m_.items[i].intervals[0].lower;
        load_is_separation_ = true;
      }
      cliques.push_back(std::move(clique));
    }
  }
  if (n_ <= 64) {
    // Small pools: the heaviest clique of the whole conflict graph, exactly (separations can
    // tie items together across time, which the per-time cliques miss).
    std::vector<int> clique = MaxWeightClique();
    uint64_t total = 0;
    for (int k : clique) total += m_.items[k].extent;
    if (total > load_) {
      load_ = total;
      load_time_ = m_.items[clique[0]].intervals[0].lower;
      load_is_separation_ = true;
      for (int a : clique) {  // Live together after all?
        for (int b : clique) {
          load_is_separation_ =
              load_is_separation_ &&
              (a == b || !IntervalsOverlap(m_.items[a].intervals, m_.items[b].intervals));
        }
      }
      cliques.push_back(std::move(clique));
    }
  }
  peak_lb_ = std::max(m_.reserved_end, load_ + m_.reserved_total);
  for (const Item& item : m_.items) {
    if (item.pinned) peak_lb_ = std::max(peak_lb_, item.pin_offset + item.extent);
  }
  if (m_.has_capacity && load_ > usable) {
    infeasible_reason_ = absl::StrCat(
        load_is_separation_ ? "buffers that must all stay apart (separations) need " : "LOAD ",
        load_, load_is_separation_ ? " bytes, from time " : " bytes at time ", load_time_,
        ", over the usable capacity ", usable, " (capacity ", m_.capacity, " minus ",
        m_.reserved_total, " reserved)");
    return;
  }
  // Pins that collide. A pin fixes its whole colocation class: the class's extent and largest
  // alignment, not only the pinned buffer's, must fit at the pinned offset.
  for (size_t i = 0; i < n_; ++i) {
    const Item& a = m_.items[i];
    if (!a.pinned) continue;
    if (a.alignment > 1 && a.pin_offset % a.alignment != 0) {
      infeasible_reason_ =
          absl::StrCat("buffers pinned at ", a.pin_offset,
                       " with colocated buffers that need alignment ", a.alignment);
      return;
    }
    if (m_.has_capacity && (a.extent > m_.capacity || a.pin_offset > m_.capacity - a.extent)) {
      infeasible_reason_ =
          absl::StrCat("buffers pinned at ", a.pin_offset, " with colocated buffers of ", a.extent,
                       " bytes end past the capacity ", m_.capacity);
      return;
    }
    for (const DsaAddressRange& r : m_.reserved) {
      if (Overlap(a.pin_offset, a.extent, r.begin, r.end - r.begin)) {
        infeasible_reason_ =
            absl::StrCat("item pinned at ", a.pin_offset, " overlaps a reserved range");
        return;
      }
    }
    for (size_t j = i + 1; j < n_; ++j) {
      const Item& b = m_.items[j];
      if (b.pinned && m_.conflict[i][j] &&
          Overlap(a.pin_offset, a.extent, b.pin_offset, b.extent)) {
        infeasible_reason_ = absl::StrCat("conflicting pins: buffers pinned at ", a.pin_offset,
                                          " and ", b.pin_offset, " overlap while both live");
        return;
      }
    }
  }
  if (!m_.any_penalty || !m_.has_capacity) return;
  // Cores. Take two sets of items A and K, each pairwise conflicting (so each set's items are
  // disjoint in address), whose extents add up to more than the usable capacity by d bytes.
  // Every item avoids the reserved ranges, so the bytes A and K share, the sum over pairs
  // (a, k) of their overlap, are at least d; a pair overlaps by at most min(extent) and only
  // if it does not conflict, paying its penalty. The cheapest set of pairs whose overlaps
  // can reach d bounds what A and K cost together (a knapsack cover). Cores with disjoint
  // pairs add up. A is a clique of items live together or a single item; K a clique.
  std::sort(cliques.begin(), cliques.end());
  cliques.erase(std::unique(cliques.begin(), cliques.end()), cliques.end());
  std::vector<std::vector<int>> sets = cliques;
  for (size_t i = 0; i < n_; ++i) sets.push_back({static_cast<int>(i)});
  std::vector<uint64_t> set_total(sets.size(), 0);
  for (size_t s = 0; s < sets.size(); ++s) {
    for (int i : sets[s]) set_total[s] += m_.items[i].extent;
  }
  struct Core {
    std::vector<std::pair<int, int>> edges;
    uint64_t cost;
  };
  std::vector<Core> cores;
  std::set<std::vector<std::pair<int, int>>> seen;
  std::vector<uint8_t> in_a(n_, 0);
  struct Pair {
    uint64_t bytes;
    uint64_t cost;
  };
  std::vector<Pair> pairs;
  for (size_t s = 0; s < sets.size(); ++s) {
    for (int i : sets[s]) in_a[i] = 1;
    for (size_t c = 0; c < cliques.size(); ++c) {
      const std::vector<int>& clique = cliques[c];
      if (s < cliques.size() && c <= s) continue;  // Each pair of cliques once.
      const uint64_t total = set_total[s] + set_total[c];
      if (total <= usable) continue;
      bool shared = false;
      for (int k : clique) shared = shared || in_a[k];
      if (shared) continue;
      const uint64_t deficit = total - usable;
      Core core;
      pairs.clear();
      uint64_t free_bytes = 0, paid_bytes = 0;
      for (int a : sets[s]) {
        for (int k : clique) {
          if (m_.conflict[a][k]) continue;
          const uint64_t bytes = std::min(m_.items[a].extent, m_.items[k].extent);
          const uint64_t w = m_.weight[a][k];
          if (w == 0) {
            free_bytes += bytes;
          } else {
            paid_bytes += bytes;
            pairs.push_back({bytes, w});
            core.edges.push_back(std::minmax(a, k));
          }
        }
      }
      if (free_bytes >= deficit) continue;
      if (free_bytes + paid_bytes < deficit) {
        infeasible_reason_ =
            absl::StrCat("items live together at time ", m_.items[clique[0]].intervals[0].lower,
                         " and items that must stay apart from them need ", total,
                         " bytes of a usable ", usable, " and cannot share enough of them");
        for (int i : sets[s]) in_a[i] = 0;
        return;
      }
      core.cost = CoverCost(pairs, deficit - free_bytes);
      std::sort(core.edges.begin(), core.edges.end());
      if (core.cost > 0 && seen.insert(core.edges).second) cores.push_back(std::move(core));
    }
    for (int i : sets[s]) in_a[i] = 0;
  }
  std::sort(cores.begin(), cores.end(), [](const Core& a, const Core& b) {
    // Dense cores first: most cost per edge they use up.
    const unsigned __int128 x = static_cast<unsigned __int128>(a.cost) * b.edges.size();
    const unsigned __int128 y = static_cast<unsigned __int128>(b.cost) * a.edges.size();
    return x != y ? x > y : a.edges.size() < b.edges.size();
  });
  std::set<std::pair<int, int>> used;
  for (const Core& core : cores) {
    bool disjoint = true;
    for (const auto& edge : core.edges) disjoint = disjoint && !used.count(edge);
    if (!disjoint) continue;
    used.insert(core.edges.begin(), core.edges.end());
    reuse_lb_ += core.cost;
    packed_cores_.push_back(core.edges);
    packed_cost_.push_back(core.cost);
  }
  cover_cliques_ = std::move(cliques);
  cover_usable_ = usable;
}

void PoolSearch::CoverBound(const std::vector<std::vector<int>>& cliques, uint64_t usable) {
  std::map<std::pair<int, int>, int> edge_index;
  std::vector<uint64_t> weight;
  auto edge = [&](int a, int b) {
    auto key = std::minmax(a, b);
    auto it = edge_index.find(key);
    if (it != edge_index.end()) return it->second;
    const int id = static_cast<int>(weight.size());
    edge_index.emplace(key, id);
    weight.push_back(m_.weight[a][b]);
    return id;
  };
  std::vector<std::vector<int>> sets;
  std::vector<uint64_t> totals;
  for (const std::vector<int>& clique : cliques) {
    uint64_t total = 0;
    for (int i : clique) total += m_.items[i].extent;
    if (clique.size() > 0) {
      sets.push_back(clique);
      totals.push_back(total);
    }
  }
  if (sets.size() > 48) return;
  std::vector<Cover> covers;
  std::vector<int> chosen;
  std::vector<uint8_t> in(n_, 0);
  std::function<void(size_t, uint64_t)> pick = [&](size_t from, uint64_t total) {
    if (chosen.size() >= 2 && total > usable) {
      Cover cover;
      uint64_t free_bytes = 0;
      for (size_t x = 0; x < chosen.size(); ++x) {
        for (size_t y = x + 1; y < chosen.size(); ++y) {
          for (int a : sets[chosen[x]]) {
            for (int b : sets[chosen[y]]) {
              if (m_.conflict[a][b]) continue;
              const uint64_t bytes = std::min(m_.items[a].extent, m_.items[b].extent);
              if (m_.weight[a][b] == 0) {
                free_bytes += bytes;
              } else {
                cover.edges.push_back({edge(a, b), bytes});
              }
            }
          }
        }
      }
      if (free_bytes < total - usable) {
        cover.deficit = total - usable - free_bytes;
        covers.push_back(std::move(cover));
      }
    }
    if (chosen.size() == 4 || covers.size() > 20000) return;
    for (size_t s = from; s < sets.size(); ++s) {
      bool shared = false;
      for (int i : sets[s]) shared = shared || in[i];
      if (shared) continue;
      for (int i : sets[s]) in[i] = 1;
      chosen.push_back(static_cast<int>(s));
      pick(s + 1, total + totals[s]);
      chosen.pop_back();
      for (int i : sets[s]) in[i] = 0;
    }
  };
  pick(0, 0);
  if (covers.empty()) return;
  // Impossible covers were reported as infeasibility by the pair cores; skip any left.
  for (const Cover& cover : covers) {
    uint64_t most = 0;
    for (const auto& e : cover.edges) most += e.second;
    if (most < cover.deficit) return;
  }
  std::vector<uint8_t> blocked(weight.size(), 0);  // Taken, or left out by a branch.
  std::vector<uint64_t> covered(covers.size(), 0);
  std::vector<std::vector<std::pair<int, uint64_t>>> covers_of(weight.size());
  for (size_t c = 0; c < covers.size(); ++c) {
    for (const auto& e : covers[c].edges) {
      covers_of[e.first].push_back({static_cast<int>(c), e.second});
    }
  }
  for (Cover& cover : covers) {  // Cheap and wide edges first.
    std::sort(cover.edges.begin(), cover.edges.end(), [&](const auto& x, const auto& y) {
      if (weight[x.first] != weight[y.first]) return weight[x.first] < weight[y.first];
      return x.second > y.second;
    });
  }
  int64_t nodes = 0;
  constexpr int64_t kNodeLimit = 1000000;
  // At most half the pool's time: the search for placements needs the rest. A quarter where
  // the subset bound may follow: on the pools that need it, it proves in milliseconds what this
  // search (byte counts undercount what parts pay) can spend its whole share on without moving.
  const absl::Time now = absl::Now();
  const absl::Time cover_deadline = now + (deadline_ - now) / (SubsetBoundApplies() ? 4 : 2);
  std::vector<uint64_t> widths;
  // Can every open cover be met by adding edges of total weight <= budget? Branches on the
  // edges of the open cover that needs the most edges; a branch that fails leaves its edge out
  // of its later siblings. Out of nodes: "yes" (nothing is claimed).
  std::function<bool(uint64_t)> feasible = [&](uint64_t budget) -> bool {
    if (++nodes > kNodeLimit || ((nodes & 1023) == 0 && absl::Now() > cover_deadline)) {
      nodes = kNodeLimit + 1;  // Stay out of time for the rest of this search.
      return true;
    }
    int worst = -1;
    uint64_t worst_edges = 0;
    for (size_t c = 0; c < covers.size(); ++c) {
      if (covered[c] >= covers[c].deficit) continue;
      const uint64_t need = covers[c].deficit - covered[c];
      widths.clear();
      uint64_t cheapest = kInfinity;
      for (const auto& e : covers[c].edges) {
        if (blocked[e.first]) continue;
        widths.push_back(e.second);
        cheapest = std::min(cheapest, weight[e.first]);
      }
      std::sort(widths.rbegin(), widths.rend());
      uint64_t sum = 0, k = 0;
      while (k < widths.size() && sum < need) sum += widths[k++];
      if (sum < need || cheapest * k > budget) return false;
      if (worst < 0 || k > worst_edges) {
        worst = static_cast<int>(c);
        worst_edges = k;
      }
    }
    if (worst < 0) return true;
    std::vector<int> left_out;
    bool ok = false;
    for (const auto& e : covers[worst].edges) {
      if (blocked[e.first] || weight[e.first] > budget) continue;
      blocked[e.first] = 1;
      for (const auto& [c, bytes] : covers_of[e.first]) covered[c] += bytes;
      ok = feasible(budget - weight[e.first]);
      for (const auto& [c, bytes] : covers_of[e.first]) covered[c] -= bytes;
      if (ok) {
        blocked[e.first] = 0;
        break;
      }
      left_out.push_back(e.first);  // Stays blocked for the siblings after it.
    }
    for (int e : left_out) blocked[e] = 0;
    return ok;
  };
  uint64_t target = reuse_lb_;
  while (target < reuse_lb_ + 256 && !feasible(target)) ++target;
  reuse_lb_ = std::max(reuse_lb_, target);
}

// What the packed cores still bound at a search node: `open` sums the cores whose pairs have
// no placed end (disjoint from the per-item bounds, which count pairs to placed items);
// `undecided` the cores with no pair whose ends are both placed.
void PoolSearch::CoreBounds(uint64_t* open, uint64_t* undecided) const {
  *open = 0;
  *undecided = 0;
  for (size_t c = 0; c < packed_cores_.size(); ++c) {
    bool all_open = true, none_decided = true;
    for (const auto& [a, b] : packed_cores_[c]) {
      all_open = all_open && !placed_[a] && !placed_[b];
      none_decided = none_decided && !(placed_[a] && placed_[b]);
    }
    if (all_open) *open += packed_cost_[c];
    if (none_decided) *undecided += packed_cost_[c];
  }
}

// Branch and bound over 64-bit vertex sets (Carraghan-Pardalos with weight bounds), capped at
// 200,000 nodes; the best clique found is a valid bound either way.
std::vector<int> PoolSearch::MaxWeightClique() const {
  std::vector<uint64_t> adjacent(n_, 0);
  for (size_t i = 0; i < n_; ++i) {
    for (int k : m_.conflicts_of[i]) adjacent[i] |= uint64_t{1} << k;
  }
  uint64_t best_weight = 0, best_set = 0;
  int64_t budget = 200000;
  auto weight_of = [&](uint64_t set) {
    uint64_t w = 0;
    for (; set; set &= set - 1) w += m_.items[__builtin_ctzll(set)].extent;
    return w;
  };
  std::function<void(uint64_t, uint64_t, uint64_t)> grow = [&](uint64_t chosen, uint64_t weight,
                                                               uint64_t candidates) {
    if (--budget < 0) return;
    if (weight > best_weight) {
      best_weight = weight;
      best_set = chosen;
    }
    while (candidates) {
      if (weight + weight_of(candidates) <= best_weight) return;
      const int v = __builtin_ctzll(candidates);
      candidates &= candidates - 1;
      grow(chosen | (uint64_t{1} << v), weight + m_.items[v].extent, candidates & adjacent[v]);
    }
  };
  const uint64_t all = n_ == 64 ? ~uint64_t{0} : (uint64_t{1} << n_) - 1;
  grow(0, 0, all);
  std::vector<int> clique;
  for (uint64_t set = best_set; set; set &= set - 1) clique.push_back(__builtin_ctzll(set));
  return clique;
}

std::vector<int> PoolSearch::GreedyClique(std::vector<int> candidates) const {
  std::sort(candidates.begin(), candidates.end(), [&](int a, int b) {
    return m_.items[a].extent != m_.items[b].extent ? m_.items[a].extent > m_.items[b].extent
                                                    : a < b;
  });
  std::vector<int> clique;
  for (int c : candidates) {
    bool ok = true;
    for (int k : clique) ok = ok && m_.conflict[c][k];
    if (ok) clique.push_back(c);
  }
  return clique;
}

}  // namespace internal
}  // namespace policy
}  // namespace accelmem
