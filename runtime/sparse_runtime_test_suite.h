// File: runtime/sparse_runtime_test_suite.h
//
// The sparse runtime's host-API test suite as value-parameterized tests (TEST_P), parameterized
// by the execution backend, so that the same tests run unchanged on every backend:
//   INSTANTIATE_TEST_SUITE_P(Native, SparseRuntimeTest,
//                            ::testing::Values(RuntimeBackendParam{"Native", nullptr}),
//                            RuntimeBackendName);
// //runtime:sparse_runtime_test instantiates it natively, //runtime/cpu:jit_backend_test with
// the JIT backend (so this package does not depend on LLVM).
#ifndef ACCELMEM_RUNTIME_SPARSE_RUNTIME_TEST_SUITE_H_
#define ACCELMEM_RUNTIME_SPARSE_RUNTIME_TEST_SUITE_H_

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "runtime/sparse_runtime.h"
#include "runtime/sparse_runtime_test_peer.h"

namespace accelmem {
namespace runtime {

struct RuntimeBackendParam {
  std::string name;
  KernelBackendFactory factory;  // empty: the native runtime
};

class SparseRuntimeTest : public ::testing::TestWithParam<RuntimeBackendParam> {
 protected:
  // Finalizes `tree` and creates a runtime on the parameter's backend (emulating upstream where
  // `upstream` says so).
  std::unique_ptr<SparseRuntime> Make(sparse_runtime::SNodeTree& tree,
                                      SparseRuntimeOptions options = {},
                                      const UpstreamEmulation& upstream = {});
};

std::string RuntimeBackendName(const ::testing::TestParamInfo<RuntimeBackendParam>& info);

}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_SPARSE_RUNTIME_TEST_SUITE_H_
