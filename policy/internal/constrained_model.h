// The pool model of //policy:constrained_planner (not a public API): one pool of a schema-v1
// problem (policy/dsa_problem.h) as items, its colocation classes, with every constraint
// resolved to item pairs. The bounds (constrained_bounds.h) and the search
// (constrained_search.h) read only this model, never the problem, so both are tested on
// hand-made pools.
#ifndef ACCELMEM_POLICY_INTERNAL_CONSTRAINED_MODEL_H_
#define ACCELMEM_POLICY_INTERNAL_CONSTRAINED_MODEL_H_

#include <cstdint>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/dsa_problem.h"

namespace accelmem {
namespace policy {
namespace internal {

// The capacity of a pool without one: large enough never to bind, small enough that sums of a
// few extents and it do not overflow.
constexpr uint64_t kNoCapacity = std::numeric_limits<uint64_t>::max() / 4;
constexpr uint64_t kInfinity = std::numeric_limits<uint64_t>::max();

// Do two lists of half-open live intervals share a time?
bool IntervalsOverlap(const std::vector<DsaInterval>& a, const std::vector<DsaInterval>& b);

// Do [a, a + ea) and [b, b + eb) share a byte?
inline bool Overlap(uint64_t a, uint64_t ea, uint64_t b, uint64_t eb) {
  return a < b + eb && b < a + ea;
}

// A colocation class of one pool: the buffers that share one offset, placed as one item.
struct Item {
  std::vector<int> buffers;            // Indices into problem.buffers.
  uint64_t extent = 0;                 // Largest size of the class: what it occupies.
  uint64_t alignment = 1;              // Largest alignment of the class.
  std::vector<DsaInterval> intervals;  // Members' intervals, by lower end.
  bool pinned = false;
  uint64_t pin_offset = 0;
  bool exclusive = false;  // Pinned exclusive_for_all_time: conflicts with every other item.
};

// One pool's placement problem, with constraints resolved to item pairs.
struct PoolModel {
  int pool_index = 0;
  uint64_t capacity = kNoCapacity;
  bool has_capacity = false;
  std::vector<DsaAddressRange> reserved;  // Sorted, merged.
  uint64_t reserved_total = 0;
  uint64_t reserved_end = 0;
  std::vector<Item> items;
  std::vector<std::vector<uint8_t>> conflict;  // Must not overlap in address.
  std::vector<std::vector<uint64_t>> weight;   // Penalty if they overlap (0 if conflict).
  // Derived by IndexPairs from the two matrices above.
  std::vector<std::vector<int>> conflicts_of;
  std::vector<std::vector<std::pair<int, uint64_t>>> penalties_of;
  bool any_penalty = false;
  // Pairs of items (i < j) whose conflict comes only from pipeline_stage separations.
  std::set<std::pair<int, int>> pipeline_only;
  // Exact-or-disjoint pairs (problem.extensions) of items (i < j) that do not conflict: they may
  // overlap only from the same offset. (A conflicting pair never overlaps: it is left out.)
  std::set<std::pair<int, int>> exact_pairs;
  // Derived by IndexPairs from exact_pairs: each item's partners, and the items connected to it
  // through pairs (its exact group: -1 when it has no partner) with the group's members and
  // distinct alignments, ascending. Items at one base move as one, by the group's largest
  // alignment: the search's candidate offsets need that alignment (constrained_search.h).
  std::vector<std::vector<int>> exact_of;
  std::vector<int> exact_group;
  std::vector<std::vector<int>> exact_members;
  std::vector<std::vector<uint64_t>> exact_alignments;
};

// Derives conflicts_of, penalties_of and any_penalty from the conflict and weight matrices; a
// conflicting pair's weight becomes 0 (it can never be paid). Derives the exact_* fields from
// exact_pairs, dropping the pairs that conflict.
void IndexPairs(PoolModel* m);

// The model of pool `pool_index` holding `buffers` (indices into problem.buffers; every
// colocation class lies wholly inside one pool). A class pinned at two offsets or a separation
// inside a class is an error: no placement exists. An exact-or-disjoint pair inside a class
// always holds (one offset) and is dropped.
absl::StatusOr<PoolModel> BuildPoolModel(const DsaProblem& problem, int pool_index,
                                         const std::vector<int>& buffers);

// The pool holding only `items` (indices into m.items, ascending), with the same capacity,
// reserved ranges and pairs between them. Every placement of `m` restricted to `items` is one
// of it.
PoolModel RestrictModel(const PoolModel& m, const std::vector<int>& items);

// Bytes of the capacity outside the reserved ranges (kNoCapacity without a capacity).
uint64_t UsableCapacity(const PoolModel& m);

// Sum of the items' extents.
uint64_t TotalExtent(const PoolModel& m, const std::vector<int>& items);

// The items live at one time: the live-set sweep of the bounds (cliques of items live
// together) and of the search (what must fit above a floor).
struct LiveSet {
  int64_t time = 0;
  std::vector<int> items;  // Ascending.
};

// The items live at each distinct lower end of an interval, in time order (the live sets only
// grow at those times, so every largest one is among them).
std::vector<LiveSet> LiveSets(const PoolModel& m);

// The root of `x` in a union-find forest, halving paths.
int FindRoot(std::vector<int>& parent, int x);

}  // namespace internal
}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_INTERNAL_CONSTRAINED_MODEL_H_
