#include "policy/internal/occupancy_tree.h"

#include <algorithm>

namespace accelmem {
namespace policy {
namespace internal {

void AddInterval(std::vector<Interval>& list, int64_t begin, int64_t end) {
  // Fast path: at or above the top (best fit often places there, or in the top gap).
  if (list.empty() || list.back().end < begin) {
    list.push_back(Interval{begin, end});
    return;
  }
  if (list.back().begin <= begin) {
    if (list.back().end < end) list.back().end = end;
    return;
  }
  auto first = std::lower_bound(list.begin(), list.end(), begin,
                                [](const Interval& iv, int64_t b) { return iv.end < b; });
  auto last = first;
  int64_t b = begin;
  int64_t e = end;
  while (last != list.end() && last->begin <= end) {
    b = std::min(b, last->begin);
    e = std::max(e, last->end);
    ++last;
  }
  if (first == last) {
    list.insert(first, Interval{b, e});
  } else {
    *first = Interval{b, e};
    list.erase(first + 1, last);
  }
}

OccupancyTree::OccupancyTree(const Items& items) {
  leaves_ = 1;
  levels_ = 0;
  while (leaves_ < std::max(items.num_sections, 1)) {
    leaves_ <<= 1;
    ++levels_;
  }
  block_level_ = std::min(kBlockLevel, levels_);
  nodes_.resize(2 * leaves_);
  read_.assign(2 * leaves_, 0);
  for (int i = 0; i < items.count(); ++i) {
    int level = 0;
    for (int a = items.lo[i] + leaves_, b = items.hi[i] - 1 + leaves_; level <= block_level_;
         a >>= 1, b >>= 1, ++level) {
      read_[a] |= kCoverRead;
      read_[b] |= kCoverRead;
    }
    for (int a = items.lo[i] + leaves_, b = items.hi[i] + leaves_; a < b; a >>= 1, b >>= 1) {
      if (a & 1) read_[a++] |= kSubRead;
      if (b & 1) read_[--b] |= kSubRead;
    }
  }
}

void OccupancyTree::Clear() {
  for (int v : touched_) {
    nodes_[v].cover.clear();
    nodes_[v].sub.clear();
  }
  touched_.clear();
}

void OccupancyTree::Insert(int lo, int hi, int64_t begin, int64_t end) {
  for (int a = lo + leaves_, b = hi - 1 + leaves_; a >= 1; a >>= 1, b >>= 1) {
    if (read_[a] & kSubRead) Add(nodes_[a].sub, a, begin, end);
    if (b != a && (read_[b] & kSubRead)) Add(nodes_[b].sub, b, begin, end);
  }
  int level = 0;
  for (int a = lo + leaves_, b = hi + leaves_; a < b; a >>= 1, b >>= 1, ++level) {
    if (a & 1) AddCanonical(a++, level, begin, end);
    if (b & 1) AddCanonical(--b, level, begin, end);
  }
}

inline void OccupancyTree::AddCanonical(int node, int level, int64_t begin, int64_t end) {
  if (read_[node] & kSubRead) Add(nodes_[node].sub, node, begin, end);
  if (level <= block_level_) {
    if (read_[node] & kCoverRead) Add(nodes_[node].cover, node, begin, end);
    return;
  }
  const int shift = level - block_level_;
  for (int v = node << shift, last = (node + 1) << shift; v < last; ++v) {
    if (read_[v] & kCoverRead) Add(nodes_[v].cover, v, begin, end);
  }
}

inline void OccupancyTree::Add(std::vector<Interval>& list, int node, int64_t begin, int64_t end) {
  if (nodes_[node].cover.empty() && nodes_[node].sub.empty()) touched_.push_back(node);
  // A list that is written at all usually grows to a dozen intervals or more: start it with room
  // for 8 rather than reallocating at 1, 2, 4 and 8 (Clear() keeps the room for the next order).
  if (list.capacity() == 0) list.reserve(8);
  AddInterval(list, begin, end);
}

}  // namespace internal
}  // namespace policy
}  // namespace accelmem
