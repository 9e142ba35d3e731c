#include "policy/lifetime_planner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <queue>
#include <random>
#include <set>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace accelmem {
namespace policy {
namespace {

using Clock = std::chrono::steady_clock;

int64_t RoundUp(int64_t value, int64_t alignment) {
  const int64_t rem = value % alignment;
  return rem == 0 ? value : value + (alignment - rem);
}

// The buffers that take part in placement (size > 0, non-empty lifetime), with sizes rounded up
// to the alignment and time compressed to sections: section k is [times[k], times[k + 1]).
struct Items {
  std::vector<int> buffer;    // Item -> index of the input buffer.
  std::vector<int64_t> size;  // Aligned size.
  std::vector<int64_t> start, end;
  std::vector<int> lo, hi;  // Sections spanned: [lo, hi).
  int num_sections = 0;
  int64_t load = 0;  // LOAD of the aligned sizes: a lower bound on any aligned placement.
  int64_t unit = 1;  // gcd of the aligned sizes: every canonical height is a multiple of it.

  int count() const { return static_cast<int>(buffer.size()); }
};

Items MakeItems(absl::Span<const PlacementBuffer> buffers, int64_t alignment) {
  Items items;
  std::vector<int64_t> times;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const PlacementBuffer& b = buffers[i];
    if (b.size == 0 || b.start >= b.end) continue;
    items.buffer.push_back(static_cast<int>(i));
    items.size.push_back(RoundUp(b.size, alignment));
    items.start.push_back(b.start);
    items.end.push_back(b.end);
    times.push_back(b.start);
    times.push_back(b.end);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  items.num_sections = times.empty() ? 0 : static_cast<int>(times.size()) - 1;
  const int n = items.count();
  items.lo.resize(n);
  items.hi.resize(n);
  int64_t unit = 0;
  std::vector<int64_t> delta(times.size() + 1, 0);
  for (int i = 0; i < n; ++i) {
    items.lo[i] = static_cast<int>(std::lower_bound(times.begin(), times.end(), items.start[i]) -
                                   times.begin());
    items.hi[i] = static_cast<int>(std::lower_bound(times.begin(), times.end(), items.end[i]) -
                                   times.begin());
    unit = std::gcd(unit, items.size[i]);
    delta[items.lo[i]] += items.size[i];
    delta[items.hi[i]] -= items.size[i];
  }
  int64_t live = 0;
  for (int64_t d : delta) {
    live += d;
    items.load = std::max(items.load, live);
  }
  items.unit = unit == 0 ? 1 : unit;
  return items;
}

// ---------------------------------------------------------------------------------------------
// Greedy best-fit.

struct Interval {
  int64_t begin;
  int64_t end;
};

// Adds [begin, end) to a sorted list of disjoint, non-touching intervals, coalescing.
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
  explicit OccupancyTree(const Items& items) {
    leaves_ = 1;
    levels_ = 0;
    while (leaves_ < std::max(items.num_sections, 1)) {
      leaves_ <<= 1;
      ++levels_;
    }
    block_level_ = std::min(kBlockLevel, levels_);
    cover_.resize(2 * leaves_);
    sub_.resize(2 * leaves_);
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

  void Clear() {
    for (int v : touched_) {
      cover_[v].clear();
      sub_[v].clear();
    }
    touched_.clear();
  }

  void Insert(int lo, int hi, int64_t begin, int64_t end) {
    for (int a = lo + leaves_, b = hi - 1 + leaves_; a >= 1; a >>= 1, b >>= 1) {
      if (read_[a] & kSubRead) Add(sub_[a], a, begin, end);
      if (b != a && (read_[b] & kSubRead)) Add(sub_[b], b, begin, end);
    }
    int level = 0;
    for (int a = lo + leaves_, b = hi + leaves_; a < b; a >>= 1, b >>= 1, ++level) {
      if (a & 1) AddCanonical(a++, level, begin, end);
      if (b & 1) AddCanonical(--b, level, begin, end);
    }
  }

  // Appends the (sorted, coalesced) lists whose union is the occupancy of sections [lo, hi).
  void Query(int lo, int hi, std::vector<const std::vector<Interval>*>& out) const {
    auto take = [&out](const std::vector<Interval>& list) {
      if (!list.empty()) out.push_back(&list);
    };
    int level = 0;
    for (int a = lo + leaves_, b = hi - 1 + leaves_; level <= block_level_;
         a >>= 1, b >>= 1, ++level) {
      take(cover_[a]);
      if (b != a) take(cover_[b]);
    }
    for (int a = lo + leaves_, b = hi + leaves_; a < b; a >>= 1, b >>= 1) {
      if (a & 1) take(sub_[a++]);
      if (b & 1) take(sub_[--b]);
    }
  }

 private:
  // Level at which covers are kept per block rather than per ancestor; 2^8 sections per block.
  static constexpr int kBlockLevel = 8;

  static constexpr uint8_t kCoverRead = 1;  // Some query reads cover_ of this node.
  static constexpr uint8_t kSubRead = 2;    // Some query reads sub_ of this node.

  void AddCanonical(int node, int level, int64_t begin, int64_t end) {
    if (read_[node] & kSubRead) Add(sub_[node], node, begin, end);
    if (level <= block_level_) {
      if (read_[node] & kCoverRead) Add(cover_[node], node, begin, end);
      return;
    }
    const int shift = level - block_level_;
    for (int v = node << shift, last = (node + 1) << shift; v < last; ++v) {
      if (read_[v] & kCoverRead) Add(cover_[v], v, begin, end);
    }
  }

  void Add(std::vector<Interval>& list, int node, int64_t begin, int64_t end) {
    if (cover_[node].empty() && sub_[node].empty()) touched_.push_back(node);
    AddInterval(list, begin, end);
  }

  int leaves_ = 1;
  int levels_ = 0;
  int block_level_ = 0;
  std::vector<std::vector<Interval>> cover_;
  std::vector<std::vector<Interval>> sub_;
  std::vector<uint8_t> read_;  // kCoverRead | kSubRead per node.
  std::vector<int> touched_;
};

// A sorted, coalesced run of intervals; `owner` >= 0 if it lives in BestFitPlacer's scratch.
struct IntervalRun {
  const Interval* data;
  size_t size;
  int owner;
};

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
              const std::vector<std::pair<int, int64_t>>* fixed = nullptr) {
    tree_.Clear();
    offsets.assign(items_.count(), 0);
    int64_t height = 0;
    if (fixed != nullptr) {
      for (const auto& [i, offset] : *fixed) {
        offsets[i] = offset;
        height = std::max(height, offset + items_.size[i]);
        tree_.Insert(items_.lo[i], items_.hi[i], offset, offset + items_.size[i]);
      }
    }
    for (int i : order) {
      lists_.clear();
      tree_.Query(items_.lo[i], items_.hi[i], lists_);
      // Best fit: the smallest free gap that holds the buffer, lowest first; else the top.
      const int64_t size = items_.size[i];
      const int64_t offset = BestGap(size, first_fit);
      offsets[i] = offset;
      height = std::max(height, offset + size);
      if (height > limit) return height;
      tree_.Insert(items_.lo[i], items_.hi[i], offset, offset + size);
    }
    return height;
  }

