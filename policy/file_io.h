// Reading and writing whole files for the command-line tools, with one-line errors.
//
// Why not std::ifstream: libstdc++ opens a directory without complaint and then throws
// std::ios_base::failure from the first read, which aborts a tool that does not catch it. These
// helpers stat the path first and report every failure as a status naming the path.
#ifndef ACCELMEM_POLICY_FILE_IO_H_
#define ACCELMEM_POLICY_FILE_IO_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace accelmem {
namespace policy {

// The bytes of `path`; "-" reads standard input. Errors read "PATH: error: cannot read file: WHY"
// (missing, a directory, unreadable, a read error).
absl::StatusOr<std::string> ReadFileOrStdin(const std::string& path);

// Writes `data` to `path` (truncating); "PATH: error: cannot write file: WHY" on failure.
absl::Status WriteWholeFile(const std::string& path, const std::string& data);

}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_FILE_IO_H_
