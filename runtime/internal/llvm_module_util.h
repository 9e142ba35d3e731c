// File: runtime/internal/llvm_module_util.h
//
// LLVM module steps shared by the CPU JIT and the NVPTX code generator: parsing kernel IR text,
// internalizing everything but the entry points (so the runtime inlines into them), and running
// the new pass manager's default pipeline for a target.
#ifndef ACCELMEM_RUNTIME_INTERNAL_LLVM_MODULE_UTIL_H_
#define ACCELMEM_RUNTIME_INTERNAL_LLVM_MODULE_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
}  // namespace llvm

namespace accelmem {
namespace runtime {
namespace internal {

// Parses LLVM IR text named "kernel.ll"; InvalidArgument "kernel IR does not parse: kernel.ll:
// L:C: error: ..." on failure.
absl::StatusOr<std::unique_ptr<llvm::Module>> ParseKernelIr(absl::string_view ir_text,
                                                            llvm::LLVMContext& context);

// Gives every global but `keep` internal linkage.
void InternalizeAllBut(llvm::Module& module, const std::vector<std::string>& keep);

// Runs the default per-module pipeline at `opt_level` (0..3; 0 runs the O0 pipeline, which only
// inlines always-inline functions) for `machine` (may be null).
void OptimizeModule(llvm::Module& module, llvm::TargetMachine* machine, int opt_level);

}  // namespace internal
}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_INTERNAL_LLVM_MODULE_UTIL_H_