 private:
  // Best fit over the free gaps of the union of `lists_` (each sorted and coalesced). All lists
  // but the last two are merged two smallest first (Huffman order: the largest list, often
  // half of the total, is copied at most once; coalescing shrinks the runs as they grow); the
  // last two are merged only virtually, while scanning their gaps, so the union of a query is
  // never written out.
  int64_t BestGap(int64_t size, bool first_fit) {
    runs_.clear();
    for (const std::vector<Interval>* list : lists_) {
      runs_.push_back({list->data(), list->size(), -1});
    }
    // Largest first, so the two smallest are at the back (few lists: insertion sort).
    for (size_t k = 1; k < runs_.size(); ++k) {
      const IntervalRun r = runs_[k];
      size_t j = k;
      for (; j > 0 && runs_[j - 1].size < r.size; --j) runs_[j] = runs_[j - 1];
      runs_[j] = r;
    }
    free_scratch_.clear();
    for (int k = 0; k < static_cast<int>(scratch_.size()); ++k) free_scratch_.push_back(k);
    while (runs_.size() > 2) {
      const IntervalRun x = runs_.back();
      runs_.pop_back();
      const IntervalRun y = runs_.back();
      runs_.pop_back();
      if (free_scratch_.empty()) {
        free_scratch_.push_back(static_cast<int>(scratch_.size()));
        scratch_.emplace_back();
      }
      const int owner = free_scratch_.back();
      free_scratch_.pop_back();
      std::vector<Interval>& out = scratch_[owner];
      if (out.size() < x.size + y.size) out.resize(x.size + y.size);
      const size_t merged = static_cast<size_t>(
          MergeRuns(x.data, x.data + x.size, y.data, y.data + y.size, out.data()) - out.data());
      if (x.owner >= 0) free_scratch_.push_back(x.owner);
      if (y.owner >= 0) free_scratch_.push_back(y.owner);
      const IntervalRun r{out.data(), merged, owner};
      size_t j = runs_.size();
      runs_.push_back(r);
      for (; j > 0 && runs_[j - 1].size < r.size; --j) runs_[j] = runs_[j - 1];
      runs_[j] = r;
    }
    const Interval* a = runs_.size() > 0 ? runs_[0].data : nullptr;
    const Interval* a_end = runs_.size() > 0 ? a + runs_[0].size : nullptr;
    const Interval* b = runs_.size() > 1 ? runs_[1].data : nullptr;
    const Interval* b_end = runs_.size() > 1 ? b + runs_[1].size : nullptr;
    int64_t best = -1;
    int64_t best_gap = std::numeric_limits<int64_t>::max();
    int64_t covered = 0;
    auto visit = [&](const Interval& iv) {
      if (iv.begin > covered) {
        const int64_t gap = iv.begin - covered;
        if (gap >= size && gap < best_gap) {
          best_gap = gap;
          best = covered;
          if (gap == size || first_fit) return true;
        }
      }
      covered = std::max(covered, iv.end);
      return false;
    };
    while (a != a_end && b != b_end) {
      if (visit(a->begin <= b->begin ? *a++ : *b++)) return best;
    }
    for (; a != a_end; ++a) {
      if (visit(*a)) return best;
    }
    for (; b != b_end; ++b) {
      if (visit(*b)) return best;
    }
    return best >= 0 ? best : covered;
  }

  // Merges two sorted, coalesced runs into `out` (room for both), coalescing; returns the end.
  static Interval* MergeRuns(const Interval* a, const Interval* a_end, const Interval* b,
                             const Interval* b_end, Interval* out) {
    Interval cur;
    if (a != a_end && (b == b_end || a->begin <= b->begin)) {
      cur = *a++;
    } else if (b != b_end) {
      cur = *b++;
    } else {
      return out;
    }
    auto push = [&cur, &out](const Interval& iv) {
      if (iv.begin <= cur.end) {
        cur.end = std::max(cur.end, iv.end);
      } else {
        *out++ = cur;
        cur = iv;
      }
    };
    while (a != a_end && b != b_end) push(a->begin <= b->begin ? *a++ : *b++);
    for (; a != a_end; ++a) push(*a);
    for (; b != b_end; ++b) push(*b);
    *out++ = cur;
    return out;
  }

  const Items& items_;
  OccupancyTree tree_;
  std::vector<const std::vector<Interval>*> lists_;
  std::vector<IntervalRun> runs_;  // BestGap(): runs still to merge, largest first.
  std::vector<std::vector<Interval>> scratch_;
  std::vector<int> free_scratch_;
};

// Best fit for orders sorted by start (kStart), as an allocator would do it: when a buffer starts,
// every placed buffer that overlaps its lifetime is live at its start, so the free gaps are those
// of one moment. A set of gaps keyed by (length, offset) answers best fit in O(log n); buffers
// are freed when time passes their end. Same placements as BestFitPlacer, in O(n log n).
int64_t SweepBestFit(const Items& items, const std::vector<int>& order,
                     std::vector<int64_t>& offsets,
                     int64_t limit = std::numeric_limits<int64_t>::max()) {
  offsets.assign(items.count(), 0);
  std::map<int64_t, int64_t> live;             // Offset -> end address of live buffers.
  std::set<std::pair<int64_t, int64_t>> gaps;  // (length, offset) of gaps between them.
  using Expiry = std::pair<int64_t, int>;      // (end time, item).
  std::priority_queue<Expiry, std::vector<Expiry>, std::greater<Expiry>> expiry;
  auto remove = [&](int j) {
    auto it = live.find(offsets[j]);
    const int64_t below = it == live.begin() ? 0 : std::prev(it)->second;
    if (it->first > below) gaps.erase({it->first - below, below});
    auto next = std::next(it);
    if (next != live.end()) {
      if (next->first > it->second) gaps.erase({next->first - it->second, it->second});
      gaps.insert({next->first - below, below});
    }
    live.erase(it);
  };
  int64_t height = 0;
  for (int i : order) {
    while (!expiry.empty() && expiry.top().first <= items.start[i]) {
      remove(expiry.top().second);
      expiry.pop();
    }
    const int64_t size = items.size[i];
    int64_t offset;
    auto gap = gaps.lower_bound({size, std::numeric_limits<int64_t>::min()});
    if (gap != gaps.end()) {
      const auto [length, begin] = *gap;
      gaps.erase(gap);
      offset = begin;
      if (length > size) gaps.insert({length - size, begin + size});
    } else {
      offset = live.empty() ? 0 : std::prev(live.end())->second;
    }
    live.emplace(offset, offset + size);
    offsets[i] = offset;
    expiry.push({items.end[i], i});
    height = std::max(height, offset + size);
    if (height > limit) return height;
  }
  return height;
}

std::vector<int> OrderItems(const Items& items, GreedyOrder order) {
  const int n = items.count();
  // Keys compare ascending (larger-first keys negated), the index last: the permutation a stable
  // sort would give. Sorted by value, not through an index array, for locality. k0 is 128 bits
  // wide so that areas (size * lifetime, each below 2^63) compare exactly.
  struct Key {
    __int128 k0;
    int64_t k1, k2;
    int index;
    bool operator<(const Key& o) const {
      return std::tie(k0, k1, k2, index) < std::tie(o.k0, o.k1, o.k2, o.index);
    }
  };
  int64_t first_start = std::numeric_limits<int64_t>::max();
  int64_t last_end = std::numeric_limits<int64_t>::min();
  for (int i = 0; i < n; ++i) {
    first_start = std::min(first_start, items.start[i]);
    last_end = std::max(last_end, items.end[i]);
  }
  std::vector<Key> key(n);
  for (int i = 0; i < n; ++i) {
    const int64_t size = items.size[i];
    // ValidateInstance guarantees that end - start does not overflow.
    const int64_t length = items.end[i] - items.start[i];
    switch (order) {
      case GreedyOrder::kSize:
        key[i] = {-size, -length, 0, i};
        break;
      case GreedyOrder::kArea:
        key[i] = {-static_cast<__int128>(size) * length, -size, 0, i};
        break;
      case GreedyOrder::kLifetime:
        key[i] = {-length, -size, 0, i};
        break;
      case GreedyOrder::kStart:
        key[i] = {items.start[i], -size, -length, i};
        break;
      case GreedyOrder::kWholeThenSize:
        if (items.start[i] == first_start && items.end[i] == last_end) {
          key[i] = {0, 0, 0, i};
        } else {
          key[i] = {1, -size, items.start[i], i};
        }
        break;
      case GreedyOrder::kSizeFirstFit:
        key[i] = {-size, 0, 0, i};
        break;
    }
  }
  std::sort(key.begin(), key.end());
  std::vector<int> idx(n);
  for (int i = 0; i < n; ++i) idx[i] = key[i].index;
  return idx;
}

// ---------------------------------------------------------------------------------------------
// Branch and bound over canonical placements (decision version: fit under a capacity).

enum class SearchResult { kFound, kNotFound, kLimit };

class BranchAndBound {
 public:
  // Returns false (and builds nothing) when the instance has more than `max_pairs` overlapping
  // pairs, the point where the per-node work makes the search hopeless within a budget.
  bool Prepare(const Items& items, int64_t max_pairs) {
    items_ = &items;
    const int n = items.count();
    const int num_sections = items.num_sections;
    // Overlap lists with a sweep over sections.
    std::vector<std::vector<int>> starts(num_sections + 1);
    for (int i = 0; i < n; ++i) starts[items.lo[i]].push_back(i);
    overlaps_.assign(n, {});
    std::vector<int> active;
    int64_t pairs = 0;
    for (int s = 0; s < num_sections; ++s) {
      active.erase(
          std::remove_if(active.begin(), active.end(), [&](int j) { return items.hi[j] <= s; }),
          active.end());
      for (int i : starts[s]) {
        pairs += static_cast<int64_t>(active.size());
        if (pairs > max_pairs) return false;
        for (int j : active) {
          overlaps_[i].push_back(j);
          overlaps_[j].push_back(i);
        }
        active.push_back(i);
      }
    }
    int64_t spans = 0;
    for (int i = 0; i < n; ++i) spans += items.hi[i] - items.lo[i];
    if (spans > 4 * max_pairs + 1000000) return false;
    base_total_.assign(num_sections, 0);
    for (int i = 0; i < n; ++i) {
      for (int s = items.lo[i]; s < items.hi[i]; ++s) base_total_[s] += items.size[i];
    }
    item_total_.assign(n, 0);
    for (int i = 0; i < n; ++i) {
      for (int s = items.lo[i]; s < items.hi[i]; ++s) {
        item_total_[i] = std::max(item_total_[i], base_total_[s]);
      }
    }
    prepared_ = true;
    return true;
  }

  // Three static preorders, after MiniMalloc (0: width, area, total; 1: total, area, width;
  // 2: total, width, area), plus preorder 2 re-ranked at every decomposition (3). On the
  // MiniMalloc set the re-ranked variant solves instances the static ones do not and vice versa;
  // it runs only where a fourth hardware thread is free (see PlanPlacement). Randomly perturbed
  // extra preorders were tried and solved fewer instances within 1 s.
  static constexpr int kNumPreorders = 4;

  // Searches for a placement with height <= cap using preorder `heuristic` for at most
  // `node_limit` nodes or until `deadline`. On kFound, `offsets` (per item) holds it.
  // `stop`, if not null, ends the search early (as kLimit) once another thread sets it.
  SearchResult Solve(int64_t cap, int heuristic, int64_t node_limit, Clock::time_point deadline,
                     std::vector<int64_t>& offsets, const std::atomic<bool>* stop = nullptr) {
    const Items& items = *items_;
    const int n = items.count();
    const int num_sections = items.num_sections;
    cap_ = cap;
    deadline_ = deadline;
    stop_ = stop;
    nodes_left_ = node_limit;
    clock_countdown_ = 0;
    off_.assign(n, -1);
    min_off_.assign(n, 0);
    solution_.assign(n, 0);
    floor_.assign(num_sections, 0);
    total_ = base_total_;
    cuts_.assign(std::max(num_sections - 1, 0), 0);
    for (int i = 0; i < n; ++i) {
      for (int k = items.lo[i]; k + 1 < items.hi[i]; ++k) ++cuts_[k];
    }
    next_unpainted_.assign(num_sections + 1, 0);
    paint_epoch_.assign(num_sections + 1, 0);
    epoch_ = 0;
    stamp_.assign(n, 0);
    stamp_value_ = 0;
    trail_floor_.clear();
    trail_min_off_.clear();
    // One candidate list per depth, sized up front so references stay valid during recursion.
    if (static_cast<int>(candidates_.size()) < n + 2) candidates_.resize(n + 2);
    heuristic_ = heuristic == 3 ? 2 : heuristic;
    rerank_ = heuristic == 3;
    piece_total_.assign(n, 0);
    std::vector<int> all(n);
    std::iota(all.begin(), all.end(), 0);
    rank_.assign(n, 0);
    Rank(all, item_total_);
    nodes_used_ = 0;
    const SearchResult result = SplitAndSolve(all, 0, num_sections, 0);
    if (result == SearchResult::kFound) offsets = solution_;
    return result;
  }

  int64_t nodes_used() const { return nodes_used_; }

 private:
  struct Candidate {
    int64_t offset;
    int rank;
    int item;
    bool operator<(const Candidate& o) const {
      return offset != o.offset ? offset < o.offset : rank < o.rank;
    }
  };

