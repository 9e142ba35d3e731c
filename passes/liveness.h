// liveness: the lifetime of every tile value of a function, the one model memory-reuse and
// allocate-memory-addr's planner strategies share.
//
// Time. Statements are numbered in program order (a loop and an `if` take one number on entry and
// one on exit; parameters are defined before statement 1). Statement t reads its operands at 3t
// and writes its result at 3t+1, or at 3t when its op is not in-place safe (the op registry's
// IsInplaceSafe: the result may then not share bytes with an operand that dies there). A value
// lives over the half-open [start, end): from its write to just after its last read; a value
// defined outside a loop and read inside lives to the end of that loop (every nesting level);
// branch-local values end in their branch. Loop iter-args are written at the loop's entry, loop
// and `if` results at its exit. A value in a slot that rotates with a pipelined loop (ir/memref.h)
// lives over the whole loop, [3 entry + 2, loop end): the loop keeps several iterations in
// flight, so its slots are busy for as long as the loop runs.
//
// Sources. Each value records the value it takes its MemRef from under init-memref's rules (a
// view's source, a writes-into op's destination, a carry's init, a loop result's iter-arg, an `if`
// result's then-yield, else its else-yield): the forest memory-reuse splits carries along.
// Views (tile.slice, tile.reshape) and their sources form one buffer (ViewClass).
//
// Implicit yield copies. A loop or `if` yield whose value does not already lie at the carried /
// result MemRef's root and offset is a copy into that MemRef, written at the yield (3y .. 3y+2).
//
// Only the passes' planning uses this model; passes/verify_memory_plan checks their output with
// its own walk (see docs/memory_passes.md, "Who checks the plan").
#ifndef ACCELMEM_PASSES_LIVENESS_H_
#define ACCELMEM_PASSES_LIVENESS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "ir/function.h"
#include "ir/memref.h"
#include "ir/stmt.h"
#include "policy/memory_allocator_policy.h"

namespace accelmem {
namespace passes {

struct ValueLife {
  const ir::Var* var = nullptr;
  ir::MemRefPtr memref;     // null when the value has none yet
  int64_t start = 0;        // its write
  int64_t end = 0;          // one past its last use (half-open)
  int64_t last = -1;        // statement number of its last read, -1 when never read
  size_t depth = 0;         // loops around its definition
  std::vector<int> extend;  // loops (by entry order) the value must outlive
  int parent = -1;          // the value it takes its MemRef from, -1 for none
  bool carried = false;     // an iter-arg or an `if` result
};

struct LoopLife {
  const ir::ForStmt* stmt;
  int64_t entry;               // statement number of the loop's entry
  const ir::YieldStmt* yield;  // the last yield walked in the body (its final yield)
  int64_t yield_at;
};

struct IfLife {
  const ir::IfStmt* stmt;
  int64_t entry;
  const ir::YieldStmt* then_yield;  // null when the branch yields nothing
  const ir::YieldStmt* else_yield;
  int64_t then_yield_at;
  int64_t else_yield_at;
};

struct YieldCopy {
  std::string name;  // "copy into <carried or result value>"
  ir::MemRefPtr target;
  int64_t stmt;  // the yield's statement number
};

class Liveness {
 public:
  explicit Liveness(const ir::Function& function);

  // The index of `e`'s value in `values`, -1 when `e` is not a tile value.
  int IndexOf(const ir::Expr* e) const;
  // The representative of value i's view class (a value and every view of it).
  int ViewClass(int i) const;

  std::vector<ValueLife> values;  // in definition order
  absl::flat_hash_map<const ir::Var*, int> index;
  std::vector<LoopLife> loops;  // post-order (inner loops first)
  std::vector<IfLife> ifs;      // post-order
  // Loops and ifs together in post-order: (true, index into loops) or (false, index into ifs).
  std::vector<std::pair<bool, size_t>> constructs;
  std::vector<YieldCopy> copies;  // implicit yield copies, in program order
  int64_t num_statements = 0;

 private:
  friend class LivenessBuilder;
  mutable std::vector<int> view_parent_;  // union-find over views (path halving)
};

// The lifetime of one root MemRef: the hull [start, end) of every value (and view) held in it
// and of every implicit yield copy into it. One entry per root, in first-definition order;
// values without a MemRef are skipped.
struct RootLifetime {
  const ir::MemRef* root = nullptr;
  int64_t start = 0, end = 0;
};
std::vector<RootLifetime> ComputeRootLifetimes(const Liveness& liveness);

// OK when no two view classes (or yield copies) that are live at once overlap inside one root
// MemRef, in the spaces `policy` allocates; i.e. when giving every root a slot of its own is safe
// whatever the addresses. Else InvalidArgument "in function 'F': ..." naming the first pair.
// After memory-reuse this holds; after init-memref alone a carried value can conflict with a
// value still live in its root.
absl::Status CheckRootsConflictFree(const ir::Function& function, const Liveness& liveness,
                                    const policy::MemoryAllocatorPolicy& policy);

}  // namespace passes
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_LIVENESS_H_
