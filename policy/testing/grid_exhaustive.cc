#include "policy/testing/grid_exhaustive.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <vector>

namespace accelmem {
namespace policy_testing {

using policy::DsaBuffer;
using policy::DsaProblem;

namespace {

bool LiveTogether(const DsaBuffer& a, const DsaBuffer& b) {
  for (const policy::DsaInterval& x : a.live_intervals) {
    for (const policy::DsaInterval& y : b.live_intervals) {
      if (x.lower < y.upper && y.lower < x.upper) return true;
    }
  }
  return false;
}

}  // namespace

GridSearchResult LeastReuseOnGrid(const DsaProblem& problem, uint32_t pool_id) {
  GridSearchResult out;
  const policy::DsaPool* pool = nullptr;
  for (const policy::DsaPool& p : problem.pools) {
    if (p.id == pool_id) pool = &p;
  }
  if (pool == nullptr || !pool->capacity || !pool->reserved_ranges.empty()) {
    out.message = "needs a known pool with a capacity and no reserved range";
    return out;
  }
  if (!problem.constraints.colocations.empty() || !problem.constraints.pinned_allocations.empty() ||
      !problem.constraints.temporal_exclusions.empty() ||
      !problem.extensions.exact_or_disjoint.empty()) {
    out.message =
        "colocations, pins, temporal exclusions and exact_or_disjoint pairs are not handled";
    return out;
  }
  std::vector<const DsaBuffer*> buffers;
  for (const DsaBuffer& b : problem.buffers) {
    if (b.allowed_pools.size() != 1) {
      out.message = "a buffer allowed in several pools";
      return out;
    }
    if (b.allowed_pools[0] == pool_id) buffers.push_back(&b);
  }
  uint64_t grid = *pool->capacity;
  for (const DsaBuffer* b : buffers) grid = std::gcd(grid, b->size);
  for (const DsaBuffer* b : buffers) {
    if (grid % b->alignment != 0) {
      out.message = "an alignment that does not divide the grid";
      return out;
    }
  }
  out.supported = true;
  out.grid = grid;
  const size_t n = buffers.size();
  auto index_of = [&](uint32_t id) -> int {
    for (size_t i = 0; i < n; ++i) {
      if (buffers[i]->id == id) return static_cast<int>(i);
    }
    return -1;
  };
  // conflict[i][j]: may not share a byte; cost[i][j]: paid when they do.
  std::vector<std::vector<uint8_t>> conflict(n, std::vector<uint8_t>(n, 0));
  std::vector<std::vector<uint64_t>> cost(n, std::vector<uint64_t>(n, 0));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (i != j && LiveTogether(*buffers[i], *buffers[j])) conflict[i][j] = 1;
    }
  }
  for (const policy::DsaSeparation& s : problem.constraints.separations) {
    const int i = index_of(s.first), j = index_of(s.second);
    if (i >= 0 && j >= 0) conflict[i][j] = conflict[j][i] = 1;
  }
  if (problem.cost_model) {
    for (const policy::DsaReusePenalty& e : problem.cost_model->reuse_penalties) {
      const int i = index_of(e.first), j = index_of(e.second);
      if (i < 0 || j < 0 || conflict[i][j]) continue;  // A live pair never pays: never overlaps.
      cost[i][j] += e.cost;
      cost[j][i] += e.cost;
    }
  }
  // Most constrained first: the most conflicts and costs, largest first.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto degree = [&](size_t i) {
    uint64_t d = 0;
    for (size_t j = 0; j < n; ++j) d += conflict[i][j] * 1000 + cost[i][j];
    return d;
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a]->size != buffers[b]->size) return buffers[a]->size > buffers[b]->size;
    return degree(a) > degree(b);
  });
  const uint64_t slots = *pool->capacity / grid;
  std::vector<uint64_t> at(n, 0);  // Slot of each placed buffer (by position in `order`).
  uint64_t best = UINT64_MAX;
  std::function<void(size_t, uint64_t)> dfs = [&](size_t k, uint64_t paid) {
    ++out.nodes;
    if (paid >= best) return;
    if (k == n) {
      best = paid;
      return;
    }
    const size_t i = order[k];
    const uint64_t width = buffers[i]->size / grid;
    for (uint64_t s = 0; s + width <= slots; ++s) {
      uint64_t extra = 0;
      bool ok = true;
      for (size_t q = 0; q < k && ok; ++q) {
        const size_t j = order[q];
        const uint64_t other = buffers[j]->size / grid;
        const bool overlap = s < at[q] + other && at[q] < s + width;
        if (!overlap) continue;
        if (conflict[i][j]) ok = false;
        extra += cost[i][j];
      }
      if (!ok) continue;
      at[k] = s;
      dfs(k + 1, paid + extra);
    }
  };
  dfs(0, 0);
  if (best != UINT64_MAX) out.least = best;
  return out;
}

}  // namespace policy_testing
}  // namespace accelmem
