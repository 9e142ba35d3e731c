#include "ir/structural_equal.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/parser.h"

namespace accelmem {
namespace ir {
namespace {

ProgramPtr Parse(const std::string& text) {
  auto p = ParseProgram(text, "s.tile");
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

constexpr char kA[] = R"(@function(type=AIV)
def f(x: Tensor[[64, 64], FP32]):
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 16384, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 16384, 16384, 1)
    a: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [64, 64])
    b: Tile[[64, 64], FP32, memref=mem_vec_1] = tile.add(a, a)
    return
)";

// Renaming values and MemRefs keeps programs equal (and their hashes).
TEST(StructuralEqualTest, EqualUpToRenaming) {
  ProgramPtr a = Parse(kA);
  ProgramPtr b = Parse(R"(@function(type=AIV)
def f(y: Tensor[[64, 64], FP32]):
    buf0: MemRefType = tile.alloc(Vec, 0, 16384, 0)
    buf1: MemRefType = tile.alloc(Vec, 16384, 16384, 1)
    p: Tile[[64, 64], FP32, memref=buf0] = tile.load(y, [0, 0], [64, 64])
    q: Tile[[64, 64], FP32, memref=buf1] = tile.add(p, p)
    return
)");
  EXPECT_TRUE(StructuralEqual(*a, *b)) << FirstDifference(*a, *b);
  EXPECT_EQ(StructuralHash(*a), StructuralHash(*b));
  EXPECT_EQ(FirstDifference(*a, *b), "");
}

// A swapped use is found and reported with a path.
TEST(StructuralEqualTest, ReportsFirstDifference) {
  ProgramPtr a = Parse(R"(def f(x: Tensor[[4], FP32]):
    a: Tile[[4], FP32, Vec] = tile.load(x, [0], [4])
    b: Tile[[4], FP32, Vec] = tile.exp(a)
    c: Tile[[4], FP32, Vec] = tile.sub(a, b)
    return
)");
  ProgramPtr b = Parse(R"(def f(x: Tensor[[4], FP32]):
    a: Tile[[4], FP32, Vec] = tile.load(x, [0], [4])
    b: Tile[[4], FP32, Vec] = tile.exp(a)
    c: Tile[[4], FP32, Vec] = tile.sub(b, a)
    return
)");
  EXPECT_FALSE(StructuralEqual(*a, *b));
  EXPECT_EQ(FirstDifference(*a, *b),
            "function 'f' > body > [2] AssignStmt 'c' > value > args[0]: value 'a' vs 'b'");
  EXPECT_NE(StructuralHash(*a), StructuralHash(*b));
}

// Addresses are compared by default and ignored on request.
TEST(StructuralEqualTest, AddressOption) {
  ProgramPtr a = Parse(kA);
  std::string unplanned = kA;
  unplanned.replace(unplanned.find("(Vec, 0,"), 8, "(Vec, -1,");
  unplanned.replace(unplanned.find("(Vec, 16384, 16384"), 18, "(Vec, -1, 16384");
  ProgramPtr b = Parse(unplanned);
  EXPECT_FALSE(StructuralEqual(*a, *b));
  EXPECT_EQ(FirstDifference(*a, *b),
            "function 'f' > body > [0] AssignStmt 'mem_vec_0' > value > args[1]: 0 vs -1");
  StructuralEqualOptions no_addr;
  no_addr.compare_addresses = false;
  EXPECT_TRUE(StructuralEqual(*a, *b, no_addr)) << FirstDifference(*a, *b, no_addr);
  EXPECT_EQ(StructuralHash(*a, no_addr), StructuralHash(*b, no_addr));
}

// Ignoring MemRefs compares a planned program with its unplanned form (allocs skipped).
TEST(StructuralEqualTest, MemRefOption) {
  ProgramPtr a = Parse(kA);
  ProgramPtr b = Parse(R"(@function(type=AIV)
def f(x: Tensor[[64, 64], FP32]):
    a: Tile[[64, 64], FP32, Vec] = tile.load(x, [0, 0], [64, 64])
    b: Tile[[64, 64], FP32, Vec] = tile.add(a, a)
    return
)");
  EXPECT_FALSE(StructuralEqual(*a, *b));
  StructuralEqualOptions no_mem;
  no_mem.compare_memrefs = false;
  EXPECT_TRUE(StructuralEqual(*a, *b, no_mem)) << FirstDifference(*a, *b, no_mem);
  EXPECT_EQ(StructuralHash(*a, no_mem), StructuralHash(*b, no_mem));
}

// Sharing matters: two tiles in one buffer differ from two tiles in two equal buffers.
TEST(StructuralEqualTest, MemRefSharingIsCompared) {
  ProgramPtr shared = Parse(R"(def f(x: Tensor[[4], FP32]):
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 16, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, -1, 16, 1)
    a: Tile[[4], FP32, memref=mem_vec_0] = tile.load(x, [0], [4])
    b: Tile[[4], FP32, memref=mem_vec_0] = tile.exp(a)
    return
)");
  ProgramPtr separate = Parse(R"(def f(x: Tensor[[4], FP32]):
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 16, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, -1, 16, 1)
    a: Tile[[4], FP32, memref=mem_vec_0] = tile.load(x, [0], [4])
    b: Tile[[4], FP32, memref=mem_vec_1] = tile.exp(a)
    return
)");
  EXPECT_EQ(FirstDifference(*shared, *separate),
            "function 'f' > body > [3] AssignStmt 'b' > type > memref: memref 'mem_vec_0' vs "
            "'mem_vec_1'");
}

