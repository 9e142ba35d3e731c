// File: codegen/kernel_builder.h
//
// KernelBuilder: emits LLVM IR (llvm::IRBuilder) for kernels over one materialized SNode tree (a
// SparseRuntime), walking the tree through the runtime's X_is_active / X_activate /
// X_lookup_element chain as Taichi's LLVM codegen does. The runtime functions are declared by
// their C++-mangled names, found by demangling the runtime bitcode module; the resulting module is
// meant for //backends/cpu:jit, which links, inlines and optimizes the runtime into it.
//
//   ASSIGN_OR_RETURN(auto kb, KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64)));
//   RETURN_IF_ERROR(kb->AddRangeWrite("fill", rt.get(), x, {{1, 0, 0}}, 2.0, 1.0));
//   RETURN_IF_ERROR(kb->AddRangeSum("sum", rt.get(), x, {{1, 0, 0}}));
//   auto kernel = kb->Finish();
//   ASSIGN_OR_RETURN(auto m, jit->Compile(std::move(kernel.module), std::move(kernel.context),
//                                         kernel.entry_points));
//
// Kernel kinds (serial range-for over i in [begin, end); the place's coordinates are f(i), one
// CoordMap per index axis of the place, in SNode::index_axes order):
//   * write: `i64 name(i64 begin, i64 end)` stores i*scale+offset (computed in double, converted
//     to the place's type) at f(i), activating every sparse level of the path; returns the number
//     of cells written (iterations with coordinates outside the index space are skipped), or -1
//     if an activation failed (allocator exhausted: the error is recorded in the runtime context,
//     as upstream) and the kernel stopped.
//   * sum: `double name(i64 begin, i64 end)` adds the values at f(i) (as double); inactive cells
//     and out-of-range coordinates count as 0.
//   * atomic add and deactivate: see AddRangeAtomicAdd / AddRangeDeactivate.
//
// The runtime's meta structs and root are baked into the IR as constant addresses, so a kernel is
// valid only for the SparseRuntime it was built for, while that runtime lives. Dynamic SNodes on
// the path are not supported yet (Unimplemented). Not thread-safe; one builder per module.
#ifndef ACCELMEM_CODEGEN_KERNEL_BUILDER_H_
#define ACCELMEM_CODEGEN_KERNEL_BUILDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "sparse_runtime/sparse_runtime.h"

namespace accelmem {
namespace codegen {

// One coordinate as a function of the loop index: (i / divisor) % modulus + offset; modulus 0
// means no modulo. E.g. a 2-D sweep of width W: {{W, 0, 0}, {1, W, 0}}.
struct CoordMap {
  int64_t divisor = 1;
  int64_t modulus = 0;
  int64_t offset = 0;
};

// A finished kernel module, ready for CpuJit::Compile.
struct KernelModule {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::vector<std::string> entry_points;
};

class KernelBuilder {
 public:
  // Reads the runtime module (bitcode bytes) for its triple, data layout and mangled names.
  static absl::StatusOr<std::unique_ptr<KernelBuilder>> Create(absl::string_view runtime_bitcode);
  ~KernelBuilder();
  KernelBuilder(const KernelBuilder&) = delete;
  KernelBuilder& operator=(const KernelBuilder&) = delete;

  // Adds the write kernel described above. InvalidArgument when `place` is not a place of rt's
  // tree, the number of coordinate maps differs from the place's index or a divisor/modulus is
  // not positive; Unimplemented for dynamic SNodes on the path.
  absl::Status AddRangeWrite(absl::string_view name, sparse_runtime::SparseRuntime* rt,
                             const sparse_runtime::SNode& place,
                             const std::vector<CoordMap>& coords, double scale, double offset);
  // Adds the sum kernel described above (same errors).
  absl::Status AddRangeSum(absl::string_view name, sparse_runtime::SparseRuntime* rt,
                           const sparse_runtime::SNode& place, const std::vector<CoordMap>& coords);

  // Adds `i64 name(i64 begin, i64 end)`: atomically (relaxed) adds i*scale+offset to the place
  // at f(i), activating the path; returns the number of additions, or -1 as the write kernel.
  // Safe to run from several threads at once (activation is the runtime's locked one).
  absl::Status AddRangeAtomicAdd(absl::string_view name, sparse_runtime::SparseRuntime* rt,
                                 const sparse_runtime::SNode& place,
                                 const std::vector<CoordMap>& coords, double scale, double offset);
  // Adds `i64 name(i64 begin, i64 end)`: deactivates the cell of `snode` (pointer or bitmasked)
  // at f(i) when it is active (inactive ancestors: nothing to do); returns the number of cells
  // deactivated. Pointer cells are recycled: call rt->CollectGarbage() afterwards to make them
  // reusable (the host's automatic collection does not see kernel deactivations).
  // InvalidArgument for other SNode kinds; Unimplemented when `snode` has sparse descendants
  // (they would leak, upstream hazard 11).
  absl::Status AddRangeDeactivate(absl::string_view name, sparse_runtime::SparseRuntime* rt,
                                  const sparse_runtime::SNode& snode,
                                  const std::vector<CoordMap>& coords);

  // The mangled name of accelmem::sparse_runtime::`name` in the runtime module, or NotFound.
  absl::StatusOr<std::string> MangledName(absl::string_view name) const;

  // Verifies nothing; hands the module over (the builder is empty afterwards).
  KernelModule Finish();

  struct Impl;  // private to kernel_builder.cc

 private:
  explicit KernelBuilder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace codegen
}  // namespace accelmem

#endif  // ACCELMEM_CODEGEN_KERNEL_BUILDER_H_
