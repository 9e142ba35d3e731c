// The pool model and search of //policy:constrained_planner (not a public API): a pool's
// colocation classes as items, with their conflicts and penalties resolved to item pairs, and
// PoolSearch, which proves bounds (constrained_bounds.cc: LOAD cliques, knapsack-cover cores,
// multi-clique covers) and searches placements (constrained_search.cc: greedy orders, re-insertion
// neighbourhoods, grid and offset-order branch and bound). policy/constrained_planner.h says what
// the planner promises; the comments here say how.
#ifndef ACCELMEM_POLICY_INTERNAL_CONSTRAINED_POOL_SEARCH_H_
#define ACCELMEM_POLICY_INTERNAL_CONSTRAINED_POOL_SEARCH_H_

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "policy/constrained_result.h"
#include "policy/dsa_problem.h"

namespace accelmem {
namespace policy {
namespace internal {

constexpr uint64_t kNoCapacity = std::numeric_limits<uint64_t>::max() / 4;
constexpr uint64_t kInfinity = std::numeric_limits<uint64_t>::max();

inline uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

inline bool IntervalsOverlap(const std::vector<DsaInterval>& a, const std::vector<DsaInterval>& b) {
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

// Derives conflicts_of, penalties_of and any_penalty from the conflict and weight matrices; a
// conflicting pair's weight becomes 0 (it can never be paid).
inline void IndexPairs(PoolModel* m) {
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
}

inline bool Overlap(uint64_t a, uint64_t ea, uint64_t b, uint64_t eb) {
  return a < b + eb && b < a + ea;
}

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
  void Run(PoolResult* out, std::vector<uint64_t>* offsets);

  // Off: no SubsetBound (for tests that show what it adds).
  void set_subset_bound(bool on) { subset_bound_ = on; }
  // Off: bounds and the greedy placement only (ConstrainedOptions::search).
  void set_search(bool on) { search_ = on; }

 private:
  bool Proven() const;

  // Terms the objective does not name count as 0, so the search does not chase them.
  Score MakeScore(uint64_t reuse, uint64_t peak) const;

  // LOAD (a clique of items that pairwise conflict, live together) and the reuse-cost cores.
  void ComputeBounds();

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

  void CoverBound(const std::vector<std::vector<int>>& cliques, uint64_t usable);

  // A bound for small pools the bounds above leave open, from exactly solved parts. Split the
  // items into disjoint cliques (groups; pairs inside one never overlap, so never pay). For
  // each set S of 2 to 5 groups (not all) in which the incumbent pays something, a nested search
  // (which skips this stage) proves v(S), the least reuse cost of the pool holding only S's items:
  // any placement restricted to S is one of that pool's, so it pays at least v(S) on the pairs
  // between S's groups. With x_XY the cost paid between groups X and Y, the least sum of
  // x_XY >= 0 meeting every such constraint (and x_XY at most the weight between X and Y) bounds
  // the reuse cost; a depth-first search finds it by raising the total from the bound already
  // proven. This is what proves a pool whose byte counts (CoverBound) undercount what a part
  // must pay, as the ping-pong groups of pypto-lib's gate_up_proj (cost 12, CoverBound 8).
  static constexpr size_t kSubsetGroups = 12;
  static constexpr size_t kSubsetSize = 5;  // Groups in a part (kv_proj's Mat pool needs five).
  static constexpr int64_t kSubsetNodes = 200000;
  static constexpr uint64_t kSubsetMaxTotal = 1024;  // The master's search raises one by one.
  static constexpr absl::Duration kSubsetTime = absl::Milliseconds(5);    // Per nested search.
  static constexpr absl::Duration kFirstSearch = absl::Milliseconds(10);  // Before SubsetBound.
  bool SubsetBoundApplies() const;
  PoolModel SubModel(const std::vector<int>& items) const;
  void SubsetBound();

  // The branch and bound of the pool (GridSearch or Search), until `until`.
  void RunSearch(absl::Time until);

  // What the packed cores still bound at a search node: `open` sums the cores whose pairs have
  // no placed end (disjoint from the per-item bounds, which count pairs to placed items);
  // `undecided` the cores with no pair whose ends are both placed.
  void CoreBounds(uint64_t* open, uint64_t* undecided) const;

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
  std::vector<int> MaxWeightClique() const;

  std::vector<int> GreedyClique(std::vector<int> candidates) const;

  // Is [offset, offset + extent) free of the reserved ranges, within capacity and clear of every
  // placed item that `item` conflicts with?
  bool Fits(int item, uint64_t offset) const;

  uint64_t CostAt(int item, uint64_t offset) const;

  // Offsets an item may rest on: the bottom, reserved ends and tops of placed items.
  void Candidates(int item, uint64_t floor, std::vector<uint64_t>* out) const;

  void Reset();

  void Record(uint64_t reuse, uint64_t peak);

  uint64_t PeakOfPlaced() const;

  // Greedy: items in an order, each at the candidate offset of least (cost, top).
  void Greedy();

  static constexpr size_t kExactItems = 40;

  // Total cost of the items' penalty edges at the current offsets (all placed).
  uint64_t CurrentReuse() const;

  // Large-neighbourhood search: take items out (a paid edge's ends and some of their
  // neighbours, or a random handful), put them back one by one at the feasible position of
  // least (cost, top), keep the result when it is no worse. Positions are the bottom, reserved
  // ends, tops of placed items and, below each placed item, the highest aligned offset under it.
  void Improve(absl::Time until);

  bool OutOfTime();

  // Extents that are all multiples of one unit u (their gcd), alignments dividing u, nothing
  // reserved or pinned, a capacity of at most 64 units: every canonical placement puts items at
  // multiples of u (each rests on the bottom or on a top, and tops are multiples of u), so
  // trying every multiple of u for every item is complete. With equal extents the pool is
  // capacity / u slots and placement is colouring.
  bool OnGrid();

  // Depth-first in order of birth (an item's penalty partners born before it are placed when it
  // is), every grid offset per item, bounded by each unplaced item's cheapest offset against
  // the placed items plus the packed cores among unplaced items. Symmetry: with equal extents,
  // slots are opened in order; otherwise the first item stays in the lower half (mirroring
  // the pool keeps every overlap).
  void GridSearch();

  // Grid offsets item `j` may take; `used` is the number of slots opened (equal extents only).
  int GridOffsets(int j, size_t depth, int used, uint64_t* out) const;

  void GridDfs(size_t depth, int used, uint64_t reuse);

  // Every unplaced item goes at or above the floor. At each time, a clique of the unplaced items
  // live then must fit in [floor, capacity) beside the reserved bytes there and beside the placed
  // items live then that conflict with all of the clique. False: no completion exists.
  bool SpaceAboveFloor(uint64_t floor);

  // Branch and bound over canonical placements in non-decreasing offset order.
  void Search();

  void Dfs(uint64_t floor, int last_at_floor, uint64_t reuse);

  const PoolModel& m_;
  const bool reuse_first_;
  const bool reuse_matters_;
  const bool peak_matters_;
  const absl::Time deadline_;
  const size_t n_;
  bool subset_bound_ = true;
  bool search_ = true;
  bool nested_ = false;  // A part solved for SubsetBound: no SubsetBound of its own.
  absl::Time search_until_ = deadline_;  // Where the branch and bound stops (OutOfTime).
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

}  // namespace internal
}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_INTERNAL_CONSTRAINED_POOL_SEARCH_H_
