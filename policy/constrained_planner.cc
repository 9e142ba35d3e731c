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
#include "policy/lifetime_planner.h"
#include "policy/placement_checker.h"

namespace accelmem {
namespace policy {
namespace {

constexpr uint64_t kNoCapacity = std::numeric_limits<uint64_t>::max() / 4;
constexpr uint64_t kInfinity = std::numeric_limits<uint64_t>::max();

uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

bool IntervalsOverlap(const std::vector<DsaInterval>& a, const std::vector<DsaInterval>& b) {
  for (const DsaInterval& x : a) {
    for (const DsaInterval& y : b) {
      if (x.lower < y.upper && y.lower < x.upper) return true;
    }
  }
  return false;
}

// A colocation class of one pool: the buffers that share one offset, placed as one item.
struct Item {
  std::vector<int> buffers;  // Indices into problem.buffers.
  uint64_t extent = 0;       // Largest size of the class: what it occupies.
  uint64_t alignment = 1;
  std::vector<DsaInterval> intervals;  // Members' intervals (for LOAD).
  bool pinned = false;
  uint64_t pin_offset = 0;
  bool exclusive = false;
};

// One pool's placement problem, with constraints resolved to item pairs.
struct PoolModel {
  int pool_index = 0;
  uint64_t capacity = kNoCapacity;
  bool has_capacity = false;
  std::vector<DsaAddressRange> reserved;  // Sorted, merged.
  uint64_t reserved_total = 0;
  uint64_t reserved_end = 0;
  std::vector<Item> items;
  std::vector<std::vector<uint8_t>> conflict;  // Must not overlap in address.
  std::vector<std::vector<uint64_t>> weight;   // Penalty if they overlap (0 if conflict).
  std::vector<std::vector<int>> conflicts_of;
  std::vector<std::vector<std::pair<int, uint64_t>>> penalties_of;
  bool any_penalty = false;
  // Pairs of items (i < j) whose conflict comes only from pipeline_stage separations.
  std::set<std::pair<int, int>> pipeline_only;
};

bool Overlap(uint64_t a, uint64_t ea, uint64_t b, uint64_t eb) { return a < b + eb && b < a + ea; }

// Lexicographic objective of a pool: (reuse, peak) or (peak, reuse).
struct Score {
  uint64_t first = kInfinity;
  uint64_t second = kInfinity;
  bool operator<(const Score& o) const {
    return first != o.first ? first < o.first : second < o.second;
  }
};

class PoolSearch {
 public:
  PoolSearch(const PoolModel& model, bool reuse_first, bool reuse_matters, bool peak_matters,
             absl::Time deadline)
      : m_(model),
        reuse_first_(reuse_first),
        reuse_matters_(reuse_matters),
        peak_matters_(peak_matters),
        deadline_(deadline),
        n_(model.items.size()) {}

  // Runs everything; fills `out` with the best placement found and what is proven.
  void Run(PoolResult* out, std::vector<uint64_t>* offsets) {
    ComputeBounds();
    out->load = load_;
    out->load_time = load_time_;
    out->reuse_lower_bound = reuse_lb_;
    out->peak_lower_bound = peak_lb_;
    if (!infeasible_reason_.empty()) {
      out->status = ConstrainedStatus::kInfeasible;
      out->reason = infeasible_reason_;
      return;
    }
    Greedy();
    if (!best_offsets_.empty() && !Proven() && n_ <= kCoverItems && !cover_cliques_.empty()) {
      CoverBound(cover_cliques_, cover_usable_);
    }
    if (!best_offsets_.empty() && !Proven() && n_ > kExactItems) {
      // Large pools: improve the incumbent by re-inserting neighbourhoods for half the time,
      // then let the branch and bound use the rest (it rarely ends at this size).
      Improve(absl::Now() + (deadline_ - absl::Now()) / 2);
    }
    if (best_score_.first == kInfinity || !Proven()) {
      if (OnGrid()) {
        GridSearch();
      } else {
        Search();
      }
    }
    out->search_nodes = nodes_;
    out->method = "constrained";
    if (best_offsets_.empty()) {
      if (exhausted_) {
        out->status = ConstrainedStatus::kInfeasible;
        out->reason = "exhaustive search: no placement satisfies every constraint";
      } else {
        out->status = ConstrainedStatus::kNoFitWithinBudget;
        out->reason = "no placement found within the budget";
      }
      return;
    }
    *offsets = best_offsets_;
    out->reuse_cost = best_reuse_;
    out->peak = best_peak_;
    if (exhausted_ || Proven()) {
      // Either the bounds meet the incumbent, or the search visited every canonical placement
      // that could beat it.
      out->status = ConstrainedStatus::kOptimal;
      out->reuse_lower_bound = best_reuse_;
      out->peak_lower_bound = peak_matters_ ? best_peak_ : peak_lb_;
    } else {
      out->status = ConstrainedStatus::kFeasible;
      out->reuse_lower_bound = reuse_lb_;  // Raised by CoverBound after the first report.
      out->peak_lower_bound = peak_lb_;
      out->reason = "the budget ran out before the lower bounds met the placement";
    }
  }

