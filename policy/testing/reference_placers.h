// Textbook greedy placement rules of production compilers, written plainly (O(n^2)) and
// independently of //policy:lifetime_planner, as baselines for tests and benchmarks.
//
// Each rule sorts the buffers with its own keys, then places them one at a time against the
// already placed buffers whose lifetimes intersect (half-open [start, end)):
//  - kTfliteArena: TFLite's ArenaPlanner (tensorflow/lite/arena_planner.cc) with
//    SimpleMemoryArena::Allocate (simple_memory_arena.cc): buffers live over the whole trace
//    first, by index; the others by size descending, then earlier start (ties: index). Best fit:
//    walking the overlapping buffers by offset, the smallest gap that holds the buffer, the
//    lowest on ties; else the top.
//  - kTfliteMicroFirstFit: TFLite Micro's GreedyMemoryPlanner (greedy_memory_planner.cc): size
//    descending (ties: index), first fit: the lowest gap that holds the buffer, else the top.
//  - kXlaSpatial / kXlaTemporal: XLA's GlobalDecreasingSizeBestFitHeap
//    (xla/service/heap_simulator/heap_simulator.cc): kSpatial sorts by size descending, then
//    live-range length descending; kTemporal by length, then size (ties: buffer id, here the
//    index). It builds the free chunks (the complement of the overlapping buffers, the last one
//    unbounded) and takes the smallest chunk that holds the buffer, the lowest on ties.
//  - kArea: size * lifetime descending, then size (ties: index), best fit.
//  - kStart: earlier start, then larger size, then longer lifetime (ties: index), best fit: what
//    an online allocator with a best-fit free list does.
// Buffers with size 0 or an empty lifetime take no space: offset 0, skipped by every rule.
//
// References: https://github.com/tensorflow/tensorflow/blob/master/tensorflow/lite/arena_planner.cc
// https://github.com/tensorflow/tflite-micro (tensorflow/lite/micro/memory_planner),
// https://github.com/openxla/xla/blob/main/xla/service/heap_simulator/heap_simulator.cc
#ifndef ACCELMEM_POLICY_TESTING_REFERENCE_PLACERS_H_
#define ACCELMEM_POLICY_TESTING_REFERENCE_PLACERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "policy/placement_checker.h"

namespace accelmem {
namespace policy_testing {

enum class ReferenceRule {
  kTfliteArena,
  kTfliteMicroFirstFit,
  kXlaSpatial,
  kXlaTemporal,
  kArea,
  kStart,
};

const char* ReferenceRuleName(ReferenceRule rule);

// Every rule above, in declaration order.
const std::vector<ReferenceRule>& AllReferenceRules();

// One offset per buffer (same order). The instance must be valid (policy::ValidateInstance).
std::vector<int64_t> ReferencePlace(absl::Span<const policy::PlacementBuffer> buffers,
                                    ReferenceRule rule);

struct ReferenceResult {
  ReferenceRule rule = ReferenceRule::kTfliteArena;
  std::vector<int64_t> offsets;
  int64_t height = 0;
};

// The lowest placement over AllReferenceRules() (the first rule listed on ties).
ReferenceResult BestReference(absl::Span<const policy::PlacementBuffer> buffers);

// Pairwise O(n^2) check that no two buffers live at the same step overlap in address and that no
// offset is negative; returns the first offending pair's indices as "i,j", or "" if valid. Shares
// nothing with policy::CheckPlacement, so each proves the other.
std::string FindOverlap(absl::Span<const policy::PlacementBuffer> buffers,
                        absl::Span<const int64_t> offsets);

}  // namespace policy_testing
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_TESTING_REFERENCE_PLACERS_H_
