// The search of //policy:constrained_planner (not a public API): PoolSearch places one pool
// (constrained_model.h) by greedy orders, re-insertion neighbourhoods and a grid or offset-order
// branch and bound, and reports the best placement with what the bounds (constrained_bounds.h)
// prove about it. policy/constrained_planner.h says what the planner promises; the comments
// here say how.
#ifndef ACCELMEM_POLICY_INTERNAL_CONSTRAINED_SEARCH_H_
#define ACCELMEM_POLICY_INTERNAL_CONSTRAINED_SEARCH_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "policy/constrained_result.h"
#include "policy/internal/constrained_bounds.h"
#include "policy/internal/constrained_model.h"

namespace accelmem {
namespace policy {
namespace internal {

// Lexicographic objective of a pool: (reuse, peak) or (peak, reuse).
struct Score {
  uint64_t first = kInfinity;
  uint64_t second = kInfinity;
  bool operator<(const Score& o) const {
    return first != o.first ? first < o.first : second < o.second;
  }
};

// One pool's search: ComputeBounds first (a proof of infeasibility ends it), then greedy
// incumbents, the cover and subset bounds where the pool is small and still open, and the
// branch and bound (after a neighbourhood search above kExactItems items) until the bounds meet
// the incumbent, the search is exhausted or the deadline passes. One use per object.
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

  // Raises the reuse bound by CoverBound, with at most half the time left (a quarter where the
  // subset bound may follow: on the pools that need it, it proves in milliseconds what the cover
  // search, whose byte counts undercount what parts pay, can spend its whole share on).
  void RaiseCoverBound();

  // Raises the reuse bound by SubsetBound, each part solved by a nested search (which skips
  // this stage). Only for small open pools with penalties, a capacity and an incumbent.
  static constexpr absl::Duration kFirstSearch = absl::Milliseconds(10);  // Before SubsetBound.
  bool SubsetBoundApplies() const;
  void RaiseSubsetBound();

  // The branch and bound of the pool (GridSearch or Search), until `until`.
  void RunSearch(absl::Time until);

  // Is [offset, offset + extent) free of the reserved ranges, within capacity, clear of every
  // placed item that `item` conflicts with, and at the base of or clear of each placed exact
  // partner?
  bool Fits(int item, uint64_t offset) const;

  uint64_t CostAt(int item, uint64_t offset) const;

  // Offsets an item may rest on: the bottom, reserved ends and tops of placed items, each
  // aligned up. Why these are complete: push a placement down, item by item, and it ends with
  // every item on one of them. With exact pairs (PoolModel::exact_pairs) an item cannot leave a
  // partner's base alone, so items at one base connected by pairs are pushed down as one group:
  // by the group's largest alignment, until one of them would meet a top, a reserved end or the
  // bottom. So an item of an exact group also gets each of those points aligned up to each
  // larger alignment of its group, and the offsets of placed members of its group (a group with
  // a pin stays at the pin).
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

  // Improve's neighbourhood at the current (complete) placement: `removed` gets 4 to 15 unpinned
  // items, from paid edges three times in four. `chosen` is scratch of n_ entries.
  void TakeNeighbourhood(uint64_t* random, std::vector<uint8_t>* chosen,
                         std::vector<int>* removed) const;

  // Puts `removed` back in order, each at its feasible position of least (cost, top); false
  // when one has none.
  bool Reinsert(const std::vector<int>& removed);

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
  absl::Time search_until_ = deadline_;  // Where the branch and bound stops (OutOfTime).
  PoolBounds bounds_;  // Raised by CoverBound and SubsetBound after ComputeBounds.
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

#endif  // ACCELMEM_POLICY_INTERNAL_CONSTRAINED_SEARCH_H_
