#include "runtime/cuda/driver.h"

#include <dlfcn.h>

#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace accelmem {
namespace runtime {
namespace cuda {

// The driver API's ABI (stable since CUDA 4; the _v2 names are the 64-bit entry points). Declared
// here rather than taken from cuda.h so that this target builds without a toolkit.
struct CudaDriver::Api {
  int (*cuInit)(unsigned);
  int (*cuDeviceGetCount)(int*);
  int (*cuDeviceGet)(int*, int);
  int (*cuDeviceGetName)(char*, int, int);
  int (*cuDeviceGetAttribute)(int*, int, int);
  int (*cuDevicePrimaryCtxRetain)(void**, int);
  int (*cuDevicePrimaryCtxRelease)(int);
  int (*cuCtxSetCurrent)(void*);
  int (*cuCtxSynchronize)();
  int (*cuModuleLoadDataEx)(void**, const void*, unsigned, int*, void**);
  int (*cuModuleGetFunction)(void**, void*, const char*);
  int (*cuMemAlloc)(DevicePtr*, size_t);
  int (*cuMemFree)(DevicePtr);
  int (*cuMemsetD8)(DevicePtr, unsigned char, size_t);
  int (*cuMemcpyHtoD)(DevicePtr, const void*, size_t);
  int (*cuMemcpyDtoH)(void*, DevicePtr, size_t);
  int (*cuLaunchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        void*, void**, void**);
  int (*cuGetErrorName)(int, const char**);
};

namespace {

// CUresult values and CUjit_option values of cuda.h that this file uses.
constexpr int kCudaErrorStubLibrary = 34;
constexpr int kJitInfoLogBuffer = 3;
constexpr int kJitInfoLogBufferSizeBytes = 4;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSizeBytes = 6;
constexpr int kJitLogVerbose = 12;
constexpr size_t kJitLogBytes = 16 * 1024;
constexpr size_t kLogShownBytes = 4096;

template <typename Fn>
bool Resolve(void* library, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(library, name));
  return *fn != nullptr;
}

// The file the driver library was loaded from (for messages), or `fallback`.
std::string LoadedFrom(void* symbol, const std::string& fallback) {
  Dl_info info{};
  if (symbol != nullptr && dladdr(symbol, &info) != 0 && info.dli_fname != nullptr) {
    return info.dli_fname;
  }
  return fallback;
}

absl::string_view Shown(absl::string_view log) {
  while (!log.empty() && (log.back() == '\n' || log.back() == '\0' || log.back() == ' ')) {
    log.remove_suffix(1);
  }
  return log.substr(0, kLogShownBytes);
}

}  // namespace

std::string CudaErrorName(int code) {
  switch (code) {
    case 1:
      return "CUDA_ERROR_INVALID_VALUE";
    case 2:
      return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3:
      return "CUDA_ERROR_NOT_INITIALIZED";
    case 34:
      return "CUDA_ERROR_STUB_LIBRARY";
    case 35:
      return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 100:
      return "CUDA_ERROR_NO_DEVICE";
    case 101:
      return "CUDA_ERROR_INVALID_DEVICE";
    case 201:
      return "CUDA_ERROR_INVALID_CONTEXT";
    case 209:
      return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case 218:
      return "CUDA_ERROR_INVALID_PTX";
    case 221:
      return "CUDA_ERROR_JIT_COMPILER_NOT_FOUND";
    case 222:
      return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case 400:
      return "CUDA_ERROR_INVALID_HANDLE";
    case 500:
      return "CUDA_ERROR_NOT_FOUND";
    case 700:
      return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case 702:
      return "CUDA_ERROR_LAUNCH_TIMEOUT";
    case 719:
      return "CUDA_ERROR_LAUNCH_FAILED";
    case 803:
      return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case 804:
      return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    default:
      return absl::StrCat("CUDA error ", code);
  }
}

absl::Status ModuleLoadError(absl::Status error, absl::string_view error_log,
                             absl::string_view info_log) {
  std::string message(error.message());
  if (!Shown(error_log).empty()) absl::StrAppend(&message, "\nJIT error log:\n", Shown(error_log));
  if (!Shown(info_log).empty()) absl::StrAppend(&message, "\nJIT info log:\n", Shown(info_log));
  return absl::Status(error.code(), message);
}

absl::StatusOr<std::unique_ptr<CudaDriver>> CudaDriver::Open(int ordinal) {
  return OpenLibrary("libcuda.so.1", ordinal);
}

absl::StatusOr<std::unique_ptr<CudaDriver>> CudaDriver::OpenLibrary(const std::string& name,
                                                                    int ordinal) {
  void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return absl::UnavailableError(absl::StrCat("no CUDA driver: cannot load ", name, " (",
                                               dlerror(), "); a GPU machine is needed"));
  }
  std::unique_ptr<CudaDriver> driver(new CudaDriver());
  driver->library_ = library;
  driver->api_ = std::make_unique<Api>();
  Api& api = *driver->api_;
  const bool resolved =
      Resolve(library, "cuInit", &api.cuInit) &&
      Resolve(library, "cuDeviceGetCount", &api.cuDeviceGetCount) &&
      Resolve(library, "cuDeviceGet", &api.cuDeviceGet) &&
      Resolve(library, "cuDeviceGetName", &api.cuDeviceGetName) &&
      Resolve(library, "cuDeviceGetAttribute", &api.cuDeviceGetAttribute) &&
      Resolve(library, "cuDevicePrimaryCtxRetain", &api.cuDevicePrimaryCtxRetain) &&
      Resolve(library, "cuDevicePrimaryCtxRelease_v2", &api.cuDevicePrimaryCtxRelease) &&
      Resolve(library, "cuCtxSetCurrent", &api.cuCtxSetCurrent) &&
      Resolve(library, "cuCtxSynchronize", &api.cuCtxSynchronize) &&
      Resolve(library, "cuModuleLoadDataEx", &api.cuModuleLoadDataEx) &&
      Resolve(library, "cuModuleGetFunction", &api.cuModuleGetFunction) &&
      Resolve(library, "cuMemAlloc_v2", &api.cuMemAlloc) &&
      Resolve(library, "cuMemFree_v2", &api.cuMemFree) &&
      Resolve(library, "cuMemsetD8_v2", &api.cuMemsetD8) &&
      Resolve(library, "cuMemcpyHtoD_v2", &api.cuMemcpyHtoD) &&
      Resolve(library, "cuMemcpyDtoH_v2", &api.cuMemcpyDtoH) &&
      Resolve(library, "cuLaunchKernel", &api.cuLaunchKernel) &&
      Resolve(library, "cuGetErrorName", &api.cuGetErrorName);
  if (!resolved) {
    return absl::UnavailableError(
        absl::StrCat("the CUDA driver lacks an entry point accelmem needs: ", dlerror()));
  }
  const int init = api.cuInit(0);
  if (init == kCudaErrorStubLibrary) {
    return absl::UnavailableError(absl::StrCat(
        "cuInit failed: CUDA_ERROR_STUB_LIBRARY: ",
        LoadedFrom(reinterpret_cast<void*>(api.cuInit), name),
        " is the CUDA toolkit's stub libcuda, not a driver; put the NVIDIA driver's libcuda.so.1 "
        "first on the library path (remove .../lib64/stubs from LD_LIBRARY_PATH)"));
  }
  absl::Status status = driver->Check(init, "cuInit");
  if (!status.ok()) return absl::UnavailableError(status.message());
  int count = 0;
  status = driver->Check(api.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (!status.ok()) return absl::UnavailableError(status.message());
  if (count <= ordinal) {
    return absl::UnavailableError(
        absl::StrCat("no CUDA device ", ordinal, ": the driver sees ", count, " device(s)"));
  }
  int device = 0;
  if (status = driver->Check(api.cuDeviceGet(&device, ordinal), "cuDeviceGet"); !status.ok()) {
    return status;
  }
  char device_name[256] = {};
  if (status = driver->Check(api.cuDeviceGetName(device_name, sizeof(device_name), device),
                             "cuDeviceGetName");
      !status.ok()) {
    return status;
  }
  driver->device_name_ = device_name;
  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT (16), COMPUTE_CAPABILITY_MAJOR (75) / _MINOR (76).
  int major = 0, minor = 0;
  if (status = driver->Check(api.cuDeviceGetAttribute(&driver->multiprocessor_count_, 16, device),
                             "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
      !status.ok()) {
    return status;
  }
  if (status = driver->Check(api.cuDeviceGetAttribute(&major, 75, device),
                             "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
      !status.ok()) {
    return status;
  }
  if (status = driver->Check(api.cuDeviceGetAttribute(&minor, 76, device),
                             "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
      !status.ok()) {
    return status;
  }
  driver->sm_ = absl::StrCat("sm_", major, minor);
  if (status = driver->Check(api.cuDevicePrimaryCtxRetain(&driver->context_, device),
                             "cuDevicePrimaryCtxRetain");
      !status.ok()) {
    return status;
  }
  driver->device_ = device;
  if (status = driver->MakeCurrent(); !status.ok()) return status;
  return driver;
}

CudaDriver::~CudaDriver() {
  if (context_ != nullptr) api_->cuDevicePrimaryCtxRelease(device_);
  // The driver library stays loaded: unloading libcuda while other contexts exist is unsafe.
}

absl::Status CudaDriver::Check(int result, absl::string_view what) const {
  if (result == 0) return absl::OkStatus();
  const char* name = nullptr;
  std::string fallback;
  if (api_ == nullptr || api_->cuGetErrorName == nullptr || api_->cuGetErrorName(result, &name) ||
      name == nullptr) {
    fallback = CudaErrorName(result);
    name = fallback.c_str();
  }
  return absl::InternalError(absl::StrCat(what, " failed: ", name, " (", result, ")"));
}

absl::Status CudaDriver::MakeCurrent() const {
  return Check(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent(primary context)");
}

absl::StatusOr<void*> CudaDriver::LoadPtx(absl::string_view ptx) {
  if (auto status = MakeCurrent(); !status.ok()) return status;
  std::string text(ptx);  // the driver needs a NUL-terminated image
  std::string error_log(kJitLogBytes, '\0');
  std::string info_log(kJitLogBytes, '\0');
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes, kJitInfoLogBuffer,
                   kJitInfoLogBufferSizeBytes, kJitLogVerbose};
  void* values[] = {error_log.data(), reinterpret_cast<void*>(uintptr_t{kJitLogBytes}),
                    info_log.data(), reinterpret_cast<void*>(uintptr_t{kJitLogBytes}),
                    reinterpret_cast<void*>(uintptr_t{1})};
  void* module = nullptr;
  const int result = api_->cuModuleLoadDataEx(&module, text.c_str(), 5, options, values);
  if (auto status = Check(result, "cuModuleLoadDataEx"); !status.ok()) {
    return ModuleLoadError(status, error_log.c_str(), info_log.c_str());
  }
  return module;
}

absl::StatusOr<void*> CudaDriver::GetFunction(void* module, absl::string_view name) {
  if (auto status = MakeCurrent(); !status.ok()) return status;
  void* function = nullptr;
  std::string symbol(name);
  if (auto status = Check(api_->cuModuleGetFunction(&function, module, symbol.c_str()),
                          absl::StrCat("cuModuleGetFunction('", name, "')"));
      !status.ok()) {
    return status;
  }
  return function;
}

absl::StatusOr<DevicePtr> CudaDriver::Allocate(size_t bytes) {
  if (auto status = MakeCurrent(); !status.ok()) return status;
  DevicePtr ptr = 0;
  if (auto status = Check(api_->cuMemAlloc(&ptr, bytes), absl::StrCat("cuMemAlloc(", bytes, ")"));
      !status.ok()) {
    return status;
  }
  return ptr;
}

absl::Status CudaDriver::Free(DevicePtr ptr) {
  if (auto status = MakeCurrent(); !status.ok()) return status;
  return Check(api_->cuMemFree(ptr), "cuMemFree");
}

absl::Status CudaDriver::Memset(DevicePtr ptr, unsigned char value, size_t bytes) {
  if (auto status = MakeCurrent(); !status.ok()) return status;
  return Check(api_->cuMemsetD8(ptr, value, bytes), "cuMemsetD8");
}

absl::Status CudaDriver::CopyToDevice(DevicePtr dst, const void* src, size_t bytes) {
  if (auto status = MakeCurrent(); !status.ok()) return status;
  return Check(api_->cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}

absl::Status CudaDriver::CopyToHost(void* dst, DevicePtr src, size_t bytes) {
  if (auto status = MakeCurrent(); !status.ok()) return status;
  return Check(api_->cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
}

absl::Status CudaDriver::Launch(void* function, Dim3 grid, Dim3 block, void** params,
                                unsigned shared_bytes) {
  if (auto status = MakeCurrent(); !status.ok()) return status;
  return Check(api_->cuLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                    shared_bytes, nullptr, params, nullptr),
               "cuLaunchKernel");
}

absl::Status CudaDriver::Synchronize() {
  if (auto status = MakeCurrent(); !status.ok()) return status;
  return Check(api_->cuCtxSynchronize(), "cuCtxSynchronize");
}

}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem
