#include "runtime/runtime_bitcode.h"

#include "absl/strings/str_cat.h"
#include "runtime/runtime_bitcode_files.h"

namespace accelmem {
namespace runtime {

const char* RuntimeArchName(RuntimeArch arch) { return arch == RuntimeArch::kX64 ? "x64" : "cuda"; }

absl::string_view RuntimeBitcode(RuntimeArch arch) {
  const std::string name = absl::StrCat("runtime_", RuntimeArchName(arch), ".bc");
  const runtime_bitcode_files_file* file = runtime_bitcode_files_find(name.c_str());
  // Both files are embedded by the BUILD rule; a missing one is a build defect.
  if (file == nullptr) return {};
  return absl::string_view(reinterpret_cast<const char*>(file->data), file->size);
}

absl::StatusOr<absl::string_view> RuntimeBitcodeByName(absl::string_view arch) {
  if (arch == "x64") return RuntimeBitcode(RuntimeArch::kX64);
  if (arch == "cuda") return RuntimeBitcode(RuntimeArch::kCuda);
  return absl::NotFoundError(
      absl::StrCat("no runtime bitcode for architecture '", arch, "' (known: x64, cuda)"));
}

}  // namespace runtime
}  // namespace accelmem
