#include "policy/testing/brute_force.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <utility>

namespace accelmem {
namespace policy_testing {

using policy::DsaAddressRange;
using policy::DsaBuffer;
using policy::DsaInterval;
using policy::DsaObjectiveTerm;
using policy::DsaPair;
using policy::DsaPinnedAllocation;
using policy::DsaPlacement;
using policy::DsaPool;
using policy::DsaProblem;

static const DsaBuffer& BufferById(const DsaProblem& p, uint32_t id) {
  for (const DsaBuffer& b : p.buffers) {
    if (b.id == id) return b;
  }
  std::fprintf(stderr, "brute_force: no buffer %u\n", id);
  std::abort();
}

static bool PairIn(const std::vector<DsaPair>& pairs, uint32_t a, uint32_t b) {
  for (const DsaPair& x : pairs) {
    if ((x.first == a && x.second == b) || (x.first == b && x.second == a)) return true;
  }
  return false;
}

// Buffer id -> smallest id of its colocation class (merging labels until nothing changes).
std::map<uint32_t, uint32_t> ColocationLabels(const DsaProblem& p) {
  std::map<uint32_t, uint32_t> label;
  for (const DsaBuffer& b : p.buffers) label[b.id] = b.id;
  for (bool changed = true; changed;) {
    changed = false;
    for (const DsaPair& c : p.constraints.colocations) {
      const uint32_t la = label[c.first], lb = label[c.second];
      if (la == lb) continue;
      for (auto& [id, l] : label) {
        if (l == la || l == lb) l = std::min(la, lb);
      }
      changed = true;
    }
  }
  return label;
}

static bool TemporalConflict(const DsaProblem& p, const DsaBuffer& a, const DsaBuffer& b) {
  if (PairIn(p.constraints.temporal_exclusions, a.id, b.id)) return false;
  for (const DsaInterval& x : a.live_intervals) {
    for (const DsaInterval& y : b.live_intervals) {
      if (x.lower < y.upper && y.lower < x.upper) return true;
    }
  }
  return false;
}

static bool Overlap(uint64_t a, uint64_t sa, uint64_t b, uint64_t sb) {
  return a < b + sb && b < a + sa;
}

// Every hard constraint; empty when the placement is valid.
// Schema v1 measures overlaps between buffers by their colocation class's largest size.
static std::map<uint32_t, uint64_t> Extents(const DsaProblem& p) {
  const std::map<uint32_t, uint32_t> label = ColocationLabels(p);
  std::map<uint32_t, uint64_t> by_label, extent;
  for (const DsaBuffer& b : p.buffers) {
    by_label[label.at(b.id)] = std::max(by_label[label.at(b.id)], b.size);
  }
  for (const DsaBuffer& b : p.buffers) extent[b.id] = by_label[label.at(b.id)];
  return extent;
}

std::vector<std::string> HardViolations(const DsaProblem& p,
                                        const std::vector<DsaPlacement>& placements) {
  std::vector<std::string> errors;
  std::map<uint32_t, DsaPlacement> at;
  for (const DsaPlacement& x : placements) {
    if (!at.emplace(x.buffer, x).second) errors.push_back("placed twice");
  }
  if (at.size() != p.buffers.size()) errors.push_back("not every buffer placed");
  const std::map<uint32_t, uint64_t> ext = Extents(p);
  for (const DsaBuffer& b : p.buffers) {
    if (!at.count(b.id)) return {"buffer " + std::to_string(b.id) + " unplaced"};
  }
  const std::map<uint32_t, uint32_t> label = ColocationLabels(p);
  for (const DsaBuffer& b : p.buffers) {
    const DsaPlacement& x = at[b.id];
    const std::string name = "buffer " + std::to_string(b.id);
    if (std::find(b.allowed_pools.begin(), b.allowed_pools.end(), x.pool) == b.allowed_pools.end())
      errors.push_back(name + " in a disallowed pool");
    if (x.offset % b.alignment != 0) errors.push_back(name + " misaligned");
    for (const DsaPool& pool : p.pools) {
      if (pool.id != x.pool) continue;
      if (pool.capacity && x.offset + b.size > *pool.capacity) {
        errors.push_back(name + " over capacity");
      }
      for (const DsaAddressRange& r : pool.reserved_ranges) {
        if (Overlap(x.offset, b.size, r.begin, r.end - r.begin)) {
          errors.push_back(name + " on a reserved range");
        }
      }
    }
  }
  for (const DsaPair& c : p.constraints.colocations) {
    if (at[c.first].pool != at[c.second].pool || at[c.first].offset != at[c.second].offset) {
      errors.push_back("colocation broken");
    }
  }
  for (const DsaPinnedAllocation& pin : p.constraints.pinned_allocations) {
    if (at[pin.buffer].pool != pin.pool || at[pin.buffer].offset != pin.offset) {
      errors.push_back("pin broken");
    }
  }
  std::set<uint32_t> exclusive;
  for (const DsaPinnedAllocation& pin : p.constraints.pinned_allocations) {
    if (pin.exclusive_for_all_time) exclusive.insert(pin.buffer);
  }
  for (const DsaBuffer& a : p.buffers) {
    for (const DsaBuffer& b : p.buffers) {
      if (a.id >= b.id || at[a.id].pool != at[b.id].pool) continue;
      if (!Overlap(at[a.id].offset, ext.at(a.id), at[b.id].offset, ext.at(b.id))) continue;
      bool separated = false;
      for (const policy::DsaSeparation& s : p.constraints.separations) {
        if ((s.first == a.id && s.second == b.id) || (s.first == b.id && s.second == a.id)) {
          separated = true;
        }
      }
      if (separated) errors.push_back("separation broken");
      // problem.extensions: an in-place pair shares bytes only from one base.
      if (PairIn(p.extensions.exact_or_disjoint, a.id, b.id) &&
          at[a.id].offset != at[b.id].offset) {
        errors.push_back("exact_or_disjoint pair " + std::to_string(a.id) + "-" +
                         std::to_string(b.id) + " overlaps partially");
      }
      if (label.at(a.id) == label.at(b.id)) continue;
      if (TemporalConflict(p, a, b) || exclusive.count(a.id) || exclusive.count(b.id)) {
        errors.push_back("buffers " + std::to_string(a.id) + " and " + std::to_string(b.id) +
                         " overlap");
      }
    }
  }
  return errors;
}

Costs Evaluate(const DsaProblem& p, const std::vector<DsaPlacement>& placements) {
  std::map<uint32_t, DsaPlacement> at;
  for (const DsaPlacement& x : placements) at[x.buffer] = x;
  Costs costs;
  const std::map<uint32_t, uint32_t> label = ColocationLabels(p);
  const std::map<uint32_t, uint64_t> ext = Extents(p);
  for (const DsaPool& pool : p.pools) {
    uint64_t peak = 0;
    for (const DsaAddressRange& r : pool.reserved_ranges) peak = std::max(peak, r.end);
    for (const DsaBuffer& b : p.buffers) {
      if (at[b.id].pool == pool.id) peak = std::max(peak, at[b.id].offset + b.size);
    }
    costs.total_peak += peak;
    costs.max_peak = std::max(costs.max_peak, peak);
  }
  if (p.cost_model) {
    for (const policy::DsaReusePenalty& e : p.cost_model->reuse_penalties) {
      const DsaBuffer& a = BufferById(p, e.first);
      const DsaBuffer& b = BufferById(p, e.second);
      if (at[a.id].pool == at[b.id].pool && label.at(a.id) != label.at(b.id) &&
          !TemporalConflict(p, a, b) &&
          Overlap(at[a.id].offset, ext.at(a.id), at[b.id].offset, ext.at(b.id))) {
        costs.reuse += e.cost;
      }
    }
  }
  return costs;
}

// The objective terms' values of a feasible placement (capacity_overflow is then 0).
std::vector<uint64_t> TermValues(const DsaProblem& p, const Costs& c) {
  std::vector<uint64_t> values;
  for (DsaObjectiveTerm term : p.objective.terms) {
    switch (term) {
      case DsaObjectiveTerm::kReuseCost:
        values.push_back(c.reuse);
        break;
      case DsaObjectiveTerm::kTotalPeak:
        values.push_back(c.total_peak);
        break;
      case DsaObjectiveTerm::kMaxPeak:
        values.push_back(c.max_peak);
        break;
      default:
        values.push_back(0);
        break;
    }
  }
  return values;
}

// Brute force over the 32-byte grid and over the pools a class's first buffer allows: exact for
// generated problems (see dsa_problem_generator.h). Returns the lexicographically least term
// values, or nullopt when nothing fits.
std::optional<std::vector<uint64_t>> BruteForce(const DsaProblem& p, uint64_t unit) {
  const std::map<uint32_t, uint32_t> label = ColocationLabels(p);
  std::vector<uint32_t> roots;
  std::map<uint32_t, uint64_t> extent;
  std::map<uint32_t, std::vector<uint32_t>> pools_of_root;
  for (const DsaBuffer& b : p.buffers) {
    const uint32_t root = label.at(b.id);
    if (!extent.count(root)) {
      roots.push_back(root);
      pools_of_root[root] = b.allowed_pools;
    }
    extent[root] = std::max(extent[root], b.size);
  }
  // (pool, offset) choices per class; HardViolations rejects a pool a member does not allow.
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> choices(roots.size());
  for (size_t k = 0; k < roots.size(); ++k) {
    std::optional<DsaPinnedAllocation> pin;
    for (const DsaPinnedAllocation& x : p.constraints.pinned_allocations) {
      if (label.at(x.buffer) == roots[k]) pin = x;
    }
    if (pin) {
      choices[k] = {{pin->pool, pin->offset}};
      continue;
    }
    for (uint32_t id : pools_of_root[roots[k]]) {
      uint64_t capacity = 0;
      for (const DsaPool& pool : p.pools) {
        if (pool.id == id) capacity = *pool.capacity;
      }
      for (uint64_t x = 0; x + extent[roots[k]] <= capacity; x += unit) {
        choices[k].push_back({id, x});
      }
    }
  }
  std::optional<std::vector<uint64_t>> best;
  std::vector<std::pair<uint32_t, uint64_t>> at(roots.size());
  std::function<void(size_t)> recurse = [&](size_t k) {
    if (k == roots.size()) {
      std::vector<DsaPlacement> placements;
      for (const DsaBuffer& b : p.buffers) {
        const size_t r = std::find(roots.begin(), roots.end(), label.at(b.id)) - roots.begin();
        placements.push_back({b.id, at[r].first, at[r].second});
      }
      if (!HardViolations(p, placements).empty()) return;
      const std::vector<uint64_t> values = TermValues(p, Evaluate(p, placements));
      if (!best || values < *best) best = values;
      return;
    }
    for (const auto& choice : choices[k]) {
      at[k] = choice;
      recurse(k + 1);
    }
  };
  recurse(0);
  return best;
}

}  // namespace policy_testing
}  // namespace accelmem
