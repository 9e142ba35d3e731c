#include "passes/testing/program_generator.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"

namespace accelmem {
namespace passes_testing {
namespace {

// The same seed gives the same text; other seeds give other texts.
TEST(ProgramGeneratorTest, Reproducible) {
  EXPECT_EQ(GenerateProgram(42).text, GenerateProgram(42).text);
  EXPECT_NE(GenerateProgram(42).text, GenerateProgram(43).text);
  SplitMix64 a(7), b(7);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.Next(), b.Next());
  // SplitMix64's published first output for seed 0.
  EXPECT_EQ(SplitMix64(0).Next(), 0xe220a8397b1dcdafULL);
}

// Every generated program parses and verifies, and printing it is a fixed point.
TEST(ProgramGeneratorTest, ProgramsAreValid) {
  GeneratorOptions o;
  o.over_capacity_percent = 5;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    const GeneratedProgram p = GenerateProgram(seed, o);
    auto program = ir::ParseAndVerifyProgram(p.text, "<generated>");
    ASSERT_TRUE(program.ok()) << "seed " << seed << ": " << program.status() << "\n" << p.text;
    const std::string printed = ir::PrintProgram(**program);
    auto again = ir::ParseProgram(printed);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(ir::PrintProgram(**again), printed) << "seed " << seed;
  }
}

// Over many seeds the generator covers every feature the property tests rely on.
TEST(ProgramGeneratorTest, CoversTheFeatures) {
  std::string all;
  int multi_function = 0, over = 0;
  GeneratorOptions o;
  o.over_capacity_percent = 5;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    const GeneratedProgram p = GenerateProgram(seed, o);
    all += p.text;
    if (absl::StrContains(p.text, "def f1")) ++multi_function;
    if (p.may_exceed_capacity) ++over;
  }
  for (const char* feature : {"@function(type=AIC)",
                              "@function(type=AIV)",
                              "@function(type=InCore)",
                              "tile.matmul(",
                              "tile.matmul_acc(",
                              "space=Left",
                              "space=Right",
                              "space=Mat",
                              "space=Bias",
                              "Acc] = ",
                              "Acc] = tile.slice(",
                              "tile.move(",
                              ", Left)",
                              "tile.recip(",
                              "tile.rsqrt(",
                              "tile.transpose(",
                              "FP16)",
                              "FP32)",
                              "tile.reshape(",
                              "tile.slice(",
                              "if flag -> (",
                              "else:",
                              "if flag:",
                              "yield (",
                              "init=(",
                              "system.reserve_buffer(",
                              "base=-1)",
                              "base=0)",
                              "size=4611686018427387904",
                              "tile.create([1024, 1024]"}) {
    EXPECT_TRUE(absl::StrContains(all, feature)) << feature;
  }
  EXPECT_GT(multi_function, 100);
  EXPECT_GT(over, 5);
  EXPECT_LT(over, 60);
  // Reserve buffers with no base at all (AUTO), in AIC (Mat) and AIV (Vec) functions.
  bool aic_reserve = false, aiv_reserve = false, no_base = false, two_carries = false,
       nested_loop = false, slice_of_slice = false;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    const std::string text = GenerateProgram(seed, o).text;
    for (absl::string_view fn : absl::StrSplit(text, "@function")) {
      if (!absl::StrContains(fn, "reserve_buffer")) continue;
      aic_reserve |= absl::StartsWith(fn, "(type=AIC)");
      aiv_reserve |= absl::StartsWith(fn, "(type=AIV)");
    }
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      no_base |= absl::StrContains(line, "reserve_buffer") && !absl::StrContains(line, "base=");
      two_carries |= absl::StrContains(line, "for ") && absl::StrContains(line, "init=(") &&
                     absl::StrContains(line.substr(line.find("init=(")), ", ");
      nested_loop |= absl::StartsWith(line, "        for ");
    }
    // A slice whose source is itself a slice: names are v<N>, so look the source up.
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      const size_t p = line.find("= tile.slice(");
      if (p == absl::string_view::npos) continue;
      absl::string_view src = line.substr(p + 13);
      src = src.substr(0, src.find(','));
      const std::string def = absl::StrCat(" ", src, ": ");
      for (absl::string_view other : absl::StrSplit(text, '\n')) {
        if (absl::StrContains(other, def) && absl::StrContains(other, "= tile.slice(")) {
          slice_of_slice = true;
        }
      }
    }
  }
  EXPECT_TRUE(aic_reserve);
  EXPECT_TRUE(aiv_reserve);
  EXPECT_TRUE(no_base);
  EXPECT_TRUE(two_carries);
  EXPECT_TRUE(nested_loop);
  EXPECT_TRUE(slice_of_slice);
}

