// Which addresses are taken over a range of time: the occupancy structure behind greedy best
// fit (see OccupancyTree).
#ifndef ACCELMEM_POLICY_INTERNAL_OCCUPANCY_TREE_H_
#define ACCELMEM_POLICY_INTERNAL_OCCUPANCY_TREE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "policy/internal/placement_items.h"

namespace accelmem {
namespace policy {
namespace internal {

// A half-open address range [begin, end).
struct Interval {
  int64_t begin;
  int64_t end;
};

// A sorted, coalesced run of intervals, as OccupancyTree::Query returns them.
struct IntervalRun {
  const Interval* data;
  uint32_t size;
};

// Adds [begin, end) to the sorted list of disjoint, non-touching intervals data[0, size),
// coalescing; `data` must have room for size + 1 intervals. Returns the new size.
size_t AddInterval(Interval* data, size_t size, int64_t begin, int64_t end);

// The same on a vector.
void AddInterval(std::vector<Interval>& list, int64_t begin, int64_t end);

// Segment tree over sections, with leaves at level 0. Below `block_level_`, `cover[v]` holds the
// merged address intervals of buffers whose canonical decomposition contains node v. At
// `block_level_` ("blocks"), `cover[v]` holds those of every buffer whose lifetime covers the
// whole block, so one list stands for the covers of all the block's ancestors (fewer, less
// fragmented lists per query; a long buffer pays one insertion per block it covers). `sub[v]`
// holds the buffers that start inside v. The buffers whose lifetimes meet a query range [lo, hi)
// are exactly those in `sub` of the query's canonical nodes plus `cover` of the nodes on the path
// from lo's leaf up to block level: a buffer that starts inside the range is in `sub` of the
// canonical node holding its start, and one that starts before it covers lo, so one of its
// canonical nodes (or, above block level, lo's block) is on lo's path. Nothing else is needed:
// neither the path from hi - 1 nor a buffer's end or canonical nodes in `sub`.
class OccupancyTree {
 public:
  // `items` are the only ranges that will ever be queried: each node counts the items whose
  // queries read each of its lists, and a list nobody will read again is not written.
  explicit OccupancyTree(const Items& items);

  // Empties every list and makes every item a reader again (the tree can be filled again for
  // another order).
  void Clear();

  // Occupies addresses [begin, end) over sections [lo, hi), which must be an item's range.
  void Insert(int lo, int hi, int64_t begin, int64_t end);

  // Appends the (sorted, coalesced, non-empty) lists whose union is the occupancy of sections
  // [lo, hi). They stay valid until the next Insert() or Clear(). Exact for the range of any
  // item not yet retired.
  void Query(int lo, int hi, std::vector<IntervalRun>& out) const;

  // One item with range [lo, hi) will not query again (until Clear()): lists that only retired
  // items read are no longer kept up to date. At most once per item between two Clear() calls.
  // Best fit retires each item after its query: in the lifetime order the long buffers go
  // first, and the large lists near the root that only they read stop growing.
  void Retire(int lo, int hi);

  // Query() then Retire() of the same item, in one walk over the nodes (what best fit does).
  void QueryAndRetire(int lo, int hi, std::vector<IntervalRun>& out);

 private:
  // Level at which covers are kept per block rather than per ancestor; 2^8 sections per block.
  static constexpr int kBlockLevel = 8;

  // Capacities are powers of two from 2^kMinCapacityLog2 (a list that is written at all usually
  // grows to a dozen intervals or more, so it starts with room for 8).
  static constexpr int kMinCapacityLog2 = 3;

  // A list of intervals in one of `chunks_`: data[0, size), room for 2^capacity_log2.
  struct List {
    Interval* data = nullptr;
    uint32_t size = 0;
    int32_t capacity_log2 = -1;  // -1: no room yet.
  };

  // Calls visit(node, cover) for every list a query of [lo, hi) reads: the covers of the nodes on
  // lo's path up to block level (cover = true), the subs of the canonical nodes (cover = false).
  // The one walk behind Query(), Retire() and the readers' counts.
  template <typename Visit>
  void ForEachReadList(int lo, int hi, Visit&& visit) const {
    for (int a = lo + leaves_, level = 0; level <= block_level_; a >>= 1, ++level) {
      visit(a, true);
    }
    for (int a = lo + leaves_, b = hi + leaves_; a < b; a >>= 1, b >>= 1) {
      if (a & 1) visit(a++, false);
      if (b & 1) visit(--b, false);
    }
  }

  // The readers count of one list.
  uint32_t& Readers(int node, bool cover) {
    return cover ? nodes_[node].cover_readers : nodes_[node].sub_readers;
  }

  // Appends one list, if not empty, to a query's output.
  void Take(int node, bool cover, std::vector<IntervalRun>& out) const {
    const List& list = cover ? nodes_[node].cover : nodes_[node].sub;
    if (list.size != 0) out.push_back({list.data, list.size});
  }

  // Defined in occupancy_tree.cc, their only user; inline so that Insert() inlines them.
  inline void AddCanonical(int node, int level, int64_t begin, int64_t end);

  inline void Add(List& list, int node, int64_t begin, int64_t end);

  // Gives `list` room for twice as many intervals (a block from `free_` or a new one).
  void Grow(List& list);

  int sections_ = 1;
  int leaves_ = 1;
  int levels_ = 0;
  int block_level_ = 0;
  // Both lists of a node side by side: an insertion or a query touches them together (the node
  // arrays are larger than L2 at 10^4 buffers). The intervals live in large chunks rather than
  // in a vector per list: no allocation per list, and 40 bytes per node instead of 48.
  // `*_readers`: items not yet retired whose queries read that list.
  struct Node {
    List cover;
    List sub;
    uint32_t cover_readers = 0;
    uint32_t sub_readers = 0;
  };
  std::vector<Node> nodes_;
  std::vector<std::pair<uint32_t, uint32_t>> readers_;  // Of every item: (cover, sub) per node.
  std::vector<std::unique_ptr<Interval[]>> chunks_;     // Blocks are carved from the last chunk.
  size_t chunk_used_ = 0;
  size_t chunk_size_ = 0;
  std::vector<Interval*> free_[40];  // Blocks given up by growing lists, by capacity_log2.
  std::vector<int> touched_;
};

// Inline: best fit queries once per buffer placed.
inline void OccupancyTree::Query(int lo, int hi, std::vector<IntervalRun>& out) const {
  ForEachReadList(lo, hi, [&](int node, bool cover) { Take(node, cover, out); });
}

inline void OccupancyTree::QueryAndRetire(int lo, int hi, std::vector<IntervalRun>& out) {
  ForEachReadList(lo, hi, [&](int node, bool cover) {
    Take(node, cover, out);
    --Readers(node, cover);
  });
}

}  // namespace internal
}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_INTERNAL_OCCUPANCY_TREE_H_
