// memory-problem: the schema-v1 placement problem (policy/dsa_problem.h) of one function, built
// from the tile IR the way PyPTO exports it, and the diagnostics of a function that does not fit.
//
// One pool per memory space the allocator policy plans (pool id = the ir::MemorySpace value,
// name = the space's name), with the backend's capacity (none without a backend) and, in the
// function's reserve space, one reserved range per resolved system.reserve_buffer. One buffer per
// root MemRef that a tile value lives in: its slot (the largest offset + size of the root and its
// views) at the policy's alignment, over one conservative lifetime hull from passes/liveness.h
// (no holes). Views are the buffer's PyPTO alias class. Constraints and costs:
// - In-place rule: where a buffer dies at the statement that defines another (a.end == b.start),
//   an element-wise op may write its result over its operand only at the same address: the two
//   share exactly the same base or no byte (upstream PyPTO's NoPartialOverlap). Schema v1 cannot
//   say it, so such pairs are the extension problem.extensions.exact_or_disjoint
//   (policy/dsa_problem.h), which the validator checks and the constrained planner honours.
// - Storage layouts: where the backend keeps layouts apart in a space (backends::Backend::
//   SeparatesLayouts; Vec on the Ascend 950), every pair of buffers of that pool whose layout
//   classes differ (backends::SeparatedLayout: the tiles' layout, ND when unstated) is a
//   separation, whatever their lifetimes. Reason target_hazard: the target reads the same bytes
//   in another element order, a hazard of the target rather than of the program's dataflow
//   (upstream's StorageLayout separation; schema v1 has no layout reason).
// - Declared allocations (`tile.alloc(..., declared=1)`, ir/memref.h): a separation between the
//   declared buffer and every other buffer of its pool, whatever the lifetimes (upstream's
//   DeclaredAllocation separation; reason semantic_no_alias, added to a layout pair's reasons
//   when the pair is both), and no in-place pair with it.
// - Reuse penalties (weight 1, reason cross_pipe, as PyPTO's recognizer): two buffers of a pool
//   whose lifetimes are disjoint, where the pipe of the earlier one's last access differs from
//   the pipe of the later one's first write (op registry pipes). Sharing bytes between them
//   makes the later write wait for another engine. Accesses are ordered by program order; the
//   loop-carried handoff (the later buffer's next iteration) is not modelled.
// - Pipeline groups: one per slotted root (a pipelined loop's ping-pong buffer, ir/memref.h).
//   The root is one buffer, placed as one block of its N slots, so the group has that one member
//   (stage 0, residue 0; slot k holds the values of iterations k mod N) and needs no separation:
//   the block's slots cannot overlap each other. depth = the loop's `pipeline=`, effective_depth =
//   the slots the root keeps (below depth where memory-reuse shed stages), slot_size = the
//   buffer's size over its slots.
// - Objective: fit the capacities, then the least reuse cost, then the least total peak.
//
// The lifetimes are in liveness time (3 steps per statement), so LOAD's time names a statement.
#ifndef ACCELMEM_PASSES_MEMORY_PROBLEM_H_
#define ACCELMEM_PASSES_MEMORY_PROBLEM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "backends/backend.h"
#include "ir/function.h"
#include "ir/memory_space.h"
#include "ir/memref.h"
#include "ir/op_registry.h"
#include "passes/liveness.h"
#include "policy/dsa_problem.h"
#include "policy/memory_allocator_policy.h"

namespace accelmem {
namespace passes {

struct MemoryProblemOptions {
  const policy::MemoryAllocatorPolicy* policy = nullptr;  // required: spaces, alignment
  const backends::Backend* backend = nullptr;             // capacities; null: unbounded
  ir::MemorySpace reserve_space = ir::MemorySpace::kVec;
  std::vector<policy::DsaAddressRange> reserved;  // resolved reserve_buffer ranges (aligned ends)
  std::string backend_name = "none";              // metadata only
};

// What the problem's buffer `id` stands for.
struct ProblemBuffer {
  const ir::MemRef* root = nullptr;
  ir::MemorySpace space = ir::MemorySpace::kVec;
  std::string first_value;  // the value written first in the root
  ir::SourceLoc first_loc;  // where it is defined
  ir::Pipe first_write = ir::Pipe::kNone;
  ir::Pipe last_access = ir::Pipe::kNone;
  // Its layout class where the backend separates layouts in its space (nullopt elsewhere).
  std::optional<ir::TileLayout> layout;
};

struct MemoryProblem {
  // instance = the function's name; the in-place pairs are exact_or_disjoint pairs.
  policy::DsaProblemDocument document;
  std::vector<ProblemBuffer> buffers;  // by buffer id (ids are 0, 1, ...)
  // Roots of planned spaces that no tile value lives in (nothing to place over time): the pass
  // stacks them above the plan.
  std::vector<const ir::MemRef*> lifeless;
  // The in-place pairs (a dies where b is born): problem.extensions.exact_or_disjoint.
  std::vector<policy::DsaPair> in_place;
  // The storage-layout pairs (first < second, ND/NZ in a separating space): separations.
  std::vector<policy::DsaPair> layout_pairs;
  // The pairs (first < second, one of them a declared allocation, same space): separations with
  // reason semantic_no_alias.
  std::vector<policy::DsaPair> declared_pairs;
};

// `function` must be conflict-free per root (CheckRootsConflictFree), as the planner strategies
// of allocate-memory-addr make it; `liveness` is its liveness.
MemoryProblem BuildMemoryProblem(const ir::Function& function, const Liveness& liveness,
                                 const MemoryProblemOptions& options);

// The in-place pairs that `offsets` (by buffer id) puts over each other at different offsets.
std::vector<policy::DsaPair> ShiftedInPlace(const MemoryProblem& problem,
                                            const std::vector<uint64_t>& offsets);

// The peak of a pool: LOAD (the aligned sizes of the buffers live at one time, plus the reserved
// bytes) at its first maximum, and the buffers live then, largest first.
struct PoolPeak {
  uint64_t load = 0;
  uint64_t reserved = 0;
  int64_t time = 0;
  std::vector<uint32_t> live;  // buffer ids
};
PoolPeak ComputePoolPeak(const MemoryProblem& problem, uint32_t pool);

// "statement 7 (line 12, where 'c' is defined)": the program point of liveness time `time`
// (the definition of a buffer that starts there).
std::string DescribeProgramPoint(const MemoryProblem& problem, int64_t time);

// The over-capacity diagnosis: "the peak is at statement 7 (line 12, where 'c' is defined): LOAD
// 200704 bytes (4096 of them reserved) against a capacity of 188416; largest live buffers: 'a'
// 98304 bytes, 'b' 98304 bytes, ...". At most five buffers.
std::string DescribePoolPeak(const MemoryProblem& problem, uint32_t pool);

}  // namespace passes
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_MEMORY_PROBLEM_H_
