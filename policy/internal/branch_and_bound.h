// Branch and bound over canonical placements (decision version: does a placement fit under a
// height?), after MiniMalloc (ASPLOS 2023), and a portfolio that runs several preorders at once.
#ifndef ACCELMEM_POLICY_INTERNAL_BRANCH_AND_BOUND_H_
#define ACCELMEM_POLICY_INTERNAL_BRANCH_AND_BOUND_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "policy/internal/placement_items.h"

namespace accelmem {
namespace policy {
namespace internal {

// The outcome of one search: a placement under the target, a proof that none exists, or the
// node limit, the deadline or another thread's stop ended it first.
enum class SearchResult { kFound, kNotFound, kLimit };

// Decides whether the items fit under a height. Prepare() builds the per-instance tables once
// (overlap lists, section totals); a prepared solver can be copied to run several preorders at
// the same time (Portfolio). `items` must outlive the solver.
class BranchAndBound {
 public:
  // Returns false (and builds nothing) when the instance has more than `max_pairs` overlapping
  // pairs, the point where the per-node work makes the search hopeless within a budget.
  bool Prepare(const Items& items, int64_t max_pairs);

  // The preorders (the static order that breaks ties between buffers at the same offset and
  // ranks the search's choices), with MiniMalloc's keys: 0: total, width, area; 1: total, area,
  // width; 2: width, area, total; each re-ranked at every decomposition with the section totals
  // of what is left to place, as MiniMalloc's sub-solves do; 3: the keys of 0, never re-ranked.
  // 0 and 1 between them solve all of MiniMalloc's challenging instances A-K (docs/placement.md);
  // PlanPlacement runs as many of them, in this order, as there are hardware threads.
  static constexpr int kNumPreorders = 4;

  // Searches for a placement with height <= cap using preorder `heuristic` for at most
  // `node_limit` nodes or until `deadline`. On kFound, `offsets` (per item) holds it.
  // `stop`, if not null, ends the search early (as kLimit) once another thread sets it.
  SearchResult Solve(int64_t cap, int heuristic, int64_t node_limit, Clock::time_point deadline,
                     std::vector<int64_t>& offsets, const std::atomic<bool>* stop = nullptr);

  int64_t nodes_used() const { return nodes_used_; }

 private:
  // The private methods are defined in branch_and_bound.cc, their only user; inline as they were
  // when the class was defined in one file, so that the search loop inlines its helpers.
  struct Candidate {
    int64_t offset;
    int rank;
    int item;
    bool operator<(const Candidate& o) const {
      return offset != o.offset ? offset < o.offset : rank < o.rank;
    }
  };

  // Static preorder of `members` under heuristic_: rank_[i] is i's position among them. `total`
  // gives each buffer's largest section total (of the buffers still to place).
  inline void Rank(std::vector<int> members, const std::vector<int64_t>& total);

  // Splits the unplaced `members` over sections [lo, hi) at boundaries no unplaced buffer
  // crosses, and solves every piece on its own; one infeasible piece makes the whole infeasible.
  // `floor_offset` is the offset of the placement that made the split: the canonical order places
  // every remaining buffer at or above it, in every piece. All pieces pass the section check
  // against it before any is searched, so no search of an early piece is spent on a split that a
  // later piece makes infeasible.
  inline SearchResult SplitAndSolve(const std::vector<int>& members, int lo, int hi, int depth,
                                    int64_t floor_offset);

  inline bool OutOfBudget();

  // Depth-first search over the unplaced buffers of `members` (sections [lo, hi)). Buffers are
  // placed in non-decreasing (offset, rank) order, each at the lowest offset it can take.
  //
  // `parent` (if not null) is the parent node's sorted candidate list; the child's list is then
  // derived from it in linear time: drop the buffer just placed, re-insert the buffers whose
  // lowest offset the placement raised (recorded in trail_min_off_ from `trail_begin` on).
  inline SearchResult Search(const std::vector<int>& members, int lo, int hi, int64_t last_offset,
                             int last_rank, int depth,
                             const std::vector<Candidate>* parent = nullptr,
                             size_t trail_begin = 0);

  inline void Place(int i, int64_t offset);

  inline void Unplace(int i, size_t floor_mark, size_t min_off_mark);

  // Symmetry: two buffers with the same sections (twins) that touch, one directly on top of the
  // other, can swap places without changing anything else. The search keeps only the placements
  // where the lower of touching twins comes first in twin_order_ (the preorder at the start of
  // Solve, fixed for the whole search): true if placing `i` at `offset` would break that.
  inline bool OnTwinOutOfOrder(int i, int64_t offset) const;

  // Every section's unplaced buffers must still stack under the capacity, starting no lower than
  // the section's floor, the last placed offset (later placements never go lower) and the lowest
  // offset any of them can take. `cands` (the unplaced buffers, sorted by lowest offset) paints
  // each section with the lowest offset of its first buffer, skipping painted sections.
  // Also sets `min_height`, the lowest top any candidate can reach (when feasible).
  inline bool Feasible(const std::vector<Candidate>& cands, int64_t last_offset,
                       int64_t& min_height);

  const Items* items_ = nullptr;
  bool prepared_ = false;
  std::vector<std::vector<int>> overlaps_;
  std::vector<std::vector<int>> twins_;  // Overlapping buffers with the same sections.
  std::vector<int64_t> base_total_;
  std::vector<int64_t> item_total_;
  std::vector<int64_t> piece_total_;  // Scratch for Rank() in SplitAndSolve().
  int heuristic_ = 0;
  bool rerank_ = false;

  int64_t cap_ = 0;
  Clock::time_point deadline_;
  const std::atomic<bool>* stop_ = nullptr;
  int64_t nodes_left_ = 0;
  int64_t nodes_used_ = 0;
  int clock_countdown_ = 0;
  std::vector<int64_t> off_, min_off_, solution_, floor_, total_;
  std::vector<int> cuts_, rank_, twin_order_;
  std::vector<Candidate> split_cands_;  // Scratch for the section check in SplitAndSolve().
  std::vector<uint32_t> stamp_;  // Marks buffers whose lowest offset the last placement raised.
  uint32_t stamp_value_ = 0;
  std::vector<Candidate> changed_;
  std::vector<int> next_unpainted_;  // Union-find "next unpainted section" for Feasible().
  std::vector<uint64_t> paint_epoch_;
  uint64_t epoch_ = 0;
  std::vector<std::pair<int, int64_t>> trail_floor_, trail_min_off_;
  std::vector<std::vector<Candidate>> candidates_;
};

// Runs every preorder concurrently (one thread each) on `target` until one finds a placement,
// one proves that none exists, or `deadline`. No search is restarted, unlike the round-robin.
SearchResult Portfolio(std::vector<BranchAndBound>& solvers, const Items& items, int64_t target,
                       Clock::time_point deadline, std::vector<int64_t>& found, int64_t& nodes);

}  // namespace internal
}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_INTERNAL_BRANCH_AND_BOUND_H_
