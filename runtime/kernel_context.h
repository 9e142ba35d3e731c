// File: runtime/kernel_context.h
//
// KernelContext: the one argument through which a generated kernel reaches a runtime's memory
// (the root buffer, each SNode's meta struct and ambient element). Kernels load these addresses
// instead of having them baked into the IR, so one compiled module serves every SparseRuntime of
// the same tree shape, and the same IR works on NVPTX (where the addresses are device pointers).
//
//   BoundKernelContext bound(rt.get());        // lives as long as the kernels run on `rt`
//   write_kernel(bound.get(), 0, n);           // i64 (i8* ctx, i64 begin, i64 end)
//
// The layout is kernel_abi::KernelContext's (kernel_abi/kernel_abi.h): root, runtime (the
// RuntimeContext: error state, allocators), metas and ambients (per SNode id: its meta struct and
// its ambient element, null without an allocator), one pointer each.
#ifndef ACCELMEM_RUNTIME_KERNEL_CONTEXT_H_
#define ACCELMEM_RUNTIME_KERNEL_CONTEXT_H_

#include <vector>

#include "kernel_abi/kernel_abi.h"  // KernelContext
#include "runtime/sparse_runtime.h"

namespace accelmem {
namespace runtime {

// A KernelContext for one SparseRuntime, owning the per-SNode arrays. Not copyable (the context
// points into it); the runtime must outlive it.
class BoundKernelContext {
 public:
  explicit BoundKernelContext(SparseRuntime* rt);
  BoundKernelContext(const BoundKernelContext&) = delete;
  BoundKernelContext& operator=(const BoundKernelContext&) = delete;

  kernel_abi::KernelContext* get() { return &context_; }

 private:
  std::vector<sparse_runtime::Ptr> metas_;
  std::vector<sparse_runtime::Ptr> ambients_;
  kernel_abi::KernelContext context_;
};

}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_KERNEL_CONTEXT_H_
