// File: runtime/runtime_bitcode.h
//
// The sparse runtime (ListManager, NodeManager, SNode kinds, runtime context, GC phases) as LLVM
// bitcode, one module per architecture, embedded in the binary: backends load it into an
// llvm::Module and link it with JIT-compiled kernels (//runtime/cpu:jit for x64,
// //runtime/cuda:ptx_codegen for nvptx64), so one runtime source serves every backend.
#ifndef ACCELMEM_RUNTIME_RUNTIME_BITCODE_H_
#define ACCELMEM_RUNTIME_RUNTIME_BITCODE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace accelmem {
namespace runtime {

enum class RuntimeArch {
  kX64,   // x86_64-unknown-linux-gnu, ARCH_x64
  kCuda,  // nvptx64-nvidia-cuda, ARCH_cuda (sm_80 features; PTX retargeted to the chosen SM)
};

// "x64" / "cuda".
const char* RuntimeArchName(RuntimeArch arch);

// The embedded bitcode bytes for `arch` (valid for the program's lifetime).
absl::string_view RuntimeBitcode(RuntimeArch arch);

// Looks an architecture up by name ("x64", "cuda"); NotFound names the known ones.
absl::StatusOr<absl::string_view> RuntimeBitcodeByName(absl::string_view arch);

}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_RUNTIME_BITCODE_H_
