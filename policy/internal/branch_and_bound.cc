#include "policy/internal/branch_and_bound.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <thread>

namespace accelmem {
namespace policy {
namespace internal {

bool BranchAndBound::Prepare(const Items& items, int64_t max_pairs) {
  items_ = &items;
  const int n = items.count();
  const int num_sections = items.num_sections;
  // Overlap lists with a sweep over sections.
  std::vector<std::vector<int>> starts(num_sections + 1);
  for (int i = 0; i < n; ++i) starts[items.lo[i]].push_back(i);
  overlaps_.assign(n, {});
  std::vector<int> active;
  int64_t pairs = 0;
  for (int s = 0; s < num_sections; ++s) {
    active.erase(
        std::remove_if(active.begin(), active.end(), [&](int j) { return items.hi[j] <= s; }),
        active.end());
    for (int i : starts[s]) {
      pairs += static_cast<int64_t>(active.size());
      if (pairs > max_pairs) return false;
      for (int j : active) {
        overlaps_[i].push_back(j);
        overlaps_[j].push_back(i);
      }
      active.push_back(i);
    }
  }
  int64_t spans = 0;
  for (int i = 0; i < n; ++i) spans += items.hi[i] - items.lo[i];
  if (spans > 4 * max_pairs + 1000000) return false;
  base_total_.assign(num_sections, 0);
  for (int i = 0; i < n; ++i) {
    for (int s = items.lo[i]; s < items.hi[i]; ++s) base_total_[s] += items.size[i];
  }
  item_total_.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    for (int s = items.lo[i]; s < items.hi[i]; ++s) {
      item_total_[i] = std::max(item_total_[i], base_total_[s]);
    }
  }
  twins_.assign(n, {});
  for (int i = 0; i < n; ++i) {
    for (int j : overlaps_[i]) {
      if (items.lo[j] == items.lo[i] && items.hi[j] == items.hi[i]) twins_[i].push_back(j);
    }
  }
  prepared_ = true;
  return true;
}

SearchResult BranchAndBound::Solve(int64_t cap, int heuristic, int64_t node_limit,
                                   Clock::time_point deadline, std::vector<int64_t>& offsets,
                                   const std::atomic<bool>* stop) {
  const Items& items = *items_;
  const int n = items.count();
  const int num_sections = items.num_sections;
  cap_ = cap;
  deadline_ = deadline;
  stop_ = stop;
  nodes_left_ = node_limit;
  clock_countdown_ = 0;
  off_.assign(n, -1);
  min_off_.assign(n, 0);
  solution_.assign(n, 0);
  floor_.assign(num_sections, 0);
  total_ = base_total_;
  cuts_.assign(std::max(num_sections - 1, 0), 0);
  for (int i = 0; i < n; ++i) {
    for (int k = items.lo[i]; k + 1 < items.hi[i]; ++k) ++cuts_[k];
  }
  next_unpainted_.assign(num_sections + 1, 0);
  paint_epoch_.assign(num_sections + 1, 0);
  epoch_ = 0;
  stamp_.assign(n, 0);
  stamp_value_ = 0;
  trail_floor_.clear();
  trail_min_off_.clear();
  // One candidate list per depth, sized up front so references stay valid during recursion.
  if (static_cast<int>(candidates_.size()) < n + 2) candidates_.resize(n + 2);
  heuristic_ = heuristic == 3 ? 0 : heuristic;
  rerank_ = heuristic != 3;
  piece_total_.assign(n, 0);
  std::vector<int> all(n);
  std::iota(all.begin(), all.end(), 0);
  rank_.assign(n, 0);
  Rank(all, item_total_);
  twin_order_ = rank_;
  nodes_used_ = 0;
  const SearchResult result = SplitAndSolve(all, 0, num_sections, 0, 0);
  if (result == SearchResult::kFound) offsets = solution_;
  return result;
}

inline void BranchAndBound::Rank(std::vector<int> members, const std::vector<int64_t>& total) {
  const Items& items = *items_;
  auto width = [&](int i) { return items.end[i] - items.start[i]; };
  auto area = [&](int i) {
    return static_cast<long double>(items.size[i]) * static_cast<long double>(width(i));
  };
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
    switch (heuristic_) {
      case 0:  // Total, width, area.
        if (total[a] != total[b]) return total[a] > total[b];
        if (width(a) != width(b)) return width(a) > width(b);
        return area(a) > area(b);
      case 1:  // Total, area, width.
        if (total[a] != total[b]) return total[a] > total[b];
        if (area(a) != area(b)) return area(a) > area(b);
        return width(a) > width(b);
      default:  // Width, area, total.
        if (width(a) != width(b)) return width(a) > width(b);
        if (area(a) != area(b)) return area(a) > area(b);
        return total[a] > total[b];
    }
  });
  for (size_t r = 0; r < members.size(); ++r) rank_[members[r]] = static_cast<int>(r);
}

