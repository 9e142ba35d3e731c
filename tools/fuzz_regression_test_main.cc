// main() and tests of an accelmem_cc_fuzzer's regression test (bazel/fuzz.bzl): the entry point
// LLVMFuzzerTestOneInput runs on every corpus file given on the command line, then on
// deterministic mutants of them, under whatever compiler builds the test (gcc in a plain
// `bazel test`). The entry point aborts on a broken rule, so any crash fails the test.
//
//   TEST_BINARY [--mutations=N] FILE...
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::string> g_files;
int g_mutations = 2000;

int RunTarget(const std::string& s) {
  return LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// A byte that is likely to matter: one taken from some corpus file, or any byte.
char SomeByte(std::mt19937* rng) {
  if ((*rng)() % 4 == 0) return static_cast<char>((*rng)() & 0xff);
  const std::string& f = g_files[(*rng)() % g_files.size()];
  return f.empty() ? ' ' : f[(*rng)() % f.size()];
}

// Every corpus file passes through the entry point without a crash.
TEST(FuzzRegressionTest, Corpus) {
  ASSERT_FALSE(g_files.empty()) << "no corpus files given";
  for (const std::string& f : g_files) EXPECT_EQ(RunTarget(f), 0);
}

// Mutants of the corpus (flips, insertions, deletions, duplications, splices, truncations) never
// crash the entry point either.
TEST(FuzzRegressionTest, Mutations) {
  ASSERT_FALSE(g_files.empty()) << "no corpus files given";
  std::mt19937 rng(12345);
  for (int iter = 0; iter < g_mutations; ++iter) {
    std::string s = g_files[iter % g_files.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const size_t pos = rng() % s.size();
      switch (rng() % 6) {
        case 0:
          s[pos] = SomeByte(&rng);
          break;
        case 1:
          s.erase(pos, 1 + rng() % 8);
          break;
        case 2:
          s.insert(pos, s.substr(rng() % s.size(), 1 + rng() % 16));
          break;
        case 3:
          s.insert(pos, 1, SomeByte(&rng));
          break;
        case 4: {
          const std::string& other = g_files[rng() % g_files.size()];
          if (!other.empty()) s = s.substr(0, pos) + other.substr(rng() % other.size());
          break;
        }
        case 5:
          s[pos] = static_cast<char>(s[pos] ^ (1 << (rng() % 8)));
          break;
      }
    }
    EXPECT_EQ(RunTarget(s), 0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--mutations=", 0) == 0) {
      g_mutations = std::atoi(arg.c_str() + 12);
      continue;
    }
    std::ifstream in(arg, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read corpus file %s\n", arg.c_str());
      return 1;
    }
    g_files.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return RUN_ALL_TESTS();
}