  // Static preorder of `members` under heuristic_: rank_[i] is i's position among them. `total`
  // gives each buffer's largest section total (of the buffers still to place).
  void Rank(std::vector<int> members, const std::vector<int64_t>& total) {
    const Items& items = *items_;
    auto width = [&](int i) { return items.end[i] - items.start[i]; };
    auto area = [&](int i) {
      return static_cast<long double>(items.size[i]) * static_cast<long double>(width(i));
    };
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
      switch (heuristic_) {
        case 0:  // Width, area, total.
          if (width(a) != width(b)) return width(a) > width(b);
          if (area(a) != area(b)) return area(a) > area(b);
          return total[a] > total[b];
        case 1:  // Total, area, width.
          if (total[a] != total[b]) return total[a] > total[b];
          if (area(a) != area(b)) return area(a) > area(b);
          return width(a) > width(b);
        default:  // Total, width, area.
          if (total[a] != total[b]) return total[a] > total[b];
          if (width(a) != width(b)) return width(a) > width(b);
          return area(a) > area(b);
      }
    });
    for (size_t r = 0; r < members.size(); ++r) rank_[members[r]] = static_cast<int>(r);
  }

  // Splits the unplaced `members` over sections [lo, hi) at boundaries no unplaced buffer
  // crosses, and solves every piece on its own; one infeasible piece makes the whole infeasible.
  SearchResult SplitAndSolve(const std::vector<int>& members, int lo, int hi, int depth) {
    std::vector<int> cut_points;
    for (int k = lo; k + 1 < hi; ++k) {
      if (cuts_[k] == 0) cut_points.push_back(k + 1);
    }
    if (cut_points.empty()) return Search(members, lo, hi, 0, -1, depth);
    cut_points.push_back(hi);
    std::vector<std::vector<int>> pieces(cut_points.size());
    for (int i : members) {
      if (off_[i] >= 0) continue;
      const int piece =
          static_cast<int>(std::upper_bound(cut_points.begin(), cut_points.end(), items_->lo[i]) -
                           cut_points.begin());
      pieces[piece].push_back(i);
    }
    // With rerank_, each piece is ranked afresh with the section totals of what is left to place
    // (as MiniMalloc's sub-solves do); the old ranks come back afterwards.
    std::vector<int> saved_rank;
    int piece_lo = lo;
    for (size_t p = 0; p < pieces.size(); ++p) {
      const int piece_hi = cut_points[p];
      if (!pieces[p].empty() && !rerank_) {
        const SearchResult r = Search(pieces[p], piece_lo, piece_hi, 0, -1, depth);
        if (r != SearchResult::kFound) return r;
      } else if (!pieces[p].empty()) {
        saved_rank.clear();
        for (int i : pieces[p]) {
          saved_rank.push_back(rank_[i]);
          int64_t total = 0;
          for (int s = items_->lo[i]; s < items_->hi[i]; ++s) total = std::max(total, total_[s]);
          piece_total_[i] = total;
        }
        Rank(pieces[p], piece_total_);
        const SearchResult r = Search(pieces[p], piece_lo, piece_hi, 0, -1, depth);
        for (size_t k = 0; k < pieces[p].size(); ++k) rank_[pieces[p][k]] = saved_rank[k];
        if (r != SearchResult::kFound) return r;
      }
      piece_lo = piece_hi;
    }
    return SearchResult::kFound;
  }

  bool OutOfBudget() {
    if (nodes_left_ <= 0) return true;
    --nodes_left_;
    ++nodes_used_;
    if (--clock_countdown_ <= 0) {
      clock_countdown_ = 256;
      if (Clock::now() >= deadline_ ||
          (stop_ != nullptr && stop_->load(std::memory_order_relaxed))) {
        nodes_left_ = 0;
        return true;
      }
    }
    return false;
  }

  // Depth-first search over the unplaced buffers of `members` (sections [lo, hi)). Buffers are
  // placed in non-decreasing (offset, rank) order, each at the lowest offset it can take.
  //
  // `parent` (if not null) is the parent node's sorted candidate list; the child's list is then
  // derived from it in linear time: drop the buffer just placed, re-insert the buffers whose
  // lowest offset the placement raised (recorded in trail_min_off_ from `trail_begin` on).
  SearchResult Search(const std::vector<int>& members, int lo, int hi, int64_t last_offset,
                      int last_rank, int depth, const std::vector<Candidate>* parent = nullptr,
                      size_t trail_begin = 0) {
    if (OutOfBudget()) return SearchResult::kLimit;
    const Items& items = *items_;
    std::vector<Candidate>& cands = candidates_[depth];
    cands.clear();
    if (parent == nullptr) {
      for (int i : members) {
        if (off_[i] < 0) cands.push_back({min_off_[i], rank_[i], i});
      }
      std::sort(cands.begin(), cands.end());
    } else {
      ++stamp_value_;
      changed_.clear();
      for (size_t t = trail_begin; t < trail_min_off_.size(); ++t) {
        const int j = trail_min_off_[t].first;
        stamp_[j] = stamp_value_;
        changed_.push_back({min_off_[j], rank_[j], j});
      }
      std::sort(changed_.begin(), changed_.end());
      auto next = changed_.begin();
      for (const Candidate& c : *parent) {
        if (off_[c.item] >= 0 || stamp_[c.item] == stamp_value_) continue;
        while (next != changed_.end() && *next < c) cands.push_back(*next++);
        cands.push_back(c);
      }
      cands.insert(cands.end(), next, changed_.end());
    }
    if (cands.empty()) return SearchResult::kFound;
    int64_t min_height = std::numeric_limits<int64_t>::max();
    if (!Feasible(cands, std::max<int64_t>(last_offset, 0), min_height)) {
      return SearchResult::kNotFound;
    }
    // Canonical order: only candidates at or after (last_offset, last_rank); the others' orders
    // are explored elsewhere.
    const size_t first = static_cast<size_t>(
        std::lower_bound(cands.begin(), cands.end(), Candidate{last_offset, last_rank, -1}) -
        cands.begin());
    for (size_t c = first; c < cands.size(); ++c) {
      const Candidate cand = cands[c];
      // Dominance: a buffer could fit entirely below this offset; leaving that gap is never
      // needed. Candidates are sorted by offset, so none after this one qualifies either.
      if (cand.offset >= min_height) break;
      const int i = cand.item;
      const int64_t top = cand.offset + items.size[i];
      if (top > cap_) continue;
      const size_t floor_mark = trail_floor_.size();
      const size_t min_off_mark = trail_min_off_.size();
      Place(i, cand.offset);
      bool split = false;
      for (int k = items.lo[i]; k + 1 < items.hi[i]; ++k) {
        if (--cuts_[k] == 0) split = true;
      }
      const SearchResult result =
          split ? SplitAndSolve(members, lo, hi, depth + 1)
                : Search(members, lo, hi, cand.offset, cand.rank, depth + 1, &cands, min_off_mark);
      for (int k = items.lo[i]; k + 1 < items.hi[i]; ++k) ++cuts_[k];
      Unplace(i, floor_mark, min_off_mark);
      if (result != SearchResult::kNotFound) return result;
    }
    return SearchResult::kNotFound;
  }

  void Place(int i, int64_t offset) {
    const Items& items = *items_;
    off_[i] = offset;
    solution_[i] = offset;
    const int64_t top = offset + items.size[i];
    for (int j : overlaps_[i]) {
      if (off_[j] >= 0 || min_off_[j] >= top) continue;
      trail_min_off_.push_back({j, min_off_[j]});
      min_off_[j] = top;
    }
    for (int s = items.lo[i]; s < items.hi[i]; ++s) {
      trail_floor_.push_back({s, floor_[s]});
      floor_[s] = std::max(floor_[s], top);
      total_[s] -= items.size[i];
    }
  }

  void Unplace(int i, size_t floor_mark, size_t min_off_mark) {
    const Items& items = *items_;
    while (trail_floor_.size() > floor_mark) {
      floor_[trail_floor_.back().first] = trail_floor_.back().second;
      trail_floor_.pop_back();
    }
    while (trail_min_off_.size() > min_off_mark) {
      min_off_[trail_min_off_.back().first] = trail_min_off_.back().second;
      trail_min_off_.pop_back();
    }
    for (int s = items.lo[i]; s < items.hi[i]; ++s) total_[s] += items.size[i];
    off_[i] = -1;
  }

  // Every section's unplaced buffers must still stack under the capacity, starting no lower than
  // the section's floor, the last placed offset (later placements never go lower) and the lowest
  // offset any of them can take. `cands` (the unplaced buffers, sorted by lowest offset) paints
  // each section with the lowest offset of its first buffer, skipping painted sections.
  // Also sets `min_height`, the lowest top any candidate can reach (when feasible).
  bool Feasible(const std::vector<Candidate>& cands, int64_t last_offset, int64_t& min_height) {
    const Items& items = *items_;
    // next_unpainted_[s] is only valid when paint_epoch_[s] is the current epoch (lazy reset).
    ++epoch_;
    auto find = [this](int s) {
      int root = s;
      while (paint_epoch_[root] == epoch_ && next_unpainted_[root] != root) {
        root = next_unpainted_[root];
      }
      while (s != root) {  // Path compression.
        const int next = next_unpainted_[s];
        next_unpainted_[s] = root;
        s = next;
      }
      return root;
    };
    for (const Candidate& c : cands) {
      min_height = std::min(min_height, c.offset + items.size[c.item]);
      const int end = items.hi[c.item];
      for (int s = find(items.lo[c.item]); s < end; s = find(s + 1)) {
        const int64_t base = std::max({floor_[s], last_offset, c.offset});
        if (base + total_[s] > cap_) return false;
        paint_epoch_[s] = epoch_;
        next_unpainted_[s] = s + 1;
      }
    }
    return true;
  }

  const Items* items_ = nullptr;
  bool prepared_ = false;
  std::vector<std::vector<int>> overlaps_;
  std::vector<int64_t> base_total_;
  std::vector<int64_t> item_total_;
  std::vector<int64_t> piece_total_;  // Scratch for Rank() in SplitAndSolve().
  int heuristic_ = 0;
  bool rerank_ = false;

  int64_t cap_ = 0;
  Clock::time_point deadline_;
  const std::atomic<bool>* stop_ = nullptr;
  int64_t nodes_left_ = 0;
  int64_t nodes_used_ = 0;
  int clock_countdown_ = 0;
  std::vector<int64_t> off_, min_off_, solution_, floor_, total_;
  std::vector<int> cuts_, rank_;
  std::vector<uint32_t> stamp_;  // Marks buffers whose lowest offset the last placement raised.
  uint32_t stamp_value_ = 0;
  std::vector<Candidate> changed_;
  std::vector<int> next_unpainted_;  // Union-find "next unpainted section" for Feasible().
  std::vector<uint64_t> paint_epoch_;
  uint64_t epoch_ = 0;
  std::vector<std::pair<int, int64_t>> trail_floor_, trail_min_off_;
  std::vector<std::vector<Candidate>> candidates_;
};

