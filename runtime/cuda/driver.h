// File: runtime/cuda/driver.h
//
// A thin, owned handle on the CUDA driver API. libcuda is loaded at run time (dlopen of
// libcuda.so.1), so binaries build and start on machines without a driver; there, Open()
// returns an Unavailable status that says what is missing (driver, device, or a real driver
// instead of the toolkit's stub library) instead of crashing. Every driver error comes back as
// absl::Status with the driver's error name.
//
// The handle works on the device's primary context (cuDevicePrimaryCtxRetain, shared with the
// CUDA runtime API and every other CudaDriver of the same device in the process). Every method
// makes that context current on the calling thread first and checks that it did, so a driver may
// be used from any thread (one call at a time per thread; the driver API itself is thread-safe).
#ifndef ACCELMEM_RUNTIME_CUDA_DRIVER_H_
#define ACCELMEM_RUNTIME_CUDA_DRIVER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace accelmem {
namespace runtime {
namespace cuda {

using DevicePtr = uint64_t;  // CUdeviceptr

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

class CudaDriver {
 public:
  // Loads the driver, initializes it and retains the primary context of device `ordinal`.
  static absl::StatusOr<std::unique_ptr<CudaDriver>> Open(int ordinal = 0);
  // As Open, from the driver library at `library` (a dlopen name or path; tests load a fake).
  static absl::StatusOr<std::unique_ptr<CudaDriver>> OpenLibrary(const std::string& library,
                                                                 int ordinal = 0);
  ~CudaDriver();
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  const std::string& device_name() const { return device_name_; }
  // The device's architecture as a PTX target name ("sm_90" on an H100/H200).
  const std::string& sm() const { return sm_; }
  int multiprocessor_count() const { return multiprocessor_count_; }

  // Loads PTX (JIT-compiled by the driver for the device) and returns the module handle. A PTX
  // the driver rejects is an error that carries the driver's JIT error and info logs.
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
  // Makes the primary context current on the calling thread.
  absl::Status MakeCurrent() const;

  void* library_ = nullptr;
  std::unique_ptr<Api> api_;
  int device_ = -1;          // CUdevice whose primary context is retained
  void* context_ = nullptr;  // that primary context
  std::string device_name_;
  std::string sm_;
  int multiprocessor_count_ = 0;
};

// The CUDA driver's name for an error code ("CUDA_ERROR_INVALID_PTX") for the codes accelmem
// reports, or "CUDA error <code>"; used when the driver cannot name it (the stub library).
std::string CudaErrorName(int code);

// The status of a failed cuModuleLoadDataEx: `what` and the error, then the JIT error log and the
// info log when they are not empty (each cut to a few KiB).
absl::Status ModuleLoadError(absl::Status error, absl::string_view error_log,
                             absl::string_view info_log);

}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_CUDA_DRIVER_H_
