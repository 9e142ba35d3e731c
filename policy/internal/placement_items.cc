#include "policy/internal/placement_items.h"

#include <algorithm>
#include <numeric>

namespace accelmem {
namespace policy {
namespace internal {

namespace {

// Below this many entries a comparison sort beats the radix sort's histograms.
constexpr size_t kMinRadixEntries = 512;
constexpr int kDigitBits = 11;

}  // namespace

int BitsFor(uint64_t max_value) {
  int bits = 1;
  while (bits < 64 && (max_value >> bits) != 0) ++bits;
  return bits;
}

void SortByKey(std::vector<KeyedIndex>& keyed, std::vector<KeyedIndex>& spare, int key_bits) {
  const size_t n = keyed.size();
  if (n < kMinRadixEntries) {
    std::sort(keyed.begin(), keyed.end(), [](const KeyedIndex& a, const KeyedIndex& b) {
      return a.key != b.key ? a.key < b.key : a.index < b.index;
    });
    return;
  }
  // LSD radix sort, stable: `keyed` starts in index order, so ties stay in index order. All
  // digit histograms in one pass; a digit equal in every key is skipped.
  const int passes = (key_bits + kDigitBits - 1) / kDigitBits;
  constexpr size_t kBuckets = size_t{1} << kDigitBits;
  std::vector<uint32_t> count(static_cast<size_t>(passes) * kBuckets, 0);
  for (const KeyedIndex& k : keyed) {
    for (int p = 0; p < passes; ++p) {
      ++count[p * kBuckets + ((k.key >> (p * kDigitBits)) & (kBuckets - 1))];
    }
  }
  spare.resize(n);
  for (int p = 0; p < passes; ++p) {
    uint32_t* c = &count[p * kBuckets];
    const uint64_t first_digit = (keyed[0].key >> (p * kDigitBits)) & (kBuckets - 1);
    if (c[first_digit] == n) continue;
    uint32_t sum = 0;
    for (size_t b = 0; b < kBuckets; ++b) {
      const uint32_t here = c[b];
      c[b] = sum;
      sum += here;
    }
    for (const KeyedIndex& k : keyed) {
      spare[c[(k.key >> (p * kDigitBits)) & (kBuckets - 1)]++] = k;
    }
    keyed.swap(spare);
  }
}

Items MakeItems(absl::Span<const PlacementBuffer> buffers, int64_t alignment) {
  Items items;
  int64_t first_time = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const PlacementBuffer& b = buffers[i];
    if (b.size == 0 || b.start >= b.end) continue;
    first_time = items.buffer.empty() ? b.start : std::min(first_time, b.start);
    items.buffer.push_back(static_cast<int>(i));
    items.size.push_back(RoundUp(b.size, alignment));
    items.start.push_back(b.start);
    items.end.push_back(b.end);
  }
  const int n = items.count();
  // Sections: the distinct start and end times, in order. One radix sort of every time point
  // (its offset from the first start: exact in unsigned arithmetic), tagged 2 i for item i's
  // start and 2 i + 1 for its end, numbers the sections without a search per item.
  std::vector<KeyedIndex> points(2 * static_cast<size_t>(n));
  std::vector<KeyedIndex> spare;
  uint64_t last_point = 0;
  for (int i = 0; i < n; ++i) {
    const uint64_t start =
        static_cast<uint64_t>(items.start[i]) - static_cast<uint64_t>(first_time);
    const uint64_t end = static_cast<uint64_t>(items.end[i]) - static_cast<uint64_t>(first_time);
    points[2 * i] = {start, 2 * i};
    points[2 * i + 1] = {end, 2 * i + 1};
    last_point = std::max(last_point, end);
  }
  SortByKey(points, spare, BitsFor(last_point));
  items.lo.resize(n);
  items.hi.resize(n);
  int time_index = -1;
  for (size_t k = 0; k < points.size(); ++k) {
    if (k == 0 || points[k].key != points[k - 1].key) ++time_index;
    const int i = points[k].index >> 1;
    (points[k].index & 1 ? items.hi : items.lo)[i] = time_index;
  }
  items.num_sections = std::max(time_index, 0);
  int64_t unit = 0;
  std::vector<int64_t> delta(static_cast<size_t>(time_index) + 2, 0);
  for (int i = 0; i < n; ++i) {
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

}  // namespace internal
}  // namespace policy
}  // namespace accelmem
