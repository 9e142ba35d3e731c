// File: runtime/cuda/ptxas_testing.h
//
// Test helper: assembles generated PTX with the CUDA toolkit's ptxas, the check every PTX-producing
// target runs in the default suite without a GPU. Declare such tests with ptxas_cc_test
// (//runtime/cuda:ptxas_test.bzl): they get ptxas's path as argv[1] where @local_cuda is
// configured, and their main() (:ptxas_test_main) hands it to SetPtxasFromArgs; without a
// toolkit the check is skipped.
#ifndef ACCELMEM_RUNTIME_CUDA_PTXAS_TESTING_H_
#define ACCELMEM_RUNTIME_CUDA_PTXAS_TESTING_H_

#include <string>

#include "absl/status/status.h"

namespace accelmem {
namespace runtime {
namespace cuda {

// Called by :ptxas_test_main after InitGoogleTest: takes ptxas's path from argv[1] if any.
void SetPtxasFromArgs(int argc, char** argv);
// The ptxas path, or empty when the toolkit is not configured (tests then GTEST_SKIP).
const std::string& TestPtxas();

// Writes `ptx` to $TEST_TMPDIR/<name>.ptx and assembles it with `ptxas -arch=<sm>`. OK when ptxas
// succeeds and writes a non-empty cubin; otherwise an error with the command (ptxas's own
// diagnostics are on the test's stderr). FailedPrecondition without a ptxas.
absl::Status AssembleWithPtxas(const std::string& ptx, const std::string& name,
                               const std::string& sm = "sm_90");

}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_CUDA_PTXAS_TESTING_H_
