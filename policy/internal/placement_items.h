// The planner's view of a placement instance: the buffers that take space, with aligned sizes
// and time compressed to sections, and the helpers every placement method shares.
#ifndef ACCELMEM_POLICY_INTERNAL_PLACEMENT_ITEMS_H_
#define ACCELMEM_POLICY_INTERNAL_PLACEMENT_ITEMS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "policy/placement_checker.h"

namespace accelmem {
namespace policy {
namespace internal {

// The clock of search budgets and deadlines.
using Clock = std::chrono::steady_clock;

// `value` rounded up to a multiple of `alignment` (>= 1); `value` >= 0.
inline int64_t RoundUp(int64_t value, int64_t alignment) {
  const int64_t rem = value % alignment;
  return rem == 0 ? value : value + (alignment - rem);
}

// The buffers that take part in placement (size > 0, non-empty lifetime), with sizes rounded up
// to the alignment and time compressed to sections: section k is [times[k], times[k + 1]).
struct Items {
  std::vector<int> buffer;    // Item -> index of the input buffer.
  std::vector<int64_t> size;  // Aligned size.
  std::vector<int64_t> start, end;
  std::vector<int> lo, hi;  // Sections spanned: [lo, hi).
  int num_sections = 0;
  int64_t load = 0;  // LOAD of the aligned sizes: a lower bound on any aligned placement.
  int64_t unit = 1;  // gcd of the aligned sizes: every canonical height is a multiple of it.

  int count() const { return static_cast<int>(buffer.size()); }
};

// An index with a 64-bit sort key.
struct KeyedIndex {
  uint64_t key;
  int index;
};

// Sorts `keyed`, which must be in increasing index order, by (key, index); every key is below
// 2^key_bits. A stable LSD radix sort (a comparison sort below a few hundred entries); `spare`
// is its scratch.
void SortByKey(std::vector<KeyedIndex>& keyed, std::vector<KeyedIndex>& spare, int key_bits);

// Bits needed to hold every value in [0, max_value] (at least 1).
int BitsFor(uint64_t max_value);

// The items of `buffers` (a valid instance for `alignment`), in input order.
Items MakeItems(absl::Span<const PlacementBuffer> buffers, int64_t alignment);

// Maps per-item offsets back to per-buffer offsets (0 for buffers that take no space).
std::vector<int64_t> ToBufferOffsets(const Items& items, size_t num_buffers,
                                     const std::vector<int64_t>& item_offsets);

// max(offset + size) over the items.
int64_t ItemHeight(const Items& items, const std::vector<int64_t>& item_offsets);

}  // namespace internal
}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_INTERNAL_PLACEMENT_ITEMS_H_
