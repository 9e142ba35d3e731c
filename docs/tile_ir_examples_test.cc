// The examples of the docs are real: every ```tile block of the Markdown files given as arguments
// parses, verifies and round-trips through the printer, every ```tile-error block fails with the
// message its last line states, and every block that says it is the memory passes' output of an
// earlier block is exactly that.
//
// Fences (the first word is the language a Markdown viewer highlights; the rest is ours):
//   ```tile               canonical text: printing the parsed program (comments kept) gives the
//                         block back byte for byte.
//   ```tile non-canonical valid but not in printed form (e.g. `range(n)`); printing is then a
//                         fixed point and parses back to a structurally equal program.
//   ```tile-error         must fail to parse or verify. Its last line is `# expect: TEXT`; the
//                         error message (`<input>:line:col: error: ...`, lines counted inside
//                         the block) must contain TEXT.
// Attributes after `tile` (any order, besides `non-canonical`):
//   id=NAME               names the block for a later `from=`.
//   from=NAME passes=P    the block is what the memory passes P (`tile_opt --passes=P`, `default`
//   [planner=S]           for all three; S: sequential, greedy, search) make of block NAME of
//                         the same document: printed without comments, both are the same text.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "ir/verifier.h"
#include "passes/allocate_memory_addr.h"
#include "passes/memory_pipeline.h"
#include "passes/pass_manager.h"

