// File: runtime/cuda/ptx_codegen.h
//
// NVPTX code generation: an LLVM module (kernels, optionally linked with the runtime's
// nvptx64 bitcode) becomes PTX text for one SM. Kernels are marked with `nvvm.annotations`
// so that they are emitted as `.entry` functions. No GPU is needed; the PTX is assembled by
// ptxas (tested in the default suite) and loaded by //runtime/cuda:driver on a GPU machine.
#ifndef ACCELMEM_RUNTIME_CUDA_PTX_CODEGEN_H_
#define ACCELMEM_RUNTIME_CUDA_PTX_CODEGEN_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace accelmem {
namespace runtime {
namespace cuda {

inline constexpr char kNvptxTriple[] = "nvptx64-nvidia-cuda";

struct PtxOptions {
  std::string sm = "sm_90";  // the GPU architecture (`sm_80`, `sm_90`, ...)
  int opt_level = 3;
};

// Marks `kernel_names` as kernels (nvvm.annotations), links `runtime_bitcode` (if not empty)
// keeping only what the kernels need, internalizes non-kernels, optimizes and emits PTX.
absl::StatusOr<std::string> CompileToPtx(llvm::Module& module,
                                         const std::vector<std::string>& kernel_names,
                                         absl::string_view runtime_bitcode = {},
                                         const PtxOptions& options = {});

// As above, from LLVM IR text (kernels written by hand in tests and tools).
absl::StatusOr<std::string> CompileIrToPtx(absl::string_view ir_text,
                                           const std::vector<std::string>& kernel_names,
                                           absl::string_view runtime_bitcode = {},
                                           const PtxOptions& options = {});

// As above, from LLVM bitcode (kernels compiled from C++ by //bazel:bitcode.bzl and embedded);
// `name` labels parse errors.
absl::StatusOr<std::string> CompileBitcodeToPtx(absl::string_view bitcode, absl::string_view name,
                                                const std::vector<std::string>& kernel_names,
                                                absl::string_view runtime_bitcode = {},
                                                const PtxOptions& options = {});

}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_CUDA_PTX_CODEGEN_H_
