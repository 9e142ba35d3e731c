#include "runtime/cuda/gpu_testing.h"

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace accelmem {
namespace runtime {
namespace cuda {

bool GpuRequired() {
  const char* value = std::getenv("ACCELMEM_REQUIRE_GPU");
  return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
}

GpuUnavailable OnGpuUnavailable(const absl::Status& open_status) {
  GpuUnavailable verdict;
  verdict.fail = GpuRequired();
  if (verdict.fail) {
    verdict.message = absl::StrCat(
        "ACCELMEM_REQUIRE_GPU is set but no usable CUDA GPU opened: ", open_status.ToString(),
        " (check nvidia-smi, CUDA_VISIBLE_DEVICES and that LD_LIBRARY_PATH does not put the "
        "toolkit's stub libcuda first)");
  } else {
    verdict.message = absl::StrCat(
        "no CUDA device visible (set ACCELMEM_REQUIRE_GPU=1 to fail "
        "instead of skipping): ",
        open_status.ToString());
  }
  return verdict;
}

}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem
