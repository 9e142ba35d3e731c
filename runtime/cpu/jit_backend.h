// File: runtime/cpu/jit_backend.h
//
// JitBackend: the JIT execution backend of the host API. A SparseRuntime created with
//   options.kernel_backend = runtime::cpu::JitBackend::Factory();
// runs Activate / Deactivate / IsActive / Read / Write / Append / Length through JIT-compiled
// point kernels (coordinates passed as arguments) and (Parallel)StructFor through a struct-for
// kernel that walks the active cells through the runtime and calls the visitor back. Kernels are
// built lazily per (SNode, op) and shared through a KernelCache keyed by the tree shape, so
// runtimes of the same shape compile each kernel once per process. SparseRuntime keeps its
// argument checks, locks, error statuses and garbage collection, so both backends give identical
// results (//runtime/cpu:jit_backend_test runs the whole sparse runtime suite on this backend). The
// kernels run the runtime compiled to bitcode, whose report_error goes through the runtime
// memory's routing callback to the error record of the SparseRuntime call that ran the kernel
// (see docs/sparse_runtime.md, "Errors belong to their operation"): a kernel's error reaches
// exactly that call, also when other threads run kernels at the same time.
//
// Thread-safe (kernels are compiled under the cache's lock, then called without locks).
#ifndef ACCELMEM_RUNTIME_CPU_JIT_BACKEND_H_
#define ACCELMEM_RUNTIME_CPU_JIT_BACKEND_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/cpu/kernel_cache.h"
#include "runtime/kernel_context.h"
#include "runtime/sparse_runtime.h"

namespace accelmem {
namespace runtime {
namespace cpu {

class JitBackend : public KernelBackend {
 public:
  // `cache` (default: KernelCache::Default()) must outlive the backend.
  static absl::StatusOr<std::unique_ptr<KernelBackend>> Create(SparseRuntime* rt,
                                                               KernelCache* cache = nullptr);
  // For SparseRuntimeOptions::kernel_backend.
  static KernelBackendFactory Factory(KernelCache* cache = nullptr);

  absl::StatusOr<int64_t> RunPoint(sparse_runtime::PointOp op, const sparse_runtime::SNode& snode,
                                   const int32_t* coord, void* value) override;
  absl::Status StructFor(const sparse_runtime::SNode& snode, int64_t begin, int64_t end,
                         Visitor visit) override;
  // A struct-for-runs kernel (KernelBuilder::AddStructForRuns): a dense leaf container a call.
  absl::Status StructForRuns(const sparse_runtime::SNode& snode, int64_t begin, int64_t end,
                             RunVisitor visit) override;

 private:
  JitBackend(SparseRuntime* rt, KernelCache* cache);
  // The entry point of kernel `kind` (a PointOp, kNumPointOps for the struct-for, + 1 for the
  // struct-for by runs) of `snode`.
  absl::StatusOr<void*> Kernel(int kind, const sparse_runtime::SNode& snode);

  const sparse_runtime::SNodeTree& tree_;
  KernelCache* cache_;
  BoundKernelContext context_;
  std::unique_ptr<std::atomic<void*>[]> kernels_;  // [snode id * (kNumPointOps + 2) + kind]
  std::mutex mu_;
  std::vector<std::shared_ptr<const JitModule>> modules_;  // guarded by mu_
};

}  // namespace cpu
}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_CPU_JIT_BACKEND_H_
