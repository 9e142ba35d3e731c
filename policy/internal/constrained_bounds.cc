#include "policy/internal/constrained_bounds.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace accelmem {
namespace policy {
namespace internal {
namespace {

// Raises `load` to `clique`'s weight when heavier; true when it did.
bool Raise(const PoolModel& m, const std::vector<int>& clique, int64_t time, bool separation,
           LoadBound* load) {
  const uint64_t total = TotalExtent(m, clique);
  if (total <= load->load) return false;
  load->load = total;
  load->time = time;
  load->separation = separation;
  return true;
}

// Does no pair of `clique` live at a common time? (Then separations alone hold it apart.)
bool NoneLiveTogether(const PoolModel& m, const std::vector<int>& clique) {
  for (int a : clique) {
    for (int b : clique) {
      if (a != b && IntervalsOverlap(m.items[a].intervals, m.items[b].intervals)) return false;
    }
  }
  return true;
}

// The core of a set of items A and a clique K with `deficit` bytes too many for the usable
// capacity.
enum class CoreKind { kNone, kCore, kImpossible };
struct Core {
  std::vector<std::pair<int, int>> edges;
  uint64_t cost = 0;
};
CoreKind CoreOf(const PoolModel& m, const std::vector<int>& a_set, const std::vector<int>& clique,
                uint64_t deficit, Core* core) {
  struct Pair {
    uint64_t bytes;
    uint64_t cost;
  };
  std::vector<Pair> pairs;
  uint64_t free_bytes = 0, paid_bytes = 0;
  for (int a : a_set) {
    for (int k : clique) {
      if (m.conflict[a][k]) continue;
      const uint64_t bytes = std::min(m.items[a].extent, m.items[k].extent);
      const uint64_t w = m.weight[a][k];
      if (w == 0) {
        free_bytes += bytes;
      } else {
        paid_bytes += bytes;
        pairs.push_back({bytes, w});
        core->edges.push_back(std::minmax(a, k));
      }
    }
  }
  if (free_bytes >= deficit) return CoreKind::kNone;
  if (free_bytes + paid_bytes < deficit) return CoreKind::kImpossible;
  core->cost = CoverCost(pairs, deficit - free_bytes);
  std::sort(core->edges.begin(), core->edges.end());
  return CoreKind::kCore;
}

// Dense cores first (most cost per edge they use up), each kept when its pairs are disjoint from
// the cores kept before it.
PackedCores Pack(std::vector<Core> cores) {
  std::sort(cores.begin(), cores.end(), [](const Core& a, const Core& b) {
    const unsigned __int128 x = static_cast<unsigned __int128>(a.cost) * b.edges.size();
    const unsigned __int128 y = static_cast<unsigned __int128>(b.cost) * a.edges.size();
    return x != y ? x > y : a.edges.size() < b.edges.size();
  });
  PackedCores packed;
  std::set<std::pair<int, int>> used;
  for (Core& core : cores) {
    bool disjoint = true;
    for (const auto& edge : core.edges) disjoint = disjoint && !used.count(edge);
    if (!disjoint) continue;
    used.insert(core.edges.begin(), core.edges.end());
    packed.total += core.cost;
    packed.cost.push_back(core.cost);
    packed.edges.push_back(std::move(core.edges));
  }
  return packed;
}

// The depth-first search of CoverBound over one CoverSystem.
class CoverSearch {
 public:
  CoverSearch(const CoverSystem& system, absl::Time deadline)
      : s_(system),
        deadline_(deadline),
        blocked_(system.weight.size(), 0),
        covered_(system.covers.size(), 0),
        covers_of_(system.weight.size()),
        covers_(system.covers) {
    for (size_t c = 0; c < covers_.size(); ++c) {
      for (const auto& e : covers_[c].edges) {
        covers_of_[e.first].push_back({static_cast<int>(c), e.second});
      }
    }
    for (CoverSystem::Cover& cover : covers_) {  // Cheap and wide edges first.
      std::sort(cover.edges.begin(), cover.edges.end(), [&](const auto& x, const auto& y) {
        if (s_.weight[x.first] != s_.weight[y.first]) {
          return s_.weight[x.first] < s_.weight[y.first];
        }
        return x.second > y.second;
      });
    }
  }

