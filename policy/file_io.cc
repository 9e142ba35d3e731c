#include "policy/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace accelmem {
namespace policy {
namespace {

absl::Status ReadError(const std::string& path, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": error: cannot read file: ", why));
}

// Reads `fd` to its end into `out`; false with errno set on a read error.
bool ReadAll(int fd, std::string* out) {
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    out->append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

absl::StatusOr<std::string> ReadFileOrStdin(const std::string& path) {
  std::string data;
  if (path == "-") {
    if (!ReadAll(STDIN_FILENO, &data)) return ReadError("<stdin>", std::strerror(errno));
    return data;
  }
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ReadError(path, std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return ReadError(path, std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return ReadError(path, "it is a directory");
  }
  const bool ok = ReadAll(fd, &data);
  const int err = errno;
  close(fd);
  if (!ok) return ReadError(path, std::strerror(err));
  return data;
}

absl::Status WriteWholeFile(const std::string& path, const std::string& data) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  auto fail = [&path](int err) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": error: cannot write file: ", std::strerror(err)));
  };
  if (fd < 0) return fail(errno);
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      close(fd);
      return fail(err);
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0) return fail(errno);
  return absl::OkStatus();
}

}  // namespace policy
}  // namespace accelmem
