// Test support for the constrained planner's libraries: hand-made pools of one capacity.
#ifndef ACCELMEM_POLICY_INTERNAL_CONSTRAINED_POOL_TESTING_H_
#define ACCELMEM_POLICY_INTERNAL_CONSTRAINED_POOL_TESTING_H_

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "policy/internal/constrained_model.h"

namespace accelmem {
namespace policy {
namespace internal {

// A pool of `capacity` bytes; items conflict when they live together, or when Separate says so.
struct PoolBuilder {
  PoolModel m;
  std::vector<std::pair<int, int>> separations;
  explicit PoolBuilder(uint64_t capacity) {
    m.capacity = capacity;
    m.has_capacity = true;
  }
  int Add(uint64_t extent, int64_t lower, int64_t upper, uint64_t alignment = 1) {
    Item item;
    item.buffers = {static_cast<int>(m.items.size())};
    item.extent = extent;
    item.alignment = alignment;
    item.intervals = {{lower, upper}};
    m.items.push_back(item);
    return static_cast<int>(m.items.size()) - 1;
  }
  int Pin(uint64_t extent, int64_t lower, int64_t upper, uint64_t offset, uint64_t alignment = 1) {
    const int i = Add(extent, lower, upper, alignment);
    m.items[i].pinned = true;
    m.items[i].pin_offset = offset;
    return i;
  }
  void Reserve(uint64_t begin, uint64_t end) {
    m.reserved.push_back({begin, end});
    m.reserved_total += end - begin;
    m.reserved_end = std::max(m.reserved_end, end);
  }
  void Separate(int i, int j) { separations.push_back({i, j}); }
  void Penalty(int i, int j, uint64_t cost) {
    Size();
    m.weight[i][j] = m.weight[j][i] = cost;
  }
  PoolModel Build() {
    Size();
    const size_t n = m.items.size();
    m.conflict.assign(n, std::vector<uint8_t>(n, 0));
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) {
        if (i != j && IntervalsOverlap(m.items[i].intervals, m.items[j].intervals)) {
          m.conflict[i][j] = 1;
        }
      }
    }
    for (const auto& [i, j] : separations) m.conflict[i][j] = m.conflict[j][i] = 1;
    IndexPairs(&m);
    return m;
  }

 private:
  void Size() {
    const size_t n = m.items.size();
    if (m.weight.size() != n) m.weight.resize(n);
    for (auto& row : m.weight) row.resize(n, 0);
  }
};

}  // namespace internal
}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_INTERNAL_CONSTRAINED_POOL_TESTING_H_
