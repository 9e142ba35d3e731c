// cc_embed_data round trip: the embedded bytes equal the files given to the test as data.
#include <fstream>
#include <iterator>
#include <string>

#include "gtest/gtest.h"
#include "tools/embed/embedded_test_files.h"

namespace {

using accelmem::embed_test::embedded_test_files_create;
using accelmem::embed_test::embedded_test_files_find;

std::string g_binary_path, g_bitcode_path;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void ExpectEmbeddedEquals(const char* name, const std::string& path) {
  const auto* file = embedded_test_files_find(name);
  ASSERT_NE(file, nullptr) << name;
  std::string expected = ReadFile(path);
  ASSERT_FALSE(expected.empty()) << path;
  ASSERT_EQ(file->size, expected.size());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(file->data), file->size), expected);
  EXPECT_EQ(file->data[file->size], 0) << "blob must be NUL-terminated";
}

// Binary bytes (NUL, 0xff) and a genrule's bitcode are embedded byte for byte.
TEST(EmbedDataTest, BytesEqualRunfiles) {
  ExpectEmbeddedEquals("binary.bin", g_binary_path);
  ExpectEmbeddedEquals("tiny.bc", g_bitcode_path);
}

// The table lists each file once, ends with a null entry, and unknown names are not found.
TEST(EmbedDataTest, TableOfContents) {
  int count = 0;
  for (const auto* f = embedded_test_files_create(); f->name != nullptr; ++f) ++count;
  EXPECT_EQ(count, 2);
  EXPECT_EQ(embedded_test_files_find("missing.bc"), nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc != 3) return 2;
  g_binary_path = argv[1];
  g_bitcode_path = argv[2];
  return RUN_ALL_TESTS();
}
