#include "ir/stmt.h"

#include "gtest/gtest.h"

namespace accelmem {
namespace ir {
namespace {

// FlattenSeq splices nested sequences and keeps order.
TEST(StmtTest, FlattenSeq) {
  auto r1 = std::make_shared<ReturnStmt>(std::vector<ExprPtr>{});
  auto r2 = std::make_shared<YieldStmt>(std::vector<ExprPtr>{});
  auto inner = std::make_shared<SeqStmts>(std::vector<StmtPtr>{r2});
  StmtPtr flat = FlattenSeq({inner, r1});
  const SeqStmts* seq = AsSeq(flat.get());
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->stmts.size(), 2u);
  EXPECT_EQ(seq->stmts[0], r2);
  EXPECT_EQ(seq->stmts[1], r1);
  EXPECT_EQ(BodyStmts(r1).size(), 1u);
  EXPECT_EQ(BodyStmts(flat).size(), 2u);
}

// AsAllocCall recognises `m: MemRefType = tile.alloc(...)` only.
TEST(StmtTest, AsAllocCall) {
  MemRefPtr m = MemRef::MakeRoot("mem_vec_0", MemorySpace::kVec, -1, 64, 0);
  auto alloc = std::make_shared<AssignStmt>(
      MakeVar("mem_vec_0", MakeMemRefType(m)),
      MakeCall("tile.alloc", {MakeSpace(MemorySpace::kVec), MakeInt(-1), MakeInt(64), MakeInt(0)}));
  auto other = std::make_shared<AssignStmt>(MakeVar("x", MakeIndex()), MakeCall("tile.add", {}));
  EXPECT_NE(AsAllocCall(*alloc), nullptr);
  EXPECT_EQ(AsAllocCall(*other), nullptr);
  EXPECT_EQ(AsAssign(alloc.get()), alloc.get());
  EXPECT_EQ(AsFor(alloc.get()), nullptr);
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
