#include "policy/internal/constrained_search.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "policy/memory_allocator_policy.h"

namespace accelmem {
namespace policy {
namespace internal {

void PoolSearch::Run(PoolResult* out, std::vector<uint64_t>* offsets) {
  bounds_ = ComputeBounds(m_);
  out->load = bounds_.load;
  out->load_time = bounds_.load_time;
  out->reuse_lower_bound = bounds_.reuse;
  out->peak_lower_bound = bounds_.peak;
  if (!bounds_.infeasible_reason.empty()) {
    out->status = ConstrainedStatus::kInfeasible;
    out->reason = bounds_.infeasible_reason;
    return;
  }
  Greedy();
  if (!best_offsets_.empty() && !Proven() && n_ <= kCoverItems && !bounds_.cover_cliques.empty()) {
    RaiseCoverBound();
  }
  if (!search_) {
    if (SubsetBoundApplies()) RaiseSubsetBound();
  } else if (!best_offsets_.empty() && !Proven() && n_ > kExactItems) {
    // Large pools: improve the incumbent by re-inserting neighbourhoods for half the time,
    // then let the branch and bound use the rest (it rarely ends at this size).
    Improve(absl::Now() + (deadline_ - absl::Now()) / 2);
  }
  if (search_ && (best_score_.first == kInfinity || !Proven())) {
    if (SubsetBoundApplies()) {
      // Most pools end their search early: give it a short slice first, and pay for the subset
      // bound only when it does not end, then search again with what is left.
      const absl::Time now = absl::Now();
      RunSearch(now + std::min(kFirstSearch, (deadline_ - now) / 4));
      if (!exhausted_ && !Proven()) {
        RaiseSubsetBound();
        if (!Proven()) RunSearch(deadline_);
      }
    } else {
      RunSearch(deadline_);
    }
  }
  out->search_nodes = nodes_;
  out->method = "constrained";
  if (best_offsets_.empty()) {
    if (exhausted_) {
      out->status = ConstrainedStatus::kInfeasible;
      out->reason = "exhaustive search: no placement satisfies every constraint";
    } else {
      out->status = ConstrainedStatus::kNoFitWithinBudget;
      out->reason = "no placement found within the budget";
    }
    return;
  }
  *offsets = best_offsets_;
  out->reuse_cost = best_reuse_;
  out->peak = best_peak_;
  if (exhausted_ || Proven()) {
    // Either the bounds meet the incumbent, or the search visited every canonical placement
    // that could beat it.
    out->status = ConstrainedStatus::kOptimal;
    out->reuse_lower_bound = best_reuse_;
    out->peak_lower_bound = peak_matters_ ? best_peak_ : bounds_.peak;
  } else {
    out->status = ConstrainedStatus::kFeasible;
    out->reuse_lower_bound = bounds_.reuse;  // Raised by CoverBound after the first report.
    out->peak_lower_bound = bounds_.peak;
    out->reason = "the budget ran out before the lower bounds met the placement";
  }
}

bool PoolSearch::Proven() const {
  if (best_offsets_.empty()) return false;
  return (!reuse_matters_ || best_reuse_ == bounds_.reuse) &&
         (!peak_matters_ || best_peak_ == bounds_.peak);
}

void PoolSearch::RaiseCoverBound() {
  const CoverSystem covers = BuildCovers(m_, bounds_.cover_cliques, bounds_.usable);
  if (covers.covers.empty()) return;
  const absl::Time now = absl::Now();
  const absl::Time until = now + (deadline_ - now) / (SubsetBoundApplies() ? 4 : 2);
  bounds_.reuse = std::max(bounds_.reuse, CoverBound(covers, bounds_.reuse, until));
}

bool PoolSearch::SubsetBoundApplies() const {
  return subset_bound_ && reuse_matters_ && m_.has_capacity && m_.any_penalty &&
         n_ <= kCoverItems && !best_offsets_.empty() && !Proven();
}

void PoolSearch::RaiseSubsetBound() {
  auto part_bound = [](const PoolModel& part, absl::Time deadline) -> uint64_t {
    PoolSearch nested(part, /*reuse_first=*/true, /*reuse_matters=*/true,
                      /*peak_matters=*/false, deadline);
    nested.set_subset_bound(false);
    PoolResult result;
    std::vector<uint64_t> offsets;
    nested.Run(&result, &offsets);
    // Infeasible cannot happen (the incumbent restricted to the part fits); it claims nothing.
    return result.status == ConstrainedStatus::kInfeasible ? 0 : result.reuse_lower_bound;
  };
  const uint64_t bound = SubsetBound(m_, best_offsets_, best_reuse_, deadline_, part_bound);
  bounds_.reuse = std::max(bounds_.reuse, bound);
}

// Terms the objective does not name count as 0, so the search does not chase them.
Score PoolSearch::MakeScore(uint64_t reuse, uint64_t peak) const {
  if (!reuse_matters_) reuse = 0;
  if (!peak_matters_) peak = 0;
  return reuse_first_ ? Score{reuse, peak} : Score{peak, reuse};
}

// Is [offset, offset + extent) free of the reserved ranges, within capacity and clear of every
// placed item that `item` conflicts with?
bool PoolSearch::Fits(int item, uint64_t offset) const {
  const Item& it = m_.items[item];
  if (offset % it.alignment != 0) return false;
  if (it.pinned && offset != it.pin_offset) return false;
  if (offset + it.extent > m_.capacity) return false;
  for (const DsaAddressRange& r : m_.reserved) {
    if (Overlap(offset, it.extent, r.begin, r.end - r.begin)) return false;
  }
  for (int k : m_.conflicts_of[item]) {
    if (placed_[k] && Overlap(offset, it.extent, offsets_[k], m_.items[k].extent)) return false;
  }
  for (int k : m_.exact_of[item]) {  // The same base, or no byte in common.
    if (placed_[k] && offset != offsets_[k] &&
        Overlap(offset, it.extent, offsets_[k], m_.items[k].extent)) {
      return false;
    }
  }
  return true;
}

uint64_t PoolSearch::CostAt(int item, uint64_t offset) const {
  uint64_t cost = 0;
  const uint64_t extent = m_.items[item].extent;
  for (const auto& [k, w] : m_.penalties_of[item]) {
    if (placed_[k] && Overlap(offset, extent, offsets_[k], m_.items[k].extent)) cost += w;
  }
  return cost;
}

// Offsets an item may rest on: the bottom, reserved ends and tops of placed items.
void PoolSearch::Candidates(int item, uint64_t floor, std::vector<uint64_t>* out) const {
  out->clear();
  const Item& it = m_.items[item];
  if (it.pinned) {
    if (it.pin_offset >= floor) out->push_back(it.pin_offset);
    return;
  }
  // An item of an exact group may rest at its group's base, which the group's largest alignment
  // rounds (the group moved down as one), or at a placed member's offset (a pinned one).
  const int group = m_.exact_group[item];
  auto add = [&](uint64_t top) {
    const uint64_t o = AlignUp(top, it.alignment);
    if (o >= floor) out->push_back(o);
    if (group < 0) return;
    for (uint64_t alignment : m_.exact_alignments[group]) {
      if (alignment <= it.alignment) continue;
      const uint64_t g = AlignUp(top, alignment);
      if (g >= floor) out->push_back(g);
    }
  };
  add(0);
  for (const DsaAddressRange& r : m_.reserved) add(r.end);
  for (size_t k = 0; k < n_; ++k) {
    if (placed_[k]) add(offsets_[k] + m_.items[k].extent);
  }
  if (group >= 0) {
    for (int k : m_.exact_members[group]) {
      if (placed_[k] && offsets_[k] >= floor && offsets_[k] % it.alignment == 0) {
        out->push_back(offsets_[k]);
      }
    }
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
}

void PoolSearch::Reset() {
  placed_.assign(n_, 0);
  offsets_.assign(n_, 0);
}

void PoolSearch::Record(uint64_t reuse, uint64_t peak) {
  const Score score = MakeScore(reuse, peak);
  if (score < best_score_) {
    best_score_ = score;
    best_reuse_ = reuse;
    best_peak_ = peak;
    best_offsets_ = offsets_;
  }
}

uint64_t PoolSearch::PeakOfPlaced() const {
  uint64_t peak = m_.reserved_end;
  for (size_t k = 0; k < n_; ++k) {
    if (placed_[k]) peak = std::max(peak, offsets_[k] + m_.items[k].extent);
  }
  return peak;
}

// Greedy: items in an order, each at the candidate offset of least (cost, top).
void PoolSearch::Greedy() {
  std::vector<std::vector<int>> orders;
  std::vector<int> base(n_);
  std::iota(base.begin(), base.end(), 0);
  auto start = [&](int i) { return m_.items[i].intervals.front().lower; };
  auto length = [&](int i) {
    int64_t len = 0;
    for (const DsaInterval& x : m_.items[i].intervals) len += x.upper - x.lower;
    return len;
  };
  auto pinned_first = [&](std::vector<int> order) {
    std::stable_partition(order.begin(), order.end(), [&](int i) { return m_.items[i].pinned; });
    return order;
  };
  std::vector<int> by_size = base;
  // Size, then birth: the first-fit order of the MiniMalloc lifts' capacity reference.
  std::stable_sort(by_size.begin(), by_size.end(), [&](int a, int b) {
    if (m_.items[a].extent != m_.items[b].extent) return m_.items[a].extent > m_.items[b].extent;
    return start(a) < start(b);
  });
  std::vector<int> by_start = base;
  std::stable_sort(by_start.begin(), by_start.end(),
                   [&](int a, int b) { return start(a) < start(b); });
  std::vector<int> by_length = base;
  std::stable_sort(by_length.begin(), by_length.end(),
                   [&](int a, int b) { return length(a) > length(b); });
  std::vector<int> by_degree = base;
  std::stable_sort(by_degree.begin(), by_degree.end(), [&](int a, int b) {
    return m_.conflicts_of[a].size() + m_.penalties_of[a].size() >
           m_.conflicts_of[b].size() + m_.penalties_of[b].size();
  });
  for (auto* order : {&by_size, &by_start, &by_length, &by_degree, &base}) {
    orders.push_back(pinned_first(*order));
  }
  std::vector<uint64_t> candidates;
  for (int pass = 0; pass < 2; ++pass) {
    // Pass 0 takes the least cost first; pass 1 the lowest top first (tighter packing).
    for (const std::vector<int>& order : orders) {
      Reset();
      uint64_t reuse = 0;
      bool ok = true;
      for (int item : order) {
        Candidates(item, 0, &candidates);
        uint64_t best_o = 0, best_c = kInfinity, best_top = kInfinity;
        bool found = false;
        for (uint64_t o : candidates) {
          if (!Fits(item, o)) continue;
          const uint64_t c = CostAt(item, o);
          const uint64_t top = o + m_.items[item].extent;
          const bool better = pass == 0 ? (c < best_c || (c == best_c && top < best_top))
                                        : (top < best_top || (top == best_top && c < best_c));
          if (!found || better) {
            found = true;
            best_o = o;
            best_c = c;
            best_top = top;
          }
        }
        if (!found) {
          ok = false;
          break;
        }
        offsets_[item] = best_o;
        placed_[item] = 1;
        reuse += best_c;
      }
      if (ok) Record(reuse, PeakOfPlaced());
      if (Proven()) return;
    }
  }
}

// Total cost of the items' penalty edges at the current offsets (all placed).
uint64_t PoolSearch::CurrentReuse() const {
  uint64_t cost = 0;
  for (size_t i = 0; i < n_; ++i) {
    for (const auto& [k, w] : m_.penalties_of[i]) {
      if (static_cast<size_t>(k) > i &&
          Overlap(offsets_[i], m_.items[i].extent, offsets_[k], m_.items[k].extent)) {
        cost += w;
      }
    }
  }
  return cost;
}

namespace {

// xorshift64: the neighbourhoods of Improve, deterministic for a given budget.
uint64_t NextRandom(uint64_t* state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

}  // namespace

void PoolSearch::TakeNeighbourhood(uint64_t* random, std::vector<uint8_t>* chosen,
                                   std::vector<int>* removed) const {
  auto next = [&]() { return NextRandom(random); };
  removed->clear();
  std::fill(chosen->begin(), chosen->end(), 0);
  auto take = [&](int i) {
    if (!(*chosen)[i] && !m_.items[i].pinned) {
      (*chosen)[i] = 1;
      removed->push_back(i);
    }
  };
  std::vector<std::pair<int, int>> paid;
  for (size_t i = 0; i < n_; ++i) {
    for (const auto& [k, w] : m_.penalties_of[i]) {
      if (static_cast<size_t>(k) > i &&
          Overlap(offsets_[i], m_.items[i].extent, offsets_[k], m_.items[k].extent)) {
        paid.push_back({static_cast<int>(i), k});
      }
    }
  }
  const size_t want = 4 + next() % 12;
  // Bounded tries: paid edges may share their ends, and pinned items are never taken, so
  // `want` items may not exist.
  const size_t tries = 8 * want;
  if (!paid.empty() && next() % 4 != 0) {
    for (size_t t = 0; removed->size() < want && t < tries; ++t) {
      const auto& edge = paid[next() % paid.size()];
      take(edge.first);
      take(edge.second);
      const int around = next() % 2 ? edge.first : edge.second;
      if (!m_.conflicts_of[around].empty()) {
        take(m_.conflicts_of[around][next() % m_.conflicts_of[around].size()]);
      }
      if (paid.size() * 2 < want && removed->size() >= paid.size() * 2) break;
    }
  } else {
    for (size_t t = 0; removed->size() < want && t < tries; ++t) take(next() % n_);
  }
}

bool PoolSearch::Reinsert(const std::vector<int>& removed) {
  std::vector<uint64_t> positions;
  for (int item : removed) {
    const uint64_t extent = m_.items[item].extent;
    const uint64_t align = m_.items[item].alignment;
    positions.clear();
    positions.push_back(0);
    for (const DsaAddressRange& r : m_.reserved) positions.push_back(AlignUp(r.end, align));
    for (size_t k = 0; k < n_; ++k) {
      if (!placed_[k]) continue;
      positions.push_back(AlignUp(offsets_[k] + m_.items[k].extent, align));
      if (offsets_[k] >= extent) positions.push_back((offsets_[k] - extent) / align * align);
    }
    for (int k : m_.exact_of[item]) {  // In place: a partner's base.
      if (placed_[k]) positions.push_back(offsets_[k]);
    }
    uint64_t best_o = 0, best_c = kInfinity, best_top = kInfinity;
    for (uint64_t o : positions) {
      if (!Fits(item, o)) continue;
      const uint64_t c = CostAt(item, o);
      if (c < best_c || (c == best_c && o + extent < best_top)) {
        best_o = o;
        best_c = c;
        best_top = o + extent;
      }
    }
    if (best_c == kInfinity) return false;
    offsets_[item] = best_o;
    placed_[item] = 1;
  }
  return true;
}

void PoolSearch::Improve(absl::Time until) {
  uint64_t random = 0x9e3779b97f4a7c15ULL;  // Fixed seed: deterministic for a given budget.
  std::vector<int> removed;
  std::vector<uint8_t> chosen(n_, 0);
  for (int64_t round = 0;; ++round) {
    if ((round & 15) == 0 && absl::Now() > until) break;
    offsets_ = best_offsets_;
    placed_.assign(n_, 1);
    TakeNeighbourhood(&random, &chosen, &removed);
    for (int i : removed) placed_[i] = 0;
    // Re-insert in a random order, biggest first half of the time.
    for (size_t i = removed.size(); i > 1; --i) {
      std::swap(removed[i - 1], removed[NextRandom(&random) % i]);
    }
    if (NextRandom(&random) % 2) {
      std::stable_sort(removed.begin(), removed.end(),
                       [&](int a, int b) { return m_.items[a].extent > m_.items[b].extent; });
    }
    if (!Reinsert(removed)) continue;
    const uint64_t reuse = CurrentReuse();
    const uint64_t peak = PeakOfPlaced();
    if (!(best_score_ < MakeScore(reuse, peak))) {
      best_score_ = MakeScore(reuse, peak);
      best_reuse_ = reuse;
      best_peak_ = peak;
      best_offsets_ = offsets_;
      if (Proven()) break;
    }
  }
  Reset();
}

bool PoolSearch::OutOfTime() {
  if ((++nodes_ & 255) == 0 && absl::Now() > search_until_) timed_out_ = true;
  return timed_out_;
}

void PoolSearch::RunSearch(absl::Time until) {
  search_until_ = until;
  if (OnGrid()) {
    GridSearch();
  } else {
    Search();
  }
  search_until_ = deadline_;
}

// Extents that are all multiples of one unit u (their gcd), alignments dividing u, nothing
// reserved or pinned, a capacity of at most 64 units: every canonical placement puts items at
// multiples of u (each rests on the bottom or on a top, and tops are multiples of u), so
// trying every multiple of u for every item is complete. With equal extents the pool is
// capacity / u slots and placement is colouring.
bool PoolSearch::OnGrid() {
  if (!m_.has_capacity || !m_.reserved.empty() || n_ < 2) return false;
  uint64_t u = 0;
  for (const Item& item : m_.items) u = std::gcd(u, item.extent);
  if (u == 0 || m_.capacity / u > 64) return false;
  for (const Item& item : m_.items) {
    if (item.pinned || u % item.alignment != 0) return false;
  }
  unit_ = u;
  uniform_ = true;
  for (const Item& item : m_.items) uniform_ = uniform_ && item.extent == u;
  return true;
}

// Depth-first in order of birth (an item's penalty partners born before it are placed when it
// is), every grid offset per item, bounded by each unplaced item's cheapest offset against
// the placed items plus the packed cores among unplaced items. Symmetry: with equal extents,
// slots are opened in order (an exact pair in one slot shares its base); otherwise the first
// item stays in the lower half (mirroring the pool keeps every overlap), unless exact pairs
// exist.
void PoolSearch::GridSearch() {
  order_.resize(n_);
  std::iota(order_.begin(), order_.end(), 0);
  std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) {
    return m_.items[a].intervals.front().lower < m_.items[b].intervals.front().lower;
  });
  // Pair items born in turn that must stay apart (live together): their joint cheapest
  // offsets bound better than each one's alone.
  partner_.assign(n_, -1);
  for (size_t d = 0; d + 1 < n_; ++d) {
    const int a = order_[d];
    if (partner_[a] >= 0) continue;
    for (size_t f = d + 1; f < n_ && f < d + 4; ++f) {
      const int b = order_[f];
      if (partner_[b] < 0 && m_.conflict[a][b]) {
        partner_[a] = b;
        partner_[b] = a;
        break;
      }
    }
  }
  Reset();
  timed_out_ = false;
  GridDfs(0, 0, 0);
  exhausted_ = !timed_out_;
  Reset();
}

// Grid offsets item `j` may take; `used` is the number of slots opened (equal extents only).
int PoolSearch::GridOffsets(int j, size_t depth, int used, uint64_t* out) const {
  const uint64_t extent = m_.items[j].extent;
  int count = 0;
  if (uniform_) {
    const int slots = static_cast<int>(m_.capacity / unit_);
    for (int c = 0; c < std::min(slots, used + 1); ++c) out[count++] = c * unit_;
    return count;
  }
  if (extent > m_.capacity) return 0;
  uint64_t last = m_.capacity - extent;
  // Mirroring maps a shared base to a shared top: no symmetry once exact pairs exist.
  if (depth == 0 && m_.exact_pairs.empty()) last /= 2;
  for (uint64_t o = 0; o <= last; o += unit_) out[count++] = o;
  return count;
}

void PoolSearch::GridDfs(size_t depth, int used, uint64_t reuse) {
  if (OutOfTime()) return;
  if (depth == n_) {
    Record(reuse, PeakOfPlaced());
    return;
  }
  uint64_t offsets[65];
  uint64_t extra = 0;
  // Each unplaced item's feasible offsets and their cost against the placed items.
  for (size_t d = depth; d < n_; ++d) {
    const int j = order_[d];
    // Any slot: later items may open the ones not open yet.
    const int count = GridOffsets(j, d, kAllSlots, offsets);
    std::vector<std::pair<uint64_t, uint64_t>>& options = options_[j];
    options.clear();
    for (int i = 0; i < count; ++i) {
      if (Fits(j, offsets[i])) options.push_back({offsets[i], CostAt(j, offsets[i])});
    }
    if (options.empty()) return;
  }
  for (size_t d = depth; d < n_; ++d) {
    const int j = order_[d];
    const int k = partner_[j];
    if (k >= 0 && !placed_[k] && k < j) continue;  // Counted with its partner.
    uint64_t least = kInfinity;
    if (k >= 0 && !placed_[k]) {
      const uint64_t ej = m_.items[j].extent, ek = m_.items[k].extent;
      for (const auto& [oj, cj] : options_[j]) {
        if (cj >= least) continue;
        for (const auto& [ok, ck] : options_[k]) {
          if (cj + ck < least && !Overlap(oj, ej, ok, ek)) least = cj + ck;
        }
      }
    } else {
      for (const auto& option : options_[j]) least = std::min(least, option.second);
    }
    if (least == kInfinity) return;
    extra += least;
  }
  if (!bounds_.cores.edges.empty()) {
    uint64_t open = 0, undecided = 0;
    CoreBoundsAt(bounds_.cores, placed_, &open, &undecided);
    extra = std::max(extra + open, undecided);
  }
  if (!(MakeScore(reuse + extra, PeakOfPlaced()) < best_score_)) return;
  const int item = order_[depth];
  struct Choice {
    uint64_t cost;
    uint64_t offset;
  };
  Choice choices[65];
  int count = 0;
  const int n_offsets = GridOffsets(item, depth, used, offsets);
  for (int i = 0; i < n_offsets; ++i) {
    if (Fits(item, offsets[i])) choices[count++] = {CostAt(item, offsets[i]), offsets[i]};
  }
  std::sort(choices, choices + count, [](const Choice& a, const Choice& b) {
    return a.cost != b.cost ? a.cost < b.cost : a.offset < b.offset;
  });
  for (int i = 0; i < count; ++i) {
    offsets_[item] = choices[i].offset;
    placed_[item] = 1;
    const int slot = static_cast<int>(choices[i].offset / unit_);
    GridDfs(depth + 1, std::max(used, slot + 1), reuse + choices[i].cost);
    placed_[item] = 0;
    if (timed_out_ || Proven()) return;
  }
}

// Every unplaced item goes at or above the floor. At each time, a clique of the unplaced items
// live then must fit in [floor, capacity) beside the reserved bytes there and beside the placed
// items live then that conflict with all of the clique. False: no completion exists.
bool PoolSearch::SpaceAboveFloor(uint64_t floor) {
  if (floor >= m_.capacity) return remaining_ == 0;
  uint64_t reserved_above = 0;
  for (const DsaAddressRange& r : m_.reserved) {
    if (r.end > floor) reserved_above += r.end - std::max(r.begin, floor);
  }
  const uint64_t room = m_.capacity - floor - std::min(reserved_above, m_.capacity - floor);
  for (const std::vector<int>& live : live_at_) {
    clique_.clear();
    uint64_t need = 0;
    for (int c : live) {  // Sorted by extent, largest first.
      if (placed_[c]) continue;
      bool ok = true;
      for (int k : clique_) ok = ok && m_.conflict[c][k];
      if (ok) {
        clique_.push_back(c);
        need += m_.items[c].extent;
      }
    }
    if (need == 0) continue;
    // Placed items may overlap each other (temporal exclusions): count their union.
    blocked_.clear();
    for (int k : live) {
      if (!placed_[k]) continue;
      const uint64_t top = offsets_[k] + m_.items[k].extent;
      if (top <= floor) continue;
      bool all = true;
      for (int c : clique_) all = all && m_.conflict[c][k];
      if (all) blocked_.push_back({std::max(offsets_[k], floor), top});
    }
    std::sort(blocked_.begin(), blocked_.end());
    uint64_t blocked = 0, covered_to = floor;
    for (const auto& [begin, end] : blocked_) {
      if (end > covered_to) {
        blocked += end - std::max(begin, covered_to);
        covered_to = end;
      }
    }
    if (need + blocked > room) return false;
  }
  return true;
}

// Branch and bound over canonical placements in non-decreasing offset order.
void PoolSearch::Search() {
  Reset();
  // The items live at each start time, largest first (for SpaceAboveFloor).
  live_at_.clear();
  for (LiveSet& live : LiveSets(m_)) {
    std::stable_sort(live.items.begin(), live.items.end(),
                     [&](int a, int b) { return m_.items[a].extent > m_.items[b].extent; });
    if (live.items.size() > 1) live_at_.push_back(std::move(live.items));
  }
  // Pinned items are placed first and do not take part in the offset order.
  uint64_t reuse = 0;
  for (size_t i = 0; i < n_; ++i) {
    if (!m_.items[i].pinned) continue;
    // ComputeBounds proves a pin that cannot hold infeasible before any search; this keeps the
    // search from ever recording such a placement.
    if (!Fits(static_cast<int>(i), m_.items[i].pin_offset)) {
      exhausted_ = true;
      return;
    }
    reuse += CostAt(static_cast<int>(i), m_.items[i].pin_offset);
    offsets_[i] = m_.items[i].pin_offset;
    placed_[i] = 1;
  }
  remaining_ = 0;
  for (size_t i = 0; i < n_; ++i) remaining_ += !placed_[i];
  timed_out_ = false;
  Dfs(0, -1, reuse);
  exhausted_ = !timed_out_;
}

void PoolSearch::Dfs(uint64_t floor, int last_at_floor, uint64_t reuse) {
  if (OutOfTime()) return;
  const uint64_t peak = PeakOfPlaced();
  if (remaining_ == 0) {
    Record(reuse, peak);
    return;
  }
  // Bound: every unplaced item needs a position at or above the floor; its least extra cost
  // against the placed items, and its least top, bound what is left.
  uint64_t extra = 0;
  uint64_t peak_bound = std::max(peak, bounds_.peak);
  struct Move {
    uint64_t cost;
    uint64_t top;
    int item;
    uint64_t offset;
  };
  std::vector<Move> moves;
  std::vector<uint64_t> candidates;
  for (size_t i = 0; i < n_; ++i) {
    if (placed_[i]) continue;
    const int item = static_cast<int>(i);
    Candidates(item, floor, &candidates);
    const uint64_t lifted = AlignUp(floor, m_.items[i].alignment);
    uint64_t least_cost = kInfinity, least_top = kInfinity;
    if (!m_.items[i].pinned && Fits(item, lifted)) {
      least_cost = CostAt(item, lifted);
      least_top = lifted + m_.items[i].extent;
    }
    for (uint64_t o : candidates) {
      if (!Fits(item, o)) continue;
      const uint64_t c = CostAt(item, o);
      least_cost = std::min(least_cost, c);
      least_top = std::min(least_top, o + m_.items[i].extent);
      if (o == floor && item <= last_at_floor) continue;  // Same offset: index order only.
      moves.push_back({c, o + m_.items[i].extent, item, o});
    }
    if (least_cost == kInfinity) return;  // This item can no longer be placed.
    extra += least_cost;
    peak_bound = std::max(peak_bound, least_top);
  }
  if (m_.has_capacity && !SpaceAboveFloor(floor)) return;
  if (!bounds_.cores.edges.empty()) {
    uint64_t open = 0, undecided = 0;
    CoreBoundsAt(bounds_.cores, placed_, &open, &undecided);
    extra = std::max(extra + open, undecided);
  }
  if (!(MakeScore(reuse + extra, peak_bound) < best_score_)) return;
  std::sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) {
    if (a.cost != b.cost) return a.cost < b.cost;
    if (a.offset != b.offset) return a.offset < b.offset;
    return a.item < b.item;
  });
  for (const Move& move : moves) {
    if (!(MakeScore(reuse + move.cost, std::max(peak_bound, move.top)) < best_score_)) continue;
    offsets_[move.item] = move.offset;
    placed_[move.item] = 1;
    --remaining_;
    Dfs(move.offset, move.offset == floor ? std::max(move.item, last_at_floor) : move.item,
        reuse + move.cost);
    ++remaining_;
    placed_[move.item] = 0;
    if (timed_out_ || Proven()) return;
  }
}

}  // namespace internal
}  // namespace policy
}  // namespace accelmem
