#include "policy/internal/peak_search.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <utility>

#include "policy/greedy_order.h"
#include "policy/internal/best_fit.h"

namespace accelmem {
namespace policy {
namespace internal {

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

}  // namespace internal
}  // namespace policy
}  // namespace accelmem