inline SearchResult BranchAndBound::SplitAndSolve(const std::vector<int>& members, int lo, int hi,
                                                  int depth, int64_t floor_offset) {
  std::vector<int> cut_points;
  for (int k = lo; k + 1 < hi; ++k) {
    if (cuts_[k] == 0) cut_points.push_back(k + 1);
  }
  if (cut_points.empty()) return Search(members, lo, hi, floor_offset, -1, depth);
  // The section check of every piece at once (the pieces share no section).
  split_cands_.clear();
  for (int i : members) {
    if (off_[i] < 0) split_cands_.push_back({min_off_[i], rank_[i], i});
  }
  std::sort(split_cands_.begin(), split_cands_.end());
  int64_t min_height = std::numeric_limits<int64_t>::max();
  if (!Feasible(split_cands_, floor_offset, min_height)) return SearchResult::kNotFound;
  cut_points.push_back(hi);
  std::vector<std::vector<int>> pieces(cut_points.size());
  for (int i : members) {
    if (off_[i] >= 0) continue;
    const int piece = static_cast<int>(
        std::upper_bound(cut_points.begin(), cut_points.end(), items_->lo[i]) - cut_points.begin());
    pieces[piece].push_back(i);
  }
  // With rerank_, each piece is ranked afresh with the section totals of what is left to place
  // (as MiniMalloc's sub-solves do); the old ranks come back afterwards.
  std::vector<int> saved_rank;
  int piece_lo = lo;
  for (size_t p = 0; p < pieces.size(); ++p) {
    const int piece_hi = cut_points[p];
    if (!pieces[p].empty() && !rerank_) {
      const SearchResult r = Search(pieces[p], piece_lo, piece_hi, floor_offset, -1, depth);
      if (r != SearchResult::kFound) return r;
    } else if (!pieces[p].empty()) {
      saved_rank.clear();
      for (int i : pieces[p]) {
        saved_rank.push_back(rank_[i]);
        int64_t total = 0;
        for (int s = items_->lo[i]; s < items_->hi[i]; ++s) total = std::max(total, total_[s]);
        piece_total_[i] = total;
      }
      Rank(pieces[p], piece_total_);
      const SearchResult r = Search(pieces[p], piece_lo, piece_hi, floor_offset, -1, depth);
      for (size_t k = 0; k < pieces[p].size(); ++k) rank_[pieces[p][k]] = saved_rank[k];
      if (r != SearchResult::kFound) return r;
    }
    piece_lo = piece_hi;
  }
  return SearchResult::kFound;
}

inline bool BranchAndBound::OutOfBudget() {
  if (nodes_left_ <= 0) return true;
  --nodes_left_;
  ++nodes_used_;
  if (--clock_countdown_ <= 0) {
    clock_countdown_ = 256;
    if (Clock::now() >= deadline_ || (stop_ != nullptr && stop_->load(std::memory_order_relaxed))) {
      nodes_left_ = 0;
      return true;
    }
  }
  return false;
}