// View offsets are compared.
TEST(StructuralEqualTest, ViewOffsets) {
  const std::string head = R"(def f(x: Tensor[[4, 4], FP32]):
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 64, 0)
    a: Tile[[4, 4], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [4, 4])
)";
  ProgramPtr a = Parse(
      head + "    s: Tile[[1, 4], FP32, memref=mem_vec_0+16] = tile.slice(a, [1, 4], [1, 0])\n");
  ProgramPtr b = Parse(
      head + "    s: Tile[[1, 4], FP32, memref=mem_vec_0+32] = tile.slice(a, [1, 4], [1, 0])\n");
  EXPECT_EQ(FirstDifference(*a, *b),
            "function 'f' > body > [2] AssignStmt 's' > type > memref: mem_vec_0+16 (offset 16, "
            "size 16) vs mem_vec_0+32 (offset 32, size 16)");
}

// Function names, types and counts are compared.
TEST(StructuralEqualTest, FunctionLevel) {
  ProgramPtr a = Parse("def f():\n    pass\n");
  ProgramPtr b = Parse("@function(type=AIC)\ndef f():\n    pass\n");
  ProgramPtr c = Parse("def g():\n    pass\n");
  ProgramPtr d = Parse("def f():\n    pass\n\ndef g():\n    pass\n");
  EXPECT_EQ(FirstDifference(*a, *b), "function 'f': type Opaque vs AIC");
  EXPECT_EQ(FirstDifference(*a, *c), "function 'f': name 'f' vs 'g'");
  EXPECT_EQ(FirstDifference(*a, *d), ": 1 functions vs 2");
}

// Layouts are compared (and hashed): a stated layout differs from another and from none.
TEST(StructuralEqualTest, Layouts) {
  auto with = [](const std::string& layout) {
    return Parse("def f(x: Tensor[[4], FP32]):\n    a: Tile[[4], FP32, Vec" + layout +
                 "] = tile.load(x, [0], [4])\n    return\n");
  };
  ProgramPtr none = with(""), nd = with(", layout=ND"), nz = with(", layout=NZ");
  EXPECT_TRUE(StructuralEqual(*nz, *with(", layout=NZ")));
  EXPECT_EQ(StructuralHash(*nz), StructuralHash(*with(", layout=NZ")));
  EXPECT_FALSE(StructuralEqual(*nd, *nz));
  EXPECT_FALSE(StructuralEqual(*none, *nd));
  EXPECT_NE(StructuralHash(*nd), StructuralHash(*nz));
  EXPECT_NE(StructuralHash(*none), StructuralHash(*nd));
  EXPECT_EQ(FirstDifference(*nd, *nz),
            "function 'f' > body > [0] AssignStmt 'a' > type: Tile[[4], FP32, Vec, layout=ND] vs "
            "Tile[[4], FP32, Vec, layout=NZ]");
}

// Slot counts, the slot a tile names and pipeline depths are part of the structure; a program
// without them hashes as before they existed.
TEST(StructuralEqualTest, SlotsAndPipelines) {
  auto make = [](int slots, int slot, int depth) {
    return Parse(absl::StrCat(
        "def f(x: Tensor[[4], FP32]):\n    mem_vec_0: MemRefType = tile.alloc(Vec, -1, ",
        16 * slots, ", 0, slots=", slots, ")\n    for i in range(0, 4, 1, pipeline=", depth,
        "):\n        a: Tile[[4], FP32, memref=mem_vec_0[", slot,
        "]] = tile.load(x, [0], [4])\n    return\n"));
  };
  ProgramPtr base = make(2, 0, 2);
  EXPECT_TRUE(StructuralEqual(*base, *make(2, 0, 2)));
  EXPECT_EQ(StructuralHash(*base), StructuralHash(*make(2, 0, 2)));
  EXPECT_FALSE(StructuralEqual(*base, *make(2, 1, 2)));
  EXPECT_NE(StructuralHash(*base), StructuralHash(*make(2, 1, 2)));
  EXPECT_EQ(FirstDifference(*base, *make(2, 1, 2)),
            "function 'f' > body > [1] ForStmt > body > [0] AssignStmt 'a' > type > memref: "
            "mem_vec_0[0] (offset 0, size 16) vs mem_vec_0[1] (offset 16, size 16)");
  EXPECT_FALSE(StructuralEqual(*make(3, 0, 3), *make(2, 0, 2)));
  ProgramPtr plain = Parse(
      "def f(x: Tensor[[4], FP32]):\n    for i in range(0, 4, 1):\n        pass\n    return\n");
  ProgramPtr piped = Parse(
      "def f(x: Tensor[[4], FP32]):\n    for i in range(0, 4, 1, pipeline=2):\n        pass\n"
      "    return\n");
  EXPECT_FALSE(StructuralEqual(*plain, *piped));
  EXPECT_NE(StructuralHash(*plain), StructuralHash(*piped));
  EXPECT_EQ(FirstDifference(*plain, *piped),
            "function 'f' > body > [0] ForStmt: pipeline depth 0 vs 2");
}

// Whether an allocation is declared is part of the structure, and of the hash.
TEST(StructuralEqualTest, DeclaredAllocations) {
  auto make = [](const std::string& kwargs) {
    return Parse(
        absl::StrCat("def f(x: Tensor[[4], FP32]):\n    buf: MemRefType = tile.alloc(Vec, "
                     "-1, 16, 0",
                     kwargs,
                     ")\n    a: Tile[[4], FP32, memref=buf] = tile.load(x, [0], [4])\n"
                     "    return\n"));
  };
  ProgramPtr declared = make(", declared=1");
  ProgramPtr plain = make("");
  EXPECT_TRUE(StructuralEqual(*declared, *make(", declared=1")));
  EXPECT_EQ(StructuralHash(*declared), StructuralHash(*make(", declared=1")));
  EXPECT_FALSE(StructuralEqual(*declared, *plain));
  EXPECT_NE(StructuralHash(*declared), StructuralHash(*plain));
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
