#include "runtime/cuda/ptxas_testing.h"

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace accelmem {
namespace runtime {
namespace cuda {
namespace {

std::string& PtxasPath() {
  static std::string* path = new std::string();
  return *path;
}

}  // namespace

void SetPtxasFromArgs(int argc, char** argv) {
  if (argc > 1) PtxasPath() = argv[1];
}

const std::string& TestPtxas() { return PtxasPath(); }

absl::Status AssembleWithPtxas(const std::string& ptx, const std::string& name,
                               const std::string& sm) {
  if (TestPtxas().empty()) return absl::FailedPreconditionError("no ptxas (CUDA not configured)");
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp != nullptr ? tmp : "/tmp";
  const std::string ptx_path = absl::StrCat(dir, "/", name, ".ptx");
  const std::string cubin = absl::StrCat(dir, "/", name, ".cubin");
  std::ofstream(ptx_path) << ptx;
  const std::string command =
      absl::StrCat(TestPtxas(), " -arch=", sm, " -o ", cubin, " ", ptx_path);
  const int status = std::system(command.c_str());
  if (status != 0) {
    return absl::InternalError(absl::StrCat("`", command, "` exited with ", status));
  }
  std::ifstream in(cubin, std::ios::binary | std::ios::ate);
  if (static_cast<long>(in.tellg()) <= 0) {
    return absl::InternalError(absl::StrCat("`", command, "` wrote no cubin"));
  }
  return absl::OkStatus();
}

}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem
