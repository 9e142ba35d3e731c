// An independent checker of solutions to schema-v1 constrained placement problems
// (policy/dsa_problem.h): every hard constraint (one placement per buffer, allowed pools,
// alignment, capacity, reserved ranges, colocations, address disjointness of buffers that are
// live together or exclusively pinned, separations, pins, exact-or-disjoint pairs) and the
// objective's metrics (peaks, capacity overflow, reuse cost).
//
// Why a separate target: it is the proof that the constrained planner is right, so it shares no
// placement code with it (both read problems through //policy:dsa_problem: the parser and
// ValidateDsaProblem, whose errors this reports first). It is written as the plain O(n^2)
// definition of the schema's rules, pair by pair, so that it can be read against the schema;
// problems of the corpus have at most a few hundred buffers.
#ifndef ACCELMEM_POLICY_DSA_VALIDATOR_H_
#define ACCELMEM_POLICY_DSA_VALIDATOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "policy/dsa_problem.h"

namespace accelmem {
namespace policy {

// What CheckDsaSolution found. The metrics are computed even when hard constraints are violated
// (from the first placement of each buffer, in a known pool, whose end does not overflow), but
// are all 0 when the problem itself is invalid.
struct DsaSolutionCheck {
  std::vector<std::string> errors;  // Empty: every hard constraint holds.
  uint64_t reuse_cost = 0;          // Sum of activated penalty costs (saturating).
  uint64_t total_peak = 0;          // Sum over pools of the pool's peak (saturating).
  uint64_t max_peak = 0;
  std::map<uint32_t, uint64_t> peak_by_pool;  // Every pool of the problem, 0 if empty.
  uint64_t capacity_overflow = 0;  // Sum over pools with a capacity of max(0, peak - capacity).
  bool ok() const { return errors.empty(); }
};

// Checks `placements` (any order) against `problem`. First runs ValidateDsaProblem(problem) and
// returns its errors if any. The rules:
// - Every buffer has exactly one placement, in a pool of its allowed_pools; no placement names an
//   unknown buffer or pool. offset % alignment == 0 and offset + size fits in uint64.
// - offset + size <= the pool's capacity, if it has one; [offset, offset + size) meets no
//   reserved range of the pool.
// - Colocated buffers (union-find over the colocations) share pool and offset. The extent of a
//   buffer, the largest size in its colocation class, is what the address tests below use.
// - Two buffers of different colocation classes in the same pool whose live intervals overlap
//   (unless the pair is a temporal exclusion), or of which one is pinned exclusive_for_all_time,
//   have disjoint [offset, offset + extent) ranges. Zero-size ranges overlap nothing.
// - Separated buffers in the same pool have disjoint ranges, whatever their lifetimes.
// - An exact_or_disjoint pair (problem.extensions) in the same pool has equal offsets or
//   disjoint ranges, whatever their lifetimes: a partial overlap is an error naming both
//   buffers, their offsets and sizes. (Unknown extensions are not checked.)
// - A pinned buffer is placed at exactly its pin's pool and offset.
// Peak of a pool: the largest reserved range end or offset + size of a buffer placed in it. Reuse
// cost: the cost of every penalty edge whose buffers share a pool, are not colocated, have no
// temporal conflict (exclusive pins do not matter) and whose ranges overlap.
// Messages name buffers by id and name, e.g. "buffer 7 'mem_vec_3' [1024, 2048) overlaps buffer
// 9 'mem_vec_5' [1536, 1600) in pool 1 'Vec' while both are live at time 40".
DsaSolutionCheck CheckDsaSolution(const DsaProblem& problem,
                                  const std::vector<DsaPlacement>& placements);

// Replays `solution` against `problem_doc`: schema_version, profile and instance must be equal,
// problem_fingerprint must equal DsaProblemFingerprint(problem_doc), and CheckDsaSolution must
// find no error. Otherwise InvalidArgument naming the first mismatch, or the number of
// violations and the first one.
absl::Status CheckDsaSolutionDocument(const DsaProblemDocument& problem_doc,
                                      const DsaSolutionDocument& solution);

}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_DSA_VALIDATOR_H_
