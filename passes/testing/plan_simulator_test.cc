#include "passes/testing/plan_simulator.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"

namespace accelmem {
namespace passes_testing {
namespace {

std::vector<Finding> Simulate(const std::string& text, const std::string& backend = "none") {
  auto program = ir::ParseProgram(text, "<test>");
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return {};
  SimulatorOptions o;
  o.backend = backend;
  return SimulatePlannedProgram(**program, o);
}

std::set<FindingKind> Kinds(const std::vector<Finding>& fs) {
  std::set<FindingKind> out;
  for (const Finding& f : fs) out.insert(f.kind);
  return out;
}

std::string Dump(const std::vector<Finding>& fs) {
  std::vector<std::string> lines;
  for (const Finding& f : fs) lines.push_back(f.ToString());
  return absl::StrJoin(lines, "\n");
}

constexpr char kHeader[] =
    "@function(type=AIV)\n"
    "def f(x: Tensor[[64, 64], FP32], flag: Scalar[INT32]) -> Tensor[[64, 64], FP32]:\n";

// A correct plan (views at their physical offsets, a loop with carries, an if, reuse of dead
// buffers) gives no finding.
TEST(PlanSimulatorTest, CorrectPlanHasNoFinding) {
  const std::string text =
      std::string(kHeader) + R"(    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 16384, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 16384, 4096, 1)
    mem_vec_2: MemRefType = tile.alloc(Vec, 20480, 4096, 2)
    a: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [64, 64])
    s: Tile[[2, 16], FP32, memref=mem_vec_0+640] = tile.slice(a, [2, 16], [2, 32])
    t: Tile[[1, 8], FP32, memref=mem_vec_0+896] = tile.slice(s, [1, 8], [1, 0])
    r: Tile[[16, 64], FP32, memref=mem_vec_0+4096] = tile.slice(a, [16, 64], [16, 0])
    q: Tile[[64, 16], FP32, memref=mem_vec_0+4096] = tile.reshape(r, [64, 16])
    e: Tile[[64, 16], FP32, memref=mem_vec_1] = tile.exp(q)
    u: Tile[[1, 8], FP32, memref=mem_vec_2] = tile.recip(t)
    for i, (c, d) in range(0, 4, 1, init=(e, e)) -> (co: Tile[[64, 16], FP32, memref=mem_vec_1], dout: Tile[[64, 16], FP32, memref=mem_vec_1]):
        n: Tile[[64, 16], FP32, memref=mem_vec_1] = tile.add(c, d)
        yield (n, n)
    if flag -> (w: Tile[[64, 16], FP32, memref=mem_vec_1],):
        yield (co,)
    else:
        m: Tile[[64, 16], FP32, memref=mem_vec_1] = tile.mul(dout, dout)
        yield (m,)
    z: Tile[[16, 64], FP32, memref=mem_vec_0] = tile.reshape(w, [16, 64])
    o: Tensor[[64, 64], FP32] = tile.store(u, [0, 0], x)
    o2: Tensor[[64, 64], FP32] = tile.store(z, [0, 0], x)
    return o2
)";
  // z is a reshape at another root than its source: the one deliberate error here is none; fix
  // it to the source's root first.
  std::string fixed = text;
  fixed.replace(fixed.find("memref=mem_vec_0] = tile.reshape(w"),
                std::string("memref=mem_vec_0] = tile.reshape(w").size(),
                "memref=mem_vec_1] = tile.reshape(w");
  const std::vector<Finding> fs = Simulate(fixed);
  EXPECT_TRUE(fs.empty()) << Dump(fs);
}

// Two values whose bytes overlap while both are live: reading the first is reported, with the
// function, statement, both names and the byte ranges.
TEST(PlanSimulatorTest, OverlappingLiveValuesAreReported) {
  const std::string text =
      std::string(kHeader) + R"(    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 1024, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 512, 1024, 1)
    mem_vec_2: MemRefType = tile.alloc(Vec, 2048, 1024, 2)
    a: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 16])
    b: Tile[[16, 16], FP32, memref=mem_vec_1] = tile.load(x, [16, 0], [16, 16])
    c: Tile[[16, 16], FP32, memref=mem_vec_2] = tile.add(a, b)
    o: Tensor[[64, 64], FP32] = tile.store(c, [0, 0], x)
    return o
)";
  const std::vector<Finding> fs = Simulate(text);
  ASSERT_EQ(fs.size(), 1u) << Dump(fs);
  EXPECT_EQ(fs[0].kind, FindingKind::kClobberedRead);
  EXPECT_EQ(fs[0].function, "f");
  EXPECT_EQ(fs[0].stmt, 5);
  EXPECT_THAT(fs[0].values, ::testing::ElementsAre("a", "b"));
  EXPECT_EQ(fs[0].space, "Vec");
  EXPECT_EQ(fs[0].lo, 0);
  EXPECT_EQ(fs[0].hi, 1024);
  EXPECT_EQ(fs[0].other_lo, 512);
  EXPECT_EQ(fs[0].other_hi, 1024);
}

// A slice of a slice lies at its origin in the root's row stride: ((2+1)*64 + (16+8))*4 = 864;
// 736 (the origin in the outer slice's own row stride) is reported, 864 is not.
TEST(PlanSimulatorTest, SliceOfSliceOffsetFollowsTheRoot) {
  const std::string body = R"(    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 16384, 0)
    a: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [64, 64])
    s: Tile[[2, 16], FP32, memref=mem_vec_0+576] = tile.slice(a, [2, 16], [2, 16])
    t: Tile[[1, 8], FP32, memref=mem_vec_0+OFF] = tile.slice(s, [1, 8], [1, 8])
    o: Tensor[[64, 64], FP32] = tile.store(t, [0, 0], x)
    return o
)";
  std::string good = std::string(kHeader) + body, bad = good;
  good.replace(good.find("OFF"), 3, "864");
  bad.replace(bad.find("OFF"), 3, "736");
  EXPECT_TRUE(Simulate(good).empty()) << Dump(Simulate(good));
  const std::vector<Finding> fs = Simulate(bad);
  ASSERT_EQ(Kinds(fs), std::set<FindingKind>{FindingKind::kViewOffset}) << Dump(fs);
  EXPECT_EQ(fs[0].lo, 736);
  EXPECT_EQ(fs[0].other_lo, 864);
}

// A view in another root than its source, or reaching beyond its root, is reported.
TEST(PlanSimulatorTest, ViewRootAndExtentAreChecked) {
  const std::string text =
      std::string(kHeader) + R"(    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 1024, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 1024, 1024, 1)
    a: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 16])
    s: Tile[[8, 16], FP32, memref=mem_vec_1+512] = tile.slice(a, [8, 16], [8, 0])
    r: Tile[[8, 16], FP32, memref=mem_vec_0+512] = tile.slice(a, [8, 16], [8, 0])
    o: Tensor[[64, 64], FP32] = tile.store(r, [0, 0], x)
    return o
)";
  EXPECT_EQ(Kinds(Simulate(text)), std::set<FindingKind>{FindingKind::kViewRoot});
  std::string outside = text;
  outside.replace(outside.find("tile.alloc(Vec, 0, 1024, 0)"), 27, "tile.alloc(Vec, 0, 768, 0)");
  EXPECT_TRUE(Kinds(Simulate(outside)).count(FindingKind::kViewOutsideRoot))
      << Dump(Simulate(outside));
}

// An op that is not in-place safe (recip, widening cast) may not write over its operand; an
// element-wise op may (same start), but not starting inside it.
TEST(PlanSimulatorTest, InplaceSafetyIsChecked) {
  const std::string recip =
      std::string(kHeader) + R"(    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 1024, 0)
    a: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 16])
    b: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.recip(a)
    o: Tensor[[64, 64], FP32] = tile.store(b, [0, 0], x)
    return o
)";
  EXPECT_EQ(Kinds(Simulate(recip)), std::set<FindingKind>{FindingKind::kNotInplaceOverlap});
  std::string exp = recip;
  exp.replace(exp.find("tile.recip"), 10, "tile.exp");
  EXPECT_TRUE(Simulate(exp).empty()) << Dump(Simulate(exp));
  const std::string widen =
      std::string(kHeader) + R"(    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 1024, 0)
    a: Tile[[16, 16], FP16, memref=mem_vec_0] = tile.create([16, 16], FP16, Vec)
    b: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.cast(a, FP32)
    n: Tile[[16, 16], FP16, memref=mem_vec_0] = tile.cast(b, FP16)
    o: Tensor[[64, 64], FP32] = tile.store(b, [0, 0], x)
    return o
)";
  std::vector<Finding> fs = Simulate(widen);
  ASSERT_EQ(Kinds(fs),
            (std::set<FindingKind>{FindingKind::kNotInplaceOverlap, FindingKind::kClobberedRead}))
      << Dump(fs);
  EXPECT_EQ(fs[0].values[0], "b");  // the widening cast, not the narrowing one
  const std::string shifted =
      std::string(kHeader) + R"(    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 2048, 0)
    a: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 16])
    b: Tile[[16, 16], FP32, memref=mem_vec_0+32] = tile.exp(a)
    o: Tensor[[64, 64], FP32] = tile.store(b, [0, 0], x)
    return o
)";
  EXPECT_EQ(Kinds(Simulate(shifted)), std::set<FindingKind>{FindingKind::kShiftedInplaceOverlap});
}

