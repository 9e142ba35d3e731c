#include "passes/memory_reuse.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends/ascend/ascend.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "passes/memory_pipeline.h"
#include "passes/pass_testing.h"
#include "passes/verify_memory_plan.h"

namespace accelmem {
namespace passes {
namespace {

using testing::Canonical;
using testing::RunOnText;
using testing::RunToText;

// A chain a -> b -> c where each value dies where the next is born shares one buffer; the
// unused allocs are removed.
TEST(MemoryReuseTest, ChainSharesOneBuffer) {
  absl::StatusOr<std::string> out = RunToText(R"(@function(type=AIV)
def f(x: Tensor[[64, 64], FP32], y: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    a: Tile[[64, 64], FP32, Vec] = tile.load(x, [0, 0], [64, 64])
    b: Tile[[64, 64], FP32, Vec] = tile.exp(a)
    c: Tile[[64, 64], FP32, Vec] = tile.add(b, b)
    r: Tensor[[64, 64], FP32] = tile.store(c, [0, 0], y)
    return r
)",
                                              "init-memref,memory-reuse");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Canonical(R"(@function(type=AIV)
def f(x: Tensor[[64, 64], FP32], y: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 16384, 0)
    a: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [64, 64])
    b: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.exp(a)
    c: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.add(b, b)
    r: Tensor[[64, 64], FP32] = tile.store(c, [0, 0], y)
    return r
)"));
}

// A not-in-place-safe op (tile.recip) never takes its operand's buffer.
TEST(MemoryReuseTest, NotInPlaceSafeKeepsOwnBuffer) {
  absl::StatusOr<std::string> out = RunToText(R"(@function(type=AIV)
def f(x: Tensor[[64, 64], FP32], y: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    a: Tile[[64, 64], FP32, Vec] = tile.load(x, [0, 0], [64, 64])
    b: Tile[[64, 64], FP32, Vec] = tile.recip(a)
    r: Tensor[[64, 64], FP32] = tile.store(b, [0, 0], y)
    return r
)",
                                              "init-memref,memory-reuse");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(absl::StrContains(*out, "b: Tile[[64, 64], FP32, memref=mem_vec_1]")) << *out;
}

// Largest first: the big buffer is opened first and the small values fill it, so one 16 KiB
// buffer remains instead of a small one grown or two buffers.
TEST(MemoryReuseTest, LargestFirstPacking) {
  absl::StatusOr<std::string> out = RunToText(R"(@function(type=AIV)
def f(x: Tensor[[64, 64], FP32], s: Tensor[[8, 64], FP32]) -> Tensor[[64, 64], FP32]:
    a: Tile[[8, 64], FP32, Vec] = tile.load(s, [0, 0], [8, 64])
    r1: Tensor[[8, 64], FP32] = tile.store(a, [0, 0], s)
    big: Tile[[64, 64], FP32, Vec] = tile.load(x, [0, 0], [64, 64])
    r2: Tensor[[64, 64], FP32] = tile.store(big, [0, 0], x)
    return r2
)",
                                              "init-memref,memory-reuse");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(absl::StrContains(*out, "mem_vec_1: MemRefType = tile.alloc(Vec, -1, 16384, 1)"))
      << *out;
  EXPECT_FALSE(absl::StrContains(*out, "mem_vec_0: MemRefType")) << *out;
  EXPECT_TRUE(absl::StrContains(*out, "a: Tile[[8, 64], FP32, memref=mem_vec_1]")) << *out;
}

// Orchestration functions, functions without MemRefs and planned functions are left alone.
TEST(MemoryReuseTest, SkippedFunctions) {
  absl::StatusOr<ProgramResult> r = RunOnText(R"(@function(type=Orchestration)
def o(x: Tensor[[8], FP32]) -> Tensor[[8], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 32, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, -1, 32, 1)
    a: Tile[[8], FP32, memref=mem_vec_0] = tile.load(x, [0], [8])
    b: Tile[[8], FP32, memref=mem_vec_1] = tile.exp(a)
    return x
)",
                                              "memory-reuse");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->changed);
  r = RunOnText(R"(@function(type=AIV)
def p(x: Tensor[[8], FP32]) -> Tensor[[8], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 32, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 32, 32, 1)
    a: Tile[[8], FP32, memref=mem_vec_0] = tile.load(x, [0], [8])
    b: Tile[[8], FP32, memref=mem_vec_1] = tile.exp(a)
    return x
)",
                "memory-reuse");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->changed);
}

// The pass reports its kebab-case name.
TEST(MemoryReuseTest, Name) { EXPECT_EQ(CreateMemoryReusePass()->Name(), "memory-reuse"); }

// Storage layouts: 'a' (ND) dies before 'b' (NZ) is loaded. Where the backend keeps layouts
// apart in Vec (the 950) they keep two roots; on the 910B and without a backend they share one.
TEST(MemoryReuseTest, LayoutsKeptApartWhereBackendSays) {
  constexpr char kText[] = R"(@function(type=AIV)
def f(x: Tensor[[16, 16], FP16], y: Tensor[[16, 16], FP16]) -> Tensor[[16, 16], FP16]:
    a: Tile[[16, 16], FP16, Vec, layout=ND] = tile.load(x, [0, 0], [16, 16])
    r: Tensor[[16, 16], FP16] = tile.store(a, [0, 0], y)
    b: Tile[[16, 16], FP16, Vec, layout=NZ] = tile.load(x, [0, 0], [16, 16])
    r2: Tensor[[16, 16], FP16] = tile.store(b, [0, 0], r)
    return r2
)";
  auto roots = [&](backends::BackendPtr backend) {
    MemoryPipelineOptions o;
    o.backend = backend;
    absl::StatusOr<ProgramResult> r = RunOnText(kText, "init-memref,memory-reuse", o);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return std::string();
    const ir::Function& f = *r->program->functions[0];
    std::string out;
    for (const ir::StmtPtr& s : ir::BodyStmts(f.body)) {
      const ir::AssignStmt* a = ir::AsAssign(s.get());
      if (a == nullptr || ir::AsTile(a->var->type) == nullptr) continue;
      absl::StrAppend(&out, a->var->name, ":", ir::MemRefOf(*a->var->type)->name(), " ");
    }
    return out;
  };
  EXPECT_EQ(roots(backends::MakeAscendBackend(backends::Ascend950())), "a:mem_vec_0 b:mem_vec_1 ");
  EXPECT_EQ(roots(backends::MakeAscendBackend(backends::Ascend910b())), "a:mem_vec_0 b:mem_vec_0 ");
  EXPECT_EQ(roots(nullptr), "a:mem_vec_0 b:mem_vec_0 ");
}

// The pipeline-stage guard is capacity-gated: a double-buffered matmul whose L0A and L0B blocks
// fit keeps both stages (no note); at 128x128 the 910B's 64 KiB L0A/L0B cannot hold two 32 KiB
// slots beside the prologue's tile, so the loop's depth is shed there, one note per space, while
// Mat keeps both stages. The plan then verifies.
TEST(MemoryReuseTest, PipelineDepthShedOnlyWhereTheSpaceCannotHoldIt) {
  const std::string kMatmul128 = testing::DoubleBufferedMatmul(128);
  const std::string small = testing::DoubleBufferedMatmul(64);
  MemoryPipelineOptions o;
  o.backend = backends::BackendRegistry::Global().Create("ascend910b").value();
  std::vector<std::string> notes;
  o.on_note = [&notes](const std::string& n) { notes.push_back(n); };
  absl::StatusOr<ProgramResult> fits = RunOnText(small, "init-memref,memory-reuse", o);
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_TRUE(notes.empty()) << notes[0];
  const std::string kept = ir::PrintProgram(*fits->program);
  EXPECT_NE(kept.find("tile.alloc(Left, -1, 16384, 5, slots=2)"), std::string::npos) << kept;

  absl::StatusOr<ProgramResult> shed = RunOnText(kMatmul128, "init-memref,memory-reuse", o);
  ASSERT_TRUE(shed.ok()) << shed.status();
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(
      notes[0],
      "in function 'mm': Left cannot hold the stages of the pipelined loop over 'k' (line 6): "
      "its buffers need 98304 bytes, above the capacity of 65536; shed its depth there from "
      "2 to 1 (mem_left_5)");
  EXPECT_TRUE(absl::StrContains(notes[1], "Right cannot hold the stages")) << notes[1];
  const std::string text = ir::PrintProgram(*shed->program);
  EXPECT_NE(text.find("tile.alloc(Left, -1, 32768, 5)"), std::string::npos) << text;
  EXPECT_NE(text.find("tile.alloc(Mat, -1, 65536, 3, slots=2)"), std::string::npos) << text;
  EXPECT_NE(text.find("memref=mem_left_5] = tile.move(am, Left)"), std::string::npos) << text;
  absl::StatusOr<ProgramResult> planned = RunOnText(kMatmul128, "default", o);
  ASSERT_TRUE(planned.ok()) << planned.status();
  EXPECT_TRUE(VerifyMemoryPlan(*planned->program).ok());
}

}  // namespace
}  // namespace passes
}  // namespace accelmem
