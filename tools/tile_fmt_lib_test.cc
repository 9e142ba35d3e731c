#include "tools/tile_fmt_lib.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace accelmem {
namespace tools {
namespace {

constexpr char kMessy[] =
    "# comment\n"
    "def f(x: Tensor[[4],FP32]) :\n"
    "    a: Tile[[4], FP32, Vec] = tile.load(x,\n"
    "          [0], [4])   # trailing\n"
    "    return\n";
constexpr char kCanonical[] =
    "# comment\n"
    "def f(x: Tensor[[4], FP32]):\n"
    "    a: Tile[[4], FP32, Vec] = tile.load(x, [0], [4])\n"
    "    # trailing\n"
    "    return\n";

struct Result {
  int status;
  std::string out, err;
};

Result RunFmt(std::vector<std::string> args, const std::string& stdin_text = "") {
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  int status = TileFmtMain(args, in, out, err);
  return {status, out.str(), err.str()};
}

std::string TempFile(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string Read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A file's canonical text goes to stdout; '-' reads stdin.
TEST(TileFmtTest, PrintsCanonicalText) {
  std::string path = TempFile("messy.tile", kMessy);
  Result r = RunFmt({path});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, kCanonical);
  Result s = RunFmt({"-"}, kMessy);
  EXPECT_EQ(s.status, 0);
  EXPECT_EQ(s.out, kCanonical);
}

// -i rewrites in place; a second run changes nothing.
TEST(TileFmtTest, InPlace) {
  std::string path = TempFile("inplace.tile", kMessy);
  Result r = RunFmt({"-i", path});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(Read(path), kCanonical);
  EXPECT_EQ(RunFmt({"--check", path}).status, 0);
}

// --check exits 1 and names a file that is not canonical, 0 for a canonical one.
TEST(TileFmtTest, Check) {
  std::string messy = TempFile("check_messy.tile", kMessy);
  std::string clean = TempFile("check_clean.tile", kCanonical);
  Result r = RunFmt({"--check", clean, messy});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, messy + ": not in canonical form\n");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(RunFmt({"--check", clean}).status, 0);
}

// Parse and verifier errors: `file:line:col: error: ...` on stderr, exit 1.
TEST(TileFmtTest, Errors) {
  std::string bad = TempFile(
      "bad.tile", "def f(x: Tensor[[4], FP32]):\n    a: Tile[[4], FP32, Vec] = tile.nop(x)\n");
  Result r = RunFmt({bad});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, bad + ":2:31: error: unknown op 'tile.nop'\n");
  Result v = RunFmt(
      {"-"},
      "def f(x: Tensor[[4], FP32]):\n    a: Tile[[8], FP32, Vec] = tile.load(x, [0], [4])\n");
  EXPECT_EQ(v.status, 1);
  EXPECT_EQ(v.err,
            "<stdin>:2:5: error: in function 'f': value 'a': type: declared Tile[[8], FP32, Vec] "
            "but tile.load gives Tile[[4], FP32, Vec]\n");
  // --no-verify skips the verifier.
  Result nv = RunFmt(
      {"--no-verify", "-"},
      "def f(x: Tensor[[4], FP32]):\n    a: Tile[[8], FP32, Vec] = tile.load(x, [0], [4])\n");
  EXPECT_EQ(nv.status, 0) << nv.err;
  EXPECT_EQ(RunFmt({"/nonexistent/x.tile"}).status, 1);
}

// Comments are kept: before the next statement or function, or at the end of a statement's
// line; the result is stable under a second run.
TEST(TileFmtTest, KeepsComments) {
  constexpr char kIn[] =
      "#   header\n"
      "@function(type=AIV)\n"
      "def f(x: Tensor[[4], FP32]):   # the entry\n"
      "\n"
      "    # load it\n"
      "    a: Tile[[4], FP32, Vec] = tile.load(x, [0],   [4])   # a\n"
      "    return\n"
      "# the end\n";
  constexpr char kOut[] =
      "#   header\n"
      "@function(type=AIV)\n"
      "def f(x: Tensor[[4], FP32]):  # the entry\n"
      "    # load it\n"
      "    a: Tile[[4], FP32, Vec] = tile.load(x, [0], [4])  # a\n"
      "    return\n"
      "# the end\n";
  Result r = RunFmt({"-"}, kIn);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, kOut);
  Result again = RunFmt({"-"}, kOut);
  EXPECT_EQ(again.out, kOut);
}

// Bad usage exits 2 with the usage text.
TEST(TileFmtTest, Usage) {
  Result r = RunFmt({"--frobnicate", "x.tile"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("usage: tile_fmt"), std::string::npos);
  EXPECT_EQ(RunFmt({}).status, 2);
  EXPECT_EQ(RunFmt({"-i", "--check", "x"}).status, 2);
  EXPECT_EQ(RunFmt({"-i", "-"}).status, 2);
}

}  // namespace
}  // namespace tools
}  // namespace accelmem