namespace accelmem {
namespace {

std::vector<std::string> g_files;

enum class Kind { kCanonical, kNonCanonical, kError };

struct Block {
  std::string file;
  int line = 0;  // of the opening fence
  Kind kind = Kind::kCanonical;
  std::string text;
  std::string id, from, passes, planner;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every ```tile / ```tile-error block of `text`; fails the test on an unknown tile fence or an
// unclosed block.
std::vector<Block> ExtractBlocks(const std::string& file, const std::string& text) {
  std::vector<Block> blocks;
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  bool in_other_fence = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    absl::string_view line = lines[i];
    if (!absl::StartsWith(line, "```")) continue;
    absl::string_view info = absl::StripAsciiWhitespace(line.substr(3));
    if (in_other_fence) {
      if (info.empty()) in_other_fence = false;
      continue;
    }
    std::vector<absl::string_view> words = absl::StrSplit(info, ' ', absl::SkipEmpty());
    if (words.empty() || (words[0] != "tile" && words[0] != "tile-error")) {
      in_other_fence = true;
      continue;
    }
    Block b;
    b.file = file;
    b.line = static_cast<int>(i) + 1;
    if (words[0] == "tile-error") b.kind = Kind::kError;
    for (size_t w = 1; w < words.size(); ++w) {
      absl::string_view a = words[w];
      if (a == "non-canonical" && b.kind != Kind::kError) {
        b.kind = Kind::kNonCanonical;
      } else if (absl::ConsumePrefix(&a, "id=")) {
        b.id = std::string(a);
      } else if (absl::ConsumePrefix(&a, "from=")) {
        b.from = std::string(a);
      } else if (absl::ConsumePrefix(&a, "passes=")) {
        b.passes = std::string(a);
      } else if (absl::ConsumePrefix(&a, "planner=")) {
        b.planner = std::string(a);
      } else {
        ADD_FAILURE() << file << ":" << b.line << ": unknown fence attribute '" << a << "'";
      }
    }
    if (b.from.empty() != b.passes.empty() || (!b.planner.empty() && b.from.empty())) {
      ADD_FAILURE() << file << ":" << b.line << ": from= and passes= (and planner=) go together";
    }
    size_t j = i + 1;
    for (; j < lines.size() && !absl::StartsWith(lines[j], "```"); ++j) {
      absl::StrAppend(&b.text, lines[j], "\n");
    }
    if (j >= lines.size()) {
      ADD_FAILURE() << file << ":" << b.line << ": block is never closed";
      break;
    }
    blocks.push_back(std::move(b));
    i = j;
  }
  return blocks;
}

void CheckValid(const Block& b) {
  ir::Comments comments;
  ir::ParseOptions options;
  options.comments = &comments;
  auto p = ir::ParseAndVerifyProgram(b.text, "<input>", options);
  ASSERT_TRUE(p.ok()) << p.status() << "\n" << b.text;
  const std::string printed = ir::PrintProgram(**p);
  auto again = ir::ParseAndVerifyProgram(printed, "<printed>");
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << printed;
  EXPECT_TRUE(ir::StructuralEqual(**p, **again)) << ir::FirstDifference(**p, **again);
  EXPECT_EQ(ir::PrintProgram(**again), printed) << "printing is not a fixed point";
  if (b.kind == Kind::kCanonical) {
    EXPECT_EQ(ir::PrintProgram(**p, &comments), b.text)
        << "the block is not in printed form; mark it ```tile non-canonical or use the text "
           "above";
  }
}

void CheckError(const Block& b) {
  absl::string_view text = b.text;
  absl::ConsumeSuffix(&text, "\n");
  const size_t last_nl = text.rfind('\n');
  absl::string_view last = last_nl == absl::string_view::npos ? text : text.substr(last_nl + 1);
  ASSERT_TRUE(absl::ConsumePrefix(&last, "# expect: "))
      << "a ```tile-error block ends with a line `# expect: TEXT`";
  auto p = ir::ParseAndVerifyProgram(b.text, "<input>");
  ASSERT_FALSE(p.ok()) << "expected an error containing: " << last;
  EXPECT_TRUE(absl::StrContains(p.status().message(), last))
      << "error: " << p.status().message() << "\nexpected it to contain: " << last;
}

// The memory passes `to.passes` run on `from` give `to`'s program, printed the same.
void CheckPipeline(const Block& from, const Block& to) {
  auto input = ir::ParseAndVerifyProgram(from.text, "<input>");
  ASSERT_TRUE(input.ok()) << input.status();
  passes::MemoryPipelineOptions options;
  if (!to.planner.empty()) {
    ASSERT_TRUE(passes::ParsePlacementStrategy(to.planner, &options.allocate.strategy))
        << "unknown planner '" << to.planner << "'";
  }
  passes::PassManager pm;
  absl::Status added = passes::AddPasses(to.passes, &pm, options);
  ASSERT_TRUE(added.ok()) << added;
  auto result = pm.Run(*input);
  ASSERT_TRUE(result.ok()) << result.status();
  auto expected = ir::ParseAndVerifyProgram(to.text, "<expected>");
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(ir::PrintProgram(*result->program), ir::PrintProgram(**expected))
      << "--passes=" << to.passes << " on the block with id=" << from.id << " gives the text above";
}

// Every tile fence of every given document passes its check.
TEST(DocExamplesTest, EveryTileBlockPassesItsCheck) {
  ASSERT_FALSE(g_files.empty()) << "pass the Markdown files as arguments";
  for (const std::string& file : g_files) {
    const std::string text = ReadFile(file);
    ASSERT_FALSE(text.empty()) << file;
    std::vector<Block> blocks = ExtractBlocks(file, text);
    EXPECT_FALSE(blocks.empty()) << file << " has no ```tile block";
    absl::flat_hash_map<std::string, const Block*> by_id;
    for (const Block& b : blocks) {
      if (!b.id.empty() && !by_id.emplace(b.id, &b).second) {
        ADD_FAILURE() << file << ":" << b.line << ": id=" << b.id << " given twice";
      }
    }
    for (const Block& b : blocks) {
      SCOPED_TRACE(absl::StrCat(b.file, ":", b.line));
      if (b.kind == Kind::kError) {
        CheckError(b);
      } else {
        CheckValid(b);
      }
      if (!b.from.empty()) {
        auto it = by_id.find(b.from);
        if (it == by_id.end()) {
          ADD_FAILURE() << "no block with id=" << b.from << " in " << file;
        } else {
          CheckPipeline(*it->second, b);
        }
      }
    }
  }
}

}  // namespace
}  // namespace accelmem

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) accelmem::g_files.push_back(argv[i]);
  return RUN_ALL_TESTS();
}
