#include "policy/dsa_validator.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace accelmem {
namespace policy {
namespace {

constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a > kMaxU64 - b ? kMaxU64 : a + b; }

bool EndOverflows(uint64_t offset, uint64_t size) { return size > kMaxU64 - offset; }

// True if [a, a + a_size) and [b, b + b_size) share a byte. Exact even where an end would not fit
// in uint64: the lower range overlaps the higher one iff it reaches past the higher one's start.
bool RangesOverlap(uint64_t a, uint64_t a_size, uint64_t b, uint64_t b_size) {
  if (a_size == 0 || b_size == 0) return false;
  return a <= b ? b - a < a_size : a - b < b_size;
}

std::string RangeText(uint64_t offset, uint64_t size) {
  if (EndOverflows(offset, size)) return absl::StrCat("[", offset, ", ", offset, " + ", size, ")");
  return absl::StrCat("[", offset, ", ", offset + size, ")");
}

std::string BufferText(const DsaBuffer& buffer) {
  return absl::StrCat("buffer ", buffer.id, " '", buffer.name, "'");
}

std::string PoolText(const DsaProblem& problem, uint32_t pool_id) {
  const int pool = FindDsaPool(problem, pool_id);
  if (pool < 0) return absl::StrCat("unknown pool ", pool_id);
  return absl::StrCat("pool ", pool_id, " '", problem.pools[pool].name, "'");
}

// Some time at which both buffers are live (the start of the first overlap found), if any.
std::optional<int64_t> CommonLiveTime(const DsaBuffer& a, const DsaBuffer& b) {
  for (const DsaInterval& x : a.live_intervals) {
    for (const DsaInterval& y : b.live_intervals) {
      if (x.lower < y.upper && y.lower < x.upper) return std::max(x.lower, y.lower);
    }
  }
  return std::nullopt;
}

bool IsTemporalExclusion(const DsaProblem& problem, uint32_t a, uint32_t b) {
  for (const DsaPair& pair : problem.constraints.temporal_exclusions) {
    if ((pair.first == a && pair.second == b) || (pair.first == b && pair.second == a)) {
      return true;
    }
  }
  return false;
}

// A time at which the two buffers are in temporal conflict: both live, and the pair is not a
// temporal exclusion.
std::optional<int64_t> TemporalConflict(const DsaProblem& problem, const DsaBuffer& a,
                                        const DsaBuffer& b) {
  if (IsTemporalExclusion(problem, a.id, b.id)) return std::nullopt;
  return CommonLiveTime(a, b);
}

// Union-find over buffer indices.
class ColocationClasses {
 public:
  explicit ColocationClasses(size_t n) : parent_(n) {
    for (size_t i = 0; i < n; ++i) parent_[i] = i;
  }
  size_t Find(size_t i) {
    while (parent_[i] != i) i = parent_[i];
    return i;
  }
  void Union(size_t a, size_t b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<size_t> parent_;
};

}  // namespace

DsaSolutionCheck CheckDsaSolution(const DsaProblem& problem,
                                  const std::vector<DsaPlacement>& placements) {
  DsaSolutionCheck check;
  check.errors = ValidateDsaProblem(problem);
  if (!check.errors.empty()) return check;
  std::vector<std::string>& errors = check.errors;
  const size_t n = problem.buffers.size();

  // The (first) placement of every buffer.
  std::vector<const DsaPlacement*> placed(n, nullptr);
  for (const DsaPlacement& placement : placements) {
    const int b = FindDsaBuffer(problem, placement.buffer);
    if (b < 0) {
      errors.push_back(absl::StrCat("placement of unknown buffer ", placement.buffer, " in ",
                                    PoolText(problem, placement.pool), " at offset ",
                                    placement.offset));
      continue;
    }
    if (placed[b] != nullptr) {
      errors.push_back(absl::StrCat(
          BufferText(problem.buffers[b]), " is placed more than once: in ",
          PoolText(problem, placed[b]->pool), " at offset ", placed[b]->offset, " and in ",
          PoolText(problem, placement.pool), " at offset ", placement.offset));
      continue;
    }
    placed[b] = &placement;
  }

  // Per buffer: placement, pool, alignment, overflow, capacity, reserved ranges. `in_pool[i]`:
  // buffer i is placed in a known pool, and takes part in the pairwise checks.
  std::vector<bool> in_pool(n, false);
  for (size_t i = 0; i < n; ++i) {
    const DsaBuffer& buffer = problem.buffers[i];
    const DsaPlacement* placement = placed[i];
    if (placement == nullptr) {
      errors.push_back(absl::StrCat(BufferText(buffer), " has no placement"));
      continue;
    }
    const int pool_index = FindDsaPool(problem, placement->pool);
    if (pool_index < 0) {
      errors.push_back(
          absl::StrCat(BufferText(buffer), " is placed in unknown pool ", placement->pool));
      continue;
    }
    in_pool[i] = true;
    const DsaPool& pool = problem.pools[pool_index];
    if (std::find(buffer.allowed_pools.begin(), buffer.allowed_pools.end(), pool.id) ==
        buffer.allowed_pools.end()) {
      errors.push_back(absl::StrCat(BufferText(buffer), " is placed in ",
                                    PoolText(problem, pool.id),
                                    ", which is not among its allowed pools [",
                                    absl::StrJoin(buffer.allowed_pools, ", "), "]"));
    }
    if (buffer.alignment != 0 && placement->offset % buffer.alignment != 0) {
      errors.push_back(absl::StrCat(BufferText(buffer), " at offset ", placement->offset,
                                    " is not aligned to ", buffer.alignment));
    }
    if (EndOverflows(placement->offset, buffer.size)) {
      errors.push_back(absl::StrCat(BufferText(buffer), " at offset ", placement->offset,
                                    " with size ", buffer.size, " ends past 2^64 - 1"));
    } else if (pool.capacity.has_value() && placement->offset + buffer.size > *pool.capacity) {
      errors.push_back(absl::StrCat(BufferText(buffer), " ",
                                    RangeText(placement->offset, buffer.size), " exceeds capacity ",
                                    *pool.capacity, " of ", PoolText(problem, pool.id)));
    }
    for (const DsaAddressRange& reserved : pool.reserved_ranges) {
      const uint64_t reserved_size =
          reserved.end > reserved.begin ? reserved.end - reserved.begin : 0;
      if (RangesOverlap(placement->offset, buffer.size, reserved.begin, reserved_size)) {
        errors.push_back(absl::StrCat(BufferText(buffer), " ",
                                      RangeText(placement->offset, buffer.size),
                                      " overlaps reserved range [", reserved.begin, ", ",
                                      reserved.end, ") of ", PoolText(problem, pool.id)));
      }
    }
  }

  // Colocation classes and the extent (largest size) of each buffer's class.
  ColocationClasses classes(n);
  // ValidateDsaProblem has checked that every constraint names known buffers; the `< 0` tests
  // below only keep an index of -1 from ever being used.
  for (const DsaPair& pair : problem.constraints.colocations) {
    const int a = FindDsaBuffer(problem, pair.first);
    const int b = FindDsaBuffer(problem, pair.second);
    if (a >= 0 && b >= 0) classes.Union(a, b);
  }
  // A buffer's extent: the largest size in its colocation class (the class's root's maximum).
  std::vector<uint64_t> largest(n, 0);
  for (size_t i = 0; i < n; ++i) {
    uint64_t& root = largest[classes.Find(i)];
    root = std::max(root, problem.buffers[i].size);
  }
  std::vector<uint64_t> extent(n, 0);
  for (size_t i = 0; i < n; ++i) extent[i] = largest[classes.Find(i)];
  std::vector<bool> exclusive_pin(n, false);
  for (const DsaPinnedAllocation& pin : problem.constraints.pinned_allocations) {
    const int b = FindDsaBuffer(problem, pin.buffer);
    if (b >= 0 && pin.exclusive_for_all_time) exclusive_pin[b] = true;
  }
  auto extent_text = [&](size_t i) {
    return absl::StrCat(BufferText(problem.buffers[i]), " ",
                        RangeText(placed[i]->offset, extent[i]));
  };

  for (const DsaPair& pair : problem.constraints.colocations) {
    const int a = FindDsaBuffer(problem, pair.first);
    const int b = FindDsaBuffer(problem, pair.second);
    if (a < 0 || b < 0 || placed[a] == nullptr || placed[b] == nullptr) continue;
    if (placed[a]->pool != placed[b]->pool || placed[a]->offset != placed[b]->offset) {
      errors.push_back(absl::StrCat("colocation ", pair.first, "-", pair.second,
                                    " violated: ", BufferText(problem.buffers[a]), " is in ",
                                    PoolText(problem, placed[a]->pool), " at offset ",
                                    placed[a]->offset, ", ", BufferText(problem.buffers[b]), " in ",
                                    PoolText(problem, placed[b]->pool), " at offset ",
                                    placed[b]->offset));
    }
  }

  // Buffers live together, or next to an exclusive pin, must not share bytes.
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      if (!in_pool[i] || !in_pool[j] || placed[i]->pool != placed[j]->pool) continue;
      if (classes.Find(i) == classes.Find(j)) continue;
      if (!RangesOverlap(placed[i]->offset, extent[i], placed[j]->offset, extent[j])) continue;
      const std::optional<int64_t> time =
          TemporalConflict(problem, problem.buffers[i], problem.buffers[j]);
      if (!time.has_value() && !exclusive_pin[i] && !exclusive_pin[j]) continue;  // May share.
      const std::string overlap = absl::StrCat(extent_text(i), " overlaps ", extent_text(j), " in ",
                                               PoolText(problem, placed[i]->pool));
      if (time.has_value()) {
        errors.push_back(absl::StrCat(overlap, " while both are live at time ", *time));
      } else if (exclusive_pin[i] || exclusive_pin[j]) {
        errors.push_back(absl::StrCat(overlap, ", and ",
                                      BufferText(problem.buffers[exclusive_pin[i] ? i : j]),
                                      " is pinned exclusive_for_all_time"));
      }
    }
  }

  for (const DsaSeparation& separation : problem.constraints.separations) {
    const int a = FindDsaBuffer(problem, separation.first);
    const int b = FindDsaBuffer(problem, separation.second);
    if (a < 0 || b < 0 || !in_pool[a] || !in_pool[b] || placed[a]->pool != placed[b]->pool)
      continue;
    if (!RangesOverlap(placed[a]->offset, extent[a], placed[b]->offset, extent[b])) continue;
    std::vector<std::string> reasons;
    for (DsaSeparationReason reason : separation.reasons) {
      reasons.push_back(DsaSeparationReasonName(reason));
    }
    errors.push_back(absl::StrCat(
        "separation ", separation.first, "-", separation.second,
        reasons.empty() ? "" : absl::StrCat(" (", absl::StrJoin(reasons, ", "), ")"), " violated: ",
        extent_text(a), " overlaps ", extent_text(b), " in ", PoolText(problem, placed[a]->pool)));
  }

  for (const DsaPinnedAllocation& pin : problem.constraints.pinned_allocations) {
    const int b = FindDsaBuffer(problem, pin.buffer);
    if (b < 0 || placed[b] == nullptr) continue;
    const DsaPlacement* placement = placed[b];
    if (placement->pool != pin.pool || placement->offset != pin.offset) {
      errors.push_back(absl::StrCat(BufferText(problem.buffers[b]), " is pinned to ",
                                    PoolText(problem, pin.pool), " at offset ", pin.offset,
                                    " but placed in ", PoolText(problem, placement->pool),
                                    " at offset ", placement->offset));
    }
  }

  // Metrics.
  for (const DsaPool& pool : problem.pools) {
    uint64_t peak = 0;
    for (const DsaAddressRange& reserved : pool.reserved_ranges)
      peak = std::max(peak, reserved.end);
    for (size_t i = 0; i < n; ++i) {
      if (!in_pool[i] || placed[i]->pool != pool.id) continue;
      if (EndOverflows(placed[i]->offset, problem.buffers[i].size)) continue;
      peak = std::max(peak, placed[i]->offset + problem.buffers[i].size);
    }
    check.peak_by_pool[pool.id] = peak;
    check.total_peak = SaturatingAdd(check.total_peak, peak);
    check.max_peak = std::max(check.max_peak, peak);
    if (pool.capacity.has_value() && peak > *pool.capacity) {
      check.capacity_overflow = SaturatingAdd(check.capacity_overflow, peak - *pool.capacity);
    }
  }
  if (problem.cost_model.has_value()) {
    for (const DsaReusePenalty& penalty : problem.cost_model->reuse_penalties) {
      const int a = FindDsaBuffer(problem, penalty.first);
      const int b = FindDsaBuffer(problem, penalty.second);
      if (a < 0 || b < 0 || !in_pool[a] || !in_pool[b] || placed[a]->pool != placed[b]->pool)
        continue;
      if (classes.Find(a) == classes.Find(b)) continue;
      if (TemporalConflict(problem, problem.buffers[a], problem.buffers[b]).has_value()) continue;
      if (!RangesOverlap(placed[a]->offset, extent[a], placed[b]->offset, extent[b])) continue;
      check.reuse_cost = SaturatingAdd(check.reuse_cost, penalty.cost);
    }
  }
  return check;
}