inline SearchResult BranchAndBound::Search(const std::vector<int>& members, int lo, int hi,
                                           int64_t last_offset, int last_rank, int depth,
                                           const std::vector<Candidate>* parent,
                                           size_t trail_begin) {
  if (OutOfBudget()) return SearchResult::kLimit;
  const Items& items = *items_;
  std::vector<Candidate>& cands = candidates_[depth];
  cands.clear();
  if (parent == nullptr) {
    for (int i : members) {
      if (off_[i] < 0) cands.push_back({min_off_[i], rank_[i], i});
    }
    std::sort(cands.begin(), cands.end());
  } else {
    ++stamp_value_;
    changed_.clear();
    for (size_t t = trail_begin; t < trail_min_off_.size(); ++t) {
      const int j = trail_min_off_[t].first;
      stamp_[j] = stamp_value_;
      changed_.push_back({min_off_[j], rank_[j], j});
    }
    std::sort(changed_.begin(), changed_.end());
    auto next = changed_.begin();
    for (const Candidate& c : *parent) {
      if (off_[c.item] >= 0 || stamp_[c.item] == stamp_value_) continue;
      while (next != changed_.end() && *next < c) cands.push_back(*next++);
      cands.push_back(c);
    }
    cands.insert(cands.end(), next, changed_.end());
  }
  if (cands.empty()) return SearchResult::kFound;
  int64_t min_height = std::numeric_limits<int64_t>::max();
  if (!Feasible(cands, std::max<int64_t>(last_offset, 0), min_height)) {
    return SearchResult::kNotFound;
  }
  // Canonical order: only candidates at or after (last_offset, last_rank); the others' orders
  // are explored elsewhere.
  const size_t first = static_cast<size_t>(
      std::lower_bound(cands.begin(), cands.end(), Candidate{last_offset, last_rank, -1}) -
      cands.begin());
  // A placement at offset o puts every later one at o or above, so the child fails its section
  // check once o + total > cap in any section of [lo, hi) (in the placed buffer's own sections
  // its top replaces its size, the same sum). Most children fail exactly so; stopping here
  // saves creating them. Candidates are sorted by offset: none after this one passes either.
  int64_t max_total = 0;
  for (int s = lo; s < hi; ++s) max_total = std::max(max_total, total_[s]);
  const int64_t highest_offset = cap_ - max_total;
  for (size_t c = first; c < cands.size(); ++c) {
    const Candidate cand = cands[c];
    if (cand.offset > highest_offset) break;
    // Dominance: a buffer could fit entirely below this offset; leaving that gap is never
    // needed. Candidates are sorted by offset, so none after this one qualifies either.
    if (cand.offset >= min_height) break;
    const int i = cand.item;
    const int64_t top = cand.offset + items.size[i];
    if (top > cap_ || OnTwinOutOfOrder(i, cand.offset)) continue;
    const size_t floor_mark = trail_floor_.size();
    const size_t min_off_mark = trail_min_off_.size();
    Place(i, cand.offset);
    bool split = false;
    for (int k = items.lo[i]; k + 1 < items.hi[i]; ++k) {
      if (--cuts_[k] == 0) split = true;
    }
    const SearchResult result =
        split ? SplitAndSolve(members, lo, hi, depth + 1, cand.offset)
              : Search(members, lo, hi, cand.offset, cand.rank, depth + 1, &cands, min_off_mark);
    for (int k = items.lo[i]; k + 1 < items.hi[i]; ++k) ++cuts_[k];
    Unplace(i, floor_mark, min_off_mark);
    if (result != SearchResult::kNotFound) return result;
  }
  return SearchResult::kNotFound;
}

inline bool BranchAndBound::OnTwinOutOfOrder(int i, int64_t offset) const {
  for (int j : twins_[i]) {
    if (off_[j] >= 0 && off_[j] + items_->size[j] == offset && twin_order_[j] > twin_order_[i]) {
      return true;
    }
  }
  return false;
}

