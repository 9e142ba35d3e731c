// File: codegen/kernel_context_abi.h
//
// KernelContext: the struct every generated kernel takes as its first argument (see
// kernel_builder.h). The kernel builder emits its loads at offsetof() of these members, so this
// definition is the one source of the layout; kernel_context.h fills it for a SparseRuntime.
//
// The IR loads each member as a pointer of the target (x86-64 or nvptx64, both 64-bit) from a
// context the host filled in, so the host layout must be the 64-bit one the targets read: every
// member pointer-sized, no padding (checked below).
#ifndef ACCELMEM_CODEGEN_KERNEL_CONTEXT_ABI_H_
#define ACCELMEM_CODEGEN_KERNEL_CONTEXT_ABI_H_

#include <cstddef>
#include <type_traits>

#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/runtime_context.h"

namespace accelmem {
namespace codegen {

struct KernelContext {
  sparse_runtime::Ptr root;                 // the root buffer
  sparse_runtime::RuntimeContext* runtime;  // error state, allocators
  const sparse_runtime::Ptr* metas;         // per SNode id: its meta struct
  const sparse_runtime::Ptr* ambients;      // per SNode id: its ambient element (or null)
};

static_assert(std::is_standard_layout<KernelContext>::value,
              "kernels load KernelContext members at their offsetof()");
static_assert(sizeof(void*) == 8, "kernels load KernelContext members as 64-bit pointers");
static_assert(sizeof(KernelContext) == 4 * sizeof(void*),
              "every KernelContext member is one pointer the IR loads; add a load for a new one");

}  // namespace codegen
}  // namespace accelmem

#endif  // ACCELMEM_CODEGEN_KERNEL_CONTEXT_ABI_H_