// Reserve ranges may not overlap each other or a root; a reserve or root beyond the capacity of
// the backend is reported (and not without a backend); roots must be 32-byte aligned and planned.
TEST(PlanSimulatorTest, ReservesCapacityAlignment) {
  const std::string text =
      std::string(kHeader) + R"(    mem_vec_0: MemRefType = tile.alloc(Vec, 4096, 1024, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 188160, 1024, 1)
    system.reserve_buffer(name="a", size=2048, base=0)
    system.reserve_buffer(name="b", size=1024, base=1024)
    system.reserve_buffer(name="c", size=1024, base=4608)
    t: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 16])
    u: Tile[[16, 16], FP32, memref=mem_vec_1] = tile.load(x, [0, 0], [16, 16])
    o: Tensor[[64, 64], FP32] = tile.store(t, [0, 0], x)
    return o
)";
  std::vector<Finding> fs = Simulate(text, "ascend910b");
  EXPECT_EQ(Kinds(fs),
            (std::set<FindingKind>{FindingKind::kReserveOverlap, FindingKind::kReserveTileOverlap,
                                   FindingKind::kCapacity}))
      << Dump(fs);
  EXPECT_EQ(
      Kinds(Simulate(text, "ascend950")),
      (std::set<FindingKind>{FindingKind::kReserveOverlap, FindingKind::kReserveTileOverlap}));
  std::string odd = text;
  odd.replace(odd.find("tile.alloc(Vec, 4096"), 20, "tile.alloc(Vec, 8208");
  EXPECT_TRUE(Kinds(Simulate(odd)).count(FindingKind::kMisaligned));
  std::string unplanned = text;
  unplanned.replace(unplanned.find("tile.alloc(Vec, 4096"), 20, "tile.alloc(Vec, -1");
  EXPECT_TRUE(Kinds(Simulate(unplanned)).count(FindingKind::kUnplanned));
  // A huge reserve does not overflow the checker.
  std::string huge = text;
  huge.replace(huge.find("size=1024, base=4608"), 20,
               "size=4611686018427387904, base=9223372036854775000");
  EXPECT_TRUE(Kinds(Simulate(huge, "ascend910b")).count(FindingKind::kCapacity));
}

// A loop whose carried value stays in its init's buffer clobbers the init; reading the init after
// the loop is reported (the loop runs at least twice in the simulation).
TEST(PlanSimulatorTest, LoopCarryClobberingItsInit) {
  const std::string text =
      std::string(kHeader) + R"(    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 1024, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 1024, 1024, 1)
    a: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 16])
    for i, (c,) in range(0, 4, 1, init=(a,)) -> (co: Tile[[16, 16], FP32, memref=mem_vec_0],):
        n: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.exp(c)
        yield (n,)
    s: Tile[[16, 16], FP32, memref=mem_vec_1] = tile.sub(co, a)
    o: Tensor[[64, 64], FP32] = tile.store(s, [0, 0], x)
    return o
)";
  std::vector<Finding> fs = Simulate(text);
  ASSERT_EQ(Kinds(fs), std::set<FindingKind>{FindingKind::kClobberedRead}) << Dump(fs);
  EXPECT_THAT(fs[0].values, ::testing::ElementsAre("a", "n"));
}

// Swapping carries needs a parallel copy: a plan where one carry's yield copy overwrites the other
// carry before it is read is reported on the second iteration.
TEST(PlanSimulatorTest, CrossingCarriesNeedTheirOwnBuffers) {
  const std::string text =
      std::string(kHeader) + R"(    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 1024, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 1024, 1024, 1)
    a: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 16])
    b: Tile[[16, 16], FP32, memref=mem_vec_1] = tile.load(x, [16, 0], [16, 16])
    for i, (p, q) in range(0, 3, 1, init=(a, b)) -> (po: Tile[[16, 16], FP32, memref=mem_vec_0], qo: Tile[[16, 16], FP32, memref=mem_vec_1]):
        q2: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.exp(q)
        p2: Tile[[16, 16], FP32, memref=mem_vec_1] = tile.exp(p)
        yield (q2, p2)
    s: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.sub(po, qo)
    o: Tensor[[64, 64], FP32] = tile.store(s, [0, 0], x)
    return o
)";
  std::vector<Finding> fs = Simulate(text);
  ASSERT_EQ(Kinds(fs), std::set<FindingKind>{FindingKind::kClobberedRead}) << Dump(fs);
  EXPECT_THAT(fs[0].values, ::testing::ElementsAre("p", "q2"));
}

