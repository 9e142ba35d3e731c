#include "policy/testing/reference_placers.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace accelmem {
namespace policy_testing {
namespace {

using policy::PlacementBuffer;

bool TakesSpace(const PlacementBuffer& b) { return b.size > 0 && b.start < b.end; }

bool Intersect(const PlacementBuffer& a, const PlacementBuffer& b) {
  return a.start < b.end && b.start < a.end;
}

int64_t Length(const PlacementBuffer& b) { return b.end - b.start; }

// The buffers that take space, in the order the rule places them.
std::vector<size_t> SortedForRule(absl::Span<const PlacementBuffer> buffers, ReferenceRule rule) {
  std::vector<size_t> order;
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (!TakesSpace(buffers[i])) continue;
    order.push_back(i);
    first = std::min(first, buffers[i].start);
    last = std::max(last, buffers[i].end);
  }
  auto whole = [&](size_t i) { return buffers[i].start == first && buffers[i].end == last; };
  auto less = [&](size_t x, size_t y) {
    const PlacementBuffer& a = buffers[x];
    const PlacementBuffer& b = buffers[y];
    switch (rule) {
      case ReferenceRule::kTfliteArena:
        if (whole(x) != whole(y)) return whole(x);
        if (whole(x)) return x < y;
        if (a.size != b.size) return a.size > b.size;
        if (a.start != b.start) return a.start < b.start;
        return x < y;
      case ReferenceRule::kTfliteMicroFirstFit:
        if (a.size != b.size) return a.size > b.size;
        return x < y;
      case ReferenceRule::kXlaSpatial:
        if (a.size != b.size) return a.size > b.size;
        if (Length(a) != Length(b)) return Length(a) > Length(b);
        return x < y;
      case ReferenceRule::kXlaTemporal:
        if (Length(a) != Length(b)) return Length(a) > Length(b);
        if (a.size != b.size) return a.size > b.size;
        return x < y;
      case ReferenceRule::kArea: {
        const __int128 area_a = static_cast<__int128>(a.size) * Length(a);
        const __int128 area_b = static_cast<__int128>(b.size) * Length(b);
        if (area_a != area_b) return area_a > area_b;
        if (a.size != b.size) return a.size > b.size;
        return x < y;
      }
      case ReferenceRule::kStart:
        if (a.start != b.start) return a.start < b.start;
        if (a.size != b.size) return a.size > b.size;
        if (Length(a) != Length(b)) return Length(a) > Length(b);
        return x < y;
    }
    return x < y;
  };
  std::sort(order.begin(), order.end(), less);
  return order;
}

// TFLite's scan: placed buffers by offset; a gap before each one that is at least `size` and
// smaller than the best so far becomes the best (first fit: the first such gap wins).
int64_t ScanGaps(const std::vector<std::pair<int64_t, int64_t>>& by_offset, int64_t size,
                 bool first_fit) {
  int64_t current = 0;
  int64_t best = -1;
  int64_t best_gap = std::numeric_limits<int64_t>::max();
  for (const auto& [offset, end] : by_offset) {
    if (current + size <= offset && offset - current < best_gap) {
      best = current;
      best_gap = offset - current;
      if (first_fit) return best;
    }
    current = std::max(current, end);
  }
  return best >= 0 ? best : current;
}

// XLA's chunks: the free chunks are the complement of the used ones (`used` sorted by offset),
// the last one unbounded; the smallest chunk holding `size` wins, the lowest on ties.
int64_t SmallestFreeChunk(const std::vector<std::pair<int64_t, int64_t>>& used, int64_t size) {
  std::vector<std::pair<int64_t, int64_t>> free_chunks;  // (offset, end)
  int64_t free_from = 0;
  for (const auto& [offset, end] : used) {
    if (offset > free_from) free_chunks.push_back({free_from, offset});
    free_from = std::max(free_from, end);
  }
  free_chunks.push_back({free_from, std::numeric_limits<int64_t>::max()});
  auto best = std::min_element(
      free_chunks.begin(), free_chunks.end(),
      [size](const std::pair<int64_t, int64_t>& a, const std::pair<int64_t, int64_t>& b) {
        const bool a_fits = a.second - a.first >= size;
        const bool b_fits = b.second - b.first >= size;
        if (a_fits != b_fits) return a_fits;
        return std::make_pair(a.second - a.first, a.first) <
               std::make_pair(b.second - b.first, b.first);
      });
  return best->first;
}

}  // namespace

const char* ReferenceRuleName(ReferenceRule rule) {
  switch (rule) {
    case ReferenceRule::kTfliteArena:
      return "tflite-arena";
    case ReferenceRule::kTfliteMicroFirstFit:
      return "tflite-micro-first-fit";
    case ReferenceRule::kXlaSpatial:
      return "xla-spatial";
    case ReferenceRule::kXlaTemporal:
      return "xla-temporal";
    case ReferenceRule::kArea:
      return "area";
    case ReferenceRule::kStart:
      return "start";
  }
  return "unknown";
}

const std::vector<ReferenceRule>& AllReferenceRules() {
  static const auto* rules = new std::vector<ReferenceRule>{
      ReferenceRule::kTfliteArena, ReferenceRule::kTfliteMicroFirstFit,
      ReferenceRule::kXlaSpatial,  ReferenceRule::kXlaTemporal,
      ReferenceRule::kArea,        ReferenceRule::kStart};
  return *rules;
}

std::vector<int64_t> ReferencePlace(absl::Span<const PlacementBuffer> buffers, ReferenceRule rule) {
  std::vector<int64_t> offsets(buffers.size(), 0);
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> used;
  for (size_t i : SortedForRule(buffers, rule)) {
    used.clear();
    for (size_t j : placed) {
      if (Intersect(buffers[i], buffers[j])) {
        used.push_back({offsets[j], offsets[j] + buffers[j].size});
      }
    }
    std::sort(used.begin(), used.end());
    if (rule == ReferenceRule::kXlaSpatial || rule == ReferenceRule::kXlaTemporal) {
      offsets[i] = SmallestFreeChunk(used, buffers[i].size);
    } else {
      offsets[i] = ScanGaps(used, buffers[i].size, rule == ReferenceRule::kTfliteMicroFirstFit);
    }
    placed.push_back(i);
  }
  return offsets;
}

ReferenceResult BestReference(absl::Span<const PlacementBuffer> buffers) {
  ReferenceResult best;
  best.height = -1;
  for (ReferenceRule rule : AllReferenceRules()) {
    std::vector<int64_t> offsets = ReferencePlace(buffers, rule);
    const int64_t height = policy::PlacementHeight(buffers, offsets);
    if (best.height < 0 || height < best.height) {
      best.rule = rule;
      best.offsets = std::move(offsets);
      best.height = height;
    }
  }
  return best;
}

std::string FindOverlap(absl::Span<const PlacementBuffer> buffers,
                        absl::Span<const int64_t> offsets) {
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (offsets[i] < 0) return std::to_string(i) + "," + std::to_string(i);
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (!TakesSpace(buffers[i])) continue;
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (!TakesSpace(buffers[j]) || !Intersect(buffers[i], buffers[j])) continue;
      if (offsets[i] < offsets[j] + buffers[j].size && offsets[j] < offsets[i] + buffers[i].size) {
        return std::to_string(i) + "," + std::to_string(j);
      }
    }
  }
  return "";
}

}  // namespace policy_testing
}  // namespace accelmem