// Maps per-item offsets back to per-buffer offsets (0 for buffers that take no space).
std::vector<int64_t> ToBufferOffsets(const Items& items, size_t num_buffers,
                                     const std::vector<int64_t>& item_offsets) {
  std::vector<int64_t> offsets(num_buffers, 0);
  for (int i = 0; i < items.count(); ++i) offsets[items.buffer[i]] = item_offsets[i];
  return offsets;
}

int64_t ItemHeight(const Items& items, const std::vector<int64_t>& item_offsets) {
  int64_t height = 0;
  for (int i = 0; i < items.count(); ++i) {
    height = std::max(height, item_offsets[i] + items.size[i]);
  }
  return height;
}

// Runs every preorder concurrently (one thread each) on `target` until one finds a placement,
// one proves that none exists, or `deadline`. No search is restarted, unlike the round-robin.
SearchResult Portfolio(std::vector<BranchAndBound>& solvers, const Items& items, int64_t target,
                       Clock::time_point deadline, std::vector<int64_t>& found, int64_t& nodes) {
  const int k = static_cast<int>(solvers.size());
  std::atomic<bool> stop{false};
  std::vector<SearchResult> results(k, SearchResult::kLimit);
  std::vector<std::vector<int64_t>> offsets(k);
  auto work = [&](int h) {
    results[h] = solvers[h].Solve(target, h, std::numeric_limits<int64_t>::max(), deadline,
                                  offsets[h], &stop);
    if (results[h] != SearchResult::kLimit) stop.store(true);
  };
  std::vector<std::thread> threads;
  for (int h = 1; h < k; ++h) threads.emplace_back(work, h);
  work(0);
  for (std::thread& t : threads) t.join();
  SearchResult result = SearchResult::kLimit;
  int64_t best = std::numeric_limits<int64_t>::max();
  for (int h = 0; h < k; ++h) {
    nodes += solvers[h].nodes_used();
    if (results[h] == SearchResult::kFound && ItemHeight(items, offsets[h]) < best) {
      best = ItemHeight(items, offsets[h]);
      found = std::move(offsets[h]);
      result = SearchResult::kFound;
    }
  }
  if (result == SearchResult::kFound) return result;
  for (int h = 0; h < k; ++h) {
    if (results[h] == SearchResult::kNotFound) return SearchResult::kNotFound;
  }
  return SearchResult::kLimit;
}

// Large-neighbourhood search for instances too large for the branch and bound. The height of a
// placement is decided by the few buffers whose top reaches it, in a few peak windows of time.
// Each round takes one such buffer, frees every buffer whose lifetime lies inside a time window
// around it (a random margin on each side), keeps every other buffer where it is (those live in
// the window become fixed obstacles) and re-places the freed buffers by best fit in one of the
// greedy orders or in their current bottom-up order with the peak buffer moved earlier. A round
// costs O(k log k) in the k buffers live in the window plus an O(n) scan, not a best-fit pass over
// the instance. A result is kept when the height drops, or stays and fewer
// buffers reach it (so the peaks are flattened one by one); the search stops at LOAD. Returns
// true if it lowered `best_height`.
bool PeakSearch(const Items& items, Clock::time_point deadline, uint64_t seed,
                std::vector<int64_t>& best, int64_t& best_height) {
  const int n = items.count();
  std::mt19937_64 rng(seed);
  const int64_t start_height = best_height;
  std::vector<int> top;
  auto collect_top = [&]() {
    top.clear();
    for (int i = 0; i < n; ++i) {
      if (best[i] + items.size[i] == best_height) top.push_back(i);
    }
  };
  collect_top();
  std::vector<char> is_free(n, 0);
  std::vector<int> free_items, obstacles, local_of(n, -1);
  std::vector<int64_t> sub_offsets;
  constexpr int kMaxFree = 16384;
  while (best_height > items.load && !top.empty()) {
    if (Clock::now() >= deadline) break;  // Rounds can take milliseconds each.
    const int peak = top[rng() % top.size()];
    const int span = items.hi[peak] - items.lo[peak];
    // Margins from a few sections to thousands (log-uniform): peaks under long-lived buffers
    // need wide windows before those buffers can move; the free set is capped below.
    int margin = static_cast<int>(rng() % static_cast<uint64_t>(2 * span + 8)) +
                 ((1 << static_cast<int>(rng() % 14)) - 1);
    int w_lo = 0, w_hi = 0;
    free_items.clear();
    for (int attempt = 0; attempt < 4; ++attempt) {
      w_lo = std::max(0, items.lo[peak] - margin);
      w_hi = std::min(items.num_sections, items.hi[peak] + margin);
      free_items.clear();
      for (int i = 0; i < n; ++i) {
        if (items.lo[i] >= w_lo && items.hi[i] <= w_hi) free_items.push_back(i);
      }
      if (static_cast<int>(free_items.size()) <= kMaxFree) break;
      margin /= 4;
    }
    if (static_cast<int>(free_items.size()) > kMaxFree) continue;
    const int hull_lo = w_lo, hull_hi = w_hi;
    for (int i : free_items) is_free[i] = 1;
    // The height outside the freed buffers, and how many of them reach the best height.
    int64_t outside = 0;
    int outside_top = 0;
    obstacles.clear();
    for (int i = 0; i < n; ++i) {
      if (is_free[i]) continue;
      const int64_t t = best[i] + items.size[i];
      outside = std::max(outside, t);
      outside_top += t == best_height;
      if (items.lo[i] < hull_hi && items.hi[i] > hull_lo) obstacles.push_back(i);
    }
    // The sub-instance: freed buffers first (in input order, so ties keep their meaning), then
    // obstacles; sections relative to the hull.
    Items sub;
    auto add = [&](int i) {
      local_of[i] = sub.count();
      sub.buffer.push_back(i);
      sub.size.push_back(items.size[i]);
      sub.start.push_back(items.start[i]);
      sub.end.push_back(items.end[i]);
      sub.lo.push_back(std::max(items.lo[i], hull_lo) - hull_lo);
      sub.hi.push_back(std::min(items.hi[i], hull_hi) - hull_lo);
    };
    for (int i : free_items) add(i);
    const int k = sub.count();
    for (int i : obstacles) add(i);
    sub.num_sections = hull_hi - hull_lo;
    std::vector<std::pair<int, int64_t>> fixed;
    fixed.reserve(obstacles.size());
    for (int i : obstacles) fixed.push_back({local_of[i], best[i]});
    // The order of the freed buffers: a greedy rule, or the current bottom-up order with the
    // peak buffer moved earlier.
    std::vector<int> order;
    const int choice = static_cast<int>(rng() % 8);
    bool first_fit = false;
    if (choice < 6) {
      const GreedyOrder rule = static_cast<GreedyOrder>(choice);
      first_fit = rule == GreedyOrder::kSizeFirstFit;
      for (int j : OrderItems(sub, rule)) {
        if (j < k) order.push_back(j);
      }
    } else {
      order.resize(k);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int a, int b) { return best[sub.buffer[a]] < best[sub.buffer[b]]; });
      const int from =
          static_cast<int>(std::find(order.begin(), order.end(), local_of[peak]) - order.begin());
      if (from > 0) {
        const int to = static_cast<int>(rng() % static_cast<uint64_t>(from));
        std::rotate(order.begin() + to, order.begin() + from, order.begin() + from + 1);
      }
    }
    BestFitPlacer placer(sub);
    const int64_t height = placer.Run(order, sub_offsets, best_height, first_fit, &fixed);
    bool accept = false;
    if (height <= best_height) {
      int free_top = 0;
      for (int j = 0; j < k; ++j) free_top += sub_offsets[j] + sub.size[j] == best_height;
      const int64_t new_height = std::max(outside, height);
      const int old_top = static_cast<int>(top.size());
      accept = new_height < best_height || outside_top + free_top <= old_top;
      if (accept) {
        for (int j = 0; j < k; ++j) best[sub.buffer[j]] = sub_offsets[j];
        best_height = new_height;
        collect_top();
      }
    }
    for (int i : free_items) is_free[i] = 0;
  }
  return best_height < start_height;
}

}  // namespace

