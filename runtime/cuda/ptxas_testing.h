// File: runtime/cuda/ptxas_testing.h
//
// Test helper: assembles generated PTX with the CUDA toolkit's ptxas, the check every PTX-producing
// target runs in the default suite without a GPU. Declare such tests with ptxas_cc_test
// (//runtime/cuda:ptxas_test.bzl): they get ptxas's path as argv[1] where @local_cuda is
// configured, and their main() (:ptxas_test_main) hands it to SetPtxasFromArgs; without a
// toolkit the check is skipped.
#ifndef ACCELMEM_RUNTIME_CUDA_PTXAS_TESTING_H_
#define ACCELMEM_RUNTIME_CUDA_PTXAS_TESTING_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

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

// ---- Per-entry budgets (runtime/cuda/testdata/kernel_budgets.txt, docs/gpu.md) ----
//
// What each kernel entry costs the GPU, read off its PTX and off `ptxas -v`, so that a change that
// adds a fence, an atomic or a stack frame to a kernel fails a test on a machine without a GPU.

// Memory-ordering instructions of one entry: static counts in the entry's body and in every
// function it reaches through calls (each function counted once per entry).
struct PtxOrderingCounts {
  int fence = 0;        // membar.* and fence.*: a full wait for the thread's earlier accesses
  int atom = 0;         // atom.* (a round trip unless ptxas turns an unused result into red)
  int red = 0;          // red.* (fire-and-forget reduction)
  int ld_volatile = 0;  // ld.volatile.*: the relaxed atomic load as arch.h lowers it
  int st_volatile = 0;  // st.volatile.*
  int ld_acquire = 0;   // ld.acquire.*: an acquire load without a fence
  int st_release = 0;   // st.release.*
  bool operator==(const PtxOrderingCounts& o) const;
};
// Per `.entry` of `ptx`.
std::map<std::string, PtxOrderingCounts> CountPtxOrdering(absl::string_view ptx);

// What `ptxas -v` reports for one entry.
struct PtxasEntryStats {
  int registers = -1;
  int stack_bytes = 0;  // the entry's stack frame or the cumulative stack of its calls, larger
  int spill_bytes = 0;  // spill stores + loads of the entry and of every function ptxas reports
};
// Assembles `ptx` with `ptxas -v -arch=<sm>` and parses its report per entry (FailedPrecondition
// without a ptxas). Spills of a non-entry function are charged to every entry (ptxas does not say
// which entries call it; phase kernels must have none anyway).
absl::StatusOr<std::map<std::string, PtxasEntryStats>> PtxasVerbose(
    const std::string& ptx, const std::string& name, const std::string& sm = "sm_90");

// One row of the budget table: entry, the ordering counts (exact), the registers (a ceiling: a
// newer ptxas may allocate fewer), stack bytes and spill bytes (exact).
struct KernelBudget {
  PtxOrderingCounts counts;
  int registers = 0;
  int stack_bytes = 0;
  int spill_bytes = 0;
};
// Parses the table (one row a line: name and 10 integers; '#' starts a comment).
absl::StatusOr<std::map<std::string, KernelBudget>> ParseKernelBudgets(absl::string_view text);
// The header and rows of `entries` in the table's format, ready to paste.
std::string FormatKernelBudgets(const std::map<std::string, KernelBudget>& entries);
// The checked-in table (embedded from runtime/cuda/testdata/kernel_budgets.txt).
absl::string_view KernelBudgetTable();

// Checks every name of `entries` against the checked-in table: its PTX counts (exact) and, with a
// ptxas, its registers (at most the table's), stack and spills (exact). Returns the mismatches,
// one a line, followed by the measured rows ready to paste into the table; empty when all match.
// `ptxas_checked` is set to whether ptxas ran.
std::string CheckKernelBudgets(const std::string& ptx, const std::vector<std::string>& entries,
                               const std::string& name, bool* ptxas_checked);

}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_CUDA_PTXAS_TESTING_H_