// Both branches of an if are explored: a clobber only on the else path is found.
TEST(PlanSimulatorTest, BothBranchesAreExplored) {
  const std::string text =
      std::string(kHeader) + R"(    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 1024, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 1024, 1024, 1)
    a: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 16])
    if flag -> (r: Tile[[16, 16], FP32, memref=mem_vec_1],):
        t: Tile[[16, 16], FP32, memref=mem_vec_1] = tile.exp(a)
        yield (t,)
    else:
        e: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.load(x, [16, 0], [16, 16])
        t2: Tile[[16, 16], FP32, memref=mem_vec_1] = tile.exp(e)
        yield (t2,)
    s: Tile[[16, 16], FP32, memref=mem_vec_1] = tile.sub(r, a)
    o: Tensor[[64, 64], FP32] = tile.store(s, [0, 0], x)
    return o
)";
  std::vector<Finding> fs = Simulate(text);
  ASSERT_EQ(Kinds(fs), std::set<FindingKind>{FindingKind::kClobberedRead}) << Dump(fs);
  EXPECT_THAT(fs[0].values, ::testing::ElementsAre("a", "e"));
}

// tile.matmul_acc's result must be its accumulator's bytes; Acc tiles are padded on Ascend, so a
// root sized for the unpadded tile is too small there (and fine without a backend).
TEST(PlanSimulatorTest, WritesIntoAndAccPadding) {
  const std::string text = R"(@function(type=AIC)
def mm(a: Tensor[[17, 16], FP16], c: Tensor[[17, 16], FP32]) -> Tensor[[17, 16], FP32]:
    mem_left_0: MemRefType = tile.alloc(Left, 0, 544, 0)
    mem_right_1: MemRefType = tile.alloc(Right, 0, 512, 1)
    mem_acc_2: MemRefType = tile.alloc(Acc, 0, 1088, 2)
    mem_acc_3: MemRefType = tile.alloc(Acc, 2048, 1088, 3)
    l: Tile[[17, 16], FP16, memref=mem_left_0] = tile.load(a, [0, 0], [17, 16], space=Left)
    r: Tile[[16, 16], FP16, memref=mem_right_1] = tile.load(a, [0, 0], [16, 16], space=Right)
    acc: Tile[[17, 16], FP32, memref=mem_acc_2] = tile.matmul(l, r)
    acc2: Tile[[17, 16], FP32, memref=mem_acc_3] = tile.matmul_acc(acc, l, r)
    o: Tensor[[17, 16], FP32] = tile.store(acc2, [0, 0], c)
    return o
)";
  EXPECT_EQ(Kinds(Simulate(text)), std::set<FindingKind>{FindingKind::kWritesIntoMismatch});
  std::string same = text;
  same.replace(same.find("memref=mem_acc_3] = tile.matmul_acc"), 16, "memref=mem_acc_2");
  EXPECT_TRUE(Simulate(same).empty()) << Dump(Simulate(same));
  EXPECT_EQ(Kinds(Simulate(same, "ascend910b")),
            std::set<FindingKind>{FindingKind::kMemRefTooSmall});
}

// The finding of kind `kind` about value `value`, else null.
const Finding* FindingFor(const std::vector<Finding>& fs, FindingKind kind,
                          const std::string& value) {
  for (const Finding& f : fs) {
    if (f.kind == kind && !f.values.empty() && f.values[0] == value) return &f;
  }
  return nullptr;
}

// An on-chip tile without a MemRef cannot be placed: it is reported by name (once, not at each
// read), instead of leaving its reads unchecked.
TEST(PlanSimulatorTest, TileWithoutMemRefIsUnlocatable) {
  const std::string text =
      std::string(kHeader) + R"(    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 1024, 0)
    a: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 16])
    b: Tile[[16, 16], FP32, Vec] = tile.exp(a)
    c: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.exp(b)
    o: Tensor[[64, 64], FP32] = tile.store(c, [0, 0], x)
    return o
)";
  const std::vector<Finding> fs = Simulate(text);
  ASSERT_EQ(fs.size(), 1u) << Dump(fs);
  EXPECT_EQ(fs[0].kind, FindingKind::kUnlocatable);
  EXPECT_THAT(fs[0].values, ::testing::ElementsAre("b"));
  EXPECT_EQ(fs[0].stmt, 2);
  EXPECT_THAT(fs[0].message, ::testing::HasSubstr("'b'"));
  EXPECT_THAT(fs[0].message, ::testing::HasSubstr("no MemRef"));
}

// A tile with a dynamic shape has no byte size the simulator can compute.
TEST(PlanSimulatorTest, DynamicShapeIsUnlocatable) {
  const std::string text = R"(@function(type=AIV)
def f(n: Index, x: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 4096, 0)
    a: Tile[[n, 16], FP32, memref=mem_vec_0] = tile.create([n, 16], FP32, Vec)
    o: Tensor[[64, 64], FP32] = tile.store(a, [0, 0], x)
    return o
)";
  const std::vector<Finding> fs = Simulate(text);
  ASSERT_EQ(Kinds(fs), std::set<FindingKind>{FindingKind::kUnlocatable}) << Dump(fs);
  const Finding* f = FindingFor(fs, FindingKind::kUnlocatable, "a");
  ASSERT_NE(f, nullptr) << Dump(fs);
  EXPECT_THAT(f->message, ::testing::HasSubstr("[n, 16]"));
}

// Besides the unplanned root itself, each value in it is reported: none of them is checked.
TEST(PlanSimulatorTest, ValuesInAnUnplannedRootAreUnlocatable) {
  const std::string text =
      std::string(kHeader) + R"(    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 1024, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, -1, 1024, 1)
    a: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 16])
    b: Tile[[16, 16], FP32, memref=mem_vec_1] = tile.exp(a)
    c: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.exp(b)
    o: Tensor[[64, 64], FP32] = tile.store(c, [0, 0], x)
    return o
)";
  const std::vector<Finding> fs = Simulate(text);
  EXPECT_EQ(Kinds(fs), (std::set<FindingKind>{FindingKind::kUnplanned, FindingKind::kUnlocatable}))
      << Dump(fs);
  const Finding* f = FindingFor(fs, FindingKind::kUnlocatable, "b");
  ASSERT_NE(f, nullptr) << Dump(fs);
  EXPECT_THAT(f->message, ::testing::HasSubstr("mem_vec_1 has no address"));
}

// A slice whose origin is not literal (here the loop index) has an offset the simulator cannot
// check: it is reported, and the value is still tracked at its MemRef so that the clobbers it
// takes part in are found too.
TEST(PlanSimulatorTest, DynamicSliceOriginIsReported) {
  const std::string text =
      std::string(kHeader) + R"(    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 4096, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 4096, 64, 1)
    a: Tile[[16, 64], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 64])
    for i in range(0, 4, 1):
        s: Tile[[1, 16], FP32, memref=mem_vec_0+256] = tile.slice(a, [1, 16], [i, 0])
        e: Tile[[1, 16], FP32, memref=mem_vec_1] = tile.exp(s)
        o1: Tensor[[64, 64], FP32] = tile.store(e, [0, 0], x)
    o: Tensor[[64, 64], FP32] = tile.store(a, [0, 0], x)
    return o
)";
  std::vector<Finding> fs = Simulate(text);
  ASSERT_EQ(Kinds(fs), std::set<FindingKind>{FindingKind::kUnlocatable}) << Dump(fs);
  const Finding* f = FindingFor(fs, FindingKind::kUnlocatable, "s");
  ASSERT_NE(f, nullptr) << Dump(fs);
  EXPECT_THAT(f->message, ::testing::HasSubstr("dynamic"));
  // e computed in place over the slice overwrites a, which is read after the loop.
  std::string clobber = text;
  clobber.replace(clobber.find("mem_vec_1] = tile.exp(s)"), 9, "mem_vec_0+256");
  fs = Simulate(clobber);
  EXPECT_TRUE(Kinds(fs).count(FindingKind::kClobberedRead)) << Dump(fs);
}

// A value that takes its bytes from one the simulator could not place (a view of it, a loop
// carry initialised with it) is reported too, naming the source.
TEST(PlanSimulatorTest, UnlocatableSourcesPropagate) {
  const std::string text =
      std::string(kHeader) + R"(    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 1024, 0)
    a: Tile[[16, 16], FP32, Vec] = tile.load(x, [0, 0], [16, 16])
    s: Tile[[8, 16], FP32, memref=mem_vec_0+512] = tile.slice(a, [8, 16], [8, 0])
    for i, (c,) in range(0, 2, 1, init=(a,)) -> (co: Tile[[16, 16], FP32, memref=mem_vec_0],):
        n: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.exp(c)
        yield (n,)
    o: Tensor[[64, 64], FP32] = tile.store(co, [0, 0], x)
    return o
)";
  // c takes a's type (no MemRef); the loop's result co has one but takes c's bytes.
  const std::vector<Finding> fs = Simulate(text);
  EXPECT_EQ(Kinds(fs), std::set<FindingKind>{FindingKind::kUnlocatable}) << Dump(fs);
  EXPECT_NE(FindingFor(fs, FindingKind::kUnlocatable, "a"), nullptr) << Dump(fs);
  const Finding* s = FindingFor(fs, FindingKind::kUnlocatable, "s");
  ASSERT_NE(s, nullptr) << Dump(fs);
  EXPECT_THAT(s->message, ::testing::HasSubstr("view of 'a'"));
  EXPECT_NE(FindingFor(fs, FindingKind::kUnlocatable, "c"), nullptr) << Dump(fs);
  const Finding* co = FindingFor(fs, FindingKind::kUnlocatable, "co");
  ASSERT_NE(co, nullptr) << Dump(fs);
  EXPECT_THAT(co->message, ::testing::HasSubstr("value of 'c'"));
}

// Storage layouts: 'b' (NZ) is written over bytes 'a' (ND) held, with disjoint lifetimes. On the
// ascend950 (Vec keeps layouts apart) that is a finding naming both; on the 910B it is fine; an
// unstated layout counts as ND.
TEST(PlanSimulatorTest, LayoutShare) {
  const std::string text = R"(@function(type=AIV)
def lay(x: Tensor[[16, 16], FP16], y: Tensor[[16, 16], FP16]) -> Tensor[[16, 16], FP16]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 512, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 256, 512, 1)
    a: Tile[[16, 16], FP16, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 16])
    r: Tensor[[16, 16], FP16] = tile.store(a, [0, 0], y)
    b: Tile[[16, 16], FP16, memref=mem_vec_1, layout=NZ] = tile.load(x, [0, 0], [16, 16])
    r2: Tensor[[16, 16], FP16] = tile.store(b, [0, 0], r)
    return r2
)";
  std::vector<Finding> fs = Simulate(text, "ascend950");
  ASSERT_EQ(fs.size(), 1u) << Dump(fs);
  EXPECT_EQ(fs[0].kind, FindingKind::kLayoutShare);
  EXPECT_EQ(fs[0].values, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(fs[0].other_lo, 256);
  EXPECT_EQ(fs[0].other_hi, 512);
  EXPECT_THAT(fs[0].message, ::testing::HasSubstr("'b' (NZ) is written over bytes 'a' (ND) held"));
  EXPECT_TRUE(Simulate(text, "ascend910b").empty()) << Dump(Simulate(text, "ascend910b"));
  std::string same = text;
  same.replace(same.find(", layout=NZ"), 11, ", layout=ND");
  EXPECT_TRUE(Simulate(same, "ascend950").empty());
}

// A declared allocation: 'b' sits on bytes of 'stash' although 'a' is dead by then. Plain roots
// may do that; a declared one is closed to every other root, whatever the lifetimes.
TEST(PlanSimulatorTest, DeclaredShare) {
  const std::string text = R"(@function(type=AIV)
def closed(x: Tensor[[16, 16], FP16], y: Tensor[[16, 16], FP16]) -> Tensor[[16, 16], FP16]:
    stash: MemRefType = tile.alloc(Vec, 0, 512, 0, declared=1)
    mem_vec_1: MemRefType = tile.alloc(Vec, 256, 512, 1)
    a: Tile[[16, 16], FP16, memref=stash] = tile.load(x, [0, 0], [16, 16])
    r: Tensor[[16, 16], FP16] = tile.store(a, [0, 0], y)
    b: Tile[[16, 16], FP16, memref=mem_vec_1] = tile.load(x, [0, 0], [16, 16])
    r2: Tensor[[16, 16], FP16] = tile.store(b, [0, 0], r)
    return r2
)";
  std::vector<Finding> fs = Simulate(text, "ascend910b");
  ASSERT_EQ(fs.size(), 1u) << Dump(fs);
  EXPECT_EQ(fs[0].kind, FindingKind::kDeclaredShare);
  EXPECT_EQ(fs[0].values, (std::vector<std::string>{"mem_vec_1", "stash"}));
  EXPECT_EQ(fs[0].lo, 256);
  EXPECT_EQ(fs[0].other_hi, 512);
  std::string plain = text;
  plain.replace(plain.find(", declared=1"), 12, "");
  EXPECT_TRUE(Simulate(plain, "ascend910b").empty()) << Dump(Simulate(plain, "ascend910b"));
  std::string apart = text;
  apart.replace(apart.find("alloc(Vec, 256"), 14, "alloc(Vec, 512");
  EXPECT_TRUE(Simulate(apart, "ascend910b").empty()) << Dump(Simulate(apart, "ascend910b"));
}

