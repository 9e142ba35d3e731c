// File: sparse_runtime/point_op.h
//
// PointOp: the cell operations an execution backend runs for the host API
// (runtime/sparse_runtime.h, KernelBackend::RunPoint), with their results. A header of its own so
// that code generation (codegen/kernel_builder.h) names the operations without depending on the
// host API.
#ifndef ACCELMEM_SPARSE_RUNTIME_POINT_OP_H_
#define ACCELMEM_SPARSE_RUNTIME_POINT_OP_H_

namespace accelmem {
namespace sparse_runtime {

// The cell operations an execution backend runs (KernelBackend::RunPoint), with their results.
// `coord` holds one coordinate per axis (kMaxAxes entries, by axis; axes outside the SNode's
// index are ignored); indices were checked by SparseRuntime.
enum class PointOp {
  kActivate,    // activate the path down to the SNode's cell: 0; -1 when an activation gave the
                // ambient element (an error was recorded, or a concurrent deactivation: retry)
  kDeactivate,  // everything sparse below the cell, then the cell (pointer/bitmasked/dynamic;
                // dynamic and dense: container/own index): 0
  kIsActive,    // 1 or 0
  kRead,        // place: stores the value (zero when inactive) to `value`: 0
  kWrite,       // place: activates the path and stores *value: 0, or -1 as kActivate
  kAppend,      // place under a dynamic, coord = the dynamic's container index: appends *value;
                // the position, -1 as kActivate, or -2 when the append failed (error recorded)
  kLength,      // dynamic, coord = container index: the length (0 when inactive)
};
inline constexpr int kNumPointOps = 7;

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_POINT_OP_H_