 private:
  bool Proven() const {
    if (best_offsets_.empty()) return false;
    return (!reuse_matters_ || best_reuse_ == reuse_lb_) &&
           (!peak_matters_ || best_peak_ == peak_lb_);
  }

  // Terms the objective does not name count as 0, so the search does not chase them.
  Score MakeScore(uint64_t reuse, uint64_t peak) const {
    if (!reuse_matters_) reuse = 0;
    if (!peak_matters_) peak = 0;
    return reuse_first_ ? Score{reuse, peak} : Score{peak, reuse};
  }

  // LOAD (a clique of items that pairwise conflict, live together) and the reuse-cost cores.
  void ComputeBounds() {
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
    // Pins that collide.
    for (size_t i = 0; i < n_; ++i) {
      const Item& a = m_.items[i];
      if (!a.pinned) continue;
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

  // A stronger reuse bound for small pools. Take k <= 4 cliques C1..Ck with no item in common.
  // Each clique's items are disjoint in address and all avoid the reserved bytes, so by
  // inclusion-exclusion the bytes the cliques share pairwise, the sum over pairs (a, b) from two
  // of them of their overlap, are at least the sum of their extents minus the usable capacity.
  // A pair overlaps by at most its smaller extent, and only by paying its penalty (or freely,
  // when it has none). So every placement's set of paid pairs satisfies each such cover
  // constraint, and the cheapest set of pairs that satisfies all of them bounds the reuse cost.
  // That set is found by a depth-first search for each cost from the packing bound upwards,
  // within a node limit: a cost it exhausts is proven impossible.
  static constexpr size_t kCoverItems = 40;
  struct Cover {
    std::vector<std::pair<int, uint64_t>> edges;  // Edge index, bytes it can cover.
    uint64_t deficit = 0;                         // Bytes the paid edges must cover.
  };

  void CoverBound(const std::vector<std::vector<int>>& cliques, uint64_t usable) {
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
    // At most half the pool's time: the search for placements needs the rest.
    const absl::Time cover_deadline = absl::Now() + (deadline_ - absl::Now()) / 2;
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
  void CoreBounds(uint64_t* open, uint64_t* undecided) const {
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

  // Least total cost of pairs whose bytes reach `deficit` (which they can). Exact by dynamic
  // programming over cost when the costs are small; otherwise the cheapest single pair, a
  // weaker but valid bound.
  template <typename PairList>
  static uint64_t CoverCost(const PairList& pairs, uint64_t deficit) {
    uint64_t total_cost = 0, cheapest = kInfinity;
    for (const auto& p : pairs) {
      total_cost += p.cost;
      cheapest = std::min(cheapest, p.cost);
    }
    if (total_cost > 4096) return cheapest;
    std::vector<uint64_t> best(total_cost + 1, 0);  // Most bytes for at most this cost.
    for (const auto& p : pairs) {
      for (uint64_t c = total_cost; c >= p.cost; --c) {
        best[c] = std::max(best[c], best[c - p.cost] + p.bytes);
        if (c == p.cost) break;
      }
    }
    for (uint64_t c = 0; c <= total_cost; ++c) {
      if (best[c] >= deficit) return c;
    }
    return total_cost;
  }

  // Branch and bound over 64-bit vertex sets (Carraghan-Pardalos with weight bounds), capped at
  // 200,000 nodes; the best clique found is a valid bound either way.
  std::vector<int> MaxWeightClique() const {
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

  std::vector<int> GreedyClique(std::vector<int> candidates) const {
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

  // Is [offset, offset + extent) free of the reserved ranges, within capacity and clear of every
  // placed item that `item` conflicts with?
  bool Fits(int item, uint64_t offset) const {
    const Item& it = m_.items[item];
    if (offset % it.alignment != 0) return false;
    if (it.pinned && offset != it.pin_offset) return false;
    if (offset + it.extent > m_.capacity) return false;
    for (const DsaAddressRange& r : m_.reserved) {
      if (Overlap(offset, it.extent, r.begin, r.end - r.begin)) return false;
    }
    for (int k : m_.conflicts_of[item]) {
      if (placed_[k] && Overlap(offset, it.extent, offsets_[k], m_.items[k].extent)) return false;
    }
    return true;
  }

  uint64_t CostAt(int item, uint64_t offset) const {
    uint64_t cost = 0;
    const uint64_t extent = m_.items[item].extent;
    for (const auto& [k, w] : m_.penalties_of[item]) {
      if (placed_[k] && Overlap(offset, extent, offsets_[k], m_.items[k].extent)) cost += w;
    }
    return cost;
  }

  // Offsets an item may rest on: the bottom, reserved ends and tops of placed items.
  void Candidates(int item, uint64_t floor, std::vector<uint64_t>* out) const {
    out->clear();
    const Item& it = m_.items[item];
    if (it.pinned) {
      if (it.pin_offset >= floor) out->push_back(it.pin_offset);
      return;
    }
    auto add = [&](uint64_t top) {
      const uint64_t o = AlignUp(top, it.alignment);
      if (o >= floor) out->push_back(o);
    };
    add(0);
    for (const DsaAddressRange& r : m_.reserved) add(r.end);
    for (size_t k = 0; k < n_; ++k) {
      if (placed_[k]) add(offsets_[k] + m_.items[k].extent);
    }
    std::sort(out->begin(), out->end());
    out->erase(std::unique(out->begin(), out->end()), out->end());
  }

  void Reset() {
    placed_.assign(n_, 0);
    offsets_.assign(n_, 0);
  }

  void Record(uint64_t reuse, uint64_t peak) {
    const Score score = MakeScore(reuse, peak);
    if (score < best_score_) {
      best_score_ = score;
      best_reuse_ = reuse;
      best_peak_ = peak;
      best_offsets_ = offsets_;
    }
  }

  uint64_t PeakOfPlaced() const {
    uint64_t peak = m_.reserved_end;
    for (size_t k = 0; k < n_; ++k) {
      if (placed_[k]) peak = std::max(peak, offsets_[k] + m_.items[k].extent);
    }
    return peak;
  }

  // Greedy: items in an order, each at the candidate offset of least (cost, top).
  void Greedy() {
    std::vector<std::vector<int>> orders;
    std::vector<int> base(n_);
    std::iota(base.begin(), base.end(), 0);
    auto start = [&](int i) { return m_.items[i].intervals.front().lower; };
    auto length = [&](int i) {
      int64_t len = 0;
      for (const DsaInterval& x : m_.items[i].intervals) len += x.upper - x.lower;
      return len;
    };
    auto pinned_first = [&](std::vector<int> order) {
      std::stable_partition(order.begin(), order.end(), [&](int i) { return m_.items[i].pinned; });
      return order;
    };
    std::vector<int> by_size = base;
    // Size, then birth: the first-fit order of the MiniMalloc lifts' capacity reference.
    std::stable_sort(by_size.begin(), by_size.end(), [&](int a, int b) {
      if (m_.items[a].extent != m_.items[b].extent) return m_.items[a].extent > m_.items[b].extent;
      return start(a) < start(b);
    });
    std::vector<int> by_start = base;
    std::stable_sort(by_start.begin(), by_start.end(),
                     [&](int a, int b) { return start(a) < start(b); });
    std::vector<int> by_length = base;
    std::stable_sort(by_length.begin(), by_length.end(),
                     [&](int a, int b) { return length(a) > length(b); });
    std::vector<int> by_degree = base;
    std::stable_sort(by_degree.begin(), by_degree.end(), [&](int a, int b) {
      return m_.conflicts_of[a].size() + m_.penalties_of[a].size() >
             m_.conflicts_of[b].size() + m_.penalties_of[b].size();
    });
    for (auto* order : {&by_size, &by_start, &by_length, &by_degree, &base}) {
      orders.push_back(pinned_first(*order));
    }
    std::vector<uint64_t> candidates;
    for (int pass = 0; pass < 2; ++pass) {
      // Pass 0 takes the least cost first; pass 1 the lowest top first (tighter packing).
      for (const std::vector<int>& order : orders) {
        Reset();
        uint64_t reuse = 0;
        bool ok = true;
        for (int item : order) {
          Candidates(item, 0, &candidates);
          uint64_t best_o = 0, best_c = kInfinity, best_top = kInfinity;
          bool found = false;
          for (uint64_t o : candidates) {
            if (!Fits(item, o)) continue;
            const uint64_t c = CostAt(item, o);
            const uint64_t top = o + m_.items[item].extent;
            const bool better = pass == 0 ? (c < best_c || (c == best_c && top < best_top))
                                          : (top < best_top || (top == best_top && c < best_c));
            if (!found || better) {
              found = true;
              best_o = o;
              best_c = c;
              best_top = top;
            }
          }
          if (!found) {
            ok = false;
            break;
          }
          offsets_[item] = best_o;
          placed_[item] = 1;
          reuse += best_c;
        }
        if (ok) Record(reuse, PeakOfPlaced());
        if (Proven()) return;
      }
    }
  }

  static constexpr size_t kExactItems = 40;

  // Total cost of the items' penalty edges at the current offsets (all placed).
  uint64_t CurrentReuse() const {
    uint64_t cost = 0;
    for (size_t i = 0; i < n_; ++i) {
      for (const auto& [k, w] : m_.penalties_of[i]) {
        if (static_cast<size_t>(k) > i &&
            Overlap(offsets_[i], m_.items[i].extent, offsets_[k], m_.items[k].extent)) {
          cost += w;
        }
      }
    }
    return cost;
  }

  // Large-neighbourhood search: take items out (a paid edge's ends and some of their
  // neighbours, or a random handful), put them back one by one at the feasible position of
  // least (cost, top), keep the result when it is no worse. Positions are the bottom, reserved
  // ends, tops of placed items and, below each placed item, the highest aligned offset under it.
  void Improve(absl::Time until) {
    uint64_t state = 0x9e3779b97f4a7c15ULL;  // Fixed seed: deterministic for a given budget.
    auto next = [&]() {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      return state;
    };
    std::vector<int> removed;
    std::vector<uint64_t> positions;
    std::vector<uint8_t> chosen(n_, 0);
    for (int64_t round = 0;; ++round) {
      if ((round & 15) == 0 && absl::Now() > until) break;
      offsets_ = best_offsets_;
      placed_.assign(n_, 1);
      // Pick the neighbourhood.
      removed.clear();
      std::fill(chosen.begin(), chosen.end(), 0);
      auto take = [&](int i) {
        if (!chosen[i] && !m_.items[i].pinned) {
          chosen[i] = 1;
          removed.push_back(i);
        }
      };
      std::vector<std::pair<int, int>> paid;
      for (size_t i = 0; i < n_; ++i) {
        for (const auto& [k, w] : m_.penalties_of[i]) {
          if (static_cast<size_t>(k) > i &&
              Overlap(offsets_[i], m_.items[i].extent, offsets_[k], m_.items[k].extent)) {
            paid.push_back({static_cast<int>(i), k});
          }
        }
      }
      const size_t want = 4 + next() % 12;
      // Bounded tries: paid edges may share their ends, and pinned items are never taken, so
      // `want` items may not exist.
      const size_t tries = 8 * want;
      if (!paid.empty() && next() % 4 != 0) {
        for (size_t t = 0; removed.size() < want && t < tries; ++t) {
          const auto& edge = paid[next() % paid.size()];
          take(edge.first);
          take(edge.second);
          const int around = next() % 2 ? edge.first : edge.second;
          if (!m_.conflicts_of[around].empty()) {
            take(m_.conflicts_of[around][next() % m_.conflicts_of[around].size()]);
          }
          if (paid.size() * 2 < want && removed.size() >= paid.size() * 2) break;
        }
      } else {
        for (size_t t = 0; removed.size() < want && t < tries; ++t) take(next() % n_);
      }
      for (int i : removed) placed_[i] = 0;
      // Re-insert in a random order, biggest first half of the time.
      for (size_t i = removed.size(); i > 1; --i) std::swap(removed[i - 1], removed[next() % i]);
      if (next() % 2) {
        std::stable_sort(removed.begin(), removed.end(),
                         [&](int a, int b) { return m_.items[a].extent > m_.items[b].extent; });
      }
      bool ok = true;
      for (int item : removed) {
        const uint64_t extent = m_.items[item].extent;
        const uint64_t align = m_.items[item].alignment;
        positions.clear();
        positions.push_back(0);
        for (const DsaAddressRange& r : m_.reserved) positions.push_back(AlignUp(r.end, align));
        for (size_t k = 0; k < n_; ++k) {
          if (!placed_[k]) continue;
          positions.push_back(AlignUp(offsets_[k] + m_.items[k].extent, align));
          if (offsets_[k] >= extent) positions.push_back((offsets_[k] - extent) / align * align);
        }
        uint64_t best_o = 0, best_c = kInfinity, best_top = kInfinity;
        for (uint64_t o : positions) {
          if (!Fits(item, o)) continue;
          const uint64_t c = CostAt(item, o);
          if (c < best_c || (c == best_c && o + extent < best_top)) {
            best_o = o;
            best_c = c;
            best_top = o + extent;
          }
        }
        if (best_c == kInfinity) {
          ok = false;
          break;
        }
        offsets_[item] = best_o;
        placed_[item] = 1;
      }
      if (!ok) continue;
      const uint64_t reuse = CurrentReuse();
      const uint64_t peak = PeakOfPlaced();
      if (!(best_score_ < MakeScore(reuse, peak))) {
        best_score_ = MakeScore(reuse, peak);
        best_reuse_ = reuse;
        best_peak_ = peak;
        best_offsets_ = offsets_;
        if (Proven()) break;
      }
    }
    Reset();
  }

  bool OutOfTime() {
    if ((++nodes_ & 255) == 0 && absl::Now() > deadline_) timed_out_ = true;
    return timed_out_;
  }

  // Extents that are all multiples of one unit u (their gcd), alignments dividing u, nothing
  // reserved or pinned, a capacity of at most 64 units: every canonical placement puts items at
  // multiples of u (each rests on the bottom or on a top, and tops are multiples of u), so
  // trying every multiple of u for every item is complete. With equal extents the pool is
  // capacity / u slots and placement is colouring.
  bool OnGrid() {
    if (!m_.has_capacity || !m_.reserved.empty() || n_ < 2) return false;
    uint64_t u = 0;
    for (const Item& item : m_.items) u = std::gcd(u, item.extent);
    if (u == 0 || m_.capacity / u > 64) return false;
    for (const Item& item : m_.items) {
      if (item.pinned || u % item.alignment != 0) return false;
    }
    unit_ = u;
    uniform_ = true;
    for (const Item& item : m_.items) uniform_ = uniform_ && item.extent == u;
    return true;
  }

  // Depth-first in order of birth (an item's penalty partners born before it are placed when it
  // is), every grid offset per item, bounded by each unplaced item's cheapest offset against
  // the placed items plus the packed cores among unplaced items. Symmetry: with equal extents,
  // slots are opened in order; otherwise the first item stays in the lower half (mirroring
  // the pool keeps every overlap).
  void GridSearch() {
    order_.resize(n_);
    std::iota(order_.begin(), order_.end(), 0);
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) {
      return m_.items[a].intervals.front().lower < m_.items[b].intervals.front().lower;
    });
    // Pair items born in turn that must stay apart (live together): their joint cheapest
    // offsets bound better than each one's alone.
    partner_.assign(n_, -1);
    for (size_t d = 0; d + 1 < n_; ++d) {
      const int a = order_[d];
      if (partner_[a] >= 0) continue;
      for (size_t f = d + 1; f < n_ && f < d + 4; ++f) {
        const int b = order_[f];
        if (partner_[b] < 0 && m_.conflict[a][b]) {
          partner_[a] = b;
          partner_[b] = a;
          break;
        }
      }
    }
    Reset();
    timed_out_ = false;
    GridDfs(0, 0, 0);
    exhausted_ = !timed_out_;
    Reset();
  }

  // Grid offsets item `j` may take; `used` is the number of slots opened (equal extents only).
  int GridOffsets(int j, size_t depth, int used, uint64_t* out) const {
    const uint64_t extent = m_.items[j].extent;
    int count = 0;
    if (uniform_) {
      const int slots = static_cast<int>(m_.capacity / unit_);
      for (int c = 0; c < std::min(slots, used + 1); ++c) out[count++] = c * unit_;
      return count;
    }
    if (extent > m_.capacity) return 0;
    uint64_t last = m_.capacity - extent;
    if (depth == 0) last /= 2;
    for (uint64_t o = 0; o <= last; o += unit_) out[count++] = o;
    return count;
  }

  void GridDfs(size_t depth, int used, uint64_t reuse) {
    if (OutOfTime()) return;
    if (depth == n_) {
      Record(reuse, PeakOfPlaced());
      return;
    }
    uint64_t offsets[65];
    uint64_t extra = 0;
    // Each unplaced item's feasible offsets and their cost against the placed items.
    for (size_t d = depth; d < n_; ++d) {
      const int j = order_[d];
      // Any slot: later items may open the ones not open yet.
      const int count = GridOffsets(j, d, kAllSlots, offsets);
      std::vector<std::pair<uint64_t, uint64_t>>& options = options_[j];
      options.clear();
      for (int i = 0; i < count; ++i) {
        if (Fits(j, offsets[i])) options.push_back({offsets[i], CostAt(j, offsets[i])});
      }
      if (options.empty()) return;
    }
    for (size_t d = depth; d < n_; ++d) {
      const int j = order_[d];
      const int k = partner_[j];
      if (k >= 0 && !placed_[k] && k < j) continue;  // Counted with its partner.
      uint64_t least = kInfinity;
      if (k >= 0 && !placed_[k]) {
        const uint64_t ej = m_.items[j].extent, ek = m_.items[k].extent;
        for (const auto& [oj, cj] : options_[j]) {
          if (cj >= least) continue;
          for (const auto& [ok, ck] : options_[k]) {
            if (cj + ck < least && !Overlap(oj, ej, ok, ek)) least = cj + ck;
          }
        }
      } else {
        for (const auto& option : options_[j]) least = std::min(least, option.second);
      }
      if (least == kInfinity) return;
      extra += least;
    }
    if (!packed_cores_.empty()) {
      uint64_t open = 0, undecided = 0;
      CoreBounds(&open, &undecided);
      extra = std::max(extra + open, undecided);
    }
    if (!(MakeScore(reuse + extra, PeakOfPlaced()) < best_score_)) return;
    const int item = order_[depth];
    struct Choice {
      uint64_t cost;
      uint64_t offset;
    };
    Choice choices[65];
    int count = 0;
    const int n_offsets = GridOffsets(item, depth, used, offsets);
    for (int i = 0; i < n_offsets; ++i) {
      if (Fits(item, offsets[i])) choices[count++] = {CostAt(item, offsets[i]), offsets[i]};
    }
    std::sort(choices, choices + count, [](const Choice& a, const Choice& b) {
      return a.cost != b.cost ? a.cost < b.cost : a.offset < b.offset;
    });
    for (int i = 0; i < count; ++i) {
      offsets_[item] = choices[i].offset;
      placed_[item] = 1;
      const int slot = static_cast<int>(choices[i].offset / unit_);
      GridDfs(depth + 1, std::max(used, slot + 1), reuse + choices[i].cost);
      placed_[item] = 0;
      if (timed_out_ || Proven()) return;
    }
  }

  // Every unplaced item goes at or above the floor. At each time, a clique of the unplaced items
  // live then must fit in [floor, capacity) beside the reserved bytes there and beside the placed
  // items live then that conflict with all of the clique. False: no completion exists.
  bool SpaceAboveFloor(uint64_t floor) {
    if (floor >= m_.capacity) return remaining_ == 0;
    uint64_t reserved_above = 0;
    for (const DsaAddressRange& r : m_.reserved) {
      if (r.end > floor) reserved_above += r.end - std::max(r.begin, floor);
    }
    const uint64_t room = m_.capacity - floor - std::min(reserved_above, m_.capacity - floor);
    for (const std::vector<int>& live : live_at_) {
      clique_.clear();
      uint64_t need = 0;
      for (int c : live) {  // Sorted by extent, largest first.
        if (placed_[c]) continue;
        bool ok = true;
        for (int k : clique_) ok = ok && m_.conflict[c][k];
        if (ok) {
          clique_.push_back(c);
          need += m_.items[c].extent;
        }
      }
      if (need == 0) continue;
      // Placed items may overlap each other (temporal exclusions): count their union.
      blocked_.clear();
      for (int k : live) {
        if (!placed_[k]) continue;
        const uint64_t top = offsets_[k] + m_.items[k].extent;
        if (top <= floor) continue;
        bool all = true;
        for (int c : clique_) all = all && m_.conflict[c][k];
        if (all) blocked_.push_back({std::max(offsets_[k], floor), top});
      }
      std::sort(blocked_.begin(), blocked_.end());
      uint64_t blocked = 0, covered_to = floor;
      for (const auto& [begin, end] : blocked_) {
        if (end > covered_to) {
          blocked += end - std::max(begin, covered_to);
          covered_to = end;
        }
      }
      if (need + blocked > room) return false;
    }
    return true;
  }

  // Branch and bound over canonical placements in non-decreasing offset order.
  void Search() {
    Reset();
    // The items live at each start time, largest first (for SpaceAboveFloor).
    std::vector<int64_t> times;
    for (const Item& item : m_.items) {
      for (const DsaInterval& interval : item.intervals) times.push_back(interval.lower);
    }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    live_at_.clear();
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
      std::stable_sort(live.begin(), live.end(),
                       [&](int a, int b) { return m_.items[a].extent > m_.items[b].extent; });
      if (live.size() > 1) live_at_.push_back(std::move(live));
    }
    // Pinned items are placed first and do not take part in the offset order.
    uint64_t reuse = 0;
    for (size_t i = 0; i < n_; ++i) {
      if (!m_.items[i].pinned) continue;
      reuse += CostAt(static_cast<int>(i), m_.items[i].pin_offset);
      offsets_[i] = m_.items[i].pin_offset;
      placed_[i] = 1;
    }
    remaining_ = 0;
    for (size_t i = 0; i < n_; ++i) remaining_ += !placed_[i];
    timed_out_ = false;
    Dfs(0, -1, reuse);
    exhausted_ = !timed_out_;
  }

  void Dfs(uint64_t floor, int last_at_floor, uint64_t reuse) {
    if (OutOfTime()) return;
    const uint64_t peak = PeakOfPlaced();
    if (remaining_ == 0) {
      Record(reuse, peak);
      return;
    }
    // Bound: every unplaced item needs a position at or above the floor; its least extra cost
    // against the placed items, and its least top, bound what is left.
    uint64_t extra = 0;
    uint64_t peak_bound = std::max(peak, peak_lb_);
    struct Move {
      uint64_t cost;
      uint64_t top;
      int item;
      uint64_t offset;
    };
    std::vector<Move> moves;
    std::vector<uint64_t> candidates;
    for (size_t i = 0; i < n_; ++i) {
      if (placed_[i]) continue;
      const int item = static_cast<int>(i);
      Candidates(item, floor, &candidates);
      const uint64_t lifted = AlignUp(floor, m_.items[i].alignment);
      uint64_t least_cost = kInfinity, least_top = kInfinity;
      if (!m_.items[i].pinned && Fits(item, lifted)) {
        least_cost = CostAt(item, lifted);
        least_top = lifted + m_.items[i].extent;
      }
      for (uint64_t o : candidates) {
        if (!Fits(item, o)) continue;
        const uint64_t c = CostAt(item, o);
        least_cost = std::min(least_cost, c);
        least_top = std::min(least_top, o + m_.items[i].extent);
        if (o == floor && item <= last_at_floor) continue;  // Same offset: index order only.
        moves.push_back({c, o + m_.items[i].extent, item, o});
      }
      if (least_cost == kInfinity) return;  // This item can no longer be placed.
      extra += least_cost;
      peak_bound = std::max(peak_bound, least_top);
    }
    if (m_.has_capacity && !SpaceAboveFloor(floor)) return;
    if (!packed_cores_.empty()) {
      uint64_t open = 0, undecided = 0;
      CoreBounds(&open, &undecided);
      extra = std::max(extra + open, undecided);
    }
    if (!(MakeScore(reuse + extra, peak_bound) < best_score_)) return;
    std::sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) {
      if (a.cost != b.cost) return a.cost < b.cost;
      if (a.offset != b.offset) return a.offset < b.offset;
      return a.item < b.item;
    });
    for (const Move& move : moves) {
      if (!(MakeScore(reuse + move.cost, std::max(peak_bound, move.top)) < best_score_)) continue;
      offsets_[move.item] = move.offset;
      placed_[move.item] = 1;
      --remaining_;
      Dfs(move.offset, move.offset == floor ? std::max(move.item, last_at_floor) : move.item,
          reuse + move.cost);
      ++remaining_;
      placed_[move.item] = 0;
      if (timed_out_ || Proven()) return;
    }
  }

  const PoolModel& m_;
  const bool reuse_first_;
  const bool reuse_matters_;
  const bool peak_matters_;
  const absl::Time deadline_;
  const size_t n_;
  uint64_t load_ = 0;
  int64_t load_time_ = 0;
  bool load_is_separation_ = false;  // The largest clique is held apart by separations.
  uint64_t reuse_lb_ = 0;
  uint64_t peak_lb_ = 0;
  std::string infeasible_reason_;
  std::vector<std::vector<int>> cover_cliques_;  // For CoverBound (pools with penalties).
  uint64_t cover_usable_ = 0;
  std::vector<std::vector<std::pair<int, int>>> packed_cores_;
  std::vector<uint64_t> packed_cost_;
  static constexpr int kAllSlots = 64;
  uint64_t unit_ = 0;
  std::vector<int> partner_;
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> options_{n_};
  bool uniform_ = false;
  std::vector<int> order_;
  std::vector<std::vector<int>> live_at_;
  std::vector<int> clique_;
  std::vector<std::pair<uint64_t, uint64_t>> blocked_;
  std::vector<uint8_t> placed_;
  std::vector<uint64_t> offsets_;
  size_t remaining_ = 0;
  Score best_score_;
  uint64_t best_reuse_ = 0;
  uint64_t best_peak_ = 0;
  std::vector<uint64_t> best_offsets_;
  int64_t nodes_ = 0;
  bool timed_out_ = false;
  bool exhausted_ = false;
};

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
  m.conflicts_of.assign(n, {});
  m.penalties_of.assign(n, {});
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      if (m.conflict[i][j]) {
        m.conflicts_of[i].push_back(j);
        m.weight[i][j] = 0;
      } else if (m.weight[i][j] > 0) {
        m.penalties_of[i].push_back({static_cast<int>(j), m.weight[i][j]});
        m.any_penalty = true;
      }
    }
  }
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
               bool drop_pipeline, absl::Time deadline, PoolResult* out,
               std::vector<uint64_t>* item_offsets, PoolModel* model_out) {
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
    SolvePool(problem, p, pool_buffers[p], false, deadline, &pool_result, &item_offsets, &model);
    if (pool_result.status == ConstrainedStatus::kInfeasible &&
        options.relax_pipeline_when_infeasible && !model.pipeline_only.empty()) {
      // Proven infeasible with pipeline depth hard: relax it, and say which groups.
      PoolResult relaxed = pool_result;
      std::vector<uint64_t> relaxed_offsets;
      PoolModel relaxed_model;
      const absl::Time relaxed_deadline = absl::Now() + std::max(absl::Milliseconds(1), left / 4);
      SolvePool(problem, p, pool_buffers[p], true, relaxed_deadline, &relaxed, &relaxed_offsets,
                &relaxed_model);
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
    SolvePool(problem, p, pool_buffers[p], false, absl::Now() + left / (open.size() - k), &second,
              &item_offsets, &model);
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
