#include "policy/testing/dsa_exact_oracle.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "policy/testing/internal/integer_program.h"

namespace accelmem {
namespace policy_testing {
namespace {

using policy::DsaAddressRange;
using policy::DsaBuffer;
using policy::DsaInterval;
using policy::DsaObjectiveTerm;
using policy::DsaPlacement;
using policy::DsaPool;
using policy::DsaProblem;
using Clock = std::chrono::steady_clock;
using internal::LinearTerms;
using internal::Outcome;
using internal::Program;
using internal::Solve;
using internal::StageResult;

// ---- The placement problem, prepared for the program. ----

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int Find(int i) { return parent[i] == i ? i : parent[i] = Find(parent[i]); }
  void Join(int a, int b) { parent[Find(a)] = Find(b); }
};

bool LiveTogether(const DsaBuffer& a, const DsaBuffer& b) {
  for (const DsaInterval& x : a.live_intervals) {
    for (const DsaInterval& y : b.live_intervals) {
      if (x.lower < y.upper && y.lower < x.upper) return true;
    }
  }
  return false;
}

std::pair<uint32_t, uint32_t> Key(uint32_t a, uint32_t b) { return std::minmax(a, b); }

// A colocation class: one offset variable, offset = step * k.
struct Class {
  int pool = 0;            // Index into problem.pools.
  uint64_t alignment = 1;  // The largest of its buffers' (powers of two).
  uint64_t step = 1;       // lcm(alignment, grid).
  uint64_t extent = 0;     // The largest of its buffers' sizes.
  bool pinned = false;
  uint64_t pin = 0;
};

struct PenaltyPair {
  int i = 0, j = 0;
  uint64_t cost = 0;
};

struct Prepared {
  std::vector<int> pool_of, class_of;
  std::vector<Class> classes;
  std::vector<std::vector<bool>> disjoint;  // Must not share a byte (same pool, other class).
  std::vector<PenaltyPair> penalties;       // May share bytes, at a cost.
  std::vector<uint64_t> bound;              // Per pool: every offset + extent is below it.
  std::vector<uint64_t> peak_lower;         // Per pool: reserved ends, and the load (below).
  uint64_t grid = 1;                        // Some optimal placement has its offsets on it.
  std::vector<uint64_t> reserved_total;     // Per pool: bytes in reserved ranges.
  // Per pool: the reserved ranges merged where they overlap or touch (the same constraint; the
  // cuts count each byte once), by address.
  std::vector<std::vector<DsaAddressRange>> reserved;
  // Sets of buffers of one pool, pairwise disjoint or penalised (see the cuts in Build).
  std::vector<std::vector<int>> load_sets;
  std::map<std::pair<int, int>, int> penalty_index;  // (i, j), i < j -> index into penalties.
};

// Column indices of a built program (the same for every bound vector).
struct Layout {
  std::vector<int> k;     // Per class.
  std::vector<int> peak;  // Per pool.
  int max_peak = -1;
  LinearTerms reuse;  // sum cost * y.
  // (i, j) -> the column that is 1 when buffer i is entirely below buffer j (second: the column
  // is 0 then instead, for the one order binary of a disjoint pair).
  std::map<std::pair<int, int>, std::pair<int, bool>> below;
  std::vector<std::vector<int>> above;  // Per class and reserved range: 1 when above it.
};

Program Build(const DsaProblem& problem, const Prepared& m, const std::vector<uint64_t>& bound,
              Layout* layout) {
  Program program;
  *layout = Layout();
  std::vector<double> x_lower, x_upper;  // Offset bounds per class.
  for (const Class& c : m.classes) {
    double lower = 0, upper = 0;
    if (c.pinned) {
      lower = upper = static_cast<double>(c.pin / c.step);
    } else {
      const uint64_t room = bound[c.pool] >= c.extent ? bound[c.pool] - c.extent : 0;
      upper = static_cast<double>(room / c.step);
    }
    layout->k.push_back(program.AddColumn(lower, upper));
    x_lower.push_back(lower * static_cast<double>(c.step));
    x_upper.push_back(upper * static_cast<double>(c.step));
  }
  auto x = [&](int k, double sign) {  // sign * offset of class k.
    return std::make_pair(layout->k[k], sign * static_cast<double>(m.classes[k].step));
  };
  const int num_pools = static_cast<int>(problem.pools.size());
  double highest = 0;
  for (int p = 0; p < num_pools; ++p) {
    const double upper = static_cast<double>(std::max(bound[p], m.peak_lower[p]));
    layout->peak.push_back(program.AddColumn(static_cast<double>(m.peak_lower[p]), upper));
    highest = std::max(highest, upper);
  }
  layout->max_peak = program.AddColumn(0, highest);
  for (int p = 0; p < num_pools; ++p) {
    program.AddRow({{layout->max_peak, 1}, {layout->peak[p], -1}}, 'G', 0);
  }
  for (size_t k = 0; k < m.classes.size(); ++k) {
    const Class& c = m.classes[k];
    program.AddRow({{layout->peak[c.pool], 1}, x(k, -1)}, 'G', static_cast<double>(c.extent));
  }

  // Reserved ranges: below (above = 0) or above (above = 1). Big-Ms from the offset bounds.
  for (size_t k = 0; k < m.classes.size(); ++k) {
    const Class& c = m.classes[k];
    const double extent = static_cast<double>(c.extent);
    layout->above.emplace_back();
    for (const DsaAddressRange& r : m.reserved[c.pool]) {
      const double begin = static_cast<double>(r.begin), end = static_cast<double>(r.end);
      const int above = program.AddBinary();
      layout->above.back().push_back(above);
      // x + extent <= begin + M * above.
      const double m_below = std::max(x_upper[k] + extent - begin, 0.0);
      program.AddRow({x(k, 1), {above, -m_below}}, 'L', begin - extent);
      // x >= end - M * (1 - above).
      const double m_above = std::max(end - x_lower[k], 0.0);
      program.AddRow({x(k, 1), {above, -m_above}}, 'G', end - m_above);
    }
  }

  // `below` = 1 puts buffer i entirely below buffer j: x_i + s_i - x_j <= M * (1 - below).
  auto add_order = [&](int i, int j, int below) {
    const int ki = m.class_of[i], kj = m.class_of[j];
    const double size = static_cast<double>(problem.buffers[i].size);
    const double big = std::max(x_upper[ki] + size - x_lower[kj], 0.0);
    program.AddRow({x(ki, 1), x(kj, -1), {below, big}}, 'L', big - size);
  };
  const int n = static_cast<int>(problem.buffers.size());
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      if (!m.disjoint[i][j]) continue;
      const int i_below = program.AddBinary();  // 0: j below i.
      layout->below[{i, j}] = {i_below, false};
      layout->below[{j, i}] = {i_below, true};
      add_order(i, j, i_below);
      // x_j + s_j - x_i <= M * i_below.
      const int ki = m.class_of[i], kj = m.class_of[j];
      const double size = static_cast<double>(problem.buffers[j].size);
      const double big = std::max(x_upper[kj] + size - x_lower[ki], 0.0);
      program.AddRow({x(kj, 1), x(ki, -1), {i_below, -big}}, 'L', -size);
    }
  }
  for (const PenaltyPair& e : m.penalties) {
    const int i_below = program.AddBinary();
    const int j_below = program.AddBinary();
    const int overlap = program.AddBinary();
    layout->below[{e.i, e.j}] = {i_below, false};
    layout->below[{e.j, e.i}] = {j_below, false};
    add_order(e.i, e.j, i_below);
    add_order(e.j, e.i, j_below);
    program.AddRow({{i_below, 1}, {j_below, 1}, {overlap, 1}}, 'G', 1);
    program.AddRow({{i_below, 1}, {j_below, 1}}, 'L', 1);
    layout->reuse.push_back({overlap, static_cast<double>(e.cost)});
  }

  // Cuts (valid, not needed for exactness; they let the relaxation see the load and what reuse
  // it takes to fit). The buffers of a load set and the reserved ranges lie in [0, P); two of
  // them can share bytes only when they are a penalised pair that overlaps (y = 1), and then at
  // most the smaller size: P >= reserved + sum of sizes - sum over such pairs of min size * y.
  for (const std::vector<int>& set : m.load_sets) {
    const int p = m.pool_of[set[0]];
    double total = static_cast<double>(m.reserved_total[p]);
    LinearTerms terms = {{layout->peak[p], 1}};
    for (size_t a = 0; a < set.size(); ++a) {
      total += static_cast<double>(problem.buffers[set[a]].size);
      for (size_t b = a + 1; b < set.size(); ++b) {
        const auto e = m.penalty_index.find(std::minmax(set[a], set[b]));
        if (e == m.penalty_index.end()) continue;
        const double shared = static_cast<double>(
            std::min(problem.buffers[set[a]].size, problem.buffers[set[b]].size));
        terms.push_back({layout->reuse[e->second].first, shared});
      }
    }
    program.AddRow(terms, 'G', total);
  }
  // The same below each buffer j of a load set: the buffers of the set below j and the reserved
  // ranges below j lie in [0, x_j).
  for (const std::vector<int>& set : m.load_sets) {
    for (int j : set) {
      const int kj = m.class_of[j];
      LinearTerms terms = {x(kj, 1)};
      double rhs = 0;
      const auto& ranges = m.reserved[m.classes[kj].pool];
      for (size_t r = 0; r < ranges.size(); ++r) {
        terms.push_back(
            {layout->above[kj][r], -static_cast<double>(ranges[r].end - ranges[r].begin)});
      }
      for (size_t a = 0; a < set.size(); ++a) {
        const int i = set[a];
        if (i == j) continue;
        const double size = static_cast<double>(problem.buffers[i].size);
        const auto [column, complemented] = layout->below.at({i, j});
        if (complemented) {  // - size * (1 - column).
          terms.push_back({column, size});
          rhs += size;
        } else {
          terms.push_back({column, -size});
        }
        for (size_t b = a + 1; b < set.size(); ++b) {
          if (set[b] == j) continue;
          const auto e = m.penalty_index.find(std::minmax(i, set[b]));
          if (e == m.penalty_index.end()) continue;
          const double shared =
              static_cast<double>(std::min(problem.buffers[i].size, problem.buffers[set[b]].size));
          terms.push_back({layout->reuse[e->second].first, shared});
        }
      }
      program.AddRow(terms, 'G', rhs);
    }
  }
  // And above it: the buffers of the set above j and the reserved ranges above j lie in
  // [x_j + s_j, P).
  for (const std::vector<int>& set : m.load_sets) {
    for (int j : set) {
      const int kj = m.class_of[j];
      const int p = m.pool_of[j];
      LinearTerms terms = {{layout->peak[p], 1}, x(kj, -1)};
      double rhs = static_cast<double>(problem.buffers[j].size);
      const auto& ranges = m.reserved[p];
      for (size_t r = 0; r < ranges.size(); ++r) {  // - length * (1 - above).
        const double length = static_cast<double>(ranges[r].end - ranges[r].begin);
        terms.push_back({layout->above[kj][r], length});
        rhs += length;
      }
      for (size_t a = 0; a < set.size(); ++a) {
        const int i = set[a];
        if (i == j) continue;
        const double size = static_cast<double>(problem.buffers[i].size);
        const auto [column, complemented] = layout->below.at({j, i});
        if (complemented) {
          terms.push_back({column, size});
          rhs += size;
        } else {
          terms.push_back({column, -size});
        }
        for (size_t b = a + 1; b < set.size(); ++b) {
          if (set[b] == j) continue;
          const auto e = m.penalty_index.find(std::minmax(i, set[b]));
          if (e == m.penalty_index.end()) continue;
          const double shared =
              static_cast<double>(std::min(problem.buffers[i].size, problem.buffers[set[b]].size));
          terms.push_back({layout->reuse[e->second].first, shared});
        }
      }
      program.AddRow(terms, 'G', rhs);
    }
  }
  return program;
}

// Choices of one pool per buffer solved one by one, at most this many.
constexpr uint64_t kMaxPoolChoices = 256;

DsaOracleResult WithStatus(DsaOracleStatus status, std::string message) {
  DsaOracleResult result;
  result.status = status;
  result.message = std::move(message);
  return result;
}

// Solves a valid problem whose buffers each have one allowed pool, all pools in one program.
DsaOracleResult SolveJointly(const DsaProblem& problem, Clock::time_point deadline) {
  const int n = static_cast<int>(problem.buffers.size());
  const int num_pools = static_cast<int>(problem.pools.size());
  Prepared m;
  m.pool_of.resize(n);
  for (int i = 0; i < n; ++i) {
    m.pool_of[i] = policy::FindDsaPool(problem, problem.buffers[i].allowed_pools[0]);
  }

  // Colocation classes and pins.
  UnionFind uf(n);
  for (const policy::DsaPair& pair : problem.constraints.colocations) {
    uf.Join(policy::FindDsaBuffer(problem, pair.first),
            policy::FindDsaBuffer(problem, pair.second));
  }
  std::map<int, int> class_index;  // Root -> index into classes.
  m.class_of.resize(n);
  for (int i = 0; i < n; ++i) {
    auto [it, inserted] = class_index.emplace(uf.Find(i), static_cast<int>(m.classes.size()));
    if (inserted) {
      m.classes.emplace_back();
      m.classes.back().pool = m.pool_of[i];
    }
    Class& c = m.classes[it->second];
    m.class_of[i] = it->second;
    if (c.pool != m.pool_of[i]) {
      return WithStatus(DsaOracleStatus::kInfeasible, "colocated buffers in different pools");
    }
    c.alignment = std::max(c.alignment, problem.buffers[i].alignment);
    c.extent = std::max(c.extent, problem.buffers[i].size);
  }
  // A class shares one offset, and its members' ranges (by the class's extent, never empty)
  // overlap: a separation inside a class cannot hold.
  for (const policy::DsaSeparation& separation : problem.constraints.separations) {
    if (m.class_of[policy::FindDsaBuffer(problem, separation.first)] ==
        m.class_of[policy::FindDsaBuffer(problem, separation.second)]) {
      return WithStatus(DsaOracleStatus::kInfeasible, "a separation inside a colocation class");
    }
  }
  std::set<uint32_t> exclusive;
  for (const policy::DsaPinnedAllocation& pin : problem.constraints.pinned_allocations) {
    Class& c = m.classes[m.class_of[policy::FindDsaBuffer(problem, pin.buffer)]];
    if (problem.pools[c.pool].id != pin.pool) {
      return WithStatus(DsaOracleStatus::kInfeasible,
                        "buffer " + std::to_string(pin.buffer) + " pinned to another pool");
    }
    if (c.pinned && c.pin != pin.offset) {
      return WithStatus(DsaOracleStatus::kInfeasible,
                        "colocated buffers pinned at different offsets");
    }
    c.pinned = true;
    c.pin = pin.offset;
    if (pin.exclusive_for_all_time) exclusive.insert(pin.buffer);
  }

  // The grid: the gcd of every size, capacity, reserved bound and pinned offset. Rounding every
  // offset of a placement down to the grid keeps it aligned (when each alignment divides the grid
  // or the grid divides it), keeps disjoint pairs disjoint and ranges clear, and raises no peak:
  // some optimal placement lies on the grid, and searching only there is exact and much faster.
  uint64_t grid = 0;
  for (const DsaBuffer& b : problem.buffers) grid = std::gcd(grid, b.size);
  for (const DsaPool& pool : problem.pools) {
    if (pool.capacity) grid = std::gcd(grid, *pool.capacity);
    for (const DsaAddressRange& r : pool.reserved_ranges) {
      grid = std::gcd(grid, std::gcd(r.begin, r.end));
    }
  }
  for (const policy::DsaPinnedAllocation& pin : problem.constraints.pinned_allocations) {
    grid = std::gcd(grid, pin.offset);
  }
  for (const DsaBuffer& b : problem.buffers) {
    if (grid % b.alignment != 0 && b.alignment % grid != 0) grid = 1;
  }
  m.grid = grid;
  for (Class& c : m.classes) {
    c.step = std::max(grid, c.alignment);
    if (c.pinned && c.pin % c.step != 0) {  // Not aligned for another buffer of the class.
      return WithStatus(DsaOracleStatus::kInfeasible, "a pin misaligns a colocated buffer");
    }
  }

  // Pairs.
  std::set<std::pair<uint32_t, uint32_t>> separated, excluded;
  for (const policy::DsaSeparation& s : problem.constraints.separations) {
    separated.insert(Key(s.first, s.second));
  }
  for (const policy::DsaPair& e : problem.constraints.temporal_exclusions) {
    excluded.insert(Key(e.first, e.second));
  }
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> pair_cost;
  if (problem.cost_model) {
    for (const policy::DsaReusePenalty& e : problem.cost_model->reuse_penalties) {
      pair_cost[Key(e.first, e.second)] += e.cost;
    }
  }
  auto temporal_conflict = [&](int i, int j) {
    const DsaBuffer& a = problem.buffers[i];
    const DsaBuffer& b = problem.buffers[j];
    return LiveTogether(a, b) && excluded.count(Key(a.id, b.id)) == 0;
  };
  m.disjoint.assign(n, std::vector<bool>(n, false));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j || m.pool_of[i] != m.pool_of[j] || m.class_of[i] == m.class_of[j]) continue;
      const uint32_t a = problem.buffers[i].id, b = problem.buffers[j].id;
      m.disjoint[i][j] = temporal_conflict(i, j) || separated.count(Key(a, b)) != 0 ||
                         exclusive.count(a) != 0 || exclusive.count(b) != 0;
      if (i < j && !m.disjoint[i][j]) {
        const auto cost = pair_cost.find(Key(a, b));
        if (cost != pair_cost.end() && cost->second > 0) {
          m.penalty_index[{i, j}] = static_cast<int>(m.penalties.size());
          m.penalties.push_back({i, j, cost->second});
        }
      }
    }
  }

  // Per pool: the peak's lower bound (reserved ends; and pairwise disjoint buffers lie with the
  // reserved ranges in [0, peak), so their sizes and the reserved lengths add up below it: one
  // greedy such set per start time, the buffers live then, largest first, then the others) and
  // the bound on every offset + extent (the capacity, or the height of a placement that stacks
  // the free classes above every reserved range and pin: it exists and has no reuse cost, so an
  // optimal placement lies below it).
  m.peak_lower.assign(num_pools, 0);
  m.reserved_total.assign(num_pools, 0);
  m.bound.assign(num_pools, 0);
  m.reserved.assign(num_pools, {});
  for (int p = 0; p < num_pools; ++p) {
    const DsaPool& pool = problem.pools[p];
    std::vector<DsaAddressRange> ranges = pool.reserved_ranges;
    std::sort(ranges.begin(), ranges.end(),
              [](const DsaAddressRange& a, const DsaAddressRange& b) { return a.begin < b.begin; });
    for (const DsaAddressRange& r : ranges) {
      if (!m.reserved[p].empty() && r.begin <= m.reserved[p].back().end) {
        m.reserved[p].back().end = std::max(m.reserved[p].back().end, r.end);
      } else {
        m.reserved[p].push_back(r);
      }
    }
    uint64_t reserved_total = 0;
    for (const DsaAddressRange& r : m.reserved[p]) {
      m.peak_lower[p] = std::max(m.peak_lower[p], r.end);
      reserved_total += r.end - r.begin;
    }
    m.peak_lower[p] = std::max(m.peak_lower[p], reserved_total);
    m.reserved_total[p] = reserved_total;
    std::set<int64_t> times;
    for (int i = 0; i < n; ++i) {
      if (m.pool_of[i] != p) continue;
      for (const DsaInterval& v : problem.buffers[i].live_intervals) times.insert(v.lower);
    }
    for (int64_t t : times) {
      std::vector<std::pair<int, int>> order;  // (0 if live at t, else 1; index).
      for (int i = 0; i < n; ++i) {
        if (m.pool_of[i] != p) continue;
        bool live = false;
        for (const DsaInterval& v : problem.buffers[i].live_intervals) {
          live = live || (v.lower <= t && t < v.upper);
        }
        order.push_back({live ? 0 : 1, i});
      }
      std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first < b.first;
        return problem.buffers[a.second].size > problem.buffers[b.second].size;
      });
      std::vector<int> chosen;
      uint64_t total = reserved_total;
      for (const auto& [rank, i] : order) {
        bool all = true;
        for (int j : chosen) all = all && m.disjoint[i][j];
        if (!all) continue;
        chosen.push_back(i);
        total += problem.buffers[i].size;
      }
      m.peak_lower[p] = std::max(m.peak_lower[p], total);
    }
    if (pool.capacity) {
      m.bound[p] = *pool.capacity;
      if (m.peak_lower[p] > m.bound[p]) {
        return WithStatus(DsaOracleStatus::kInfeasible,
                          "pool " + std::to_string(pool.id) + ": the load exceeds the capacity");
      }
    } else {
      uint64_t base = 0, stack = 0;
      for (const DsaAddressRange& r : pool.reserved_ranges) base = std::max(base, r.end);
      for (const Class& c : m.classes) {
        if (c.pool != p) continue;
        if (c.pinned) {
          base = std::max(base, c.pin + c.extent);
        } else {
          stack += c.extent + c.step - 1;
        }
      }
      m.bound[p] = base + stack;
    }
  }
  // Load sets: the maximal sets of buffers pairwise disjoint or penalised (Bron-Kerbosch with
  // pivoting; a few dozen for a dozen buffers), capped for larger problems.
  {
    constexpr size_t kMaxLoadSets = 4000;
    auto related = [&](int i, int j) {
      return m.disjoint[i][j] || m.penalty_index.count(std::minmax(i, j)) != 0;
    };
    std::function<void(std::vector<int>&, std::vector<int>, std::vector<int>)> extend =
        [&](std::vector<int>& chosen, std::vector<int> candidates, std::vector<int> excluded) {
          if (m.load_sets.size() >= kMaxLoadSets) return;
          if (candidates.empty() && excluded.empty()) {
            if (chosen.size() >= 2) m.load_sets.push_back(chosen);
            return;
          }
          const int pivot = candidates.empty() ? excluded[0] : candidates[0];
          std::vector<int> branch;
          for (int v : candidates) {
            if (!related(pivot, v)) branch.push_back(v);
          }
          for (int v : branch) {
            std::vector<int> next_candidates, next_excluded;
            for (int u : candidates) {
              if (u != v && related(u, v)) next_candidates.push_back(u);
            }
            for (int u : excluded) {
              if (related(u, v)) next_excluded.push_back(u);
            }
            chosen.push_back(v);
            extend(chosen, next_candidates, next_excluded);
            chosen.pop_back();
            candidates.erase(std::find(candidates.begin(), candidates.end(), v));
            excluded.push_back(v);
          }
        };
    for (int p = 0; p < num_pools; ++p) {
      std::vector<int> chosen, members;
      for (int i = 0; i < n; ++i) {
        if (m.pool_of[i] == p) members.push_back(i);
      }
      extend(chosen, members, {});
    }
  }

  for (const Class& c : m.classes) {
    if (c.extent > m.bound[c.pool] || (c.pinned && c.pin + c.extent > m.bound[c.pool])) {
      return WithStatus(DsaOracleStatus::kInfeasible,
                        "pool " + std::to_string(problem.pools[c.pool].id) +
                            ": a buffer does not fit in the capacity");
    }
  }

  // Lexicographic stages. The program is rebuilt for each, with the bounds tightened by what
  // the earlier stages fixed and by the incumbent (an upper bound on the stage's optimum).
  DsaOracleResult result;
  std::vector<uint64_t> bound = m.bound;
  auto tighten = [&](DsaObjectiveTerm term, uint64_t value) {
    uint64_t lower_total = 0;
    for (int p = 0; p < num_pools; ++p) lower_total += m.peak_lower[p];
    for (int p = 0; p < num_pools; ++p) {
      if (term == DsaObjectiveTerm::kMaxPeak) bound[p] = std::min(bound[p], value);
      if (term == DsaObjectiveTerm::kTotalPeak && value >= lower_total) {
        bound[p] = std::min(bound[p], value - (lower_total - m.peak_lower[p]));
      }
    }
  };
  std::vector<std::pair<LinearTerms, uint64_t>> fixed;  // Stage objectives <= their optimum.
  std::vector<double> incumbent;
  Layout layout;
  Build(problem, m, bound, &layout);  // The column indices, the same for every build.
  // Sets the incumbent's peak columns to the placement's peaks (a solve for another objective
  // leaves them anywhere above): the rows all still hold, and the values are the true ones.
  auto normalise = [&] {
    std::vector<double> peaks(num_pools, 0);
    for (int p = 0; p < num_pools; ++p) peaks[p] = static_cast<double>(m.peak_lower[p]);
    for (size_t k = 0; k < m.classes.size(); ++k) {
      const double top =
          std::round(incumbent[layout.k[k]]) * static_cast<double>(m.classes[k].step) +
          static_cast<double>(m.classes[k].extent);
      peaks[m.classes[k].pool] = std::max(peaks[m.classes[k].pool], top);
    }
    incumbent[layout.max_peak] = 0;
    for (int p = 0; p < num_pools; ++p) {
      incumbent[layout.peak[p]] = peaks[p];
      incumbent[layout.max_peak] = std::max(incumbent[layout.max_peak], peaks[p]);
    }
  };
  auto value_of = [&](const LinearTerms& objective) {
    double sum = 0;
    for (const auto& [column, coefficient] : objective) sum += coefficient * incumbent[column];
    return static_cast<uint64_t>(std::llround(std::max(sum, 0.0)));
  };
  // One solve under `solve_bound`, the stages fixed so far and objective >= `floor`.
  auto solve = [&](const std::vector<uint64_t>& solve_bound, const LinearTerms& objective,
                   const std::vector<double>& start, uint64_t floor) {
    const double remaining = std::chrono::duration<double>(deadline - Clock::now()).count();
    if (remaining <= 0) return StageResult();
    Layout unused;
    Program program = Build(problem, m, solve_bound, &unused);
    for (const auto& [terms, value] : fixed) {
      program.AddRow(terms, 'L', static_cast<double>(value) + 0.5);
    }
    if (floor > 0) program.AddRow(objective, 'G', static_cast<double>(floor) - 0.5);
    return Solve(program, objective, remaining, start);
  };
  auto stop = [&](Outcome outcome) {
    result.status =
        outcome == Outcome::kInfeasible ? DsaOracleStatus::kInfeasible : DsaOracleStatus::kUnknown;
    result.message = outcome == Outcome::kInfeasible ? "no placement meets the hard constraints"
                                                     : "time limit reached";
    return false;
  };
  auto accept = [&](DsaObjectiveTerm term, const LinearTerms& objective, uint64_t value) {
    result.term_values.push_back(value);
    if (!objective.empty()) fixed.push_back({objective, value});
    tighten(term, value);
    return true;
  };
  auto run_stage = [&](DsaObjectiveTerm term, bool has_objective) -> bool {
    LinearTerms objective;
    if (has_objective && term == DsaObjectiveTerm::kReuseCost) objective = layout.reuse;
    if (has_objective && term == DsaObjectiveTerm::kTotalPeak) {
      for (int column : layout.peak) objective.push_back({column, 1});
    }
    if (has_objective && term == DsaObjectiveTerm::kMaxPeak) {
      objective.push_back({layout.max_peak, 1});
    }
    const bool peak = term == DsaObjectiveTerm::kTotalPeak || term == DsaObjectiveTerm::kMaxPeak;
    if (has_objective && peak && !incumbent.empty()) tighten(term, value_of(objective));
    uint64_t floor = 0;
    if (has_objective && peak && num_pools == 1) {
      // The least peak of one pool, found upwards: proving that nothing fits under a peak with
      // every big-M at that peak is much faster for CBC than closing the gap of the minimisation.
      // The optimum is on the grid (every offset, size and reserved end is).
      constexpr int kMaxTries = 16;  // Then minimise above the last peak proven too low.
      uint64_t peak_try = (m.peak_lower[0] + m.grid - 1) / m.grid * m.grid;
      for (int tries = 0; tries < kMaxTries && peak_try <= bound[0]; ++tries) {
        if (!incumbent.empty() && value_of(objective) <= peak_try) {  // Fits: nothing to solve.
          return accept(term, objective, value_of(objective));
        }
        const StageResult stage = solve({peak_try}, {}, {}, 0);
        if (stage.outcome == Outcome::kStopped) return stop(stage.outcome);
        if (stage.outcome == Outcome::kOptimal) {
          incumbent = stage.values;
          normalise();
          return accept(term, objective, peak_try);
        }
        peak_try += m.grid;
        floor = peak_try;
      }
      if (peak_try > bound[0]) return stop(Outcome::kInfeasible);
    }
    const StageResult stage = solve(bound, objective, incumbent, floor);
    if (!stage.values.empty()) {
      incumbent = stage.values;
      normalise();
    }
    if (stage.outcome != Outcome::kOptimal) return stop(stage.outcome);
    if (!has_objective) return true;
    return accept(term, objective, value_of(objective));
  };
  result.status = DsaOracleStatus::kOptimal;
  bool solved = false;
  for (DsaObjectiveTerm term : problem.objective.terms) {
    if (term == DsaObjectiveTerm::kCapacityOverflow) {  // The capacity is hard.
      result.term_values.push_back(0);
      continue;
    }
    solved = true;
    if (!run_stage(term, true)) break;
  }
  if (!solved) run_stage(DsaObjectiveTerm::kCapacityOverflow, false);  // Feasibility only.
  if (result.status != DsaOracleStatus::kOptimal) result.term_values.clear();
  if (result.status == DsaOracleStatus::kInfeasible || incumbent.empty()) return result;

  // The placement and its costs, recomputed from the offsets.
  std::vector<uint64_t> offset(n);
  for (int i = 0; i < n; ++i) {
    const Class& c = m.classes[m.class_of[i]];
    const int64_t k = std::llround(incumbent[layout.k[m.class_of[i]]]);
    offset[i] = c.step * static_cast<uint64_t>(std::max<int64_t>(k, 0));
    result.placements.push_back({problem.buffers[i].id, problem.pools[m.pool_of[i]].id, offset[i]});
  }
  std::sort(result.placements.begin(), result.placements.end(),
            [](const DsaPlacement& a, const DsaPlacement& b) { return a.buffer < b.buffer; });
  for (int p = 0; p < num_pools; ++p) {
    uint64_t peak = 0;
    for (const DsaAddressRange& r : problem.pools[p].reserved_ranges) peak = std::max(peak, r.end);
    for (int i = 0; i < n; ++i) {
      if (m.pool_of[i] == p) peak = std::max(peak, offset[i] + problem.buffers[i].size);
    }
    result.pool_peaks.push_back({problem.pools[p].id, peak});
    result.total_peak += peak;
    result.max_peak = std::max(result.max_peak, peak);
  }
  if (problem.cost_model) {
    for (const policy::DsaReusePenalty& e : problem.cost_model->reuse_penalties) {
      const int i = policy::FindDsaBuffer(problem, e.first);
      const int j = policy::FindDsaBuffer(problem, e.second);
      if (m.pool_of[i] != m.pool_of[j] || m.class_of[i] == m.class_of[j] ||
          temporal_conflict(i, j)) {
        continue;
      }
      if (offset[i] < offset[j] + problem.buffers[j].size &&
          offset[j] < offset[i] + problem.buffers[i].size) {
        result.reuse_cost += e.cost;
      }
    }
  }
  return result;
}

// Pools share nothing but the objective. When the objective is a lexicographic order of sums
// over pools (reuse cost, total peak), it is met by meeting it in each pool alone; max_peak is
// met that way too when it comes last, or right after total_peak or before it (then every pool
// is at its least peak anyway). Only max_peak followed by reuse_cost couples the pools.
bool Separable(const std::vector<DsaObjectiveTerm>& terms) {
  bool seen_total = false;
  for (size_t t = 0; t < terms.size(); ++t) {
    if (terms[t] == DsaObjectiveTerm::kTotalPeak) seen_total = true;
    if (terms[t] != DsaObjectiveTerm::kMaxPeak || seen_total) continue;
    for (size_t u = t + 1; u < terms.size(); ++u) {
      if (terms[u] == DsaObjectiveTerm::kTotalPeak) break;
      if (terms[u] == DsaObjectiveTerm::kReuseCost) return false;
    }
  }
  return true;
}

// The part of `problem` in pool `p`, with the objective in one pool's terms (peak for both
// total_peak and max_peak, once).
DsaProblem PoolPart(const DsaProblem& problem, int p) {
  const uint32_t pool = problem.pools[p].id;
  DsaProblem part;
  part.pools = {problem.pools[p]};
  std::set<uint32_t> in;
  for (const DsaBuffer& b : problem.buffers) {
    if (b.allowed_pools[0] == pool) {
      part.buffers.push_back(b);
      in.insert(b.id);
    }
  }
  auto inside = [&](uint32_t a, uint32_t b) { return in.count(a) != 0 && in.count(b) != 0; };
  const policy::DsaConstraints& c = problem.constraints;
  for (const policy::DsaPair& x : c.colocations) {
    if (inside(x.first, x.second)) part.constraints.colocations.push_back(x);
  }
  for (const policy::DsaSeparation& x : c.separations) {
    if (inside(x.first, x.second)) part.constraints.separations.push_back(x);
  }
  for (const policy::DsaPair& x : c.temporal_exclusions) {
    if (inside(x.first, x.second)) part.constraints.temporal_exclusions.push_back(x);
  }
  for (const policy::DsaPinnedAllocation& x : c.pinned_allocations) {
    if (in.count(x.buffer) != 0) part.constraints.pinned_allocations.push_back(x);
  }
  if (problem.cost_model) {
    part.cost_model.emplace();
    for (const policy::DsaReusePenalty& x : problem.cost_model->reuse_penalties) {
      if (inside(x.first, x.second)) part.cost_model->reuse_penalties.push_back(x);
    }
  }
  for (DsaObjectiveTerm term : problem.objective.terms) {
    if (term == DsaObjectiveTerm::kMaxPeak) term = DsaObjectiveTerm::kTotalPeak;
    std::vector<DsaObjectiveTerm>& terms = part.objective.terms;
    if (std::find(terms.begin(), terms.end(), term) == terms.end()) terms.push_back(term);
  }
  return part;
}

}  // namespace

