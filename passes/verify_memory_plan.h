// verify_memory_plan: an independent check that a planned function is safe to run.
//
// It recomputes lifetimes from the IR alone with a walk of its own (it shares no lifetime code
// with the passes, whose model is passes/liveness.h; see docs/memory_passes.md, "Who checks the
// plan") and proves:
// - every tile value has a MemRef, and every root in a space the policy plans has an address
//   that the policy's AlignAddress leaves unchanged;
// - no two buffers whose lifetimes intersect overlap in address;
// - every space stays within the capacity (when one is given or a backend is configured).
// - slots: a value in slot k of a slotted root defined in a pipelined loop of that depth lives,
//   in iteration j, in slot (k + j) mod N, with N iterations in flight; the values of one root
//   rotating in one loop are one buffer (the whole root over the whole loop), and inside it two
//   values in different slots never share bytes, two in the same slot only when their lifetimes
//   are disjoint (a fixed slot, outside such a loop, is an ordinary view);
// - where the backend keeps storage layouts apart in a space (Vec on the Ascend 950), no buffer
//   of one layout class (a tile's layout, ND when unstated) overlaps a buffer of another in
//   address, whatever their lifetimes, and no buffer holds tiles of two classes.
//
// Model. Statements are numbered in program order (a loop and an `if` take a number for their
// entry and one for their exit). A value lives from its definition to its last use; a value
// defined outside a loop and used inside it lives to the end of that loop (every iteration
// needs it). The number t of a statement splits into reads at 3t and the write at 3t+1, so a
// value may take the place of one last read by its own defining statement, except when that op is
// not in-place safe (its write is then at 3t, overlapping the reads). A value and its views
// (tile.slice, tile.reshape, per the op registry) are one buffer. A loop or `if` yield whose
// value is not already in the carried/result MemRef is an implicit copy into it, modelled as a
// not-in-place write at the yield. The overlap check is policy/placement_checker's O(n log n)
// sweep, one instance per space.
#ifndef ACCELMEM_PASSES_VERIFY_MEMORY_PLAN_H_
#define ACCELMEM_PASSES_VERIFY_MEMORY_PLAN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/function.h"
#include "ir/memory_space.h"
#include "ir/program.h"
#include "policy/memory_allocator_policy.h"

namespace accelmem {
namespace passes {

struct MemoryPlanOptions {
  // Null: the configured backend's policy, else the default policy.
  const policy::MemoryAllocatorPolicy* policy = nullptr;
  // Capacity of a space in bytes, 0 = unchecked. Null: the configured backend's capacities
  // (none without a backend).
  std::function<int64_t(ir::MemorySpace)> capacity;
  // Whether a space keeps storage layouts apart (ND and NZ tiles never share bytes). Null: the
  // configured backend's rule (none without a backend).
  std::function<bool(ir::MemorySpace)> separate_layouts;
};

// One buffer of the plan: a value and its views, in one space, over [first_stmt, last_stmt].
struct PlannedBuffer {
  std::string name;  // the defining value (or "copy into X" for an implicit yield copy)
  ir::MemorySpace space = ir::MemorySpace::kVec;
  int64_t start = 0, end = 0;             // half-open lifetime in the 3-slots-per-statement time
  int64_t first_stmt = 0, last_stmt = 0;  // statement numbers (inclusive)
  int64_t addr = 0, size = 0;             // [addr, addr + size)
  std::string memref;                     // text of the MemRef, e.g. "mem_vec_0+256"
  // Bit 1 << ir::TileLayout of each layout its tiles state, an unstated one counting as ND.
  int layouts = 0;
  // The values rotating through a slotted root in a pipelined loop: its slot count (one block of
  // that many stages, [addr, addr + size) cut in equal slots); 0 for any other buffer.
  int64_t slots = 0;
};

struct SpaceUsage {
  ir::MemorySpace space = ir::MemorySpace::kVec;
  int64_t high_water = 0;  // max(addr + size) over the roots' slots
  int64_t load = 0;        // largest total size of buffers live at once (lower bound)
  int64_t capacity = 0;    // 0 = unknown
};

struct MemoryPlanReport {
  std::string function;
  int64_t num_statements = 0;
  std::vector<PlannedBuffer> buffers;  // planned spaces only
  std::vector<SpaceUsage> spaces;      // planned spaces with at least one buffer
  // Values rotating through the slots of one root in a pipelined loop that share bytes they may
  // not (VerifyMemoryPlan reports the first).
  std::vector<std::string> slot_conflicts;
};

// Builds the report without judging it (buffers, high-water marks, LOAD). Fails only if a
// tile value has no MemRef or a planned root has no address.
absl::StatusOr<MemoryPlanReport> AnalyzeMemoryPlan(const ir::Function& function,
                                                   const MemoryPlanOptions& options = {});

// OK, or InvalidArgument "in function 'F': ..." naming the violation. Orchestration functions
// are not planned and always pass.
absl::Status VerifyMemoryPlan(const ir::Function& function, const MemoryPlanOptions& options = {});
absl::Status VerifyMemoryPlan(const ir::Program& program, const MemoryPlanOptions& options = {});

}  // namespace passes
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_VERIFY_MEMORY_PLAN_H_
