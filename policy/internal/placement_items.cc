#include "policy/internal/placement_items.h"

#include <algorithm>
#include <numeric>

namespace accelmem {
namespace policy {
namespace internal {

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
