#include "backends/cuda/driver.h"

#include <vector>

#include "backends/cuda/ptx_codegen.h"
#include "backends/cuda/testing_kernels.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace backends {
namespace cuda {
namespace {

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

}  // namespace
}  // namespace cuda
}  // namespace backends
}  // namespace accelmem
