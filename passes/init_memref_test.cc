#include "passes/init_memref.h"

#include <string>

#include "absl/strings/match.h"
#include "backends/ascend/ascend.h"
#include "backends/backend.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "passes/pass_manager.h"
#include "passes/pass_testing.h"

namespace accelmem {
namespace passes {
namespace {

using testing::Canonical;
using testing::RunOnText;
using testing::RunToText;

// Roots are named mem_<space>_<id> in definition order (tile params first), allocs prepended in
// id order, views at row-major byte offsets, matmul_acc writes into its accumulator.
TEST(InitMemRefTest, NamesIdsViewsWritesInto) {
  backends::BackendConfig::Reset();
  constexpr char kIn[] =
      R"(def f(p: Tile[[16, 16], FP32, Vec], a: Tensor[[16, 32], FP16], b: Tensor[[32, 16], FP16]) -> Tile[[16, 16], FP32, Vec]:
    l: Tile[[16, 32], FP16, Left] = tile.load(a, [0, 0], [16, 32], space=Left)
    r: Tile[[32, 16], FP16, Right] = tile.load(b, [0, 0], [32, 16], space=Right)
    c: Tile[[16, 16], FP32, Acc] = tile.matmul(l, r)
    c2: Tile[[16, 16], FP32, Acc] = tile.matmul_acc(c, l, r)
    s: Tile[[4, 16], FP32, Vec] = tile.slice(p, [4, 16], [2, 0])
    return p
)";
  constexpr char kOut[] =
      R"(def f(p: Tile[[16, 16], FP32, memref=mem_vec_0], a: Tensor[[16, 32], FP16], b: Tensor[[32, 16], FP16]) -> Tile[[16, 16], FP32, Vec]:
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 1024, 0)
    mem_left_1: MemRefType = tile.alloc(Left, -1, 1024, 1)
    mem_right_2: MemRefType = tile.alloc(Right, -1, 1024, 2)
    mem_acc_3: MemRefType = tile.alloc(Acc, -1, 1024, 3)
    l: Tile[[16, 32], FP16, memref=mem_left_1] = tile.load(a, [0, 0], [16, 32], space=Left)
    r: Tile[[32, 16], FP16, memref=mem_right_2] = tile.load(b, [0, 0], [32, 16], space=Right)
    c: Tile[[16, 16], FP32, memref=mem_acc_3] = tile.matmul(l, r)
    c2: Tile[[16, 16], FP32, memref=mem_acc_3] = tile.matmul_acc(c, l, r)
    s: Tile[[4, 16], FP32, memref=mem_vec_0+128] = tile.slice(p, [4, 16], [2, 0])
    return p
)";
  absl::StatusOr<std::string> out = RunToText(kIn, "init-memref");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Canonical(kOut));
}

// A non-static shape is an error naming the function and the value.
TEST(InitMemRefTest, DynamicShapeIsAnError) {
  constexpr char kIn[] = R"(def g(a: Tensor[[4, 64], FP32], n: Index) -> Tensor[[4, 64], FP32]:
    t: Tile[[n, 64], FP32, Vec] = tile.load(a, [0, 0], [n, 64])
    return a
)";
  absl::StatusOr<ProgramResult> r = RunOnText(kIn, "init-memref");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "in function 'g': value 't' has a non-static shape [n, 64]; init-memref needs static "
            "shapes");
}

// A value that would share a MemRef of another memory space (here a view declared in Mat of a
// Vec tile) is an error naming the function, the value and both spaces, also when no verifier
// runs before the pass (tile_opt --verify=false): otherwise its type would keep Mat while its
// MemRef is in Vec, and the printed program would read back as a different one.
TEST(InitMemRefTest, SharingAcrossMemorySpacesIsAnError) {
  backends::BackendConfig::Reset();
  constexpr char kView[] = R"(def v(p: Tile[[16, 16], FP32, Vec]) -> Tile[[16, 16], FP32, Vec]:
    s: Tile[[4, 16], FP32, Mat] = tile.slice(p, [4, 16], [2, 0])
    return p
)";
  constexpr char kCarry[] = R"(def c(p: Tile[[16, 16], FP32, Vec]) -> Tile[[16, 16], FP32, Vec]:
    for i, (acc,) in range(0, 4, 1, init=(p,)) -> (out: Tile[[16, 16], FP32, Mat],):
        yield acc
    return p
)";
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c :
       {Case{kView,
             "in function 'v': value 's' is declared in Mat but shares the memory of a Vec value"},
        Case{kCarry,
             "in function 'c': value 'out' is declared in Mat but shares the memory of a "
             "Vec value"}}) {
    ir::ProgramPtr program = testing::ParseOrDie(c.text);
    PassManagerOptions options;
    options.verify = false;  // as tile_opt --verify=false
    PassManager pm(options);
    ASSERT_TRUE(AddPasses("init-memref", &pm).ok());
    absl::StatusOr<ProgramResult> r = pm.Run(program);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_TRUE(absl::StartsWith(r.status().message(), c.message)) << r.status().message();
    // With the verifier, the declared type is rejected before the pass runs.
    EXPECT_FALSE(RunOnText(c.text, "init-memref").ok());
  }
}

// With the Ascend 910B backend an Acc tile's alloc pads its rows (17 -> 32 for INT32).
TEST(InitMemRefTest, BackendPadsAccRows) {
  backends::ScopedBackend scoped(backends::MakeAscendBackend(backends::Ascend910b()));
  constexpr char kIn[] =
      R"(def h(a: Tensor[[17, 16], INT8], b: Tensor[[16, 16], INT8]) -> Tensor[[17, 16], INT8]:
    l: Tile[[17, 16], INT8, Left] = tile.load(a, [0, 0], [17, 16], space=Left)
    r: Tile[[16, 16], INT8, Right] = tile.load(b, [0, 0], [16, 16], space=Right)
    c: Tile[[17, 16], INT32, Acc] = tile.matmul(l, r)
    return a
)";
  absl::StatusOr<std::string> out = RunToText(kIn, "init-memref");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(absl::StrContains(*out, "mem_acc_2: MemRefType = tile.alloc(Acc, -1, 2048, 2)"))
      << *out;
}

// The pass sizes tiles by the backend it is given, whatever backend is configured globally.
TEST(InitMemRefTest, UsesItsOwnBackendNotTheConfiguredOne) {
  ir::ProgramPtr p = testing::ParseOrDie(
      R"(def h(a: Tensor[[17, 16], INT8], b: Tensor[[16, 16], INT8]) -> Tensor[[17, 16], INT8]:
    l: Tile[[17, 16], INT8, Left] = tile.load(a, [0, 0], [17, 16], space=Left)
    r: Tile[[16, 16], INT8, Right] = tile.load(b, [0, 0], [16, 16], space=Right)
    c: Tile[[17, 16], INT32, Acc] = tile.matmul(l, r)
    return a
)");
  auto run = [&](InitMemRefOptions options) {
    absl::StatusOr<FunctionResult> r = InitMemRefPass(options).RunOnFunction(p->functions[0]);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? ir::PrintFunction(*r->function) : std::string();
  };
  {
    backends::ScopedBackend configured(backends::MakeAscendBackend(backends::Ascend910b()));
    // No backend given: unpadded (17 * 16 * 4 bytes), though 910B is configured.
    EXPECT_TRUE(absl::StrContains(run({}), "tile.alloc(Acc, -1, 1088, 2)"));
  }
  backends::BackendConfig::Reset();
  InitMemRefOptions with;
  with.backend = backends::MakeAscendBackend(backends::Ascend910b());
  EXPECT_TRUE(absl::StrContains(run(with), "tile.alloc(Acc, -1, 2048, 2)"));  // rows padded
}

// A function whose tiles already have MemRefs, or that has no tiles, is left unchanged.
TEST(InitMemRefTest, NoChangeCases) {
  constexpr char kDone[] = R"(def d(x: Tensor[[8], FP32]) -> Tensor[[8], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 32, 0)
    t: Tile[[8], FP32, memref=mem_vec_0] = tile.load(x, [0], [8])
    return x
)";
  absl::StatusOr<ProgramResult> r = RunOnText(kDone, "init-memref");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->changed);
  constexpr char kNoTiles[] = R"(def n(x: Tensor[[8], FP32]) -> Tensor[[8], FP32]:
    return x
)";
  r = RunOnText(kNoTiles, "init-memref");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->changed);
}

// The pass reports its kebab-case name.
TEST(InitMemRefTest, Name) { EXPECT_EQ(CreateInitMemRefPass()->Name(), "init-memref"); }

}  // namespace
}  // namespace passes
}  // namespace accelmem
