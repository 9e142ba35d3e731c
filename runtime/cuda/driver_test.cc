#include "runtime/cuda/driver.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cuda/gpu_testing.h"

namespace accelmem {
namespace runtime {
namespace cuda {
namespace {

// A runfile (or, outside Bazel, the file named by `env`), or "" if missing.
std::string TestFile(const char* env, const std::string& runfile) {
  if (const char* path = std::getenv(env); path != nullptr && path[0] != '\0') return path;
  const char* srcdir = std::getenv("TEST_SRCDIR");
  if (srcdir == nullptr) return "";
  const std::string path = std::string(srcdir) + "/" + runfile;
  return access(path.c_str(), R_OK) == 0 ? path : "";
}

std::string FakeLibcuda() {
  return TestFile("ACCELMEM_FAKE_LIBCUDA", "accelmem/runtime/cuda/libfake_cuda.so");
}

// Without a driver or device, Open() is a clear Unavailable status, never a crash. With one, it
// names the device.
TEST(CudaDriverTest, OpenReportsDriverOrDevice) {
  auto driver = CudaDriver::Open();
  if (driver.ok()) {
    EXPECT_FALSE((*driver)->device_name().empty());
  } else {
    EXPECT_EQ(driver.status().code(), absl::StatusCode::kUnavailable) << driver.status();
    EXPECT_FALSE(driver.status().message().empty());
  }
}

// A device index beyond the visible devices is Unavailable and says how many there are.
TEST(CudaDriverTest, OpenBadOrdinal) {
  auto driver = CudaDriver::Open(1 << 20);
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kUnavailable);
}

// A library that cannot be loaded is Unavailable and names the library.
TEST(CudaDriverTest, MissingLibraryIsUnavailable) {
  auto driver = CudaDriver::OpenLibrary("/nonexistent/libcuda.so.1");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(driver.status().message().find("/nonexistent/libcuda.so.1"), std::string::npos);
}

// The toolkit's stub libcuda (what a machine without a driver finds through .../lib64/stubs) is
// Unavailable with CUDA_ERROR_STUB_LIBRARY and the stub's path, not a generic cuInit failure.
TEST(CudaDriverTest, StubLibraryIsUnavailableAndNamed) {
  const std::string stub = TestFile("ACCELMEM_STUB_LIBCUDA", "local_cuda/lib/stubs/libcuda.so");
  if (stub.empty()) GTEST_SKIP() << "no CUDA toolkit stub libcuda configured";
  auto driver = CudaDriver::OpenLibrary(stub);
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(driver.status().message().find("CUDA_ERROR_STUB_LIBRARY"), std::string::npos)
      << driver.status();
  EXPECT_NE(driver.status().message().find("stub"), std::string::npos) << driver.status();
}

// Every method makes the primary context current itself: a driver opened on one thread works
// from another thread that never set a context (the fake driver, like the real one, fails calls
// without a current context).
TEST(CudaDriverTest, EveryMethodWorksFromAnotherThread) {
  const std::string fake = FakeLibcuda();
  ASSERT_FALSE(fake.empty()) << "libfake_cuda.so is a data dependency of this test";
  auto driver = CudaDriver::OpenLibrary(fake);
  ASSERT_TRUE(driver.ok()) << driver.status();
  EXPECT_EQ((*driver)->device_name(), "Fake GPU");
  EXPECT_EQ((*driver)->sm(), "sm_90");
  CudaDriver* d = driver->get();
  std::vector<absl::Status> results;
  std::thread worker([&] {
    auto buffer = d->Allocate(64);
    results.push_back(buffer.status());
    if (!buffer.ok()) return;
    const uint32_t in[4] = {1, 2, 3, 4};
    uint32_t out[4] = {};
    results.push_back(d->Memset(*buffer, 0, 64));
    results.push_back(d->CopyToDevice(*buffer, in, sizeof(in)));
    results.push_back(d->CopyToHost(out, *buffer, sizeof(out)));
    EXPECT_EQ(out[3], 4u);
    auto module = d->LoadPtx(".entry k() { ret; }");
    results.push_back(module.status());
    if (module.ok()) {
      auto function = d->GetFunction(*module, "k");
      results.push_back(function.status());
      if (function.ok()) results.push_back(d->Launch(*function, {1, 1, 1}, {1, 1, 1}, nullptr));
    }
    results.push_back(d->Synchronize());
    results.push_back(d->Free(*buffer));
  });
  worker.join();
  ASSERT_EQ(results.size(), 9u);
  for (const absl::Status& status : results) EXPECT_TRUE(status.ok()) << status;
}

// The driver's primary context is retained by Open and released by the destructor.
TEST(CudaDriverTest, PrimaryContextRetainedAndReleased) {
  const std::string fake = FakeLibcuda();
  ASSERT_FALSE(fake.empty());
  void* library = dlopen(fake.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  auto refcount = reinterpret_cast<int (*)()>(dlsym(library, "fake_cuda_primary_refcount"));
  ASSERT_NE(refcount, nullptr);
  const int before = refcount();
  {
    auto driver = CudaDriver::OpenLibrary(fake);
    ASSERT_TRUE(driver.ok()) << driver.status();
    EXPECT_EQ(refcount(), before + 1);
  }
  EXPECT_EQ(refcount(), before);
}

// PTX the driver rejects is an error that carries the JIT's error and info logs, not a bare
// CUDA_ERROR_INVALID_PTX.
TEST(CudaDriverTest, RejectedPtxCarriesTheJitLog) {
  const std::string fake = FakeLibcuda();
  ASSERT_FALSE(fake.empty());
  auto driver = CudaDriver::OpenLibrary(fake);
  ASSERT_TRUE(driver.ok()) << driver.status();
  auto module = (*driver)->LoadPtx("not ptx");
  ASSERT_FALSE(module.ok());
  const std::string message(module.status().message());
  EXPECT_NE(message.find("CUDA_ERROR_INVALID_PTX"), std::string::npos) << message;
  EXPECT_NE(message.find("JIT error log:\nptxas fatal   : fake JIT: no .entry"), std::string::npos)
      << message;
  EXPECT_NE(message.find("JIT info log:\ninfo    : fake JIT ran"), std::string::npos) << message;
}

// Codes the driver cannot name (the stub library names none) still get cuda.h's name.
TEST(CudaDriverTest, ErrorNamesWithoutTheDriver) {
  EXPECT_EQ(CudaErrorName(34), "CUDA_ERROR_STUB_LIBRARY");
  EXPECT_EQ(CudaErrorName(218), "CUDA_ERROR_INVALID_PTX");
  EXPECT_EQ(CudaErrorName(12345), "CUDA error 12345");
}

// A GPU test whose driver did not open skips by default, and fails when ACCELMEM_REQUIRE_GPU=1
// (--config=gpu, the GPU bundle); "0" or "" do not require a GPU.
TEST(GpuTestSupportTest, RequireGpuTurnsSkipIntoFailure) {
  const absl::Status no_gpu = absl::UnavailableError("cuInit failed: CUDA_ERROR_STUB_LIBRARY");
  const char* saved = std::getenv("ACCELMEM_REQUIRE_GPU");
  const std::string saved_value = saved != nullptr ? saved : "";
  unsetenv("ACCELMEM_REQUIRE_GPU");
  GpuUnavailable verdict = OnGpuUnavailable(no_gpu);
  EXPECT_FALSE(verdict.fail);
  setenv("ACCELMEM_REQUIRE_GPU", "0", 1);
  EXPECT_FALSE(OnGpuUnavailable(no_gpu).fail);
  setenv("ACCELMEM_REQUIRE_GPU", "1", 1);
  verdict = OnGpuUnavailable(no_gpu);
  EXPECT_TRUE(verdict.fail);
  EXPECT_NE(verdict.message.find("CUDA_ERROR_STUB_LIBRARY"), std::string::npos);
  EXPECT_NE(verdict.message.find("ACCELMEM_REQUIRE_GPU"), std::string::npos);
  if (saved != nullptr) {
    setenv("ACCELMEM_REQUIRE_GPU", saved_value.c_str(), 1);
  } else {
    unsetenv("ACCELMEM_REQUIRE_GPU");
  }
}

}  // namespace
}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem
