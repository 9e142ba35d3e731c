// File: runtime/cpu/jit.h
//
// The CPU JIT of the sparse runtime: kernels are LLVM modules linked with the runtime's x64
// bitcode, the runtime inlined into them and the result optimized (-O3) and compiled by ORC's
// LLJIT, as Taichi's LLVM backend does. One runtime source serves every backend; here it arrives
// as bitcode bytes (embedded by //runtime:runtime_bitcode, or any module for tests).
//
//   ASSIGN_OR_RETURN(auto jit, CpuJit::Create(runtime_bitcode));
//   ASSIGN_OR_RETURN(auto kernels, jit->CompileIr(kernel_ir_text, {"my_kernel"}));
//   ASSIGN_OR_RETURN(void* fn, kernels->Lookup("my_kernel"));
//
// Errors (bad bitcode, IR that does not parse or verify, missing entry points, codegen failures)
// come back as absl::Status carrying LLVM's diagnostic. Thread-safe: Compile may be called from
// several threads; each compiled module owns its own LLJIT instance and context.
#ifndef ACCELMEM_RUNTIME_CPU_JIT_H_
#define ACCELMEM_RUNTIME_CPU_JIT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace llvm {
class LLVMContext;
class Module;
namespace orc {
class LLJIT;
class ThreadSafeContext;
}  // namespace orc
}  // namespace llvm

namespace accelmem {
namespace runtime {
namespace cpu {

struct JitOptions {
  // LLVM optimization level for the linked module (0..3); Taichi compiles kernels at -O3.
  int opt_level = 3;
  // Inline the runtime into the kernels (internalize every non-entry symbol first).
  bool inline_runtime = true;
};

// A compiled kernel module: entry points are resolvable for as long as it lives.
class JitModule {
 public:
  ~JitModule();
  JitModule(const JitModule&) = delete;
  JitModule& operator=(const JitModule&) = delete;

  // The address of a compiled entry point, or NotFound naming it.
  absl::StatusOr<void*> Lookup(absl::string_view name) const;

  // The optimized LLVM IR that was compiled (for tests and debugging).
  const std::string& optimized_ir() const { return optimized_ir_; }

 private:
  friend class CpuJit;
  JitModule() = default;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::string optimized_ir_;
};

class CpuJit {
 public:
  // Parses the runtime bitcode once; it is re-materialized into every kernel's context.
  static absl::StatusOr<std::unique_ptr<CpuJit>> Create(absl::string_view runtime_bitcode,
                                                        JitOptions options = {});
  ~CpuJit();

  // Links `kernel` (created in `context`) with the runtime, optimizes it and compiles it.
  // `entry_points` stay external; every other symbol may be internalized and inlined.
  absl::StatusOr<std::unique_ptr<JitModule>> Compile(
      std::unique_ptr<llvm::Module> kernel, std::unique_ptr<llvm::LLVMContext> context,
      const std::vector<std::string>& entry_points) const;

  // As Compile, from LLVM IR text (the kernels of tests and tools).
  absl::StatusOr<std::unique_ptr<JitModule>> CompileIr(
      absl::string_view ir_text, const std::vector<std::string>& entry_points) const;

  // Creates an empty kernel module with the runtime's triple and data layout set.
  std::unique_ptr<llvm::Module> NewKernelModule(absl::string_view name,
                                                llvm::LLVMContext& context) const;

  const std::string& runtime_triple() const { return triple_; }

 private:
  CpuJit() = default;
  std::string runtime_bitcode_;
  std::string triple_;
  std::string data_layout_;
  JitOptions options_;
};

}  // namespace cpu
}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_CPU_JIT_H_