const char* GreedyOrderName(GreedyOrder order) {
  switch (order) {
    case GreedyOrder::kSize:
      return "size";
    case GreedyOrder::kArea:
      return "area";
    case GreedyOrder::kLifetime:
      return "lifetime";
    case GreedyOrder::kStart:
      return "start";
    case GreedyOrder::kWholeThenSize:
      return "whole-then-size";
    case GreedyOrder::kSizeFirstFit:
      return "size-first-fit";
  }
  return "unknown";
}

std::vector<int64_t> GreedyBestFit(absl::Span<const PlacementBuffer> buffers, int64_t alignment,
                                   GreedyOrder order) {
  const Items items = MakeItems(buffers, alignment);
  std::vector<int64_t> item_offsets;
  if (order == GreedyOrder::kStart) {
    SweepBestFit(items, OrderItems(items, order), item_offsets);
  } else {
    BestFitPlacer placer(items);
    placer.Run(OrderItems(items, order), item_offsets, std::numeric_limits<int64_t>::max(),
               order == GreedyOrder::kSizeFirstFit);
  }
  return ToBufferOffsets(items, buffers.size(), item_offsets);
}

absl::StatusOr<PlacementPlan> PlanPlacement(absl::Span<const PlacementBuffer> buffers,
                                            const PlannerOptions& options) {
  const Clock::time_point started = Clock::now();
  PlacementLimits limits;
  limits.alignment = options.alignment;
  limits.capacity = options.capacity;
  if (absl::Status s = ValidateInstance(buffers, limits); !s.ok()) return s;
  if (options.orders.empty()) {
    return absl::InvalidArgumentError("PlannerOptions.orders must name at least one order");
  }
  if (options.search_threads < 0) {
    return absl::InvalidArgumentError("PlannerOptions.search_threads must be >= 0");
  }
  if (options.budget < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("PlannerOptions.budget must be >= 0");
  }

  const Items items = MakeItems(buffers, options.alignment);
  PlacementPlan plan;
  // Unaligned sizes are the items' sizes (buffers taking no space add nothing to LOAD).
  plan.load = options.alignment == 1 ? items.load : ComputeLoad(buffers);

  // Greedy: best of the requested orders.
  BestFitPlacer placer(items);
  std::vector<int64_t> best;
  std::vector<int> best_order;
  int64_t best_height = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> offsets;
  // The start order (an O(n log n) sweep) runs first: its height lets the other orders stop as
  // soon as they cannot win. Then lifetime, area, first fit, size, TFLite's order: the sooner the
  // eventual winner runs, the sooner the others stop (on Y_1, where lifetime wins, this saves ~9 %
  // over running the four older orders first). The evaluation order changes only the time: ties
  // go to the order listed first in options.orders.
  auto rank = [](GreedyOrder o) {
    switch (o) {
      case GreedyOrder::kStart:
        return 0;
      case GreedyOrder::kLifetime:
        return 1;
      case GreedyOrder::kArea:
        return 2;
      case GreedyOrder::kSizeFirstFit:
        return 3;
      case GreedyOrder::kSize:
        return 4;
      case GreedyOrder::kWholeThenSize:
        return 5;
    }
    return 6;
  };
  std::vector<size_t> evaluation(options.orders.size());
  std::iota(evaluation.begin(), evaluation.end(), 0);
  std::stable_sort(evaluation.begin(), evaluation.end(), [&](size_t a, size_t b) {
    return rank(options.orders[a]) < rank(options.orders[b]);
  });
  size_t best_index = options.orders.size();
  for (size_t k : evaluation) {
    const GreedyOrder order = options.orders[k];
    std::vector<int> sequence = OrderItems(items, order);
    const int64_t limit = k < best_index ? best_height : best_height - 1;
    const int64_t height =
        order == GreedyOrder::kStart
            ? SweepBestFit(items, sequence, offsets, limit)
            : placer.Run(sequence, offsets, limit, order == GreedyOrder::kSizeFirstFit);
    if (height < best_height || (height == best_height && k < best_index)) {
      best_height = height;
      best_index = k;
      best = offsets;
      best_order = std::move(sequence);
      plan.method = std::string("greedy:") + GreedyOrderName(order);
    }
    if (best_height <= items.load && best_index == 0) break;
  }
  if (items.count() == 0) best_height = 0;

  int64_t proven_bound = items.load;  // Of the aligned sizes; raised by exhausted searches.
  if (options.mode == PlannerMode::kSearch && best_height > items.load) {
    const Clock::time_point deadline =
        started + std::chrono::nanoseconds(absl::ToInt64Nanoseconds(options.budget));
    BranchAndBound bnb;
    constexpr int64_t kMaxSearchPairs = 2000000;
    // Above a few thousand buffers the branch and bound rarely finishes a target within a budget
    // (and never proves a bound); the peak-focused hill climb below improves such instances.
    constexpr int kMaxSearchItems = 4000;
    if (items.count() <= kMaxSearchItems && bnb.Prepare(items, kMaxSearchPairs)) {
      const int64_t unit = items.unit;
      auto align_unit = [&](int64_t v) { return RoundUp(v, unit); };
      int64_t lo = align_unit(items.load);  // No placement below; raised by exhausted searches.
      const int64_t cap_target = options.capacity > 0 ? options.capacity / unit * unit : 0;
      bool cap_pending = cap_target > 0 && best_height > cap_target && cap_target >= lo;
      std::vector<int64_t> found;
      auto accept = [&](const std::vector<int64_t>& offsets) {
        const int64_t height = ItemHeight(items, offsets);
        if (height < best_height) {
          best_height = height;
          best = offsets;
          plan.method = "search";
        }
        if (cap_pending && best_height <= cap_target) cap_pending = false;
      };
      // Below ~64 buffers a search ends in microseconds; threads would cost more than they save.
      // By default, the re-ranked preorder runs only with a fourth hardware thread: on two cores
      // a fourth thread slows the others more than it helps (7 instead of 8 MiniMalloc
      // instances within 1 s).
      int preorders = options.search_threads;
      if (preorders == 0) {
        preorders = items.count() < 64                         ? 1
                    : std::thread::hardware_concurrency() >= 4 ? BranchAndBound::kNumPreorders
                                                               : 3;
      }
      preorders = std::min(preorders, BranchAndBound::kNumPreorders);
      if (preorders > 1) {
        std::vector<BranchAndBound> solvers(preorders, bnb);
        int attempt = 0;
        while (lo < best_height && Clock::now() < deadline) {
          // The capacity first while it is unmet; then LOAD's bound and halfway to the best,
          // alternately, each with half the remaining time.
          int64_t target = cap_target;
          Clock::time_point target_deadline = deadline;
          if (!cap_pending) {
            const int64_t mid = lo + (best_height - lo) / unit / 2 * unit;
            target = attempt % 2 == 1 && mid > lo ? mid : lo;
            const Clock::time_point now = Clock::now();
            if (deadline - now > std::chrono::milliseconds(20)) {
              target_deadline = now + (deadline - now) / 2;
            }
          }
          const SearchResult r =
              Portfolio(solvers, items, target, target_deadline, found, plan.search_nodes);
          if (r == SearchResult::kFound) {
            accept(found);
          } else if (r == SearchResult::kNotFound) {
            lo = std::max(lo, target + unit);
            if (cap_pending && lo > cap_target) cap_pending = false;
          } else {
            ++attempt;
          }
        }
      } else {
        int64_t node_limit = std::max<int64_t>(2 * items.count(), 64);
        while (lo < best_height && Clock::now() < deadline) {
          // One round: the capacity first while it is unmet, then LOAD's bound, then halfway;
          // every preorder in turn with the round's node limit, which doubles each round.
          std::vector<int64_t> targets;
          if (cap_pending) {
            targets.push_back(cap_target);
          } else {
            targets.push_back(lo);
            const int64_t mid = lo + (best_height - lo) / unit / 2 * unit;
            if (mid > lo && mid < best_height) targets.push_back(mid);
          }
          for (int64_t target : targets) {
            if (target < lo || target >= best_height) continue;
            for (int h = 0; h < 3; ++h) {
              const SearchResult r = bnb.Solve(target, h, node_limit, deadline, found);
              plan.search_nodes += bnb.nodes_used();
              if (r == SearchResult::kFound) {
                accept(found);
                break;
              }
              if (r == SearchResult::kNotFound) {
                lo = std::max(lo, target + unit);
                break;
              }
              if (Clock::now() >= deadline) break;
            }
            if (lo >= best_height || Clock::now() >= deadline) break;
          }
          if (cap_pending && lo > cap_target) cap_pending = false;
          node_limit *= 2;
        }
      }
      // Heights of canonical placements are multiples of `unit`, and every placement compacts
      // down to a canonical one, so `lo` bounds every height (in aligned sizes).
      proven_bound = std::max(proven_bound, std::min(lo, best_height));
    } else {
      // Too large for the branch and bound: large-neighbourhood search around the peak.
      if (items.count() > 1) {
        if (PeakSearch(items, deadline, options.seed, best, best_height)) {
          plan.method = "search:peak";
        }
      }
    }
  }

  plan.offsets = ToBufferOffsets(items, buffers.size(), best);
  plan.height = PlacementHeight(buffers, plan.offsets);
  plan.within_capacity = options.capacity == 0 || plan.height <= options.capacity;
  // With alignment > 1 the bound is on aligned sizes; only LOAD bounds the raw height.
  plan.lower_bound = options.alignment == 1 ? std::max(plan.load, proven_bound) : plan.load;
  plan.lower_bound = std::min(plan.lower_bound, plan.height);
  plan.proven_optimal = plan.height <= plan.lower_bound;
  return plan;
}

}  // namespace policy
}  // namespace accelmem
