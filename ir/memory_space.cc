#include "ir/memory_space.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace accelmem {
namespace ir {
namespace {

constexpr absl::string_view kNames[kNumMemorySpaces] = {"DDR",   "Vec", "Mat", "Left",
                                                        "Right", "Acc", "Bias"};

}  // namespace

absl::string_view MemorySpaceName(MemorySpace space) { return kNames[static_cast<int>(space)]; }

std::string MemorySpaceLowerName(MemorySpace space) {
  return absl::AsciiStrToLower(MemorySpaceName(space));
}

absl::StatusOr<MemorySpace> MemorySpaceFromName(absl::string_view name) {
  for (int i = 0; i < kNumMemorySpaces; ++i) {
    if (kNames[i] == name) return static_cast<MemorySpace>(i);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown memory space '", name, "'"));
}

}  // namespace ir
}  // namespace accelmem
