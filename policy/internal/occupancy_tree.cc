#include "policy/internal/occupancy_tree.h"

#include <algorithm>
#include <cstring>

namespace accelmem {
namespace policy {
namespace internal {

size_t AddInterval(Interval* data, size_t size, int64_t begin, int64_t end) {
  // Fast path: at or above the top (best fit often places there, or in the top gap).
  if (size == 0 || data[size - 1].end < begin) {
    data[size] = Interval{begin, end};
    return size + 1;
  }
  if (data[size - 1].begin <= begin) {
    if (data[size - 1].end < end) data[size - 1].end = end;
    return size;
  }
  Interval* const list_end = data + size;
  Interval* first = std::lower_bound(data, list_end, begin,
                                     [](const Interval& iv, int64_t b) { return iv.end < b; });
  Interval* last = first;
  int64_t b = begin;
  int64_t e = end;
  while (last != list_end && last->begin <= end) {
    b = std::min(b, last->begin);
    e = std::max(e, last->end);
    ++last;
  }
  if (first == last) {
    std::memmove(first + 1, first, static_cast<size_t>(list_end - first) * sizeof(Interval));
    *first = Interval{b, e};
    return size + 1;
  }
  *first = Interval{b, e};
  std::memmove(first + 1, last, static_cast<size_t>(list_end - last) * sizeof(Interval));
  return size - static_cast<size_t>(last - first - 1);
}

void AddInterval(std::vector<Interval>& list, int64_t begin, int64_t end) {
  const size_t size = list.size();
  list.push_back(Interval{0, 0});  // Room for one more.
  list.resize(AddInterval(list.data(), size, begin, end));
}

OccupancyTree::OccupancyTree(const Items& items) {
  leaves_ = 1;
  levels_ = 0;
  sections_ = std::max(items.num_sections, 1);
  while (leaves_ < sections_) {
    leaves_ <<= 1;
    ++levels_;
  }
  block_level_ = std::min(kBlockLevel, levels_);
  nodes_.resize(2 * leaves_);
  for (int i = 0; i < items.count(); ++i) {
    ForEachReadList(items.lo[i], items.hi[i],
                    [this](int node, bool cover) { ++Readers(node, cover); });
  }
  readers_.resize(nodes_.size());
  for (size_t v = 0; v < nodes_.size(); ++v) {
    readers_[v] = {nodes_[v].cover_readers, nodes_[v].sub_readers};
  }
}

void OccupancyTree::Clear() {
  // The lists keep their room in the chunks for the next order.
  for (int v : touched_) {
    nodes_[v].cover.size = 0;
    nodes_[v].sub.size = 0;
  }
  touched_.clear();
  // Only nodes over sections [0, sections_) are ever read or written: at level l, the first
  // ceil(sections_ / 2^l) of the level (leaves_ is rounded up to a power of two).
  for (int first = leaves_, level = 0; first >= 1; first >>= 1, ++level) {
    for (int v = first, last = first + ((sections_ - 1) >> level) + 1; v < last; ++v) {
      nodes_[v].cover_readers = readers_[v].first;
      nodes_[v].sub_readers = readers_[v].second;
    }
  }
}

void OccupancyTree::Retire(int lo, int hi) {
  ForEachReadList(lo, hi, [this](int node, bool cover) { --Readers(node, cover); });
}

void OccupancyTree::Insert(int lo, int hi, int64_t begin, int64_t end) {
  for (int a = lo + leaves_; a >= 1; a >>= 1) {
    if (nodes_[a].sub_readers != 0) Add(nodes_[a].sub, a, begin, end);
  }
  int level = 0;
  for (int a = lo + leaves_, b = hi + leaves_; a < b; a >>= 1, b >>= 1, ++level) {
    if (a & 1) AddCanonical(a++, level, begin, end);
    if (b & 1) AddCanonical(--b, level, begin, end);
  }
}

inline void OccupancyTree::AddCanonical(int node, int level, int64_t begin, int64_t end) {
  if (level <= block_level_) {
    if (nodes_[node].cover_readers != 0) Add(nodes_[node].cover, node, begin, end);
    return;
  }
  const int shift = level - block_level_;
  for (int v = node << shift, last = (node + 1) << shift; v < last; ++v) {
    if (nodes_[v].cover_readers != 0) Add(nodes_[v].cover, v, begin, end);
  }
}

inline void OccupancyTree::Add(List& list, int node, int64_t begin, int64_t end) {
  if (nodes_[node].cover.size == 0 && nodes_[node].sub.size == 0) touched_.push_back(node);
  if (list.capacity_log2 < 0 || list.size == (uint32_t{1} << list.capacity_log2)) Grow(list);
  list.size = static_cast<uint32_t>(AddInterval(list.data, list.size, begin, end));
}

void OccupancyTree::Grow(List& list) {
  const int log2 = list.capacity_log2 < 0 ? kMinCapacityLog2 : list.capacity_log2 + 1;
  const uint64_t capacity = uint64_t{1} << log2;
  Interval* data;
  if (!free_[log2].empty()) {
    data = free_[log2].back();
    free_[log2].pop_back();
  } else {
    if (chunks_.empty() || chunk_used_ + capacity > chunk_size_) {
      // Chunks double (the first holds 2^12 intervals), so there are O(log) of them; the
      // unused end of the previous chunk is left over (at most the largest block).
      chunk_size_ = std::max<size_t>({size_t{1} << 12, 2 * chunk_size_, capacity});
      chunks_.emplace_back(new Interval[chunk_size_]);
      chunk_used_ = 0;
    }
    data = chunks_.back().get() + chunk_used_;
    chunk_used_ += capacity;
  }
  if (list.size != 0) std::memcpy(data, list.data, list.size * sizeof(Interval));
  if (list.capacity_log2 >= 0) free_[list.capacity_log2].push_back(list.data);
  list.data = data;
  list.capacity_log2 = log2;
}

}  // namespace internal
}  // namespace policy
}  // namespace accelmem
