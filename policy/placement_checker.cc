#include "policy/placement_checker.h"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace accelmem {
namespace policy {
namespace {

std::string Describe(absl::Span<const PlacementBuffer> buffers, size_t i) {
  return absl::StrCat("buffer '", buffers[i].id, "' (#", i, ")");
}

std::string DescribePlaced(absl::Span<const PlacementBuffer> buffers,
                           absl::Span<const int64_t> offsets, size_t i) {
  const PlacementBuffer& b = buffers[i];
  return absl::StrCat(Describe(buffers, i), " live [", b.start, ", ", b.end, ") at bytes [",
                      offsets[i], ", ", offsets[i] + b.size, ")");
}

int64_t RoundUp(int64_t value, int64_t alignment) {
  const int64_t rem = value % alignment;
  return rem == 0 ? value : value + (alignment - rem);
}

}  // namespace

absl::Status ValidateInstance(absl::Span<const PlacementBuffer> buffers,
                              const PlacementLimits& limits) {
  if (buffers.size() > kMaxPlacementBuffers) {
    return absl::InvalidArgumentError(
        absl::StrCat(buffers.size(), " buffers, above the limit ", kMaxPlacementBuffers));
  }
  if (limits.alignment < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("alignment must be >= 1, got ", limits.alignment));
  }
  if (limits.alignment > kMaxPlacementBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("alignment ", limits.alignment, " is larger than ", kMaxPlacementBytes));
  }
  if (limits.capacity < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("capacity must be >= 0 (0: unbounded), got ", limits.capacity));
  }
  int64_t total = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const PlacementBuffer& b = buffers[i];
    if (b.start > b.end) {
      return absl::InvalidArgumentError(absl::StrCat(Describe(buffers, i), " ends (", b.end,
                                                     ") before it starts (", b.start, ")"));
    }
    if (b.size < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(Describe(buffers, i), " has negative size ", b.size));
    }
    if (b.size > kMaxPlacementBytes) {
      return absl::InvalidArgumentError(absl::StrCat(Describe(buffers, i), " has size ", b.size,
                                                     ", above the limit ", kMaxPlacementBytes));
    }
    // Planners compare lifetimes by length: end - start must be an int64_t.
    int64_t length = 0;
    if (__builtin_sub_overflow(b.end, b.start, &length)) {
      return absl::InvalidArgumentError(absl::StrCat(Describe(buffers, i), " lives [", b.start,
                                                     ", ", b.end,
                                                     "), a lifetime too long for int64"));
    }
    // Checked even though every term is <= kMaxPlacementBytes: the sum is what bounds every
    // offset and height a planner can produce.
    if (__builtin_add_overflow(total, RoundUp(b.size, limits.alignment), &total) ||
        total > kMaxPlacementBytes) {
      return absl::InvalidArgumentError(absl::StrCat("the sizes of the buffers up to ",
                                                     Describe(buffers, i), " add up to more than ",
                                                     kMaxPlacementBytes, " bytes"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckPlacement(absl::Span<const PlacementBuffer> buffers,
                            absl::Span<const int64_t> offsets, const PlacementLimits& limits) {
  if (absl::Status s = ValidateInstance(buffers, limits); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("invalid instance: ", s.message()));
  }
  if (offsets.size() != buffers.size()) {
    return absl::InvalidArgumentError(absl::StrCat("placement has ", offsets.size(),
                                                   " offsets for ", buffers.size(), " buffers"));
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    const int64_t off = offsets[i];
    if (off < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(Describe(buffers, i), " has negative offset ", off));
    }
    if (off > kMaxPlacementBytes) {
      return absl::InvalidArgumentError(absl::StrCat(Describe(buffers, i), " has offset ", off,
                                                     ", above the limit ", kMaxPlacementBytes));
    }
    if (off % limits.alignment != 0) {
      return absl::InvalidArgumentError(absl::StrCat(Describe(buffers, i), " has offset ", off,
                                                     ", not a multiple of the alignment ",
                                                     limits.alignment));
    }
    const bool takes_space = buffers[i].size > 0 && buffers[i].start < buffers[i].end;
    if (limits.capacity > 0 && takes_space && off + buffers[i].size > limits.capacity) {
      return absl::InvalidArgumentError(absl::StrCat(DescribePlaced(buffers, offsets, i),
                                                     " ends above the capacity ", limits.capacity));
    }
  }

  // Sweep over time. Events sort by step; at equal steps ends come before starts (half-open
  // lifetimes). The active set is ordered by offset and stays pairwise disjoint, so a new buffer
  // only needs to be compared with its neighbours in address order.
  struct Event {
    int64_t time;
    int kind;  // 0: end, 1: start.
    size_t index;
  };
  std::vector<Event> events;
  events.reserve(2 * buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    const PlacementBuffer& b = buffers[i];
    if (b.size == 0 || b.start >= b.end) continue;
    events.push_back({b.start, 1, i});
    events.push_back({b.end, 0, i});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.index < b.index;
  });
  std::set<std::pair<int64_t, size_t>> active;
  for (const Event& e : events) {
    const int64_t off = offsets[e.index];
    if (e.kind == 0) {
      active.erase({off, e.index});
      continue;
    }
    const int64_t top = off + buffers[e.index].size;
    auto next = active.lower_bound({off, 0});
    size_t other = buffers.size();
    if (next != active.end() && next->first < top) other = next->second;
    if (other == buffers.size() && next != active.begin()) {
      auto prev = std::prev(next);
      if (prev->first + buffers[prev->second].size > off) other = prev->second;
    }
    if (other != buffers.size()) {
      const size_t a = std::min(other, e.index);
      const size_t b = std::max(other, e.index);
      return absl::InvalidArgumentError(absl::StrCat(
          DescribePlaced(buffers, offsets, a), " and ", DescribePlaced(buffers, offsets, b),
          " are both live at step ", e.time, " and overlap in address"));
    }
    active.insert({off, e.index});
  }
  return absl::OkStatus();
}

int64_t ComputeLoad(absl::Span<const PlacementBuffer> buffers) {
  std::vector<std::pair<int64_t, int64_t>> events;  // (time, +size at start / -size at end)
  events.reserve(2 * buffers.size());
  for (const PlacementBuffer& b : buffers) {
    if (b.size == 0 || b.start >= b.end) continue;
    events.push_back({b.start, b.size});
    events.push_back({b.end, -b.size});
  }
  // At equal times, negative deltas (ends) sort first: half-open lifetimes.
  std::sort(events.begin(), events.end());
  int64_t live = 0;
  int64_t load = 0;
  for (const auto& e : events) {
    live += e.second;
    load = std::max(load, live);
  }
  return load;
}

int64_t PlacementHeight(absl::Span<const PlacementBuffer> buffers,
                        absl::Span<const int64_t> offsets) {
  int64_t height = 0;
  for (size_t i = 0; i < buffers.size() && i < offsets.size(); ++i) {
    const PlacementBuffer& b = buffers[i];
    if (b.size == 0 || b.start >= b.end) continue;
    // Offsets here are unchecked: an end past int64 saturates instead of wrapping.
    int64_t end = 0;
    if (__builtin_add_overflow(offsets[i], b.size, &end)) end = std::numeric_limits<int64_t>::max();
    height = std::max(height, end);
  }
  return height;
}

}  // namespace policy
}  // namespace accelmem
