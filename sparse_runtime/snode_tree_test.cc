#include "sparse_runtime/snode_tree.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

using ::testing::HasSubstr;

const Axis i(0), j(1), k(2);

// The enum, the names and the flags come from the kinds' table (device/snode_kind_table.h): each
// row's enumerator has the row's index and name, and the flags say what IsSparse and HasAllocator
// said when they were written by hand. The values are pinned: SNodeType is compared and may be
// persisted, so a refactor of the table must not reorder it.
TEST(SNodeTreeTest, KindTableAndEnumAgree) {
  struct Row {
    SNodeType type;
    const char* name;
    u32 flags;
  };
#define ACCELMEM_TEST_ROW(Kind, kind, Meta, flags, ...) {SNodeType::k##Kind, #kind, (flags)},
  const Row rows[] = {ACCELMEM_SNODE_KINDS(ACCELMEM_TEST_ROW)};
#undef ACCELMEM_TEST_ROW
  ASSERT_EQ(sizeof(rows) / sizeof(rows[0]), static_cast<size_t>(kNumSNodeKinds));
  for (int r = 0; r < kNumSNodeKinds; ++r) {
    EXPECT_EQ(static_cast<int>(rows[r].type), r) << rows[r].name;
    EXPECT_STREQ(SNodeTypeName(rows[r].type), rows[r].name);
    EXPECT_EQ(IsSparse(rows[r].type), (rows[r].flags & kSNodeSparse) != 0) << rows[r].name;
    EXPECT_EQ(HasAllocator(rows[r].type), (rows[r].flags & kSNodeAllocator) != 0) << rows[r].name;
  }
  EXPECT_EQ(kNumSNodeKinds, 6);
  EXPECT_EQ(static_cast<int>(SNodeType::kRoot), 0);
  EXPECT_EQ(static_cast<int>(SNodeType::kDense), 1);
  EXPECT_EQ(static_cast<int>(SNodeType::kBitmasked), 2);
  EXPECT_EQ(static_cast<int>(SNodeType::kPointer), 3);
  EXPECT_EQ(static_cast<int>(SNodeType::kDynamic), 4);
  EXPECT_EQ(static_cast<int>(SNodeType::kPlace), 5);
  for (SNodeType sparse : {SNodeType::kBitmasked, SNodeType::kPointer, SNodeType::kDynamic}) {
    EXPECT_TRUE(IsSparse(sparse)) << SNodeTypeName(sparse);
  }
  for (SNodeType dense : {SNodeType::kRoot, SNodeType::kDense, SNodeType::kPlace}) {
    EXPECT_FALSE(IsSparse(dense)) << SNodeTypeName(dense);
    EXPECT_FALSE(HasAllocator(dense)) << SNodeTypeName(dense);
  }
  EXPECT_FALSE(HasAllocator(SNodeType::kBitmasked));
  EXPECT_TRUE(HasAllocator(SNodeType::kPointer));
  EXPECT_TRUE(HasAllocator(SNodeType::kDynamic));
  EXPECT_STREQ(SNodeTypeName(static_cast<SNodeType>(kNumSNodeKinds)), "?");
}

// The example builds, validates and lays out: 4-byte pointer slots, dynamic chunks of
// a 16-byte header + 16 f32 headed by a 32-byte DynamicNode, indices (i, j, k).
TEST(SNodeTreeTest, TaichiStyleBuilder) {
  SNodeTree tree;
  tree.root().dense({i, j}, {4, 4}).pointer({i, j}, {8, 8}).dynamic(k, 64, 16).place<float>("x");
  ASSERT_TRUE(tree.Finalize().ok());
  const SNode* x = tree.FindPlace("x");
  ASSERT_NE(x, nullptr);
  const SNode& dyn = *x->parent();
  const SNode& ptr = *dyn.parent();
  const SNode& dense = *ptr.parent();
  EXPECT_EQ(dyn.type(), SNodeType::kDynamic);
  EXPECT_EQ(x->index_axes(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(x->extent(0), 32);
  EXPECT_EQ(x->extent(1), 32);
  EXPECT_EQ(x->extent(2), 64);
  EXPECT_EQ(dyn.cell_size(), 4u);
  EXPECT_EQ(dyn.container_size(), 32u);
  EXPECT_EQ(dyn.allocator_node_size(), 16u + 16 * 4);
  EXPECT_EQ(ptr.num_cells_per_container(), 64);
  EXPECT_EQ(ptr.container_size(), 64u * 4);  // one 4-byte slot per cell
  EXPECT_EQ(ptr.cell_size(), 32u);           // the DynamicNode
  EXPECT_EQ(ptr.allocator_node_size(), 32u);
  EXPECT_EQ(dense.cell_size(), 256u);
  EXPECT_EQ(dense.container_size(), 16u * 256);
  EXPECT_EQ(tree.root_size(), 16u * 256);
  EXPECT_TRUE(dense.has_sparse_descendant());
  EXPECT_FALSE(dyn.has_sparse_descendant());
}

// A cell is a struct of the children's containers with natural alignment.
TEST(SNodeTreeTest, CellLayoutIsNaturallyAligned) {
  SNodeTree tree;
  SNode& d = tree.root().dense(i, 10);
  d.place<uint8_t>("a").place<double>("b").place<int16_t>("c");
  ASSERT_TRUE(tree.Finalize().ok());
  EXPECT_EQ(tree.FindPlace("a")->offset_in_parent_cell(), 0u);
  EXPECT_EQ(tree.FindPlace("b")->offset_in_parent_cell(), 8u);
  EXPECT_EQ(tree.FindPlace("c")->offset_in_parent_cell(), 16u);
  EXPECT_EQ(d.cell_size(), 24u);
  EXPECT_EQ(d.cell_alignment(), 8u);
  EXPECT_EQ(d.container_size(), 240u);
}

// Bitmasked containers put cells first and the activity flags (a byte per cell, padded to whole
// u32 words) at a 4-aligned offset.
TEST(SNodeTreeTest, BitmaskedLayout) {
  SNodeTree tree;
  SNode& b = tree.root().bitmasked(i, 3);
  b.place<uint8_t>("v");
  ASSERT_TRUE(tree.Finalize().ok());
  EXPECT_EQ(b.container_size(), 8u);  // 3 cells, pad to 4, 3 flag bytes padded to 4
  EXPECT_EQ(b.container_alignment(), 4u);
}

// A pointer container is u32 slots, aligned to 4 bytes: a dense cell holding only a one-slot
// pointer container is 4 bytes, and two of them pack without padding.
TEST(SNodeTreeTest, PointerContainersAreFourByteAligned) {
  SNodeTree tree;
  SNode& d = tree.root().dense(i, 2);
  d.pointer(j, 1).place<int32_t>("x");
  d.pointer(k, 1).place<int32_t>("y");
  ASSERT_TRUE(tree.Finalize().ok());
  const SNode& px = *tree.FindPlace("x")->parent();
  const SNode& py = *tree.FindPlace("y")->parent();
  EXPECT_EQ(px.container_alignment(), 4u);
  EXPECT_EQ(px.container_size(), 4u);
  EXPECT_EQ(px.offset_in_parent_cell(), 0u);
  EXPECT_EQ(py.offset_in_parent_cell(), 4u);
  EXPECT_EQ(d.cell_size(), 8u);
}

// Shapes need not be powers of two, and the same axis may be split over several levels.
TEST(SNodeTreeTest, NonPowerOfTwoAndRepeatedAxes) {
  SNodeTree tree;
  tree.root().pointer(i, 3).dense(i, 5).place<int32_t>("v");
  ASSERT_TRUE(tree.Finalize().ok());
  const SNode* v = tree.FindPlace("v");
  EXPECT_EQ(v->extent(0), 15);
  EXPECT_EQ(v->index_axes(), std::vector<int>{0});
}

// There is no limit on the number of SNodes (upstream: 1024 global ids, #4065).
TEST(SNodeTreeTest, ManySNodes) {
  SNodeTree tree;
  SNode& d = tree.root().dense(i, 2);
  for (int n = 0; n < 2000; ++n) d.place<int32_t>("p" + std::to_string(n));
  ASSERT_TRUE(tree.Finalize().ok());
  EXPECT_EQ(tree.num_snodes(), 2002);
  EXPECT_EQ(d.cell_size(), 8000u);
}

// Each validation rule produces a clear error naming the offending SNode.
TEST(SNodeTreeValidationTest, NonPositiveShape) {
  SNodeTree tree;
  tree.root().dense(i, 0).place<int32_t>("x");
  EXPECT_THAT(tree.Finalize().message(), HasSubstr("shape of axis 0 must be positive, got 0"));
}

TEST(SNodeTreeValidationTest, NonPositiveChunkSize) {
  SNodeTree tree;
  tree.root().dynamic(i, 8, -2).place<int32_t>("x");
  EXPECT_THAT(tree.Finalize().message(), HasSubstr("chunk_size must be positive"));
}

TEST(SNodeTreeValidationTest, DynamicMustBeTerminal) {
  SNodeTree tree;
  tree.root().dynamic(i, 8).dense(j, 2).place<int32_t>("x");
  EXPECT_THAT(tree.Finalize().message(), HasSubstr("dynamic must be terminal"));
}

TEST(SNodeTreeValidationTest, DynamicAxisUsedByAncestor) {
  SNodeTree tree;
  tree.root().dense(i, 4).dynamic(i, 8).place<int32_t>("x");
  EXPECT_THAT(tree.Finalize().message(), HasSubstr("dynamic axis 0 is already used by ancestor"));
}

TEST(SNodeTreeValidationTest, NoChildren) {
  SNodeTree tree;
  tree.root().pointer(i, 4);
  EXPECT_THAT(tree.Finalize().message(), HasSubstr("pointer has no children"));
}

TEST(SNodeTreeValidationTest, AxesAndSizesMismatch) {
  SNodeTree tree;
  tree.root().dense({i, j}, {4}).place<int32_t>("x");
  EXPECT_THAT(tree.Finalize().message(), HasSubstr("2 axes but 1 sizes"));
}

TEST(SNodeTreeValidationTest, AxisOutOfRange) {
  SNodeTree tree;
  tree.root().dense(Axis(12), 4).place<int32_t>("x");
  EXPECT_THAT(tree.Finalize().message(), HasSubstr("axis 12 is outside [0, 12)"));
}

TEST(SNodeTreeValidationTest, DuplicateAxisInOneCall) {
  SNodeTree tree;
  tree.root().dense({i, i}, {4, 4}).place<int32_t>("x");
  EXPECT_THAT(tree.Finalize().message(), HasSubstr("axis 0 is given twice"));
}

TEST(SNodeTreeValidationTest, DuplicateAndEmptyPlaceNames) {
  SNodeTree tree;
  tree.root().dense(i, 4).place<int32_t>("x").place<float>("x").place<float>("");
  const std::string message(tree.Finalize().message());
  EXPECT_THAT(message, HasSubstr("place name 'x' is used twice"));
  EXPECT_THAT(message, HasSubstr("place without a name"));
}

TEST(SNodeTreeValidationTest, IndexSpaceMustFitInt32) {
  SNodeTree tree;
  tree.root().dense(i, 1 << 16).pointer(i, 1 << 16).place<int32_t>("x");
  EXPECT_THAT(tree.Finalize().message(), HasSubstr("index space of axis 0 exceeds 2^31-1"));
  SNodeTree wide;
  wide.root().dense({i, j}, {1 << 16, 1 << 16}).place<int32_t>("x");
  EXPECT_THAT(wide.Finalize().message(), HasSubstr("more than 2^31-1 cells per container"));
}

TEST(SNodeTreeValidationTest, NoChangesAfterFinalize) {
  SNodeTree tree;
  SNode& d = tree.root().dense(i, 4);
  d.place<int32_t>("x");
  ASSERT_TRUE(tree.Finalize().ok());
  d.place<int32_t>("y");
  EXPECT_THAT(tree.Finalize().message(), HasSubstr("added after Finalize()"));
}

// Several problems are all reported at once, with the SNode's path.
TEST(SNodeTreeValidationTest, ReportsEveryProblemWithPath) {
  SNodeTree tree;
  tree.root().dense(i, -1).place<int32_t>("x");
  tree.root().bitmasked(j, 4);
  const std::string message(tree.Finalize().message());
  EXPECT_THAT(message, HasSubstr("root.dense(i0:-1)"));
  EXPECT_THAT(message, HasSubstr("root.bitmasked(i1:4): bitmasked has no children"));
  EXPECT_FALSE(tree.finalized());
}

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem
