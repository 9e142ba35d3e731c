// Greedy placement: one best-fit pass over the items in a given order, the O(n log n) sweep for
// the start order, and the item orders of every GreedyOrder.
#ifndef ACCELMEM_POLICY_INTERNAL_BEST_FIT_H_
#define ACCELMEM_POLICY_INTERNAL_BEST_FIT_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "policy/greedy_order.h"
#include "policy/internal/occupancy_tree.h"
#include "policy/internal/placement_items.h"

namespace accelmem {
namespace policy {
namespace internal {

// Runs best-fit over items in a given order; reusable across orders of one instance.
class BestFitPlacer {
 public:
  explicit BestFitPlacer(const Items& items) : items_(items), tree_(items) {}

  // Places items in `order` (a permutation of item indices); fills `offsets` (per item) and
  // returns the height. Stops early, returning a height above `limit`, as soon as the height
  // exceeds `limit` (the caller then discards `offsets`). `first_fit`: the lowest gap that holds
  // a buffer instead of the smallest.
  // `fixed` (item, offset) pairs, if given, are occupied before the first item of `order` is
  // placed and count toward the height.
  int64_t Run(const std::vector<int>& order, std::vector<int64_t>& offsets,
              int64_t limit = std::numeric_limits<int64_t>::max(), bool first_fit = false,
              const std::vector<std::pair<int, int64_t>>* fixed = nullptr);

 private:
  // Best fit over the free gaps of the union of `runs_` (each sorted and coalesced). Lists of at
  // most kTinyRun intervals are first pooled into one run sorted by begin. All lists
  // but the last two are merged two smallest first (Huffman order: the largest list, often
  // half of the total, is copied at most once; coalescing shrinks the runs as they grow); the
  // last two are merged only virtually, while scanning their gaps, so the union of a query is
  // never written out.
  // BestGap(), PoolTinyRuns() and MergeRuns() are defined in best_fit.cc, their only user; inline
  // so that Run() inlines them.
  inline int64_t BestGap(int64_t size, bool first_fit);

  // Replaces the runs of at most kTinyRun intervals by one run of all their intervals, sorted by
  // begin (in `tiny_`).
  inline void PoolTinyRuns();

  // Merges two runs sorted by begin into `out` (room for both), coalescing; returns the end.
  static inline Interval* MergeRuns(const Interval* a, const Interval* a_end, const Interval* b,
                                    const Interval* b_end, Interval* out);

  const Items& items_;
  OccupancyTree tree_;
  std::vector<IntervalRun> runs_;  // The query's lists; in BestGap(), runs still to merge.
  // Lists this short (most covers below block level) cost less pooled than a merge step each.
  static constexpr uint32_t kTinyRun = 4;
  std::vector<Interval> tiny_;     // The intervals of the query's tiny lists, by begin.
  std::vector<Interval> scratch_;  // Merge outputs of one BestGap(), one after another.
};

// Best fit for orders sorted by start (kStart), as an allocator would do it: when a buffer starts,
// every placed buffer that overlaps its lifetime is live at its start, so the free gaps are those
// of one moment. A set of gaps keyed by (length, offset) answers best fit in O(log n); buffers
// are freed when time passes their end. Same placements as BestFitPlacer, in O(n log n).
// `order` must list the items by start.
int64_t SweepBestFit(const Items& items, const std::vector<int>& order,
                     std::vector<int64_t>& offsets,
                     int64_t limit = std::numeric_limits<int64_t>::max());

// The items in the order `order` places them: keys as listed for GreedyOrder, ties by index.
std::vector<int> OrderItems(const Items& items, GreedyOrder order);

// The same orders for several GreedyOrders of one instance, sharing the work: each key (size,
// lifetime, start, area) is replaced once by its dense rank among the items, so that an order's
// keys pack into one 64-bit word, sorted by a stable radix sort (ties stay in index order).
// Instances too large to pack (over 2^21 items) fall back to a comparison sort. Same result as
// OrderItems().
class ItemOrderer {
 public:
  explicit ItemOrderer(const Items& items) : items_(items) {}

  // The items in the order `order` places them; valid until the next call.
  const std::vector<int>& Order(GreedyOrder order);

 private:
  enum Field { kSizeRank, kLengthRank, kStartRank, kAreaRank, kNumFields };
  using Keyed = KeyedIndex;

  // Dense ranks (0 = smallest; equal values, equal ranks) of one key, computed on first use.
  const std::vector<uint32_t>& Ranks(Field field);
  // Sorts keyed_ by key (stable) and writes the indices to order_.
  void SortKeyed(int key_bits);

  const Items& items_;
  std::vector<uint32_t> ranks_[kNumFields];
  uint32_t max_rank_[kNumFields] = {};
  std::vector<Keyed> keyed_, spare_;
  std::vector<int> order_;
};

}  // namespace internal
}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_INTERNAL_BEST_FIT_H_
