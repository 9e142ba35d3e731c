// main() of the PTX-checking tests (ptxas_cc_test in ptxas_test.bzl): googletest, then ptxas's
// path from argv[1] where the toolkit is configured (see ptxas_testing.h).
#include "gtest/gtest.h"
#include "runtime/cuda/ptxas_testing.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  accelmem::runtime::cuda::SetPtxasFromArgs(argc, argv);
  return RUN_ALL_TESTS();
}
