#include "passes/internal/rewrite.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"

namespace accelmem {
namespace passes {
namespace internal {
namespace {

constexpr char kProgram[] = R"(def f(x: Tensor[[8], FP32]) -> Tensor[[8], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 32, 0)
    a: Tile[[8], FP32, memref=mem_vec_0] = tile.load(x, [0], [8])
    for i, (c,) in range(0, 2, 1, init=(a,)) -> (o: Tile[[8], FP32, memref=mem_vec_0],):
        n: Tile[[8], FP32, memref=mem_vec_0] = tile.add(c, a)
        yield (n,)
    r: Tensor[[8], FP32] = tile.store(o, [0], x)
    return r
)";

// Retyping every MemRef to a planned root updates all definitions, all uses and the alloc.
TEST(RewriterTest, RetypesDefsUsesAndAlloc) {
  ir::ProgramPtr p = *ir::ParseProgram(kProgram);
  const ir::FunctionPtr& f = p->functions[0];
  ir::MemRefPtr planned = ir::MemRef::MakeRoot("mem_vec_0", ir::MemorySpace::kVec, 64, 32, 0);
  Rewriter rw([&](const ir::Var& v) -> ir::TypePtr {
    if (const ir::TileType* t = ir::AsTile(v.type)) {
      return t->memref ? t->WithMemRef(planned) : nullptr;
    }
    if (ir::AsMemRefType(v.type)) return ir::MakeMemRefType(planned);
    return nullptr;
  });
  ir::FunctionPtr out = rw.RewriteFunction(f);
  ASSERT_NE(out, f);
  const std::string text = ir::PrintFunction(*out);
  EXPECT_TRUE(absl::StrContains(text, "tile.alloc(Vec, 64, 32, 0)")) << text;
  // The output parses (every use refers to a defined, retyped value).
  EXPECT_TRUE(ir::ParseAndVerifyProgram(text).ok()) << ir::ParseAndVerifyProgram(text).status();
}

// With nothing to change the function object itself comes back.
TEST(RewriterTest, NoChangeKeepsObject) {
  ir::ProgramPtr p = *ir::ParseProgram(kProgram);
  Rewriter rw;
  EXPECT_EQ(rw.RewriteFunction(p->functions[0]), p->functions[0]);
  EXPECT_FALSE(rw.changed());
}

// FreshName avoids every name in use.
TEST(RewriterTest, FreshNames) {
  ir::ProgramPtr p = *ir::ParseProgram(kProgram);
  absl::flat_hash_set<std::string> names = DefinedNames(*p->functions[0]);
  EXPECT_TRUE(names.contains("n"));
  EXPECT_EQ(FreshName("n", &names), "n_1");
  EXPECT_EQ(FreshName("n", &names), "n_2");
  EXPECT_EQ(FreshName("z", &names), "z");
}

}  // namespace
}  // namespace internal
}  // namespace passes
}  // namespace accelmem
