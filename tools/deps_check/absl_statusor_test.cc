// Proves the system abseil is linked for real: StatusOr, strings, str_format, containers, Mutex.
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace {

absl::StatusOr<int> ParsePositive(const std::string& text) {
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return absl::InvalidArgumentError(absl::StrCat("not a number: '", text, "'"));
    }
    value = value * 10 + (c - '0');
  }
  return value;
}

// A value and an error both survive a StatusOr round trip.
TEST(AbslStatusOrTest, ValueAndErrorRoundTrip) {
  absl::StatusOr<int> ok = ParsePositive("42");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 42);
  absl::StatusOr<int> bad = ParsePositive("4x");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "not a number: '4x'");
}

// Compiled-library parts of abseil (hashing, formatting, splitting, Mutex) link and work.
TEST(AbslStatusOrTest, LibrariesLink) {
  absl::flat_hash_map<std::string, int> counts;
  for (absl::string_view word : absl::StrSplit("a,b,a", ',')) ++counts[std::string(word)];
  EXPECT_EQ(counts["a"], 2);
  EXPECT_EQ(absl::StrFormat("%05.1f|%s", 3.14159, "x"), "003.1|x");
  absl::Mutex mu;
  absl::MutexLock lock(&mu);
  EXPECT_EQ(counts.size(), 2u);
}

}  // namespace