  // Can every open cover be met by adding edges of total weight <= budget? Branches on the
  // edges of the open cover that needs the most edges; a branch that fails leaves its edge out
  // of its later siblings. Out of nodes or time: "yes" (nothing is claimed).
  bool Feasible(uint64_t budget) {
    if (++nodes_ > kNodeLimit || ((nodes_ & 1023) == 0 && absl::Now() > deadline_)) {
      nodes_ = kNodeLimit + 1;  // Stay out of time for the rest of this search.
      return true;
    }
    int worst = -1;
    if (!MostDemanding(budget, &worst)) return false;
    if (worst < 0) return true;
    std::vector<int> left_out;
    bool ok = false;
    for (const auto& e : covers_[worst].edges) {
      if (blocked_[e.first] || s_.weight[e.first] > budget) continue;
      blocked_[e.first] = 1;
      for (const auto& [c, bytes] : covers_of_[e.first]) covered_[c] += bytes;
      ok = Feasible(budget - s_.weight[e.first]);
      for (const auto& [c, bytes] : covers_of_[e.first]) covered_[c] -= bytes;
      if (ok) {
        blocked_[e.first] = 0;
        break;
      }
      left_out.push_back(e.first);  // Stays blocked for the siblings after it.
    }
    for (int e : left_out) blocked_[e] = 0;
    return ok;
  }

 private:
  static constexpr int64_t kNodeLimit = 1000000;

  // False when an open cover cannot be met within `budget` (its widest free edges do not reach
  // its need, or that many of its cheapest edges cost more); else the open cover that needs the
  // most edges in `worst` (-1: none is open).
  bool MostDemanding(uint64_t budget, int* worst) {
    uint64_t worst_edges = 0;
    for (size_t c = 0; c < covers_.size(); ++c) {
      if (covered_[c] >= covers_[c].deficit) continue;
      const uint64_t need = covers_[c].deficit - covered_[c];
      widths_.clear();
      uint64_t cheapest = kInfinity;
      for (const auto& e : covers_[c].edges) {
        if (blocked_[e.first]) continue;
        widths_.push_back(e.second);
        cheapest = std::min(cheapest, s_.weight[e.first]);
      }
      std::sort(widths_.rbegin(), widths_.rend());
      uint64_t sum = 0, k = 0;
      while (k < widths_.size() && sum < need) sum += widths_[k++];
      if (sum < need || cheapest * k > budget) return false;
      if (*worst < 0 || k > worst_edges) {
        *worst = static_cast<int>(c);
        worst_edges = k;
      }
    }
    return true;
  }

  const CoverSystem& s_;
  const absl::Time deadline_;
  std::vector<uint8_t> blocked_;  // Taken, or left out by a branch.
  std::vector<uint64_t> covered_;
  std::vector<std::vector<std::pair<int, uint64_t>>> covers_of_;
  std::vector<CoverSystem::Cover> covers_;
  std::vector<uint64_t> widths_;
  int64_t nodes_ = 0;
};

}  // namespace

std::vector<int> GreedyClique(const PoolModel& m, std::vector<int> candidates) {
  std::sort(candidates.begin(), candidates.end(), [&](int a, int b) {
    return m.items[a].extent != m.items[b].extent ? m.items[a].extent > m.items[b].extent : a < b;
  });
  std::vector<int> clique;
  for (int c : candidates) {
    bool ok = true;
    for (int k : clique) ok = ok && m.conflict[c][k];
    if (ok) clique.push_back(c);
  }
  return clique;
}

std::vector<int> MaxWeightClique(const PoolModel& m) {
  const size_t n = m.items.size();
  std::vector<uint64_t> adjacent(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (int k : m.conflicts_of[i]) adjacent[i] |= uint64_t{1} << k;
  }
  uint64_t best_weight = 0, best_set = 0;
  int64_t budget = 200000;
  auto weight_of = [&](uint64_t set) {
    uint64_t w = 0;
    for (; set; set &= set - 1) w += m.items[__builtin_ctzll(set)].extent;
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
      grow(chosen | (uint64_t{1} << v), weight + m.items[v].extent, candidates & adjacent[v]);
    }
  };
  const uint64_t all = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  grow(0, 0, all);
  std::vector<int> clique;
  for (uint64_t set = best_set; set; set &= set - 1) clique.push_back(__builtin_ctzll(set));
  return clique;
}

LoadBound ComputeLoad(const PoolModel& m) {
  LoadBound load;
  for (LiveSet& live : LiveSets(m)) {
    std::vector<int> clique = GreedyClique(m, std::move(live.items));
    Raise(m, clique, live.time, /*separation=*/false, &load);
    load.cliques.push_back(std::move(clique));
  }
  // Exclusive pins and separations can make cliques across time too.
  for (size_t i = 0; i < m.items.size(); ++i) {
    if (m.conflicts_of[i].empty()) continue;
    std::vector<int> candidates = m.conflicts_of[i];
    candidates.push_back(static_cast<int>(i));
    std::vector<int> clique = GreedyClique(m, candidates);
    const int64_t time = m.items[i].intervals.empty() ? 0 : m.items[i].intervals[0].lower;
    Raise(m, clique, time, /*separation=*/true, &load);
    load.cliques.push_back(std::move(clique));
  }
  if (m.items.size() <= 64) {
    // Small pools: the heaviest clique of the whole conflict graph, exactly (separations can
    // tie items together across time, which the cliques above miss).
    std::vector<int> clique = MaxWeightClique(m);
    const int64_t time = clique.empty() || m.items[clique[0]].intervals.empty()
                             ? 0
                             : m.items[clique[0]].intervals[0].lower;
    if (Raise(m, clique, time, NoneLiveTogether(m, clique), &load)) {
      load.cliques.push_back(std::move(clique));
    }
  }
  return load;
}

std::string LoadInfeasibility(const PoolModel& m, const LoadBound& load) {
  const uint64_t usable = UsableCapacity(m);
  if (!m.has_capacity || load.load <= usable) return "";
  return absl::StrCat(
      load.separation ? "buffers that must all stay apart (separations) need " : "LOAD ", load.load,
      load.separation ? " bytes, from time " : " bytes at time ", load.time,
      ", over the usable capacity ", usable, " (capacity ", m.capacity, " minus ", m.reserved_total,
      " reserved)");
}

uint64_t PeakLowerBound(const PoolModel& m, uint64_t load) {
  uint64_t peak = std::max(m.reserved_end, load + m.reserved_total);
  for (const Item& item : m.items) {
    if (item.pinned) peak = std::max(peak, item.pin_offset + item.extent);
  }
  return peak;
}

std::string PinInfeasibility(const PoolModel& m) {
  for (size_t i = 0; i < m.items.size(); ++i) {
    const Item& a = m.items[i];
    if (!a.pinned) continue;
    if (a.alignment > 1 && a.pin_offset % a.alignment != 0) {
      return absl::StrCat("buffers pinned at ", a.pin_offset,
                          " with colocated buffers that need alignment ", a.alignment);
    }
    if (m.has_capacity && (a.extent > m.capacity || a.pin_offset > m.capacity - a.extent)) {
      return absl::StrCat("buffers pinned at ", a.pin_offset, " with colocated buffers of ",
                          a.extent, " bytes end past the capacity ", m.capacity);
    }
    for (const DsaAddressRange& r : m.reserved) {
      if (Overlap(a.pin_offset, a.extent, r.begin, r.end - r.begin)) {
        return absl::StrCat("item pinned at ", a.pin_offset, " overlaps a reserved range");
      }
    }
    for (size_t j = i + 1; j < m.items.size(); ++j) {
      const Item& b = m.items[j];
      if (b.pinned && m.conflict[i][j] && Overlap(a.pin_offset, a.extent, b.pin_offset, b.extent)) {
        return absl::StrCat("conflicting pins: buffers pinned at ", a.pin_offset, " and ",
                            b.pin_offset, " overlap while both live");
      }
    }
  }
  return "";
}

PackedCores PackCores(const PoolModel& m, const std::vector<std::vector<int>>& cliques,
                      uint64_t usable, std::string* infeasible_reason) {
  // A is a clique or a single item; K a clique; each pair of cliques once.
  std::vector<std::vector<int>> sets = cliques;
  for (size_t i = 0; i < m.items.size(); ++i) sets.push_back({static_cast<int>(i)});
  std::vector<uint64_t> set_total(sets.size(), 0);
  for (size_t s = 0; s < sets.size(); ++s) set_total[s] = TotalExtent(m, sets[s]);
  std::vector<Core> cores;
  std::set<std::vector<std::pair<int, int>>> seen;
  std::vector<uint8_t> in_a(m.items.size(), 0);
  for (size_t s = 0; s < sets.size(); ++s) {
    for (int i : sets[s]) in_a[i] = 1;
    for (size_t c = 0; c < cliques.size(); ++c) {
      const std::vector<int>& clique = cliques[c];
      if (s < cliques.size() && c <= s) continue;
      const uint64_t total = set_total[s] + set_total[c];
      if (total <= usable) continue;
      bool shared = false;
      for (int k : clique) shared = shared || in_a[k];
      if (shared) continue;
      Core core;
      const CoreKind kind = CoreOf(m, sets[s], clique, total - usable, &core);
      if (kind == CoreKind::kImpossible) {
        *infeasible_reason =
            absl::StrCat("items live together at time ", m.items[clique[0]].intervals[0].lower,
                         " and items that must stay apart from them need ", total,
                         " bytes of a usable ", usable, " and cannot share enough of them");
        return {};
      }
      if (kind == CoreKind::kCore && core.cost > 0 && seen.insert(core.edges).second) {
        cores.push_back(std::move(core));
      }
    }
    for (int i : sets[s]) in_a[i] = 0;
  }
  return Pack(std::move(cores));
}

void CoreBoundsAt(const PackedCores& cores, const std::vector<uint8_t>& placed, uint64_t* open,
                  uint64_t* undecided) {
  *open = 0;
  *undecided = 0;
  for (size_t c = 0; c < cores.edges.size(); ++c) {
    bool all_open = true, none_decided = true;
    for (const auto& [a, b] : cores.edges[c]) {
      all_open = all_open && !placed[a] && !placed[b];
      none_decided = none_decided && !(placed[a] && placed[b]);
    }
    if (all_open) *open += cores.cost[c];
    if (none_decided) *undecided += cores.cost[c];
  }
}

PoolBounds ComputeBounds(const PoolModel& m) {
  PoolBounds bounds;
  LoadBound load = ComputeLoad(m);
  bounds.load = load.load;
  bounds.load_time = load.time;
  bounds.load_is_separation = load.separation;
  bounds.peak = PeakLowerBound(m, load.load);
  bounds.infeasible_reason = LoadInfeasibility(m, load);
  if (bounds.infeasible_reason.empty()) bounds.infeasible_reason = PinInfeasibility(m);
  if (!bounds.infeasible_reason.empty() || !m.any_penalty || !m.has_capacity) return bounds;
  std::vector<std::vector<int>>& cliques = load.cliques;
  std::sort(cliques.begin(), cliques.end());
  cliques.erase(std::unique(cliques.begin(), cliques.end()), cliques.end());
  const uint64_t usable = UsableCapacity(m);
  bounds.cores = PackCores(m, cliques, usable, &bounds.infeasible_reason);
  if (!bounds.infeasible_reason.empty()) return bounds;
  bounds.reuse = bounds.cores.total;
  bounds.cover_cliques = std::move(cliques);
  bounds.usable = usable;
  return bounds;
}

CoverSystem BuildCovers(const PoolModel& m, const std::vector<std::vector<int>>& cliques,
                        uint64_t usable) {
  CoverSystem system;
  std::map<std::pair<int, int>, int> edge_index;
  auto edge = [&](int a, int b) {
    auto key = std::minmax(a, b);
    auto it = edge_index.find(key);
    if (it != edge_index.end()) return it->second;
    const int id = static_cast<int>(system.weight.size());
    edge_index.emplace(key, id);
    system.edges.push_back(key);
    system.weight.push_back(m.weight[a][b]);
    return id;
  };
  std::vector<std::vector<int>> sets;
  std::vector<uint64_t> totals;
  for (const std::vector<int>& clique : cliques) {
    if (clique.empty()) continue;
    sets.push_back(clique);
    totals.push_back(TotalExtent(m, clique));
  }
  if (sets.size() > 48) return system;
  std::vector<CoverSystem::Cover>& covers = system.covers;
  std::vector<int> chosen;
  std::vector<uint8_t> in(m.items.size(), 0);
  // The cover of the cliques chosen, when they are over the capacity and free pairs (no
  // penalty) cannot absorb the excess.
  auto add_cover = [&](uint64_t total) {
    CoverSystem::Cover cover;
    uint64_t free_bytes = 0;
    for (size_t x = 0; x < chosen.size(); ++x) {
      for (size_t y = x + 1; y < chosen.size(); ++y) {
        for (int a : sets[chosen[x]]) {
          for (int b : sets[chosen[y]]) {
            if (m.conflict[a][b]) continue;
            const uint64_t bytes = std::min(m.items[a].extent, m.items[b].extent);
            if (m.weight[a][b] == 0) {
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
  };
  std::function<void(size_t, uint64_t)> pick = [&](size_t from, uint64_t total) {
    if (chosen.size() >= 2 && total > usable) add_cover(total);
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
  // Impossible covers were reported as infeasibility by the pair cores; claim nothing here.
  for (const CoverSystem::Cover& cover : covers) {
    uint64_t most = 0;
    for (const auto& e : cover.edges) most += e.second;
    if (most < cover.deficit) {
      covers.clear();
      break;
    }
  }
  return system;
}

uint64_t CoverBound(const CoverSystem& system, uint64_t from, absl::Time deadline) {
  if (system.covers.empty()) return from;
  CoverSearch search(system, deadline);
  uint64_t target = from;
  while (target < from + 256 && !search.Feasible(target)) ++target;
  return target;
}

}  // namespace internal
}  // namespace policy
}  // namespace accelmem