// Every finding kind has a distinct name (the soak counts by name).
// A pipelined loop keeps its iterations in flight. With its tiles in the slots of slotted roots
// (iteration j in slot (k + j) mod 2) the plan is correct; overlapping blocks, or the load and its
// result in two slots of one root (which meet one iteration apart), are stage overlaps although
// the sequential execution reads nothing clobbered. Plain buffers serialise the loop.
TEST(PlanSimulatorTest, PipelinedLoopsNeedTheirSlots) {
  auto program = [](const std::string& allocs, const std::string& a, const std::string& b) {
    return "@function(type=AIV)\n"
           "def f(x: Tensor[[8], FP32], out: Tensor[[8], FP32]) -> Tensor[[8], FP32]:\n" +
           allocs +
           "    for i in range(0, 4, 1, pipeline=2):\n"
           "        a: Tile[[8], FP32, memref=" +
           a +
           "] = tile.load(x, [0], [8])\n"
           "        b: Tile[[8], FP32, memref=" +
           b +
           "] = tile.exp(a)\n"
           "        o: Tensor[[8], FP32] = tile.store(b, [0], out)\n"
           "    return out\n";
  };
  const std::string slotted =
      "    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 64, 0, slots=2)\n"
      "    mem_vec_1: MemRefType = tile.alloc(Vec, 64, 64, 1, slots=2)\n";
  const std::vector<Finding> ok = Simulate(program(slotted, "mem_vec_0[0]", "mem_vec_1[1]"));
  EXPECT_TRUE(ok.empty()) << Dump(ok);
  const std::vector<Finding> plain =
      Simulate(program("    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 32, 0)\n"
                       "    mem_vec_1: MemRefType = tile.alloc(Vec, 32, 32, 1)\n",
                       "mem_vec_0", "mem_vec_1"));
  // Plain buffers serialise the loop (iteration j + 1 waits for the buffer): nothing in flight.
  EXPECT_TRUE(plain.empty()) << Dump(plain);
  // Slotted, but both blocks at the same address: iteration 1's 'a' lands on iteration 0's 'a'
  // once the blocks overlap.
  const std::vector<Finding> stacked =
      Simulate(program("    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 64, 0, slots=2)\n"
                       "    mem_vec_1: MemRefType = tile.alloc(Vec, 32, 64, 1, slots=2)\n",
                       "mem_vec_0[0]", "mem_vec_1[0]"));
  EXPECT_EQ(Kinds(stacked), std::set<FindingKind>{FindingKind::kStageOverlap}) << Dump(stacked);
  ASSERT_FALSE(stacked.empty());
  EXPECT_EQ(stacked[0].message,
            "'a' of iteration 1 is written over bytes 'b' of iteration 0 holds; the loop over 'i' "
            "keeps 2 iterations in flight");
  const std::vector<Finding> crossed =
      Simulate(program("    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 64, 0, slots=2)\n",
                       "mem_vec_0[0]", "mem_vec_0[1]"));
  EXPECT_EQ(Kinds(crossed), std::set<FindingKind>{FindingKind::kStageOverlap}) << Dump(crossed);
  // A fixed slot outside the loop is busy while the loop rotates through every slot.
  const std::vector<Finding> fixed = Simulate(
      "@function(type=AIV)\n"
      "def f(x: Tensor[[8], FP32], out: Tensor[[8], FP32]) -> Tensor[[8], FP32]:\n"
      "    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 64, 0, slots=2)\n"
      "    p: Tile[[8], FP32, memref=mem_vec_0[1]] = tile.load(x, [0], [8])\n"
      "    for i in range(0, 4, 1, pipeline=2):\n"
      "        a: Tile[[8], FP32, memref=mem_vec_0[0]] = tile.load(x, [0], [8])\n"
      "        o: Tensor[[8], FP32] = tile.store(a, [0], out)\n"
      "    q: Tensor[[8], FP32] = tile.store(p, [0], out)\n"
      "    return q\n");
  EXPECT_EQ(Kinds(fixed), std::set<FindingKind>{FindingKind::kClobberedRead}) << Dump(fixed);
}

TEST(PlanSimulatorTest, KindNamesAreDistinct) {
  std::set<std::string> names;
  for (int k = 0; k < kNumFindingKinds; ++k) {
    names.insert(FindingKindName(static_cast<FindingKind>(k)));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kNumFindingKinds));
}

Simulation Trace(const std::string& text) {
  auto program = ir::ParseProgram(text, "<test>");
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return {};
  return SimulateAndTrace(**program);
}