const char* DsaOracleStatusName(DsaOracleStatus status) {
  switch (status) {
    case DsaOracleStatus::kOptimal:
      return "optimal";
    case DsaOracleStatus::kInfeasible:
      return "infeasible";
    case DsaOracleStatus::kUnknown:
      return "unknown";
    case DsaOracleStatus::kUnsupported:
      return "unsupported";
  }
  return "?";
}

namespace {

// The problem with every buffer's size raised to the largest size of its colocation class.
DsaProblem WithClassExtents(const DsaProblem& problem) {
  const int n = static_cast<int>(problem.buffers.size());
  std::vector<int> parent(n);
  for (int i = 0; i < n; ++i) parent[i] = i;
  auto find = [&](int i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (const policy::DsaPair& pair : problem.constraints.colocations) {
    parent[find(policy::FindDsaBuffer(problem, pair.first))] =
        find(policy::FindDsaBuffer(problem, pair.second));
  }
  std::vector<uint64_t> extent(n, 0);
  for (int i = 0; i < n; ++i) extent[find(i)] = std::max(extent[find(i)], problem.buffers[i].size);
  DsaProblem result = problem;
  for (int i = 0; i < n; ++i) result.buffers[i].size = extent[find(i)];
  return result;
}

DsaOracleResult SolveSeparatelyOrJointly(const DsaProblem& problem, Clock::time_point deadline) {
  if (problem.pools.size() == 1 || !Separable(problem.objective.terms)) {
    return SolveJointly(problem, deadline);
  }

  // One program per pool, combined.
  DsaOracleResult result;
  result.status = DsaOracleStatus::kOptimal;
  uint64_t reuse_value = 0, total_value = 0, max_value = 0;
  for (size_t p = 0; p < problem.pools.size(); ++p) {
    const DsaProblem part = PoolPart(problem, static_cast<int>(p));
    DsaOracleResult r;
    if (part.buffers.empty()) {  // Nothing to place: the peak is the highest reserved end.
      r.status = DsaOracleStatus::kOptimal;
      uint64_t peak = 0;
      for (const DsaAddressRange& x : part.pools[0].reserved_ranges) peak = std::max(peak, x.end);
      r.pool_peaks = {{part.pools[0].id, peak}};
      r.total_peak = r.max_peak = peak;
      for (DsaObjectiveTerm term : part.objective.terms) {
        r.term_values.push_back(term == DsaObjectiveTerm::kTotalPeak ? peak : 0);
      }
    } else {
      r = SolveJointly(part, deadline);
    }
    if (r.status != DsaOracleStatus::kOptimal) {
      if (r.status == DsaOracleStatus::kInfeasible || result.status == DsaOracleStatus::kOptimal) {
        result.status = r.status;
        result.message = "pool " + std::to_string(part.pools[0].id) + ": " + r.message;
      }
      if (r.status == DsaOracleStatus::kInfeasible) break;
    }
    result.placements.insert(result.placements.end(), r.placements.begin(), r.placements.end());
    result.pool_peaks.insert(result.pool_peaks.end(), r.pool_peaks.begin(), r.pool_peaks.end());
    result.reuse_cost += r.reuse_cost;
    result.total_peak += r.total_peak;
    result.max_peak = std::max(result.max_peak, r.max_peak);
    for (size_t t = 0; t < r.term_values.size(); ++t) {
      if (part.objective.terms[t] == DsaObjectiveTerm::kReuseCost) reuse_value += r.term_values[t];
      if (part.objective.terms[t] == DsaObjectiveTerm::kTotalPeak) {
        total_value += r.term_values[t];
        max_value = std::max(max_value, r.term_values[t]);
      }
    }
  }
  if (result.status != DsaOracleStatus::kOptimal) {
    result.placements.clear();
    result.pool_peaks.clear();
    result.reuse_cost = result.total_peak = result.max_peak = 0;
    return result;
  }
  std::sort(result.placements.begin(), result.placements.end(),
            [](const DsaPlacement& a, const DsaPlacement& b) { return a.buffer < b.buffer; });
  for (DsaObjectiveTerm term : problem.objective.terms) {
    switch (term) {
      case DsaObjectiveTerm::kReuseCost:
        result.term_values.push_back(reuse_value);
        break;
      case DsaObjectiveTerm::kTotalPeak:
        result.term_values.push_back(total_value);
        break;
      case DsaObjectiveTerm::kMaxPeak:
        result.term_values.push_back(max_value);
        break;
      default:
        result.term_values.push_back(0);
        break;
    }
  }
  return result;
}

}  // namespace

namespace {

// Solves a problem whose buffers each have one allowed pool.
DsaOracleResult SolveOnePoolEach(const DsaProblem& problem, Clock::time_point deadline) {
  for (const policy::DsaPair& x : problem.constraints.colocations) {
    if (problem.buffers[policy::FindDsaBuffer(problem, x.first)].allowed_pools[0] !=
        problem.buffers[policy::FindDsaBuffer(problem, x.second)].allowed_pools[0]) {
      return WithStatus(DsaOracleStatus::kInfeasible, "colocated buffers in two pools");
    }
  }
  for (const policy::DsaPinnedAllocation& pin : problem.constraints.pinned_allocations) {
    if (problem.buffers[policy::FindDsaBuffer(problem, pin.buffer)].allowed_pools[0] != pin.pool) {
      return WithStatus(DsaOracleStatus::kInfeasible, "a buffer pinned outside its pool");
    }
  }
  // Schema v1 measures every address overlap between buffers (conflicts, separations, reuse
  // penalties) by the colocation class's largest size, its extent; capacity, reserved ranges
  // and peaks by each buffer's own size, which for the class's shared offset is again the
  // extent at most. So the program solves the problem with every size raised to its class's
  // extent: the same feasible offsets, the same costs and peaks.
  const DsaProblem extended = WithClassExtents(problem);
  return SolveSeparatelyOrJointly(extended, deadline);
}

}  // namespace

DsaOracleResult SolveDsaExactly(const DsaProblem& problem, double time_limit_s) {
  const Clock::time_point started = Clock::now();
  const Clock::time_point deadline =
      started + std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>(std::max(time_limit_s, 0.0)));
  auto finish = [&](DsaOracleResult result) {
    result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return result;
  };

