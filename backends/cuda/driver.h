// File: backends/cuda/driver.h
//
// A thin, owned handle on the CUDA driver API. libcuda is loaded at run time (dlopen of
// libcuda.so.1), so binaries build and start on machines without a driver; there, Open()
// returns an Unavailable status that says what is missing (driver, or device) instead of
// crashing. Every driver error comes back as absl::Status with the driver's error name.
#ifndef ACCELMEM_BACKENDS_CUDA_DRIVER_H_
#define ACCELMEM_BACKENDS_CUDA_DRIVER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace accelmem {
namespace backends {
namespace cuda {

using DevicePtr = uint64_t;  // CUdeviceptr

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

class CudaDriver {
 public:
  // Loads the driver, initializes it and creates a context on device `ordinal`.
  static absl::StatusOr<std::unique_ptr<CudaDriver>> Open(int ordinal = 0);
  ~CudaDriver();
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  const std::string& device_name() const { return device_name_; }
  // The device's architecture as a PTX target name ("sm_90" on an H100/H200).
  const std::string& sm() const { return sm_; }
  int multiprocessor_count() const { return multiprocessor_count_; }

  // Loads PTX (JIT-compiled by the driver for the device) and returns the module handle.
  absl::StatusOr<void*> LoadPtx(absl::string_view ptx);
  absl::StatusOr<void*> GetFunction(void* module, absl::string_view name);

  absl::StatusOr<DevicePtr> Allocate(size_t bytes);
  absl::Status Free(DevicePtr ptr);
  absl::Status Memset(DevicePtr ptr, unsigned char value, size_t bytes);
  absl::Status CopyToDevice(DevicePtr dst, const void* src, size_t bytes);
  absl::Status CopyToHost(void* dst, DevicePtr src, size_t bytes);

  // Launches `function` with `params` (an array of pointers to each argument, as cuLaunchKernel).
  absl::Status Launch(void* function, Dim3 grid, Dim3 block, void** params,
                      unsigned shared_bytes = 0);
  absl::Status Synchronize();

  struct Api;  // the resolved driver entry points

 private:
  CudaDriver() = default;
  absl::Status Check(int result, absl::string_view what) const;

  void* library_ = nullptr;
  std::unique_ptr<Api> api_;
  void* context_ = nullptr;
  std::string device_name_;
  std::string sm_;
  int multiprocessor_count_ = 0;
};

}  // namespace cuda
}  // namespace backends
}  // namespace accelmem

#endif  // ACCELMEM_BACKENDS_CUDA_DRIVER_H_
