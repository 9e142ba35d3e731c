// Which addresses are taken over a range of time: the occupancy structure behind greedy best
// fit (see OccupancyTree).
#ifndef ACCELMEM_POLICY_INTERNAL_OCCUPANCY_TREE_H_
#define ACCELMEM_POLICY_INTERNAL_OCCUPANCY_TREE_H_

#include <cstdint>
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

// Adds [begin, end) to a sorted list of disjoint, non-touching intervals, coalescing.
void AddInterval(std::vector<Interval>& list, int64_t begin, int64_t end);

// Segment tree over sections, with leaves at level 0. Below `block_level_`, `cover[v]` holds the
// merged address intervals of buffers whose canonical decomposition contains node v. At
// `block_level_` ("blocks"), `cover[v]` holds those of every buffer whose lifetime covers the
// whole block, so one list stands for the covers of all the block's ancestors (fewer, less
// fragmented lists per query; a long buffer pays one insertion per block it covers). `sub[v]`
// holds the buffers stored at v or below, or ending inside v. The buffers whose lifetimes meet a
// query range are exactly those in `sub` of the query's canonical nodes plus `cover` of the
// nodes on the two boundary paths up to block level.
class OccupancyTree {
 public:
  // `items` are the only ranges that will ever be queried, so lists nobody reads are skipped.
  explicit OccupancyTree(const Items& items);

  // Empties every list (the tree can be filled again for another order).
  void Clear();

  // Occupies addresses [begin, end) over sections [lo, hi), which must be an item's range.
  void Insert(int lo, int hi, int64_t begin, int64_t end);

  // Appends the (sorted, coalesced) lists whose union is the occupancy of sections [lo, hi).
  void Query(int lo, int hi, std::vector<const std::vector<Interval>*>& out) const;

 private:
  // Level at which covers are kept per block rather than per ancestor; 2^8 sections per block.
  static constexpr int kBlockLevel = 8;

  static constexpr uint8_t kCoverRead = 1;  // Some query reads the cover of this node.
  static constexpr uint8_t kSubRead = 2;    // Some query reads the sub list of this node.

  // Defined in occupancy_tree.cc, their only user; inline so that Insert() inlines them.
  inline void AddCanonical(int node, int level, int64_t begin, int64_t end);

  inline void Add(std::vector<Interval>& list, int node, int64_t begin, int64_t end);

  int leaves_ = 1;
  int levels_ = 0;
  int block_level_ = 0;
  // Both lists of a node side by side: an insertion or a query touches them together, and one
  // cache line then holds both headers (the node arrays are larger than L2 at 10^4 buffers).
  struct Node {
    std::vector<Interval> cover;
    std::vector<Interval> sub;
  };
  std::vector<Node> nodes_;
  std::vector<uint8_t> read_;  // kCoverRead | kSubRead per node.
  std::vector<int> touched_;
};

// Inline: best fit queries once per buffer placed.
inline void OccupancyTree::Query(int lo, int hi,
                                 std::vector<const std::vector<Interval>*>& out) const {
  auto take = [&out](const std::vector<Interval>& list) {
    if (!list.empty()) out.push_back(&list);
  };
  int level = 0;
  for (int a = lo + leaves_, b = hi - 1 + leaves_; level <= block_level_;
       a >>= 1, b >>= 1, ++level) {
    take(nodes_[a].cover);
    if (b != a) take(nodes_[b].cover);
  }
  for (int a = lo + leaves_, b = hi + leaves_; a < b; a >>= 1, b >>= 1) {
    if (a & 1) take(nodes_[a++].sub);
    if (b & 1) take(nodes_[--b].sub);
  }
}

}  // namespace internal
}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_INTERNAL_OCCUPANCY_TREE_H_