// One loop, planned three ways: the carry computed in place; computed in another buffer and
// moved back (memory-reuse's tile.move); computed in another buffer and copied back by the
// yield (a carry fix-up). Each is correct, so each computes the same values. UNPLANNED_MOVE
// stands for the carried value's tile.move line.
constexpr char kLoop[] = R"(    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 16384, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 16384, 16384, 1)
    mem_vec_2: MemRefType = tile.alloc(Vec, 32768, 16384, 2)
    t0: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [64, 64])
    u: Tile[[64, 64], FP32, memref=mem_vec_2] = tile.exp(t0)
    for i, (acc,) in range(0, 4, 1, init=(t0,)) -> (res: Tile[[64, 64], FP32, memref=mem_vec_0],):
        nxt: Tile[[64, 64], FP32, memref=NXT] = tile.add(acc, u)
MOVE        yield (YIELDED,)
    r: Tensor[[64, 64], FP32] = tile.store(res, [0, 0], x)
    return r
)";

std::string LoopVersion(const std::string& nxt, const std::string& move,
                        const std::string& yielded) {
  std::string s = std::string(kHeader) + kLoop;
  s.replace(s.find("NXT"), 3, nxt);
  s.replace(s.find("MOVE"), 4, move);
  s.replace(s.find("YIELDED"), 7, yielded);
  return s;
}

TEST(PlanSimulatorTest, CorrectPlansComputeTheSameValues) {
  const std::string moved =
      "        nxt_mv: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.move(nxt, Vec)\n";
  const Simulation in_place = Trace(LoopVersion("mem_vec_0", "", "nxt"));
  const Simulation with_move = Trace(LoopVersion("mem_vec_1", moved, "nxt_mv"));
  const Simulation with_copy = Trace(LoopVersion("mem_vec_1", "", "nxt"));
  for (const Simulation* sim : {&in_place, &with_move, &with_copy}) {
    EXPECT_TRUE(sim->findings.empty()) << Dump(sim->findings);
    ASSERT_EQ(sim->trace.count("f"), 1u);
    ASSERT_EQ(sim->trace.at("f").size(), 1u);     // no if: one path
    EXPECT_EQ(sim->trace.at("f")[0].size(), 3u);  // store r, return, control
  }
  EXPECT_EQ(TraceDifference(in_place.trace, with_move.trace), "");
  EXPECT_EQ(TraceDifference(in_place.trace, with_copy.trace), "");
}

// The same move copying the wrong value (u, not nxt) clobbers no byte, yet computes something
// else: the trace tells.
TEST(PlanSimulatorTest, MoveOfTheWrongValueChangesTheTrace) {
  const std::string moved =
      "        nxt_mv: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.move(nxt, Vec)\n";
  std::string wrong_move = moved;
  wrong_move.replace(wrong_move.find("tile.move(nxt"), 13, "tile.move(u");
  const Simulation right = Trace(LoopVersion("mem_vec_1", moved, "nxt_mv"));
  const Simulation wrong = Trace(LoopVersion("mem_vec_1", wrong_move, "nxt_mv"));
  EXPECT_TRUE(wrong.findings.empty()) << Dump(wrong.findings);
  EXPECT_EQ(TraceDifference(right.trace, wrong.trace),
            "function 'f', path 0, output 0: 'store r' vs 'store r' compute different values");
  // A clobbered read yields garbage, which differs too.
  std::string clobbered = LoopVersion("mem_vec_2", "", "nxt");  // nxt overwrites u, read later
  const Simulation bad = Trace(clobbered);
  EXPECT_TRUE(Kinds(bad.findings).count(FindingKind::kClobberedRead)) << Dump(bad.findings);
  EXPECT_NE(TraceDifference(right.trace, bad.trace), "");
}

// Every if path is traced, with its decisions; values stored on a path differ between
// branches that compute differently.
TEST(PlanSimulatorTest, EachPathHasItsTrace) {
  const std::string text =
      std::string(kHeader) + R"(    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 16384, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 16384, 16384, 1)
    a: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [64, 64])
    if flag -> (w: Tile[[64, 64], FP32, memref=mem_vec_1],):
        e: Tile[[64, 64], FP32, memref=mem_vec_1] = tile.exp(a)
        yield (e,)
    else:
        m: Tile[[64, 64], FP32, memref=mem_vec_1] = tile.mul(a, a)
        yield (m,)
    o: Tensor[[64, 64], FP32] = tile.store(w, [0, 0], x)
    return o
)";
  const Simulation sim = Trace(text);
  EXPECT_TRUE(sim.findings.empty()) << Dump(sim.findings);
  const auto& paths = sim.trace.at("f");
  ASSERT_GE(paths.size(), 2u);
  EXPECT_NE(paths[0][0].fingerprint, paths[1][0].fingerprint);          // all-then vs all-else
  EXPECT_NE(paths[0].back().fingerprint, paths[1].back().fingerprint);  // their decisions
}

}  // namespace
}  // namespace passes_testing
}  // namespace accelmem
