// File: codegen/internal/runtime_call.h
//
// Internal to //codegen:kernel_builder: runtime functions as the kernels call them, taken from
// their declarations in kernel_abi/kernel_abi.h. ACCELMEM_RUNTIME_FUNCTION(accelmem_gc_serial)
// names a declared function (a name missing from the header does not compile) and derives its
// LLVM function type from the C declaration, so a kernel's call cannot drift from the runtime's
// definition.
#ifndef ACCELMEM_CODEGEN_INTERNAL_RUNTIME_CALL_H_
#define ACCELMEM_CODEGEN_INTERNAL_RUNTIME_CALL_H_

#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "kernel_abi/kernel_abi.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Type.h"

namespace accelmem {
namespace codegen {
namespace internal {

// The LLVM type clang gives a C type of the ABI (64-bit targets, typed pointers as in LLVM 14):
// void, bool (i1), 32- and 64-bit integers, and pointers (void* as i8*).
template <typename T>
struct AbiType {
  static_assert(std::is_integral<T>::value, "the kernel ABI takes integers, bool and pointers");
  static llvm::Type* Get(llvm::LLVMContext& c) {
    if (std::is_same<T, bool>::value) return llvm::Type::getInt1Ty(c);
    return llvm::Type::getIntNTy(c, 8 * sizeof(T));
  }
};
template <>
struct AbiType<void> {
  static llvm::Type* Get(llvm::LLVMContext& c) { return llvm::Type::getVoidTy(c); }
};
template <typename T>
struct AbiType<T*> {
  static llvm::Type* Get(llvm::LLVMContext& c) {
    using Pointee = std::remove_cv_t<T>;
    if (std::is_void<Pointee>::value) return llvm::Type::getInt8PtrTy(c);
    return AbiType<Pointee>::Get(c)->getPointerTo();
  }
};

template <typename F>
struct AbiFunctionType;
template <typename R, typename... Args>
struct AbiFunctionType<R(Args...)> {
  static llvm::FunctionType* Get(llvm::LLVMContext& c) {
    std::vector<llvm::Type*> params = {AbiType<Args>::Get(c)...};
    return llvm::FunctionType::get(AbiType<R>::Get(c), params, false);
  }
};

// One function of kernel_abi.h: its C name and its LLVM type.
struct RuntimeFunction {
  const char* name;
  llvm::FunctionType* (*type)(llvm::LLVMContext&);
};

#define ACCELMEM_RUNTIME_FUNCTION(fn)                                                            \
  ::accelmem::codegen::internal::RuntimeFunction {                                               \
#fn, &::accelmem::codegen::internal::AbiFunctionType < decltype(::accelmem::kernel_abi::fn)> \
             ::Get                                                                               \
  }

// Every function of ACCELMEM_KERNEL_ENTRY_POINTS, in the header's order.
const std::vector<RuntimeFunction>& AllRuntimeFunctions();

// OK if `runtime` defines every function of the list with the type derived from its declaration,
// and records (accelmem_abi_layout) the KernelContext size of the header and, for a CPU target,
// the NodeCache size and alignment; otherwise an error naming each difference.
absl::Status CheckRuntimeAbi(const llvm::Module& runtime);

}  // namespace internal
}  // namespace codegen
}  // namespace accelmem

#endif  // ACCELMEM_CODEGEN_INTERNAL_RUNTIME_CALL_H_
