// The lower bounds of //policy:constrained_planner (not a public API): its proofs. A bound that
// rises too far prints a false "optimal" or "infeasible", so each is a function of the pool
// model (constrained_model.h) alone, tested on hand-made pools whose values are known by hand
// (constrained_bounds_test.cc), and the search (constrained_search.h) only reads them:
//   - LOAD: the heaviest clique of items that pairwise conflict, over the usable capacity, is a
//     proof of infeasibility; with the reserved bytes and pins it bounds the peak.
//   - pins: a pinned class misaligned, past the capacity, on a reserved range or on another pin.
//   - cores (PackCores): two disjoint cliques over the usable capacity must share bytes, and only
//     pairs that pay a penalty can; disjoint cores add up.
//   - covers (CoverBound): up to four cliques at once, the cheapest set of pairs that meets them.
//   - parts (SubsetBound): the exactly solved least cost of parts of the pool.
#ifndef ACCELMEM_POLICY_INTERNAL_CONSTRAINED_BOUNDS_H_
#define ACCELMEM_POLICY_INTERNAL_CONSTRAINED_BOUNDS_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "policy/internal/constrained_model.h"

namespace accelmem {
namespace policy {
namespace internal {

// Items taken in order of extent (largest first, then index), each kept when it conflicts with
// every item kept so far.
std::vector<int> GreedyClique(const PoolModel& m, std::vector<int> candidates);

// The heaviest clique of the conflict graph of a pool of at most 64 items: branch and bound over
// 64-bit vertex sets (Carraghan-Pardalos with weight bounds), capped at 200,000 nodes; the best
// clique found is a valid bound either way.
std::vector<int> MaxWeightClique(const PoolModel& m);

// LOAD: the heaviest clique found among the items live at each time, each item with the items
// it conflicts with (exclusive pins and separations make cliques across time) and, in pools of
// at most 64 items, the conflict graph as a whole.
struct LoadBound {
  uint64_t load = 0;
  int64_t time = 0;         // A time at which `load` is reached (or the clique's first birth).
  bool separation = false;  // The heaviest clique is held apart by separations, not time.
  std::vector<std::vector<int>> cliques;  // Every clique looked at, for the cores.
};
LoadBound ComputeLoad(const PoolModel& m);

// Why LOAD does not fit the usable capacity, or "" when it does.
std::string LoadInfeasibility(const PoolModel& m, const LoadBound& load);

// The least peak of any placement: LOAD above the reserved bytes, the reserved ranges' end and
// every pinned item's top.
uint64_t PeakLowerBound(const PoolModel& m, uint64_t load);

// Why the pins cannot hold, or "" when they can: a pinned class (its extent and largest
// alignment, not only the pinned buffer's) misaligned, past the capacity or on a reserved range,
// or two conflicting pinned items that overlap.
std::string PinInfeasibility(const PoolModel& m);

// Disjoint cores: sets of penalty pairs of which every placement pays at least `cost` each.
// Take two sets of items A and K, each pairwise conflicting (so each set's items are disjoint in
// address), whose extents add up to more than the usable capacity by d bytes. Every item avoids
// the reserved ranges, so the bytes A and K share, the sum over pairs (a, k) of their overlap,
// are at least d; a pair overlaps by at most min(extent) and only if it does not conflict,
// paying its penalty. The cheapest set of pairs whose overlaps can reach d bounds what A and K
// cost together (a knapsack cover). Cores with disjoint pairs add up.
struct PackedCores {
  std::vector<std::vector<std::pair<int, int>>> edges;  // Item pairs (i < j), sorted.
  std::vector<uint64_t> cost;
  uint64_t total = 0;  // Sum of `cost`: a bound on the reuse cost.
};

// The cores of the pool (A a clique or a single item, K a clique of `cliques`, which are sorted
// and unique), densest first, packed greedily. A pair of sets that cannot share enough bytes
// even paying every pair is a proof of infeasibility: `infeasible_reason` says so and the cores
// are empty.
PackedCores PackCores(const PoolModel& m, const std::vector<std::vector<int>>& cliques,
                      uint64_t usable, std::string* infeasible_reason);

// What the packed cores still bound at a search node: `open` sums the cores whose pairs have
// no placed end (disjoint from the per-item bounds, which count pairs to placed items);
// `undecided` the cores with no pair whose ends are both placed.
void CoreBoundsAt(const PackedCores& cores, const std::vector<uint8_t>& placed, uint64_t* open,
                  uint64_t* undecided);

// Least total cost of pairs (each with `bytes` and `cost`) whose bytes reach `deficit` (which
// they can). Exact by dynamic programming over cost when the costs are small; otherwise the
// cheapest single pair, a weaker but valid bound.
template <typename PairList>
uint64_t CoverCost(const PairList& pairs, uint64_t deficit) {
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

// Everything ComputeBounds proves before any placement is searched.
struct PoolBounds {
  uint64_t load = 0;
  int64_t load_time = 0;
  bool load_is_separation = false;
  uint64_t reuse = 0;             // Least reuse cost: the packed cores.
  uint64_t peak = 0;              // Least peak.
  std::string infeasible_reason;  // Non-empty: a proof that nothing fits.
  // For CoverBound (pools with penalties and a capacity): the cliques, sorted and unique.
  std::vector<std::vector<int>> cover_cliques;
  uint64_t usable = 0;
  PackedCores cores;
};

// LOAD, the peak bound, the proofs of infeasibility and the packed cores, in that order (the
// first proof ends it).
PoolBounds ComputeBounds(const PoolModel& m);

// Pools of at most this many items get the cover bound and the subset bound.
constexpr size_t kCoverItems = 40;

// A stronger reuse bound for small pools. Take k <= 4 cliques C1..Ck with no item in common.
// Each clique's items are disjoint in address and all avoid the reserved bytes, so by
// inclusion-exclusion the bytes the cliques share pairwise, the sum over pairs (a, b) from two
// of them of their overlap, are at least the sum of their extents minus the usable capacity.
// A pair overlaps by at most its smaller extent, and only by paying its penalty (or freely,
// when it has none). So every placement's set of paid pairs satisfies each such cover
// constraint, and the cheapest set of pairs that satisfies all of them bounds the reuse cost.
struct CoverSystem {
  struct Cover {
    std::vector<std::pair<int, uint64_t>> edges;  // Edge index, bytes it can cover.
    uint64_t deficit = 0;                         // Bytes the paid edges must cover.
  };
  std::vector<std::pair<int, int>> edges;  // Edge index -> its items.
  std::vector<uint64_t> weight;            // Edge index -> its penalty.
  std::vector<Cover> covers;               // Empty: nothing to prove.
};

// The cover constraints of up to four disjoint cliques of `cliques` (at most 48 of them) over
// the usable capacity (at most 20,000 of them). Empty when one cannot be met at all (the pair
// cores report that as infeasibility).
CoverSystem BuildCovers(const PoolModel& m, const std::vector<std::vector<int>>& cliques,
                        uint64_t usable);

// The least total weight of edges meeting every cover, raised from `from` one by one (at most
// 256 above it) by a depth-first search within 1,000,000 nodes and until `deadline`: every
// total below the answer is refuted by a complete search, so the answer is proven.
uint64_t CoverBound(const CoverSystem& system, uint64_t from, absl::Time deadline);

// A bound for small pools the bounds above leave open, from exactly solved parts. Split the
// items into disjoint cliques (groups; pairs inside one never overlap, so never pay). For
// each set S of 2 to 5 groups (not all) in which the incumbent pays something, `part_bound`
// proves v(S), the least reuse cost of the pool holding only S's items: any placement
// restricted to S is one of that pool's, so it pays at least v(S) on the pairs between S's
// groups. With x_XY the cost paid between groups X and Y, the least sum of x_XY >= 0 meeting
// every such constraint (and x_XY at most the weight between X and Y) bounds the reuse cost; a
// depth-first search finds it by raising the total from 0. This is what proves a pool whose
// byte counts (CoverBound) undercount what a part must pay, as the ping-pong groups of
// pypto-lib's gate_up_proj (cost 12, CoverBound 8).
constexpr size_t kSubsetGroups = 12;
constexpr size_t kSubsetSize = 5;  // Groups in a part (kv_proj's Mat pool needs five).
constexpr int64_t kSubsetNodes = 200000;
constexpr uint64_t kSubsetMaxTotal = 1024;  // The master's search raises one by one.
constexpr absl::Duration kSubsetTime = absl::Milliseconds(5);  // Per part.

// Disjoint cliques covering every item, heaviest first (a singleton is a clique).
std::vector<std::vector<int>> CliqueGroups(const PoolModel& m);

// A proven lower bound on the least reuse cost of `part` (a RestrictModel of the pool), found
// by `deadline`; 0 claims nothing.
using PartBound = std::function<uint64_t(const PoolModel& part, absl::Time deadline)>;

// The subset bound of a pool whose incumbent placement `incumbent` (item offsets) pays
// `incumbent_reuse`; at most that. Parts are solved for at most half the time to `deadline`,
// each for at most kSubsetTime; the master search stops at `deadline`.
uint64_t SubsetBound(const PoolModel& m, const std::vector<uint64_t>& incumbent,
                     uint64_t incumbent_reuse, absl::Time deadline, const PartBound& part_bound);

}  // namespace internal
}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_INTERNAL_CONSTRAINED_BOUNDS_H_
