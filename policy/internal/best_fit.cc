#include "policy/internal/best_fit.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

namespace accelmem {
namespace policy {
namespace internal {

int64_t BestFitPlacer::Run(const std::vector<int>& order, std::vector<int64_t>& offsets,
                           int64_t limit, bool first_fit,
                           const std::vector<std::pair<int, int64_t>>* fixed) {
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
    runs_.clear();
    tree_.QueryAndRetire(items_.lo[i], items_.hi[i], runs_);
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

inline void BestFitPlacer::PoolTinyRuns() {
  tiny_.clear();
  size_t kept = 0;
  for (const IntervalRun& r : runs_) {
    if (r.size > kTinyRun) {
      runs_[kept++] = r;
      continue;
    }
    for (uint32_t k = 0; k < r.size; ++k) {
      const Interval iv = r.data[k];
      size_t j = tiny_.size();
      tiny_.push_back(iv);
      for (; j > 0 && tiny_[j - 1].begin > iv.begin; --j) tiny_[j] = tiny_[j - 1];
      tiny_[j] = iv;
    }
  }
  runs_.resize(kept);
  if (!tiny_.empty()) runs_.push_back({tiny_.data(), static_cast<uint32_t>(tiny_.size())});
}

inline int64_t BestFitPlacer::BestGap(int64_t size, bool first_fit) {
  PoolTinyRuns();
  // Largest first, so the two smallest are at the back (few lists: insertion sort).
  for (size_t k = 1; k < runs_.size(); ++k) {
    const IntervalRun r = runs_[k];
    size_t j = k;
    for (; j > 0 && runs_[j - 1].size < r.size; --j) runs_[j] = runs_[j - 1];
    runs_[j] = r;
  }
  // Merge outputs are carved from one buffer: each merge writes at most the sum of its inputs,
  // and there are runs - 2 merges, so (runs - 2) * total intervals bounds the whole.
  if (runs_.size() > 2) {
    size_t total = 0;
    for (const IntervalRun& r : runs_) total += r.size;
    const size_t bound = (runs_.size() - 2) * total;
    if (scratch_.size() < bound) scratch_.resize(bound);
  }
  Interval* out = scratch_.data();
  while (runs_.size() > 2) {
    const IntervalRun x = runs_.back();
    runs_.pop_back();
    const IntervalRun y = runs_.back();
    runs_.pop_back();
    Interval* const end = MergeRuns(x.data, x.data + x.size, y.data, y.data + y.size, out);
    const IntervalRun r{out, static_cast<uint32_t>(end - out)};
    out = end;
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

inline Interval* BestFitPlacer::MergeRuns(const Interval* a, const Interval* a_end,
                                          const Interval* b, const Interval* b_end, Interval* out) {
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

int64_t SweepBestFit(const Items& items, const std::vector<int>& order,
                     std::vector<int64_t>& offsets, int64_t limit) {
  offsets.assign(items.count(), 0);
  std::map<int64_t, int64_t> live;             // Offset -> end address of live buffers.
  std::set<std::pair<int64_t, int64_t>> gaps;  // (length, offset) of gaps between them.
  // The items by end section: those ending at or before a start are freed first. In start order
  // every one of them is placed already (it starts before it ends).
  const int n = items.count();
  std::vector<KeyedIndex> by_end(n), spare;
  for (int j = 0; j < n; ++j) by_end[j] = {static_cast<uint64_t>(items.hi[j]), j};
  SortByKey(by_end, spare, BitsFor(static_cast<uint64_t>(items.num_sections)));
  int freed = 0;
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
    while (freed < n && items.hi[by_end[freed].index] <= items.lo[i]) {
      remove(by_end[freed++].index);
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
    height = std::max(height, offset + size);
    if (height > limit) return height;
  }
  return height;
}

namespace {

// OrderItems() by comparing the keys themselves: for instances too large for ItemOrderer's
// packed ranks.
std::vector<int> OrderItemsByComparison(const Items& items, GreedyOrder order) {
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

// Above this many items, ranks take more than 21 bits and three do not pack into 64.
constexpr int kMaxPackedItems = 1 << 21;
}  // namespace

std::vector<int> OrderItems(const Items& items, GreedyOrder order) {
  ItemOrderer orderer(items);
  return orderer.Order(order);
}

void ItemOrderer::SortKeyed(int key_bits) {
  SortByKey(keyed_, spare_, key_bits);
  order_.resize(keyed_.size());
  for (size_t k = 0; k < keyed_.size(); ++k) order_[k] = keyed_[k].index;
}

const std::vector<uint32_t>& ItemOrderer::Ranks(Field field) {
  std::vector<uint32_t>& ranks = ranks_[field];
  const int n = items_.count();
  if (static_cast<int>(ranks.size()) == n) return ranks;
  ranks.resize(n);
  keyed_.resize(n);
  bool packed = true;
  if (field == kAreaRank) {
    // Areas are below 2^126; they pack into 64 bits when the largest size and lifetime do.
    uint64_t max_size = 0, max_length = 0, product = 0;
    for (int i = 0; i < n; ++i) {
      max_size = std::max<uint64_t>(max_size, items_.size[i]);
      max_length = std::max<uint64_t>(max_length, items_.end[i] - items_.start[i]);
    }
    packed = !__builtin_mul_overflow(max_size, max_length, &product);
  }
  if (packed) {
    uint64_t max_key = 0;
    for (int i = 0; i < n; ++i) {
      uint64_t key = 0;
      switch (field) {
        case kSizeRank:
          key = static_cast<uint64_t>(items_.size[i]);
          break;
        case kLengthRank:
          key = static_cast<uint64_t>(items_.end[i] - items_.start[i]);
          break;
        case kStartRank:
          key = static_cast<uint64_t>(items_.start[i]) ^ (uint64_t{1} << 63);  // Signed order.
          break;
        case kAreaRank:
          key = static_cast<uint64_t>(items_.size[i]) *
                static_cast<uint64_t>(items_.end[i] - items_.start[i]);
          break;
        case kNumFields:
          break;
      }
      keyed_[i] = {key, i};
      max_key = std::max(max_key, key);
    }
    SortKeyed(BitsFor(max_key));
  } else {
    order_.resize(n);
    std::iota(order_.begin(), order_.end(), 0);
    auto area = [this](int i) {
      return static_cast<__int128>(items_.size[i]) * (items_.end[i] - items_.start[i]);
    };
    std::sort(order_.begin(), order_.end(), [&](int a, int b) { return area(a) < area(b); });
    // Equal areas get equal ranks below, so the order among them does not matter.
  }
  uint32_t rank = 0;
  for (int k = 0; k < n; ++k) {
    const int i = order_[k];
    if (k > 0) {
      const int prev = order_[k - 1];
      bool same;
      if (packed) {
        same = keyed_[k].key == keyed_[k - 1].key;
      } else {
        same = static_cast<__int128>(items_.size[i]) * (items_.end[i] - items_.start[i]) ==
               static_cast<__int128>(items_.size[prev]) * (items_.end[prev] - items_.start[prev]);
      }
      if (!same) ++rank;
    }
    ranks[i] = rank;
  }
  max_rank_[field] = rank;
  return ranks;
}

const std::vector<int>& ItemOrderer::Order(GreedyOrder order) {
  const int n = items_.count();
  if (n > kMaxPackedItems) {
    order_ = OrderItemsByComparison(items_, order);
    return order_;
  }
  // Larger-first keys use max_rank - rank. Every rank is at most n - 1 < 2^21, so fits `b` bits.
  const int b = BitsFor(static_cast<uint64_t>(std::max(n - 1, 0)));
  auto desc = [this](Field f, int i) { return static_cast<uint64_t>(max_rank_[f] - ranks_[f][i]); };
  auto asc = [this](Field f, int i) { return static_cast<uint64_t>(ranks_[f][i]); };
  int key_bits = 0;
  switch (order) {
    case GreedyOrder::kSize:
    case GreedyOrder::kLifetime:
    case GreedyOrder::kStart:
    case GreedyOrder::kWholeThenSize:
    case GreedyOrder::kSizeFirstFit:
      Ranks(kSizeRank);
      break;
    case GreedyOrder::kArea:
      Ranks(kSizeRank);
      Ranks(kAreaRank);
      break;
  }
  if (order != GreedyOrder::kSizeFirstFit && order != GreedyOrder::kArea &&
      order != GreedyOrder::kWholeThenSize) {
    Ranks(kLengthRank);
  }
  if (order == GreedyOrder::kStart || order == GreedyOrder::kWholeThenSize) Ranks(kStartRank);
  int64_t first_start = std::numeric_limits<int64_t>::max();
  int64_t last_end = std::numeric_limits<int64_t>::min();
  if (order == GreedyOrder::kWholeThenSize) {
    for (int i = 0; i < n; ++i) {
      first_start = std::min(first_start, items_.start[i]);
      last_end = std::max(last_end, items_.end[i]);
    }
  }
  keyed_.resize(n);
  for (int i = 0; i < n; ++i) {
    uint64_t key = 0;
    switch (order) {
      case GreedyOrder::kSize:
        key = desc(kSizeRank, i) << b | desc(kLengthRank, i);
        key_bits = 2 * b;
        break;
      case GreedyOrder::kArea:
        key = desc(kAreaRank, i) << b | desc(kSizeRank, i);
        key_bits = 2 * b;
        break;
      case GreedyOrder::kLifetime:
        key = desc(kLengthRank, i) << b | desc(kSizeRank, i);
        key_bits = 2 * b;
        break;
      case GreedyOrder::kStart:
        key = asc(kStartRank, i) << 2 * b | desc(kSizeRank, i) << b | desc(kLengthRank, i);
        key_bits = 3 * b;
        break;
      case GreedyOrder::kWholeThenSize:
        // Whole-trace buffers first, by index (key 0); then size desc, start asc.
        key = items_.start[i] == first_start && items_.end[i] == last_end
                  ? 0
                  : uint64_t{1} << 2 * b | desc(kSizeRank, i) << b | asc(kStartRank, i);
        key_bits = 2 * b + 1;
        break;
      case GreedyOrder::kSizeFirstFit:
        key = desc(kSizeRank, i);
        key_bits = b;
        break;
    }
    keyed_[i] = {key, i};
  }
  SortKeyed(key_bits);
  return order_;
}

}  // namespace internal
}  // namespace policy
}  // namespace accelmem
