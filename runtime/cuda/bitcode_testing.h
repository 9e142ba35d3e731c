// File: runtime/cuda/bitcode_testing.h
//
// Test helper: checks on the nvptx64 bitcode that is embedded in the binaries (runtime_cuda.bc,
// the GC kernels, the device runtime's entry points).
#ifndef ACCELMEM_RUNTIME_CUDA_BITCODE_TESTING_H_
#define ACCELMEM_RUNTIME_CUDA_BITCODE_TESTING_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace accelmem {
namespace runtime {
namespace cuda {

// Warp- and block-level operations (activemask, match.any.sync, bar.sync, bar.warp.sync) must not
// be moved into or out of divergent control flow, which LLVM guarantees only for convergent
// calls inside convergent functions (what CUDA C++ gets by default and the runtime's plain C++
// gets from -fconvergent-functions).
struct ConvergenceReport {
  int convergent_calls = 0;         // convergent calls and calls of such operations
  std::vector<std::string> errors;  // "function: what is wrong"
};

// Every inline-asm call of a warp or block operation must be convergent, and every function
// that makes a convergent call must be convergent itself.
absl::StatusOr<ConvergenceReport> CheckConvergence(absl::string_view bitcode);

}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_CUDA_BITCODE_TESTING_H_
