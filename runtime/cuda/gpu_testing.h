// File: runtime/cuda/gpu_testing.h
//
// What a GPU test (tag "gpu") does when no usable GPU is there. By default it skips with the
// reason, so that the tests can be run anywhere. With ACCELMEM_REQUIRE_GPU=1 in the environment
// (set by --config=gpu and by the GPU bundle's run.sh) it fails instead: on a machine that is
// meant to have a GPU, a missing driver, no visible device or the toolkit's stub libcuda is an
// error, not a pass.
//
//   void SetUp() override { ACCELMEM_OPEN_GPU_OR_SKIP(driver_); }
#ifndef ACCELMEM_RUNTIME_CUDA_GPU_TESTING_H_
#define ACCELMEM_RUNTIME_CUDA_GPU_TESTING_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "runtime/cuda/driver.h"

namespace accelmem {
namespace runtime {
namespace cuda {

// True when ACCELMEM_REQUIRE_GPU is set to anything but "" or "0".
bool GpuRequired();

// The verdict on a CudaDriver::Open failure: fail (GPU required) or skip, and the message.
struct GpuUnavailable {
  bool fail = false;
  std::string message;
};
GpuUnavailable OnGpuUnavailable(const absl::Status& open_status);

}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem

// Opens device 0 into `driver` (a std::unique_ptr<CudaDriver>); on failure skips the test, or
// fails it when a GPU is required. Use in SetUp or a test body (it returns from the function).
#define ACCELMEM_OPEN_GPU_OR_SKIP(driver)                                         \
  do {                                                                            \
    auto accelmem_opened_ = ::accelmem::runtime::cuda::CudaDriver::Open();        \
    if (!accelmem_opened_.ok()) {                                                 \
      const ::accelmem::runtime::cuda::GpuUnavailable accelmem_verdict_ =         \
          ::accelmem::runtime::cuda::OnGpuUnavailable(accelmem_opened_.status()); \
      if (accelmem_verdict_.fail) FAIL() << accelmem_verdict_.message;            \
      GTEST_SKIP() << accelmem_verdict_.message;                                  \
    }                                                                             \
    (driver) = std::move(*accelmem_opened_);                                      \
  } while (0)

#endif  // ACCELMEM_RUNTIME_CUDA_GPU_TESTING_H_