// The shrinker keeps the property and removes everything else: a program that must contain a
// tile.recip shrinks to a handful of lines, still valid.
TEST(ProgramGeneratorTest, ShrinkerKeepsThePropertyAndShrinks) {
  for (uint64_t seed = 0; seed < 40; ++seed) {
    const std::string text = GenerateProgram(seed).text;
    if (!absl::StrContains(text, "tile.recip(")) continue;
    const std::string small = ShrinkProgram(
        text, [](const std::string& t) { return absl::StrContains(t, "tile.recip("); });
    EXPECT_TRUE(IsValidProgramText(small)) << small;
    EXPECT_TRUE(absl::StrContains(small, "tile.recip(")) << small;
    const std::vector<std::string> lines = absl::StrSplit(small, '\n', absl::SkipEmpty());
    EXPECT_LE(lines.size(), 8u) << small;
    EXPECT_LT(small.size(), text.size());
  }
  // A predicate that never holds leaves the text as it is.
  const std::string text = GenerateProgram(3).text;
  EXPECT_EQ(ShrinkProgram(text, [](const std::string&) { return false; }), text);
}

// Loop carries are removed with their uses redirected to the init, and shapes shrink.
TEST(ProgramGeneratorTest, ShrinkerRemovesCarriesAndShrinksShapes) {
  const std::string text = R"(@function(type=AIV)
def f(x: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    a: Tile[[32, 64], FP32, Vec] = tile.load(x, [0, 0], [32, 64])
    b: Tile[[32, 64], FP32, Vec] = tile.exp(a)
    for i, (p, q) in range(0, 4, 1, init=(a, b)) -> (po: Tile[[32, 64], FP32, Vec], qo: Tile[[32, 64], FP32, Vec]):
        r: Tile[[32, 64], FP32, Vec] = tile.recip(q)
        yield (r, q)
    o: Tensor[[64, 64], FP32] = tile.store(po, [0, 0], x)
    return o
)";
  ASSERT_TRUE(IsValidProgramText(text));
  const std::string small = ShrinkProgram(text, [](const std::string& t) {
    return absl::StrContains(t, "tile.recip(") && absl::StrContains(t, "for ");
  });
  EXPECT_TRUE(IsValidProgramText(small)) << small;
  EXPECT_FALSE(absl::StrContains(small, "init=(")) << small;
  EXPECT_FALSE(absl::StrContains(small, "[32, 64]")) << small;
}

// The property test's programs (seeds 1..150) include pipelined loops, all valid, none nested in
// another pipelined loop; init-memref gives their bodies slotted MemRefs. Without the switch no
// loop is pipelined.
TEST(ProgramGeneratorTest, PipelinedLoops) {
  GeneratorOptions gen;
  gen.over_capacity_percent = 3;
  int pipelined = 0;
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    const std::string text = GenerateProgram(seed, gen).text;
    EXPECT_TRUE(IsValidProgramText(text)) << seed;
    pipelined += absl::StrContains(text, ", pipeline=");
  }
  EXPECT_GE(pipelined, 40);
  gen.pipelines = false;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    EXPECT_FALSE(absl::StrContains(GenerateProgram(seed, gen).text, "pipeline=")) << seed;
  }
  // The shrinker drops a pipeline when the predicate does not need it, keeps it when it does.
  const std::string text = R"(@function(type=AIV)
def f(x: Tensor[[8], FP32]) -> Tensor[[8], FP32]:
    a: Tile[[8], FP32, Vec] = tile.load(x, [0], [8])
    for i, (p,) in range(0, 4, 1, init=(a,), pipeline=2) -> (po: Tile[[8], FP32, Vec],):
        r: Tile[[8], FP32, Vec] = tile.recip(p)
        yield (r,)
    o: Tensor[[8], FP32] = tile.store(po, [0], x)
    return o
)";
  ASSERT_TRUE(IsValidProgramText(text));
  const std::string plain =
      ShrinkProgram(text, [](const std::string& t) { return absl::StrContains(t, "recip"); });
  EXPECT_FALSE(absl::StrContains(plain, "pipeline=")) << plain;
  const std::string kept = ShrinkProgram(text, [](const std::string& t) {
    return absl::StrContains(t, "recip") && absl::StrContains(t, "pipeline=2");
  });
  EXPECT_TRUE(absl::StrContains(kept, "pipeline=2")) << kept;
  EXPECT_LT(kept.size(), text.size()) << kept;
}

// The property test's programs include declared allocations, all valid (a declared root holds
// a top-level load; init-memref keeps it there); without the switch there are none, and the
// programs are otherwise the same (a stream of their own).
TEST(ProgramGeneratorTest, DeclaredAllocations) {
  GeneratorOptions gen;
  gen.over_capacity_percent = 3;
  GeneratorOptions without = gen;
  without.declared = false;
  int declared = 0;
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    const std::string text = GenerateProgram(seed, gen).text;
    EXPECT_TRUE(IsValidProgramText(text)) << seed;
    if (!absl::StrContains(text, "declared=1)")) {
      EXPECT_EQ(text, GenerateProgram(seed, without).text) << seed;
      continue;
    }
    ++declared;
    EXPECT_TRUE(absl::StrContains(text, ", Vec, memref=decl0")) << text;
    EXPECT_FALSE(absl::StrContains(GenerateProgram(seed, without).text, "declared=")) << seed;
  }
  EXPECT_GE(declared, 40);
}

}  // namespace
}  // namespace passes_testing
}  // namespace accelmem