inline void BranchAndBound::Place(int i, int64_t offset) {
  const Items& items = *items_;
  off_[i] = offset;
  solution_[i] = offset;
  const int64_t top = offset + items.size[i];
  for (int j : overlaps_[i]) {
    if (off_[j] >= 0 || min_off_[j] >= top) continue;
    trail_min_off_.push_back({j, min_off_[j]});
    min_off_[j] = top;
  }
  for (int s = items.lo[i]; s < items.hi[i]; ++s) {
    trail_floor_.push_back({s, floor_[s]});
    floor_[s] = std::max(floor_[s], top);
    total_[s] -= items.size[i];
  }
}

inline void BranchAndBound::Unplace(int i, size_t floor_mark, size_t min_off_mark) {
  const Items& items = *items_;
  while (trail_floor_.size() > floor_mark) {
    floor_[trail_floor_.back().first] = trail_floor_.back().second;
    trail_floor_.pop_back();
  }
  while (trail_min_off_.size() > min_off_mark) {
    min_off_[trail_min_off_.back().first] = trail_min_off_.back().second;
    trail_min_off_.pop_back();
  }
  for (int s = items.lo[i]; s < items.hi[i]; ++s) total_[s] += items.size[i];
  off_[i] = -1;
}

inline bool BranchAndBound::Feasible(const std::vector<Candidate>& cands, int64_t last_offset,
                                     int64_t& min_height) {
  const Items& items = *items_;
  // next_unpainted_[s] is only valid when paint_epoch_[s] is the current epoch (lazy reset).
  ++epoch_;
  auto find = [this](int s) {
    int root = s;
    while (paint_epoch_[root] == epoch_ && next_unpainted_[root] != root) {
      root = next_unpainted_[root];
    }
    while (s != root) {  // Path compression.
      const int next = next_unpainted_[s];
      next_unpainted_[s] = root;
      s = next;
    }
    return root;
  };
  for (const Candidate& c : cands) {
    min_height = std::min(min_height, c.offset + items.size[c.item]);
    const int end = items.hi[c.item];
    for (int s = find(items.lo[c.item]); s < end; s = find(s + 1)) {
      const int64_t base = std::max({floor_[s], last_offset, c.offset});
      if (base + total_[s] > cap_) return false;
      paint_epoch_[s] = epoch_;
      next_unpainted_[s] = s + 1;
    }
  }
  return true;
}

SearchResult Portfolio(std::vector<BranchAndBound>& solvers, const Items& items, int64_t target,
                       Clock::time_point deadline, std::vector<int64_t>& found, int64_t& nodes) {
  const int k = static_cast<int>(solvers.size());
  std::atomic<bool> stop{false};
  std::vector<SearchResult> results(k, SearchResult::kLimit);
  std::vector<std::vector<int64_t>> offsets(k);
  auto work = [&](int h) {
    results[h] = solvers[h].Solve(target, h, std::numeric_limits<int64_t>::max(), deadline,
                                  offsets[h], &stop);
    if (results[h] != SearchResult::kLimit) stop.store(true);
  };
  std::vector<std::thread> threads;
  for (int h = 1; h < k; ++h) threads.emplace_back(work, h);
  work(0);
  for (std::thread& t : threads) t.join();
  SearchResult result = SearchResult::kLimit;
  int64_t best = std::numeric_limits<int64_t>::max();
  for (int h = 0; h < k; ++h) {
    nodes += solvers[h].nodes_used();
    if (results[h] == SearchResult::kFound && ItemHeight(items, offsets[h]) < best) {
      best = ItemHeight(items, offsets[h]);
      found = std::move(offsets[h]);
      result = SearchResult::kFound;
    }
  }
  if (result == SearchResult::kFound) return result;
  for (int h = 0; h < k; ++h) {
    if (results[h] == SearchResult::kNotFound) return SearchResult::kNotFound;
  }
  return SearchResult::kLimit;
}

}  // namespace internal
}  // namespace policy
}  // namespace accelmem
