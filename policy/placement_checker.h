// Static buffer placement instances and an independent checker for their placements.
//
// A placement instance is a list of buffers, each live over a half-open interval of steps
// [start, end) and `size` bytes large. A placement gives each buffer a byte offset; it is valid
// when no two buffers whose lifetimes intersect overlap in address, every offset is a multiple of
// the alignment, and (optionally) every buffer ends at or below a capacity. LOAD, the largest total
// size of the buffers live at one step, is a lower bound on the height (highest offset + size) of
// any placement.
//
// Why a separate target: the checker must not share code with any planner (it is the proof that a
// planner is right), and it knows nothing about any IR, so the memory pipeline's
// `verify_memory_plan`, the `place` tool and the planner tests can all use the same rules. It runs
// in O(n log n) with a sweep over time, so it can check every placement, even of 60k+ buffers.
#ifndef ACCELMEM_POLICY_PLACEMENT_CHECKER_H_
#define ACCELMEM_POLICY_PLACEMENT_CHECKER_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace accelmem {
namespace policy {

// One buffer of a placement instance. `id` only names the buffer in messages.
struct PlacementBuffer {
  std::string id;
  int64_t start = 0;  // First step at which the buffer is live.
  int64_t end = 0;    // First step at which it is dead again (half-open; start <= end).
  int64_t size = 0;   // Bytes (>= 0).
};

// Limits a placement must respect beyond pairwise disjointness.
struct PlacementLimits {
  int64_t alignment = 1;  // Every offset must be a multiple of this (>= 1).
  int64_t capacity = 0;   // offset + size <= capacity for every buffer; 0 means unbounded.
};

// Largest total size that any placement can reach; instances above it are rejected, so that sums
// of sizes and offsets never overflow int64_t.
inline constexpr int64_t kMaxPlacementBytes = int64_t{1} << 60;

// Most buffers an instance may have: the planner numbers items, and each item's start and end
// time point, with `int`.
inline constexpr size_t kMaxPlacementBuffers = size_t{1} << 30;

// True if the two half-open lifetimes share at least one step. Empty lifetimes intersect nothing.
inline bool LifetimesIntersect(const PlacementBuffer& a, const PlacementBuffer& b) {
  return a.start < a.end && b.start < b.end && a.start < b.end && b.start < a.end;
}

// Checks that the instance itself is well formed: at most kMaxPlacementBuffers buffers,
// start <= end, size >= 0, alignment >= 1, capacity >= 0, and the sum of all sizes (each rounded
// up to the alignment) is at most kMaxPlacementBytes. Errors name the offending buffer.
absl::Status ValidateInstance(absl::Span<const PlacementBuffer> buffers,
                              const PlacementLimits& limits = {});

// Validates `offsets` (one per buffer, same order) against the instance: the instance is valid,
// offsets are >= 0 and aligned, buffers that take space (size > 0, non-empty lifetime) fit under
// the capacity, and no two buffers whose lifetimes intersect overlap in [offset, offset + size).
// Zero-size buffers and empty lifetimes never conflict. Returns the first violation found as
// InvalidArgument, naming both buffers (id and index), their lifetimes and their address ranges.
// O(n log n).
absl::Status CheckPlacement(absl::Span<const PlacementBuffer> buffers,
                            absl::Span<const int64_t> offsets, const PlacementLimits& limits = {});

// LOAD: the maximum over steps of the total size of the buffers live at that step (0 if none).
// Sizes are used as given (not rounded up to an alignment). The instance must be valid.
int64_t ComputeLoad(absl::Span<const PlacementBuffer> buffers);

// Height of a placement: max(offset + size) over buffers with a non-empty lifetime and size > 0
// (0 if there are none). `offsets` must have one entry per buffer.
int64_t PlacementHeight(absl::Span<const PlacementBuffer> buffers,
                        absl::Span<const int64_t> offsets);

}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_PLACEMENT_CHECKER_H_
