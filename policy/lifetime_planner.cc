#include "policy/lifetime_planner.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "policy/internal/best_fit.h"
#include "policy/internal/branch_and_bound.h"
#include "policy/internal/peak_search.h"
#include "policy/internal/placement_items.h"

namespace accelmem {
namespace policy {
namespace {

using internal::BestFitPlacer;
using internal::BranchAndBound;
using internal::Clock;
using internal::Items;
using internal::SearchResult;

// Above this many overlapping pairs the branch and bound's per-node work makes it hopeless.
constexpr int64_t kMaxSearchPairs = 2000000;
// Above a few thousand buffers the branch and bound rarely finishes a target within a budget
// (and never proves a bound); the peak-focused hill climb improves such instances instead.
constexpr int kMaxSearchItems = 4000;

absl::Status ValidateOptions(absl::Span<const PlacementBuffer> buffers,
                             const PlannerOptions& options) {
  PlacementLimits limits;
  limits.alignment = options.alignment;
  limits.capacity = options.capacity;
  if (absl::Status s = ValidateInstance(buffers, limits); !s.ok()) return s;
  if (options.orders.empty()) {
    return absl::InvalidArgumentError("PlannerOptions.orders must name at least one order");
  }
  if (options.search_threads < 0) {
    return absl::InvalidArgumentError("PlannerOptions.search_threads must be >= 0");
  }
  if (options.budget < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("PlannerOptions.budget must be >= 0");
  }
  return absl::OkStatus();
}

// The best placement found so far: offsets per item, its height and what produced it.
struct Incumbent {
  std::vector<int64_t> offsets;
  int64_t height = std::numeric_limits<int64_t>::max();
  std::string method;
};

// When PlaceGreedy() runs `order`. The start order (an O(n log n) sweep) runs first: its height
// lets the other orders stop as soon as they cannot win. Then lifetime, size, TFLite's order,
// area, first fit: the sooner the eventual winner runs, the sooner the others stop (on Y_1, where
// lifetime wins, this saves ~9 % over running the four older orders first), and an order listed
// after one already run must beat it strictly, so size (listed first by default) runs early:
// where it reaches LOAD, as on flat traces, every order listed after it is skipped outright.
// The evaluation order changes only the time: ties go to the order listed first in the options.
int EvaluationRank(GreedyOrder order) {
  switch (order) {
    case GreedyOrder::kStart:
      return 0;
    case GreedyOrder::kLifetime:
      return 1;
    case GreedyOrder::kSize:
      return 2;
    case GreedyOrder::kWholeThenSize:
      return 3;
    case GreedyOrder::kArea:
      return 4;
    case GreedyOrder::kSizeFirstFit:
      return 5;
  }
  return 6;
}

// Step 1: the lowest of the greedy placements in `orders` (ties: the first listed).
Incumbent PlaceGreedy(const Items& items, const std::vector<GreedyOrder>& orders) {
  BestFitPlacer placer(items);
  internal::ItemOrderer orderer(items);
  Incumbent best;
  std::vector<int64_t> offsets;
  std::vector<size_t> evaluation(orders.size());
  std::iota(evaluation.begin(), evaluation.end(), 0);
  std::stable_sort(evaluation.begin(), evaluation.end(), [&](size_t a, size_t b) {
    return EvaluationRank(orders[a]) < EvaluationRank(orders[b]);
  });
  size_t best_index = orders.size();
  for (size_t k : evaluation) {
    const GreedyOrder order = orders[k];
    const int64_t limit = k < best_index ? best.height : best.height - 1;
    // No placement is below LOAD: an order that would have to beat the best below it cannot.
    if (limit < items.load) continue;
    const std::vector<int>& sequence = orderer.Order(order);
    const int64_t height =
        order == GreedyOrder::kStart
            ? internal::SweepBestFit(items, sequence, offsets, limit)
            : placer.Run(sequence, offsets, limit, order == GreedyOrder::kSizeFirstFit);
    if (height < best.height || (height == best.height && k < best_index)) {
      best.height = height;
      best_index = k;
      best.offsets.swap(offsets);
      best.method = std::string("greedy:") + GreedyOrderName(order);
    }
  }
  if (items.count() == 0) best.height = 0;
  return best;
}

// How many preorders the branch and bound runs at once: one per hardware thread, at least two
// (the first two solve all of MiniMalloc's A-K between them) and at most all of them. Below ~64
// buffers a search ends in microseconds; threads would cost more than they save.
int SearchPreorders(const PlannerOptions& options, const Items& items) {
  int preorders = options.search_threads;
  if (preorders == 0) {
    preorders =
        items.count() < 64 ? 1 : std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  }
  return std::min(preorders, BranchAndBound::kNumPreorders);
}

// The branch and bound's progress on one instance: the best placement, the proven bound `lo`
// (no placement below it; raised by exhausted searches) and whether the capacity is still to
// be met. Heights of canonical placements are multiples of `unit`.
class TargetSearch {
 public:
  TargetSearch(const Items& items, const PlannerOptions& options, Incumbent& best, int64_t& nodes)
      : items_(items),
        best_(best),
        nodes_(nodes),
        unit_(items.unit),
        lo_(internal::RoundUp(items.load, items.unit)),
        cap_target_(options.capacity > 0 ? options.capacity / unit_ * unit_ : 0),
        cap_pending_(cap_target_ > 0 && best.height > cap_target_ && cap_target_ >= lo_) {}

  // Step 2a: every preorder in its own thread (Portfolio), on one target at a time.
  void RunConcurrently(const BranchAndBound& prepared, int preorders, Clock::time_point deadline) {
    std::vector<BranchAndBound> solvers(preorders, prepared);
    std::vector<int64_t> found;
    int attempt = 0;
    while (lo_ < best_.height && Clock::now() < deadline) {
      // The capacity first while it is unmet; then LOAD's bound and halfway to the best,
      // alternately, each with half the remaining time.
      int64_t target = cap_target_;
      Clock::time_point target_deadline = deadline;
      if (!cap_pending_) {
        const int64_t mid = lo_ + (best_.height - lo_) / unit_ / 2 * unit_;
        target = attempt % 2 == 1 && mid > lo_ ? mid : lo_;
        const Clock::time_point now = Clock::now();
        if (deadline - now > std::chrono::milliseconds(20)) {
          target_deadline = now + (deadline - now) / 2;
        }
      }
      const SearchResult r =
          internal::Portfolio(solvers, items_, target, target_deadline, found, nodes_);
      if (r == SearchResult::kFound) {
        Accept(found);
      } else if (r == SearchResult::kNotFound) {
        lo_ = std::max(lo_, target + unit_);
        if (cap_pending_ && lo_ > cap_target_) cap_pending_ = false;
      } else {
        ++attempt;
      }
    }
  }

  // Step 2b: one thread, the three re-ranked preorders in turn (MiniMalloc's round robin).
  void RunRoundRobin(BranchAndBound& bnb, Clock::time_point deadline) {
    std::vector<int64_t> found;
    int64_t node_limit = std::max<int64_t>(2 * items_.count(), 64);
    while (lo_ < best_.height && Clock::now() < deadline) {
      // One round: the capacity first while it is unmet, then LOAD's bound, then halfway;
      // every preorder in turn with the round's node limit, which doubles each round.
      std::vector<int64_t> targets;
      if (cap_pending_) {
        targets.push_back(cap_target_);
      } else {
        targets.push_back(lo_);
        const int64_t mid = lo_ + (best_.height - lo_) / unit_ / 2 * unit_;
        if (mid > lo_ && mid < best_.height) targets.push_back(mid);
      }
      for (int64_t target : targets) {
        if (target < lo_ || target >= best_.height) continue;
        for (int h = 0; h < 3; ++h) {
          const SearchResult r = bnb.Solve(target, h, node_limit, deadline, found);
          nodes_ += bnb.nodes_used();
          if (r == SearchResult::kFound) {
            Accept(found);
            break;
          }
          if (r == SearchResult::kNotFound) {
            lo_ = std::max(lo_, target + unit_);
            break;
          }
          if (Clock::now() >= deadline) break;
        }
        if (lo_ >= best_.height || Clock::now() >= deadline) break;
      }
      if (cap_pending_ && lo_ > cap_target_) cap_pending_ = false;
      node_limit *= 2;
    }
  }

  // Every placement compacts down to a canonical one, so `lo` bounds every height (in aligned
  // sizes).
  int64_t ProvenBound() const { return std::min(lo_, best_.height); }

 private:
  void Accept(const std::vector<int64_t>& offsets) {
    const int64_t height = internal::ItemHeight(items_, offsets);
    if (height < best_.height) {
      best_.height = height;
      best_.offsets = offsets;
      best_.method = "search";
    }
    if (cap_pending_ && best_.height <= cap_target_) cap_pending_ = false;
  }

  const Items& items_;
  Incumbent& best_;
  int64_t& nodes_;
  const int64_t unit_;
  int64_t lo_;
  const int64_t cap_target_;
  bool cap_pending_;
};

// Step 2: search mode after greedy, until `deadline`: the branch and bound where the instance
// allows it (raising `proven_bound`), else the peak search.
void SearchAfterGreedy(const Items& items, const PlannerOptions& options,
                       Clock::time_point deadline, Incumbent& best, int64_t& search_nodes,
                       int64_t& proven_bound) {
  BranchAndBound bnb;
  if (items.count() <= kMaxSearchItems && bnb.Prepare(items, kMaxSearchPairs)) {
    TargetSearch search(items, options, best, search_nodes);
    const int preorders = SearchPreorders(options, items);
    if (preorders > 1) {
      search.RunConcurrently(bnb, preorders, deadline);
    } else {
      search.RunRoundRobin(bnb, deadline);
    }
    proven_bound = std::max(proven_bound, search.ProvenBound());
  } else if (items.count() > 1) {
    // Too large for the branch and bound: large-neighbourhood search around the peak.
    if (internal::PeakSearch(items, deadline, options.seed, best.offsets, best.height)) {
      best.method = "search:peak";
    }
  }
}

}  // namespace

std::vector<int64_t> GreedyBestFit(absl::Span<const PlacementBuffer> buffers, int64_t alignment,
                                   GreedyOrder order) {
  const Items items = internal::MakeItems(buffers, alignment);
  std::vector<int64_t> item_offsets;
  if (order == GreedyOrder::kStart) {
    internal::SweepBestFit(items, internal::OrderItems(items, order), item_offsets);
  } else {
    BestFitPlacer placer(items);
    placer.Run(internal::OrderItems(items, order), item_offsets,
               std::numeric_limits<int64_t>::max(), order == GreedyOrder::kSizeFirstFit);
  }
  return internal::ToBufferOffsets(items, buffers.size(), item_offsets);
}

absl::StatusOr<PlacementPlan> PlanPlacement(absl::Span<const PlacementBuffer> buffers,
                                            const PlannerOptions& options) {
  const Clock::time_point started = Clock::now();
  if (absl::Status s = ValidateOptions(buffers, options); !s.ok()) return s;
  const Items items = internal::MakeItems(buffers, options.alignment);
  PlacementPlan plan;
  // Unaligned sizes are the items' sizes (buffers taking no space add nothing to LOAD).
  plan.load = options.alignment == 1 ? items.load : ComputeLoad(buffers);

  Incumbent best = PlaceGreedy(items, options.orders);
  int64_t proven_bound = items.load;  // Of the aligned sizes; raised by exhausted searches.
  if (options.mode == PlannerMode::kSearch && best.height > items.load) {
    const Clock::time_point deadline =
        started + std::chrono::nanoseconds(absl::ToInt64Nanoseconds(options.budget));
    SearchAfterGreedy(items, options, deadline, best, plan.search_nodes, proven_bound);
  }

  // Step 3: the plan of the input buffers.
  plan.method = best.method;
  plan.offsets = internal::ToBufferOffsets(items, buffers.size(), best.offsets);
  plan.height = PlacementHeight(buffers, plan.offsets);
  plan.within_capacity = options.capacity == 0 || plan.height <= options.capacity;
  // With alignment > 1 the bound is on aligned sizes; only LOAD bounds the raw height.
  plan.lower_bound = options.alignment == 1 ? std::max(plan.load, proven_bound) : plan.load;
  plan.lower_bound = std::min(plan.lower_bound, plan.height);
  plan.proven_optimal = plan.height <= plan.lower_bound;
  return plan;
}

}  // namespace policy
}  // namespace accelmem