  if (std::vector<std::string> errors = policy::ValidateDsaProblem(problem); !errors.empty()) {
    return finish(WithStatus(DsaOracleStatus::kUnsupported, "invalid problem: " + errors.front()));
  }
  for (DsaObjectiveTerm term : problem.objective.terms) {
    if (term == DsaObjectiveTerm::kBankCost) {
      return finish(WithStatus(DsaOracleStatus::kUnsupported, "bank_cost is not supported"));
    }
  }
  if (!problem.extensions.exact_or_disjoint.empty()) {  // brute_force.h checks those.
    return finish(
        WithStatus(DsaOracleStatus::kUnsupported, "exact_or_disjoint pairs are not supported"));
  }
  // A buffer allowed in several pools: every choice of one pool per buffer is a problem of its
  // own; the optimum is the least of their optima (term by term, in the objective's order),
  // known only when every choice is decided. Buffer by buffer, not class by class, so that
  // nothing here shares the planner's grouping.
  std::vector<size_t> several;
  uint64_t choices = 1;
  for (size_t b = 0; b < problem.buffers.size(); ++b) {
    if (problem.buffers[b].allowed_pools.size() < 2) continue;
    several.push_back(b);
    choices *= problem.buffers[b].allowed_pools.size();
    if (choices > kMaxPoolChoices) {
      return finish(
          WithStatus(DsaOracleStatus::kUnsupported,
                     "more than " + std::to_string(kMaxPoolChoices) + " choices of pools"));
    }
  }
  if (several.empty()) return finish(SolveOnePoolEach(problem, deadline));
  std::vector<size_t> digit(several.size(), 0);
  DsaOracleResult best =
      WithStatus(DsaOracleStatus::kInfeasible, "every choice of pools is infeasible");
  bool found = false, unknown = false;
  for (uint64_t c = 0; c < choices; ++c) {
    DsaProblem one = problem;
    for (size_t d = 0; d < several.size(); ++d) {
      one.buffers[several[d]].allowed_pools = {problem.buffers[several[d]].allowed_pools[digit[d]]};
    }
    DsaOracleResult r = SolveOnePoolEach(one, deadline);
    if (r.status == DsaOracleStatus::kUnknown || r.status == DsaOracleStatus::kUnsupported) {
      unknown = true;
    } else if (r.status == DsaOracleStatus::kOptimal &&
               (!found || r.term_values < best.term_values)) {
      best = std::move(r);
      found = true;
    }
    for (size_t d = 0;
         d < several.size() && ++digit[d] == problem.buffers[several[d]].allowed_pools.size();
         ++d) {
      digit[d] = 0;
    }
  }
  if (unknown) return finish(WithStatus(DsaOracleStatus::kUnknown, "a choice of pools undecided"));
  return finish(std::move(best));
}

}  // namespace policy_testing
}  // namespace accelmem
