#include "backends/cuda/driver.h"

#include <dlfcn.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace accelmem {
namespace backends {
namespace cuda {

// The driver API's ABI (stable since CUDA 4; the _v2 names are the 64-bit entry points). Declared
// here rather than taken from cuda.h so that this target builds without a toolkit.
struct CudaDriver::Api {
  int (*cuInit)(unsigned);
  int (*cuDeviceGetCount)(int*);
  int (*cuDeviceGet)(int*, int);
  int (*cuDeviceGetName)(char*, int, int);
  int (*cuDeviceGetAttribute)(int*, int, int);
  int (*cuCtxCreate)(void**, unsigned, int);
  int (*cuCtxDestroy)(void*);
  int (*cuCtxSetCurrent)(void*);
  int (*cuCtxSynchronize)();
  int (*cuModuleLoadData)(void**, const void*);
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

template <typename Fn>
bool Resolve(void* library, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(library, name));
  return *fn != nullptr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaDriver>> CudaDriver::Open(int ordinal) {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return absl::UnavailableError(absl::StrCat("no CUDA driver: cannot load libcuda.so.1 (",
                                               dlerror(), "); a GPU machine is needed"));
  }
  std::unique_ptr<CudaDriver> driver(new CudaDriver());
  driver->library_ = library;
  driver->api_ = std::make_unique<Api>();
  Api& api = *driver->api_;
  const bool resolved = Resolve(library, "cuInit", &api.cuInit) &&
                        Resolve(library, "cuDeviceGetCount", &api.cuDeviceGetCount) &&
                        Resolve(library, "cuDeviceGet", &api.cuDeviceGet) &&
                        Resolve(library, "cuDeviceGetName", &api.cuDeviceGetName) &&
                        Resolve(library, "cuDeviceGetAttribute", &api.cuDeviceGetAttribute) &&
                        Resolve(library, "cuCtxCreate_v2", &api.cuCtxCreate) &&
                        Resolve(library, "cuCtxDestroy_v2", &api.cuCtxDestroy) &&
                        Resolve(library, "cuCtxSetCurrent", &api.cuCtxSetCurrent) &&
                        Resolve(library, "cuCtxSynchronize", &api.cuCtxSynchronize) &&
                        Resolve(library, "cuModuleLoadData", &api.cuModuleLoadData) &&
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
  absl::Status status = driver->Check(api.cuInit(0), "cuInit");
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
  char name[256] = {};
  if (status = driver->Check(api.cuDeviceGetName(name, sizeof(name), device), "cuDeviceGetName");
      !status.ok()) {
    return status;
  }
  driver->device_name_ = name;
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
  if (status = driver->Check(api.cuCtxCreate(&driver->context_, 0, device), "cuCtxCreate");
      !status.ok()) {
    return status;
  }
  return driver;
}

CudaDriver::~CudaDriver() {
  if (context_ != nullptr) api_->cuCtxDestroy(context_);
  // The driver library stays loaded: unloading libcuda while other contexts exist is unsafe.
}

absl::Status CudaDriver::Check(int result, absl::string_view what) const {
  if (result == 0) return absl::OkStatus();
  const char* name = nullptr;
  if (api_ == nullptr || api_->cuGetErrorName == nullptr || api_->cuGetErrorName(result, &name)) {
    name = "unknown error";
  }
  return absl::InternalError(absl::StrCat(what, " failed: ", name, " (", result, ")"));
}

absl::StatusOr<void*> CudaDriver::LoadPtx(absl::string_view ptx) {
  std::string text(ptx);  // cuModuleLoadData needs a NUL-terminated image
  void* module = nullptr;
  api_->cuCtxSetCurrent(context_);
  if (auto status = Check(api_->cuModuleLoadData(&module, text.c_str()), "cuModuleLoadData");
      !status.ok()) {
    return status;
  }
  return module;
}

absl::StatusOr<void*> CudaDriver::GetFunction(void* module, absl::string_view name) {
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
  DevicePtr ptr = 0;
  api_->cuCtxSetCurrent(context_);
  if (auto status = Check(api_->cuMemAlloc(&ptr, bytes), absl::StrCat("cuMemAlloc(", bytes, ")"));
      !status.ok()) {
    return status;
  }
  return ptr;
}

absl::Status CudaDriver::Free(DevicePtr ptr) { return Check(api_->cuMemFree(ptr), "cuMemFree"); }

absl::Status CudaDriver::Memset(DevicePtr ptr, unsigned char value, size_t bytes) {
  return Check(api_->cuMemsetD8(ptr, value, bytes), "cuMemsetD8");
}

absl::Status CudaDriver::CopyToDevice(DevicePtr dst, const void* src, size_t bytes) {
  return Check(api_->cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}

absl::Status CudaDriver::CopyToHost(void* dst, DevicePtr src, size_t bytes) {
  return Check(api_->cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
}

absl::Status CudaDriver::Launch(void* function, Dim3 grid, Dim3 block, void** params,
                                unsigned shared_bytes) {
  api_->cuCtxSetCurrent(context_);
  return Check(api_->cuLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                    shared_bytes, nullptr, params, nullptr),
               "cuLaunchKernel");
}

absl::Status CudaDriver::Synchronize() {
  return Check(api_->cuCtxSynchronize(), "cuCtxSynchronize");
}

}  // namespace cuda
}  // namespace backends
}  // namespace accelmem
