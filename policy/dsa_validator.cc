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

// CheckDsaSolution's checks over one problem and its placements, in order: each buffer's own
// placement, then colocations, overlaps, separations and pins, then the metrics.
class SolutionChecker {
 public:
  SolutionChecker(const DsaProblem& problem, const std::vector<DsaPlacement>& placements)
      : problem_(problem),
        placements_(placements),
        n_(problem.buffers.size()),
        placed_(n_, nullptr),
        in_pool_(n_, false),
        classes_(n_),
        extent_(n_, 0),
        exclusive_pin_(n_, false) {}

  DsaSolutionCheck Run() {
    check_.errors = ValidateDsaProblem(problem_);
    if (!check_.errors.empty()) return std::move(check_);
    IndexPlacements();
    CheckEachBuffer();
    BuildClasses();
    CheckColocations();
    CheckOverlaps();
    CheckSeparations();
    CheckExactOrDisjoint();
    CheckPins();
    Measure();
    return std::move(check_);
  }

 private:
  std::string ExtentText(size_t i) const {
    return absl::StrCat(BufferText(problem_.buffers[i]), " ",
                        RangeText(placed_[i]->offset, extent_[i]));
  }

  void IndexPlacements() {
    // The (first) placement of every buffer.
    for (const DsaPlacement& placement : placements_) {
      const int b = FindDsaBuffer(problem_, placement.buffer);
      if (b < 0) {
        errors_.push_back(absl::StrCat("placement of unknown buffer ", placement.buffer, " in ",
                                       PoolText(problem_, placement.pool), " at offset ",
                                       placement.offset));
        continue;
      }
      if (placed_[b] != nullptr) {
        errors_.push_back(absl::StrCat(
            BufferText(problem_.buffers[b]), " is placed more than once: in ",
            PoolText(problem_, placed_[b]->pool), " at offset ", placed_[b]->offset, " and in ",
            PoolText(problem_, placement.pool), " at offset ", placement.offset));
        continue;
      }
      placed_[b] = &placement;
    }
  }

  void CheckEachBuffer() {
    // Per buffer: placement, pool, alignment, overflow, capacity, reserved ranges. `in_pool_[i]`:
    // buffer i is placed in a known pool, and takes part in the pairwise checks.
    for (size_t i = 0; i < n_; ++i) {
      const DsaBuffer& buffer = problem_.buffers[i];
      const DsaPlacement* placement = placed_[i];
      if (placement == nullptr) {
        errors_.push_back(absl::StrCat(BufferText(buffer), " has no placement"));
        continue;
      }
      const int pool_index = FindDsaPool(problem_, placement->pool);
      if (pool_index < 0) {
        errors_.push_back(
            absl::StrCat(BufferText(buffer), " is placed in unknown pool ", placement->pool));
        continue;
      }
      in_pool_[i] = true;
      const DsaPool& pool = problem_.pools[pool_index];
      if (std::find(buffer.allowed_pools.begin(), buffer.allowed_pools.end(), pool.id) ==
          buffer.allowed_pools.end()) {
        errors_.push_back(absl::StrCat(BufferText(buffer), " is placed in ",
                                       PoolText(problem_, pool.id),
                                       ", which is not among its allowed pools [",
                                       absl::StrJoin(buffer.allowed_pools, ", "), "]"));
      }
      if (buffer.alignment != 0 && placement->offset % buffer.alignment != 0) {
        errors_.push_back(absl::StrCat(BufferText(buffer), " at offset ", placement->offset,
                                       " is not aligned to ", buffer.alignment));
      }
      if (EndOverflows(placement->offset, buffer.size)) {
        errors_.push_back(absl::StrCat(BufferText(buffer), " at offset ", placement->offset,
                                       " with size ", buffer.size, " ends past 2^64 - 1"));
      } else if (pool.capacity.has_value() && placement->offset + buffer.size > *pool.capacity) {
        errors_.push_back(absl::StrCat(
            BufferText(buffer), " ", RangeText(placement->offset, buffer.size),
            " exceeds capacity ", *pool.capacity, " of ", PoolText(problem_, pool.id)));
      }
      for (const DsaAddressRange& reserved : pool.reserved_ranges) {
        const uint64_t reserved_size =
            reserved.end > reserved.begin ? reserved.end - reserved.begin : 0;
        if (RangesOverlap(placement->offset, buffer.size, reserved.begin, reserved_size)) {
          errors_.push_back(absl::StrCat(BufferText(buffer), " ",
                                         RangeText(placement->offset, buffer.size),
                                         " overlaps reserved range [", reserved.begin, ", ",
                                         reserved.end, ") of ", PoolText(problem_, pool.id)));
        }
      }
    }
  }

  void BuildClasses() {
    // Colocation classes and the extent (largest size) of each buffer's class.
    // ValidateDsaProblem has checked that every constraint names known buffers; the `< 0` tests
    // below only keep an index of -1 from ever being used.
    for (const DsaPair& pair : problem_.constraints.colocations) {
      const int a = FindDsaBuffer(problem_, pair.first);
      const int b = FindDsaBuffer(problem_, pair.second);
      if (a >= 0 && b >= 0) classes_.Union(a, b);
    }
    // A buffer's extent: the largest size in its colocation class (the class's root's maximum).
    std::vector<uint64_t> largest(n_, 0);
    for (size_t i = 0; i < n_; ++i) {
      uint64_t& root = largest[classes_.Find(i)];
      root = std::max(root, problem_.buffers[i].size);
    }
    for (size_t i = 0; i < n_; ++i) extent_[i] = largest[classes_.Find(i)];
    for (const DsaPinnedAllocation& pin : problem_.constraints.pinned_allocations) {
      const int b = FindDsaBuffer(problem_, pin.buffer);
      if (b >= 0 && pin.exclusive_for_all_time) exclusive_pin_[b] = true;
    }
  }

  void CheckColocations() {
    for (const DsaPair& pair : problem_.constraints.colocations) {
      const int a = FindDsaBuffer(problem_, pair.first);
      const int b = FindDsaBuffer(problem_, pair.second);
      if (a < 0 || b < 0 || placed_[a] == nullptr || placed_[b] == nullptr) continue;
      if (placed_[a]->pool != placed_[b]->pool || placed_[a]->offset != placed_[b]->offset) {
        errors_.push_back(absl::StrCat("colocation ", pair.first, "-", pair.second,
                                       " violated: ", BufferText(problem_.buffers[a]), " is in ",
                                       PoolText(problem_, placed_[a]->pool), " at offset ",
                                       placed_[a]->offset, ", ", BufferText(problem_.buffers[b]),
                                       " in ", PoolText(problem_, placed_[b]->pool), " at offset ",
                                       placed_[b]->offset));
      }
    }
  }

  void CheckOverlaps() {
    // Buffers live together, or next to an exclusive pin, must not share bytes.
    for (size_t i = 0; i < n_; ++i) {
      for (size_t j = i + 1; j < n_; ++j) {
        if (!in_pool_[i] || !in_pool_[j] || placed_[i]->pool != placed_[j]->pool) continue;
        if (classes_.Find(i) == classes_.Find(j)) continue;
        if (!RangesOverlap(placed_[i]->offset, extent_[i], placed_[j]->offset, extent_[j]))
          continue;
        const std::optional<int64_t> time =
            TemporalConflict(problem_, problem_.buffers[i], problem_.buffers[j]);
        if (!time.has_value() && !exclusive_pin_[i] && !exclusive_pin_[j]) continue;  // May share.
        const std::string overlap = absl::StrCat(ExtentText(i), " overlaps ", ExtentText(j), " in ",
                                                 PoolText(problem_, placed_[i]->pool));
        if (time.has_value()) {
          errors_.push_back(absl::StrCat(overlap, " while both are live at time ", *time));
        } else if (exclusive_pin_[i] || exclusive_pin_[j]) {
          errors_.push_back(absl::StrCat(overlap, ", and ",
                                         BufferText(problem_.buffers[exclusive_pin_[i] ? i : j]),
                                         " is pinned exclusive_for_all_time"));
        }
      }
    }
  }

  void CheckSeparations() {
    for (const DsaSeparation& separation : problem_.constraints.separations) {
      const int a = FindDsaBuffer(problem_, separation.first);
      const int b = FindDsaBuffer(problem_, separation.second);
      if (a < 0 || b < 0 || !in_pool_[a] || !in_pool_[b] || placed_[a]->pool != placed_[b]->pool)
        continue;
      if (!RangesOverlap(placed_[a]->offset, extent_[a], placed_[b]->offset, extent_[b])) continue;
      std::vector<std::string> reasons;
      for (DsaSeparationReason reason : separation.reasons) {
        reasons.push_back(DsaSeparationReasonName(reason));
      }
      errors_.push_back(
          absl::StrCat("separation ", separation.first, "-", separation.second,
                       reasons.empty() ? "" : absl::StrCat(" (", absl::StrJoin(reasons, ", "), ")"),
                       " violated: ", ExtentText(a), " overlaps ", ExtentText(b), " in ",
                       PoolText(problem_, placed_[a]->pool)));
    }
  }

