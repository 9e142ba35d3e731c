#include "policy/file_io.h"

#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace accelmem {
namespace policy {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

// What is written is read back byte for byte, including NUL bytes.
TEST(FileIoTest, RoundTrip) {
  const std::string path = TempPath("round_trip.bin");
  const std::string data("a\0b\nc", 5);
  ASSERT_TRUE(WriteWholeFile(path, data).ok());
  absl::StatusOr<std::string> back = ReadFileOrStdin(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, data);
}

// A directory is an error naming the path, not an exception.
TEST(FileIoTest, DirectoryIsAnError) {
  const std::string dir = TempPath("a_dir");
  mkdir(dir.c_str(), 0755);
  absl::StatusOr<std::string> r = ReadFileOrStdin(dir);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), dir + ": error: cannot read file: it is a directory");
}

// A missing file and an unwritable path are errors naming the path.
TEST(FileIoTest, MissingAndUnwritable) {
  absl::StatusOr<std::string> r = ReadFileOrStdin(TempPath("no_such_file"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no_such_file: error: cannot read file: "),
            std::string::npos);
  absl::Status w = WriteWholeFile(TempPath("no_such_dir/x"), "x");
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.message().find("no_such_dir/x: error: cannot write file: "), std::string::npos);
}

}  // namespace
}  // namespace policy
}  // namespace accelmem
