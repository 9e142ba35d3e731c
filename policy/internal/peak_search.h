// Large-neighbourhood search around the peaks of a placement, for instances too large for the
// branch and bound.
#ifndef ACCELMEM_POLICY_INTERNAL_PEAK_SEARCH_H_
#define ACCELMEM_POLICY_INTERNAL_PEAK_SEARCH_H_

#include <cstdint>
#include <vector>

#include "policy/internal/placement_items.h"

namespace accelmem {
namespace policy {
namespace internal {

// Large-neighbourhood search for instances too large for the branch and bound. The height of a
// placement is decided by the few buffers whose top reaches it, in a few peak windows of time.
// Each round takes one such buffer, frees every buffer whose lifetime lies inside a time window
// around it (a random margin on each side), keeps every other buffer where it is (those live in
// the window become fixed obstacles) and re-places the freed buffers by best fit in one of the
// greedy orders or in their current bottom-up order with the peak buffer moved earlier. A round
// costs O(k log k) in the k buffers live in the window plus an O(n) scan, not a best-fit pass over
// the instance. A result is kept when the height drops, or stays and fewer
// buffers reach it (so the peaks are flattened one by one); the search stops at LOAD or at
// `deadline`. `best` holds one offset per item and `best_height` its height, both updated in
// place. Returns true if it lowered `best_height`.
bool PeakSearch(const Items& items, Clock::time_point deadline, uint64_t seed,
                std::vector<int64_t>& best, int64_t& best_height);

}  // namespace internal
}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_INTERNAL_PEAK_SEARCH_H_