  // "buffer 3 'x' at offset 0 with size 64" (the class's extent, said so when it is larger).
  std::string PlacedText(size_t i) const {
    return absl::StrCat(BufferText(problem_.buffers[i]), " at offset ", placed_[i]->offset,
                        " with size ", extent_[i],
                        extent_[i] != problem_.buffers[i].size ? " (its colocation class)" : "");
  }

  // Exact-or-disjoint pairs (problem.extensions) in the same pool: the same offset, or no byte
  // in common. Buffers of one class always share their offset.
  void CheckExactOrDisjoint() {
    for (const DsaPair& pair : problem_.extensions.exact_or_disjoint) {
      const int a = FindDsaBuffer(problem_, pair.first);
      const int b = FindDsaBuffer(problem_, pair.second);
      if (a < 0 || b < 0 || !in_pool_[a] || !in_pool_[b] || placed_[a]->pool != placed_[b]->pool)
        continue;
      if (placed_[a]->offset == placed_[b]->offset) continue;
      if (!RangesOverlap(placed_[a]->offset, extent_[a], placed_[b]->offset, extent_[b])) continue;
      errors_.push_back(absl::StrCat("exact_or_disjoint pair ", pair.first, "-", pair.second,
                                     " violated: ", PlacedText(a), " partially overlaps ",
                                     PlacedText(b), " in ", PoolText(problem_, placed_[a]->pool),
                                     " (they must start at the same offset or share no byte)"));
    }
  }

  void CheckPins() {
    for (const DsaPinnedAllocation& pin : problem_.constraints.pinned_allocations) {
      const int b = FindDsaBuffer(problem_, pin.buffer);
      if (b < 0 || placed_[b] == nullptr) continue;
      const DsaPlacement* placement = placed_[b];
      if (placement->pool != pin.pool || placement->offset != pin.offset) {
        errors_.push_back(absl::StrCat(BufferText(problem_.buffers[b]), " is pinned to ",
                                       PoolText(problem_, pin.pool), " at offset ", pin.offset,
                                       " but placed in ", PoolText(problem_, placement->pool),
                                       " at offset ", placement->offset));
      }
    }
  }

  void Measure() {
    // Metrics.
    for (const DsaPool& pool : problem_.pools) {
      uint64_t peak = 0;
      for (const DsaAddressRange& reserved : pool.reserved_ranges)
        peak = std::max(peak, reserved.end);
      for (size_t i = 0; i < n_; ++i) {
        if (!in_pool_[i] || placed_[i]->pool != pool.id) continue;
        if (EndOverflows(placed_[i]->offset, problem_.buffers[i].size)) continue;
        peak = std::max(peak, placed_[i]->offset + problem_.buffers[i].size);
      }
      check_.peak_by_pool[pool.id] = peak;
      check_.total_peak = SaturatingAdd(check_.total_peak, peak);
      check_.max_peak = std::max(check_.max_peak, peak);
      if (pool.capacity.has_value() && peak > *pool.capacity) {
        check_.capacity_overflow = SaturatingAdd(check_.capacity_overflow, peak - *pool.capacity);
      }
    }
    if (problem_.cost_model.has_value()) {
      for (const DsaReusePenalty& penalty : problem_.cost_model->reuse_penalties) {
        const int a = FindDsaBuffer(problem_, penalty.first);
        const int b = FindDsaBuffer(problem_, penalty.second);
        if (a < 0 || b < 0 || !in_pool_[a] || !in_pool_[b] || placed_[a]->pool != placed_[b]->pool)
          continue;
        if (classes_.Find(a) == classes_.Find(b)) continue;
        if (TemporalConflict(problem_, problem_.buffers[a], problem_.buffers[b]).has_value())
          continue;
        if (!RangesOverlap(placed_[a]->offset, extent_[a], placed_[b]->offset, extent_[b]))
          continue;
        check_.reuse_cost = SaturatingAdd(check_.reuse_cost, penalty.cost);
      }
    }
  }

  const DsaProblem& problem_;
  const std::vector<DsaPlacement>& placements_;
  const size_t n_;
  DsaSolutionCheck check_;
  std::vector<std::string>& errors_ = check_.errors;
  // The (first) placement of every buffer.
  std::vector<const DsaPlacement*> placed_;
  // Buffer i is placed in a known pool, and takes part in the pairwise checks.
  std::vector<bool> in_pool_;
  ColocationClasses classes_;
  std::vector<uint64_t> extent_;  // the largest size in the buffer's colocation class
  std::vector<bool> exclusive_pin_;
};

}  // namespace

DsaSolutionCheck CheckDsaSolution(const DsaProblem& problem_,
                                  const std::vector<DsaPlacement>& placements_) {
  return SolutionChecker(problem_, placements_).Run();
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
