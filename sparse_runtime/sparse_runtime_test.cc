// The sparse runtime suite (sparse_runtime_test_suite.cc) on the native backend.
#include "sparse_runtime/sparse_runtime_test_suite.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

INSTANTIATE_TEST_SUITE_P(Native, SparseRuntimeTest,
                         ::testing::Values(RuntimeBackendParam{"Native", nullptr}),
                         RuntimeBackendName);

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem
