#include "passes/verify_memory_plan.h"

#include <string>

#include "absl/strings/match.h"
#include "backends/backend.h"
#include "gtest/gtest.h"
#include "passes/pass_testing.h"
#include "policy/default_memory_allocator_policy.h"

namespace accelmem {
namespace passes {
namespace {

using testing::ParseOrDie;

absl::Status Check(const char* text, const MemoryPlanOptions& opts = {}) {
  return VerifyMemoryPlan(*ParseOrDie(text), opts);
}

// Two values live at the same time in overlapping addresses are rejected, naming both.
TEST(VerifyMemoryPlanTest, RejectsLiveOverlap) {
  absl::Status s = Check(R"(@function(type=InCore)
def f(x: Tensor[[64, 64], FP32], y: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 16384, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 8192, 16384, 1)
    a: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [64, 64])
    b: Tile[[64, 64], FP32, memref=mem_vec_1] = tile.add(a, a)
    c: Tile[[64, 64], FP32, memref=mem_vec_1] = tile.add(a, b)
    r: Tensor[[64, 64], FP32] = tile.store(c, [0, 0], y)
    return r
)");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "in function 'f': Vec: buffer 'a @ statements 3..5'"))
      << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "at bytes [0, 16384)")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "overlap in address")) << s;
}

// The upstream example's plan is safe; so is reusing a buffer once its value is dead (touching
// lifetimes).
TEST(VerifyMemoryPlanTest, AcceptsSeedAndTouchingReuse) {
  EXPECT_TRUE(Check(R"(@function(type=InCore)
def f(x: Tensor[[64, 64], FP32], y: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 16384, 0)
    a: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [64, 64])
    b: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.add(a, a)
    r: Tensor[[64, 64], FP32] = tile.store(b, [0, 0], y)
    return r
)")
                  .ok());
}

// A not-in-place-safe op may not write the buffer of an operand, even its last use.
TEST(VerifyMemoryPlanTest, RejectsInPlaceOfUnsafeOp) {
  absl::Status s = Check(R"(@function(type=InCore)
def f(x: Tensor[[64, 64], FP32], y: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 16384, 0)
    a: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [64, 64])
    b: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.recip(a)
    r: Tensor[[64, 64], FP32] = tile.store(b, [0, 0], y)
    return r
)");
  EXPECT_FALSE(s.ok());
}

// A value defined before a loop and read inside it must survive every iteration.
TEST(VerifyMemoryPlanTest, LoopExtension) {
  absl::Status s = Check(R"(@function(type=InCore)
def f(x: Tensor[[64, 64], FP32], y: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 16384, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 16384, 16384, 1)
    a: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [64, 64])
    for i in range(0, 4, 1):
        b: Tile[[64, 64], FP32, memref=mem_vec_1] = tile.add(a, a)
        c: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.add(b, b)
    r: Tensor[[64, 64], FP32] = tile.store(a, [0, 0], y)
    return r
)");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "buffer 'a @ statements 3..8'")) << s;
}

// Unplanned roots, misaligned roots and capacity overruns are rejected.
TEST(VerifyMemoryPlanTest, AddressAlignmentCapacity) {
  constexpr char kUnplanned[] = R"(@function(type=InCore)
def f(x: Tensor[[8], FP32]) -> Tensor[[8], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 32, 0)
    a: Tile[[8], FP32, memref=mem_vec_0] = tile.load(x, [0], [8])
    return x
)";
  EXPECT_EQ(Check(kUnplanned).message(),
            "in function 'f': MemRef 'mem_vec_0' in Vec has no address");
  constexpr char kMisaligned[] = R"(@function(type=InCore)
def f(x: Tensor[[8], FP32]) -> Tensor[[8], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 16, 32, 0)
    a: Tile[[8], FP32, memref=mem_vec_0] = tile.load(x, [0], [8])
    return x
)";
  absl::Status s = Check(kMisaligned);
  EXPECT_TRUE(
      absl::StrContains(s.message(), "is at address 16, which the allocator policy aligns to 32"))
      << s;
  MemoryPlanOptions small;
  small.capacity = [](ir::MemorySpace) { return int64_t{40}; };
  constexpr char kPlanned[] = R"(@function(type=InCore)
