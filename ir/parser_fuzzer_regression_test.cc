// Runs the fuzz target (ir/parser_fuzzer.cc) under the default compiler: every corpus file,
// then deterministic byte-level mutations of each (flips, deletions, duplications, splices).
// Any contract violation aborts the test.
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::string> g_files;

int RunTarget(const std::string& s) {
  return LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// Each corpus file passes through the fuzz target.
TEST(ParserFuzzerRegressionTest, Corpus) {
  ASSERT_FALSE(g_files.empty());
  for (const std::string& f : g_files) EXPECT_EQ(RunTarget(f), 0);
}

// Mutants of the corpus never crash, hang or break the print/parse round trip.
TEST(ParserFuzzerRegressionTest, Mutations) {
  std::mt19937 rng(12345);
  const char kAlphabet[] = " \n\t()[],:=+-@#\"\\.0123456789aeimrtxyFVIT";
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s = g_files[iter % g_files.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      size_t pos = rng() % s.size();
      switch (rng() % 5) {
        case 0:
          s[pos] = kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
          break;
        case 1:
          s.erase(pos, 1 + rng() % 8);
          break;
        case 2:
          s.insert(pos, s.substr(rng() % s.size(), 1 + rng() % 16));
          break;
        case 3:
          s.insert(pos, 1, kAlphabet[rng() % (sizeof(kAlphabet) - 1)]);
          break;
        case 4: {
          const std::string& other = g_files[rng() % g_files.size()];
          s = s.substr(0, pos) + other.substr(rng() % other.size());
          break;
        }
      }
    }
    EXPECT_EQ(RunTarget(s), 0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    g_files.push_back(ss.str());
  }
  return RUN_ALL_TESTS();
}