absl::Status CheckDsaSolutionDocument(const DsaProblemDocument& problem_doc,
                                      const DsaSolutionDocument& solution) {
  if (solution.schema_version != problem_doc.schema_version) {
    return absl::InvalidArgumentError(
        absl::StrCat("solution schema_version ", solution.schema_version,
                     " does not match the problem's ", problem_doc.schema_version));
  }
  if (solution.profile != problem_doc.profile) {
    return absl::InvalidArgumentError(absl::StrCat("solution profile '", solution.profile,
                                                   "' does not match the problem's '",
                                                   problem_doc.profile, "'"));
  }
  if (solution.instance != problem_doc.instance) {
    return absl::InvalidArgumentError(absl::StrCat("solution instance '", solution.instance,
                                                   "' does not match the problem's '",
                                                   problem_doc.instance, "'"));
  }
  const std::string fingerprint = DsaProblemFingerprint(problem_doc);
  if (solution.problem_fingerprint != fingerprint) {
    return absl::InvalidArgumentError(
        absl::StrCat("solution problem_fingerprint '", solution.problem_fingerprint,
                     "' does not match the fingerprint '", fingerprint, "' of problem '",
                     problem_doc.instance, "'"));
  }
  const std::vector<std::string> problem_errors = ValidateDsaProblem(problem_doc.problem);
  if (!problem_errors.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("problem '", problem_doc.instance,
                                                   "' is invalid (", problem_errors.size(),
                                                   " errors); first: ", problem_errors[0]));
  }
  const DsaSolutionCheck check = CheckDsaSolution(problem_doc.problem, solution.placements);
  if (!check.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("solution of '", problem_doc.instance,
                                                   "' violates ", check.errors.size(),
                                                   " constraint(s); first: ", check.errors[0]));
  }
  return absl::OkStatus();
}

}  // namespace policy
}  // namespace accelmem
