// A fake CUDA driver library for //runtime/cuda:driver_test (loaded with CudaDriver::OpenLibrary
// in place of libcuda.so.1): one device, a primary context, device memory in host memory, and a
// JIT that rejects PTX without an .entry with an error log. Every call that needs a context fails
// with CUDA_ERROR_INVALID_CONTEXT unless the primary context is current on the calling thread, as
// the real driver does, so the tests see a method that forgets to make it current.
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kInvalidContext = 201;
constexpr int kInvalidPtx = 218;

int primary_context = 0;  // its address is the CUcontext
int primary_refcount = 0;
thread_local void* current_context = nullptr;

bool HasContext() { return current_context == &primary_context && primary_refcount > 0; }

void CopyLog(void* buffer, uintptr_t size, const char* text) {
  if (buffer == nullptr || size == 0) return;
  std::strncpy(static_cast<char*>(buffer), text, size - 1);
  static_cast<char*>(buffer)[size - 1] = '\0';
}

}  // namespace

extern "C" {

int cuInit(unsigned) { return kSuccess; }
int cuDeviceGetCount(int* count) {
  *count = 1;
  return kSuccess;
}
int cuDeviceGet(int* device, int ordinal) {
  if (ordinal != 0) return 101;
  *device = 0;
  return kSuccess;
}
int cuDeviceGetName(char* name, int size, int) {
  std::strncpy(name, "Fake GPU", size);
  return kSuccess;
}
int cuDeviceGetAttribute(int* value, int attribute, int) {
  *value = attribute == 16 ? 4 : attribute == 75 ? 9 : 0;
  return kSuccess;
}
int cuDevicePrimaryCtxRetain(void** context, int) {
  ++primary_refcount;
  *context = &primary_context;
  return kSuccess;
}
int cuDevicePrimaryCtxRelease_v2(int) {
  if (primary_refcount == 0) return kInvalidContext;
  --primary_refcount;
  return kSuccess;
}
int cuCtxSetCurrent(void* context) {
  if (context != nullptr && context != &primary_context) return kInvalidContext;
  current_context = context;
  return kSuccess;
}
int cuCtxSynchronize() { return HasContext() ? kSuccess : kInvalidContext; }

// Options as cuda.h's CUjit_option: 3/4 info log buffer/size, 5/6 error log buffer/size.
int cuModuleLoadDataEx(void** module, const void* image, unsigned num_options, int* options,
                       void** values) {
  if (!HasContext()) return kInvalidContext;
  void* error_log = nullptr;
  void* info_log = nullptr;
  uintptr_t error_size = 0, info_size = 0;
  for (unsigned i = 0; i < num_options; ++i) {
    if (options[i] == 3) info_log = values[i];
    if (options[i] == 4) info_size = reinterpret_cast<uintptr_t>(values[i]);
    if (options[i] == 5) error_log = values[i];
    if (options[i] == 6) error_size = reinterpret_cast<uintptr_t>(values[i]);
  }
  if (std::strstr(static_cast<const char*>(image), ".entry") == nullptr) {
    CopyLog(error_log, error_size, "ptxas fatal   : fake JIT: no .entry in the PTX image");
    CopyLog(info_log, info_size, "info    : fake JIT ran");
    return kInvalidPtx;
  }
  *module = &primary_context;
  return kSuccess;
}
int cuModuleGetFunction(void** function, void*, const char*) {
  if (!HasContext()) return kInvalidContext;
  *function = &primary_context;
  return kSuccess;
}
int cuMemAlloc_v2(uint64_t* ptr, size_t bytes) {
  if (!HasContext()) return kInvalidContext;
  *ptr = reinterpret_cast<uint64_t>(std::malloc(bytes));
  return *ptr == 0 ? 2 : kSuccess;
}
int cuMemFree_v2(uint64_t ptr) {
  if (!HasContext()) return kInvalidContext;
  std::free(reinterpret_cast<void*>(ptr));
  return kSuccess;
}
int cuMemsetD8_v2(uint64_t ptr, unsigned char value, size_t bytes) {
  if (!HasContext()) return kInvalidContext;
  std::memset(reinterpret_cast<void*>(ptr), value, bytes);
  return kSuccess;
}
int cuMemcpyHtoD_v2(uint64_t dst, const void* src, size_t bytes) {
  if (!HasContext()) return kInvalidContext;
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  return kSuccess;
}
int cuMemcpyDtoH_v2(void* dst, uint64_t src, size_t bytes) {
  if (!HasContext()) return kInvalidContext;
  std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  return kSuccess;
}
int cuLaunchKernel(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                   void*, void**, void**) {
  return HasContext() ? kSuccess : kInvalidContext;
}
int cuGetErrorName(int error, const char** name) {
  if (error == kInvalidContext) {
    *name = "CUDA_ERROR_INVALID_CONTEXT";
  } else if (error == kInvalidPtx) {
    *name = "CUDA_ERROR_INVALID_PTX";
  } else {
    return kInvalidValue;
  }
  return kSuccess;
}

// For the tests: how many retains of the primary context are outstanding.
int fake_cuda_primary_refcount() { return primary_refcount; }

}  // extern "C"