def f(x: Tensor[[8], FP32]) -> Tensor[[8], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 32, 32, 0)
    a: Tile[[8], FP32, memref=mem_vec_0] = tile.load(x, [0], [8])
    return x
)";
  EXPECT_TRUE(Check(kPlanned).ok());
  EXPECT_EQ(Check(kPlanned, small).message(),
            "in function 'f': Vec buffer usage (64 bytes) exceeds platform limit (40 bytes)");
}

// A yield whose value is not in the carried buffer is a copy into it at the yield; if the
// carried buffer is still read then, the plan is unsafe.
TEST(VerifyMemoryPlanTest, ImplicitYieldCopy) {
  constexpr char kOk[] = R"(@function(type=AIV)
def f(x: Tensor[[8], FP32], y: Tensor[[8], FP32]) -> Tensor[[8], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 32, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 32, 32, 1)
    x0: Tile[[8], FP32, memref=mem_vec_0] = tile.load(x, [0], [8])
    for i, (acc,) in range(0, 4, 1, init=(x0,)) -> (out: Tile[[8], FP32, memref=mem_vec_0],):
        n: Tile[[8], FP32, memref=mem_vec_1] = tile.add(acc, acc)
        yield (n,)
    r: Tensor[[8], FP32] = tile.store(out, [0], y)
    return r
)";
  EXPECT_TRUE(Check(kOk).ok()) << Check(kOk);
  constexpr char kBad[] = R"(@function(type=AIV)
def f(x: Tensor[[8], FP32], y: Tensor[[8], FP32]) -> Tensor[[8], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 32, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 32, 32, 1)
    x0: Tile[[8], FP32, memref=mem_vec_0] = tile.load(x, [0], [8])
    for i, (acc, b) in range(0, 4, 1, init=(x0, x0)) -> (out: Tile[[8], FP32, memref=mem_vec_0], o2: Tile[[8], FP32, memref=mem_vec_0]):
        n: Tile[[8], FP32, memref=mem_vec_1] = tile.add(acc, acc)
        yield (n, b)
    r: Tensor[[8], FP32] = tile.store(out, [0], y)
    return r
)";
  EXPECT_FALSE(Check(kBad).ok());
}

// Two roots that overlap by address while both are live are rejected (a per-root check would
// pass this plan).
TEST(VerifyMemoryPlanTest, RejectsRootsOverlappingByAddress) {
  ir::ProgramPtr by_address = ParseOrDie(R"(@function(type=AIV)
def f(x: Tensor[[16, 16], FP32]) -> Tensor[[16, 16], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 1024, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 0, 1024, 1)
    a: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 16])
    b: Tile[[16, 16], FP32, memref=mem_vec_1] = tile.exp(a)
    c: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.add(a, b)
    r: Tensor[[16, 16], FP32] = tile.store(c, [0, 0], x)
    return r
)");
  EXPECT_FALSE(VerifyMemoryPlan(*by_address).ok());
}

// The report gives LOAD and the high-water mark per space.
TEST(VerifyMemoryPlanTest, ReportFigures) {
  absl::StatusOr<MemoryPlanReport> r = AnalyzeMemoryPlan(*ParseOrDie(R"(@function(type=InCore)
def f(x: Tensor[[64, 64], FP32], y: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 16384, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 16384, 16384, 1)
    a: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [64, 64])
    b: Tile[[64, 64], FP32, memref=mem_vec_1] = tile.add(a, a)
    r: Tensor[[64, 64], FP32] = tile.store(b, [0, 0], y)
    return r
)")
                                                              ->functions[0]);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->spaces.size(), 1u);
  EXPECT_EQ(r->spaces[0].high_water, 32768);
  EXPECT_EQ(r->spaces[0].load, 16384);  // a dies where b is born
  EXPECT_EQ(r->buffers.size(), 2u);
}

// A deliberately broken plan: 'a' (ND) and 'b' (NZ) have disjoint lifetimes and share bytes
// 256..511. Without a layout rule that is safe; where the space keeps layouts apart (the 950's
// Vec) it is rejected, naming the function, the space, both buffers and the bytes. A root holding
// tiles of both layouts is rejected too, and a tile without a layout counts as ND.
constexpr char kLayoutOverlap[] = R"(@function(type=AIV)
def lay(x: Tensor[[16, 16], FP16], y: Tensor[[16, 16], FP16]) -> Tensor[[16, 16], FP16]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 512, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 256, 512, 1)
    a: Tile[[16, 16], FP16, memref=mem_vec_0, layout=ND] = tile.load(x, [0, 0], [16, 16])
    r: Tensor[[16, 16], FP16] = tile.store(a, [0, 0], y)
    b: Tile[[16, 16], FP16, memref=mem_vec_1, layout=NZ] = tile.load(x, [0, 0], [16, 16])
    r2: Tensor[[16, 16], FP16] = tile.store(b, [0, 0], r)
    return r2
)";

TEST(VerifyMemoryPlanTest, RejectsOverlappingLayouts) {
  MemoryPlanOptions apart;
  apart.separate_layouts = [](ir::MemorySpace s) { return s == ir::MemorySpace::kVec; };
  MemoryPlanOptions mixed;
  mixed.separate_layouts = [](ir::MemorySpace) { return false; };
  EXPECT_TRUE(Check(kLayoutOverlap, mixed).ok()) << Check(kLayoutOverlap, mixed);
  EXPECT_TRUE(Check(kLayoutOverlap).ok());  // no backend configured: no rule
  absl::Status s = Check(kLayoutOverlap, apart);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(std::string(s.message()),
            "in function 'lay': Vec: ND buffer 'a' (mem_vec_0, bytes [0, 512), statements 3..4) "
            "and NZ buffer 'b' (mem_vec_1, bytes [256, 768), statements 5..6) overlap in bytes "
            "[256, 512); the backend keeps storage layouts apart in Vec, whatever the lifetimes");
  // Apart (b at 512) the plan passes; a tile with no layout next to an NZ one is ND.
  std::string moved = kLayoutOverlap;
  moved.replace(moved.find("alloc(Vec, 256"), 14, "alloc(Vec, 512");
  EXPECT_TRUE(Check(moved.c_str(), apart).ok()) << Check(moved.c_str(), apart);
  std::string unstated = kLayoutOverlap;
  unstated.replace(unstated.find(", layout=ND"), 11, "");
  s = Check(unstated.c_str(), apart);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "ND buffer 'a'")) << s;
  // One root holding both layouts.
  s = Check(R"(@function(type=AIV)
def one(x: Tensor[[16, 16], FP16], y: Tensor[[16, 16], FP16]) -> Tensor[[16, 16], FP16]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 512, 0)
    a: Tile[[16, 16], FP16, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 16])
    r: Tensor[[16, 16], FP16] = tile.store(a, [0, 0], y)
    b: Tile[[16, 16], FP16, memref=mem_vec_0, layout=NZ] = tile.load(x, [0, 0], [16, 16])
    r2: Tensor[[16, 16], FP16] = tile.store(b, [0, 0], r)
    return r2
)",
            apart);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "in function 'one': Vec: ND buffer 'a' (mem_vec_0"))
      << s;
}

// A deliberately broken plan: 'stash' is declared (the author's) and 'b', which lives only after
// 'a' is dead, sits on its bytes 256..511. With disjoint lifetimes that is safe for plain roots,
// but a declared allocation is closed to every other buffer: rejected, naming both and the bytes.
// Apart, or with the allocation not declared, the plan passes; the check sees both orders.
constexpr char kDeclaredOverlap[] = R"(@function(type=AIV)
def closed(x: Tensor[[16, 16], FP16], y: Tensor[[16, 16], FP16]) -> Tensor[[16, 16], FP16]:
    stash: MemRefType = tile.alloc(Vec, 0, 512, 0, declared=1)
    mem_vec_1: MemRefType = tile.alloc(Vec, 256, 512, 1)
    a: Tile[[16, 16], FP16, memref=stash] = tile.load(x, [0, 0], [16, 16])
    r: Tensor[[16, 16], FP16] = tile.store(a, [0, 0], y)
    b: Tile[[16, 16], FP16, memref=mem_vec_1] = tile.load(x, [0, 0], [16, 16])
    r2: Tensor[[16, 16], FP16] = tile.store(b, [0, 0], r)
    return r2
)";

TEST(VerifyMemoryPlanTest, RejectsSharingADeclaredAllocation) {
  absl::Status s = Check(kDeclaredOverlap);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(std::string(s.message()),
            "in function 'closed': Vec: declared allocation 'stash' (bytes [0, 512)) and "
            "'mem_vec_1' (bytes [256, 768)) overlap in bytes [256, 512); a declared allocation "
            "shares no byte with another buffer, whatever the lifetimes");
  std::string plain = kDeclaredOverlap;
  plain.replace(plain.find(", declared=1"), 12, "");
  EXPECT_TRUE(Check(plain.c_str()).ok()) << Check(plain.c_str());
  std::string apart = kDeclaredOverlap;
  apart.replace(apart.find("alloc(Vec, 256"), 14, "alloc(Vec, 512");
  EXPECT_TRUE(Check(apart.c_str()).ok()) << Check(apart.c_str());
  // The declared allocation above the other one, and two declared ones.
  std::string above = kDeclaredOverlap;
  above.replace(above.find("alloc(Vec, 0,"), 13, "alloc(Vec, 512,");
  above.replace(above.find("alloc(Vec, 256"), 14, "alloc(Vec, 64");
  s = Check(above.c_str());
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(),
                                "'mem_vec_1' (bytes [64, 576)) and declared "
                                "allocation 'stash' (bytes [512, 1024)) overlap in "
                                "bytes [512, 576)"))
      << s;
  std::string both = kDeclaredOverlap;
  both.replace(both.find("tile.alloc(Vec, 256, 512, 1)"), 28,
               "tile.alloc(Vec, 480, 512, 1, declared=1)");
  s = Check(both.c_str());
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "overlap in bytes [480, 512)")) << s;
}

// Slots of a pipelined loop: the values rotating through one root are one buffer over the whole
// loop; two of them in different slots meet one iteration apart, and a fixed slot outside the
// loop may not be live while the loop runs. The same plan with one value per root passes.
TEST(VerifyMemoryPlanTest, PipelinedSlots) {
  auto text = [](const std::string& b_memref, const std::string& tail) {
    return std::string(R"(@function(type=AIV)
def f(x: Tensor[[8], FP32], out: Tensor[[8], FP32]) -> Tensor[[8], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 64, 0, slots=2)
    mem_vec_1: MemRefType = tile.alloc(Vec, 64, 64, 1, slots=2)
    p: Tile[[8], FP32, memref=mem_vec_1[1]] = tile.load(x, [0], [8])
    for i in range(0, 4, 1, pipeline=2):
        a: Tile[[8], FP32, memref=mem_vec_0[0]] = tile.load(x, [0], [8])
        b: Tile[[8], FP32, memref=)") +
           b_memref + R"(] = tile.exp(a)
        o: Tensor[[8], FP32] = tile.store(b, [0], out)
)" + tail;
  };
  // p (fixed slot 1 of mem_vec_1) unread, or read after the loop: then it is live while b
  // rotates through both slots of mem_vec_1.
  const std::string read_after =
      "    q: Tensor[[8], FP32] = tile.store(p, [0], out)\n    return q\n";
  const std::string unread = "    return out\n";
  auto check = [](const std::string& t) { return VerifyMemoryPlan(*ParseOrDie(t)); };
  EXPECT_TRUE(check(text("mem_vec_1[0]", unread)).ok()) << check(text("mem_vec_1[0]", unread));
  // The values rotating through a root are one buffer, the root over the loop, with its slots.
  absl::StatusOr<MemoryPlanReport> report =
      AnalyzeMemoryPlan(*ParseOrDie(text("mem_vec_1[0]", unread))->functions[0]);
  ASSERT_TRUE(report.ok()) << report.status();
  int blocks = 0;
  for (const PlannedBuffer& b : report->buffers) {
    if (b.slots == 0) continue;
    ++blocks;
    EXPECT_EQ(b.slots, 2);
    EXPECT_EQ(b.size, 64);
    EXPECT_TRUE(absl::StrContains(b.name, "(slots of mem_vec_")) << b.name;
  }
  EXPECT_EQ(blocks, 2);
  absl::Status crossed = check(text("mem_vec_0[1]", unread));
  EXPECT_EQ(crossed.message(),
            "in function 'f': values 'a' (slot 0) and 'b' (slot 1) of 'mem_vec_0' share bytes one "
            "iteration apart, both in flight in the pipelined loop");
  absl::Status busy = check(text("mem_vec_1[0]", read_after));
  ASSERT_FALSE(busy.ok());
  EXPECT_TRUE(absl::StrContains(busy.message(), "(slots of mem_vec_1)")) << busy;
  EXPECT_TRUE(absl::StrContains(busy.message(), "overlap in address")) << busy;
}

}  // namespace
}  // namespace passes
}  // namespace accelmem
