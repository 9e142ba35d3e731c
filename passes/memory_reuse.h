// memory-reuse: lets tile values whose lifetimes do not overlap share a root MemRef, per memory
// space, so fewer and smaller allocs remain. Runs after init-memref, before
// allocate-memory-addr; Orchestration functions and already planned functions are left alone.
//
// Lifetimes: passes/liveness.h (statements read at 3t and write at 3t+1, or at 3t when the op is
// not in-place safe; values read inside a loop they were defined outside of live to its end;
// branch-local values end in their branch). A root's group is every value whose MemRef lies in
// it (views move with their root).
//
// Steps.
// 1. Carries. A loop iter-arg shares its init's buffer and an `if` result its then-yield's
//    (init-memref). If that source buffer is still needed after the loop starts (or after the
//    then-branch), the carried value gets a fresh root, and for a loop a `tile.move` of the init
//    into it is put before the loop. Then every yielded value that is not already in the carried
//    buffer is merged into it when no value of its group is live together with a value of the
//    carried group; otherwise `v_mv = tile.move(v, Space)` into the carried buffer is inserted
//    before the `yield`. Inner loops first.
// 2. Packing, per space except DDR, first-fit decreasing: groups are taken largest first (ties:
//    earlier start, then lower id) and each joins the first shared buffer none of whose groups it
//    overlaps in time, else opens a new one whose root (and name) it lends. Largest-first is
//    deliberate (as upstream moved to in #1805, away from definition-order greedy): a buffer's
//    size is fixed by its first, largest group, so smaller groups fill holes in big buffers
//    instead of growing small ones, and allocate-memory-addr, which lays the remaining roots out
//    one after another, gets a smaller sum. Each check is O(log n) in the buffer's interval set,
//    and a group tries at most the first 1024 buffers of its space (opening a new one if none
//    fits), so packing is O(n log n); step 1's merges absorb the smaller lifetime union into the
//    larger, O(n log^2 n) in all.
// 3. Allocs are rebuilt at the top of the body in id order for the roots still in use, with the
//    merged root as large as its largest member (removing allocs no longer used).
//
// Pipelined loops: slotted roots (one slot per stage, init-memref) are neither merged nor packed
// with other roots: that would collapse the stages onto one buffer. With a backend, where a
// space's roots, laid out one after another at its alignment, exceed its capacity, the innermost
// pipelined loop with more than one slot in that space sheds one (N slots become N - 1; one slot
// is a plain buffer, on which the loop's stages serialise), repeatedly, until the space fits or
// nothing is left to shed (allocate-memory-addr then reports the capacity error). Each step is a
// note (MemoryReuseOptions::on_note) naming the function, the space and the loop.
//
// Storage layouts: where the backend separates layouts in a space (backends::SeparatesLayouts;
// Vec on the Ascend 950), a root's layout class is its tiles' layout (ND when unstated), and
// neither step 1's merges nor step 2's packing ever put roots of two classes into one: a
// yielded value of another class is moved into the carried buffer, and a group only joins a
// shared buffer of its own class, even when the lifetimes are disjoint.
#ifndef ACCELMEM_PASSES_MEMORY_REUSE_H_
#define ACCELMEM_PASSES_MEMORY_REUSE_H_

#include <functional>
#include <string>
#include <utility>

#include "backends/backend.h"
#include "passes/pass.h"

namespace accelmem {
namespace passes {

struct MemoryReuseOptions {
  // Called with each note of the pass: a pipelined loop's depth shed in a space that cannot hold
  // its stages ("in function 'F': Mat cannot hold the stages of the pipelined loop over 'k'
  // (line 9): ...; shed its depth there from 2 to 1 (mem_mat_3, mem_mat_4)").
  std::function<void(const std::string&)> on_note;
  // The target: which spaces keep storage layouts apart. Null: none (any tiles may share).
  backends::BackendPtr backend;
};

class MemoryReusePass final : public Pass {
 public:
  static constexpr const char* kName = "memory-reuse";
  explicit MemoryReusePass(MemoryReuseOptions options = {}) : options_(std::move(options)) {}
  std::string Name() const override { return kName; }
  absl::StatusOr<FunctionResult> RunOnFunction(const ir::FunctionPtr& function) const override;

 private:
  MemoryReuseOptions options_;
};

PassPtr CreateMemoryReusePass(MemoryReuseOptions options = {});

}  // namespace passes
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_MEMORY_REUSE_H_
