#include "ir/view_layout.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "ir/expr.h"
#include "ir/types.h"

namespace accelmem {
namespace ir {
namespace {

ExprPtr Ints(const std::vector<int64_t>& v) {
  std::vector<ExprPtr> items;
  for (int64_t x : v) items.push_back(MakeInt(x));
  return MakeList(std::move(items));
}

CallPtr Slice(const std::vector<int64_t>& shape, const std::vector<int64_t>& origin) {
  return MakeCall("tile.slice", {MakeInt(0), Ints(shape), Ints(origin)});
}

const TileType& Tile(const std::vector<int64_t>& shape, DType dtype) {
  static std::vector<TypePtr>* keep = new std::vector<TypePtr>();
  keep->push_back(MakeTile(StaticShape(shape), dtype, MemorySpace::kVec));
  return *AsTile(keep->back());
}

// A slice of a slice steps over the root's rows: [1, 8] of [2, 16] of 64x64 FP32 is at 864.
TEST(ViewLayoutTest, SliceOfSliceUsesRootRowStride) {
  ViewFrame root = *OwnFrame(Tile({64, 64}, DType::kFP32), 0);
  absl::StatusOr<ViewFrame> s =
      ApplyView(root, DType::kFP32, *Slice({8, 32}, {2, 16}), Tile({8, 32}, DType::kFP32));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*FrameByteOffset(*s, DType::kFP32), (2 * 64 + 16) * 4);
  absl::StatusOr<ViewFrame> t =
      ApplyView(*s, DType::kFP32, *Slice({4, 16}, {1, 8}), Tile({4, 16}, DType::kFP32));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*FrameByteOffset(*t, DType::kFP32), 864);
}

// A reshape starts a new frame at its source's first element; slices of it use its shape.
TEST(ViewLayoutTest, ReshapeStartsNewFrame) {
  ViewFrame root = *OwnFrame(Tile({8, 16}, DType::kFP32), 64);
  ViewFrame rows =
      *ApplyView(root, DType::kFP32, *Slice({4, 16}, {2, 0}), Tile({4, 16}, DType::kFP32));
  EXPECT_EQ(*FrameByteOffset(rows, DType::kFP32), 64 + 2 * 16 * 4);
  absl::StatusOr<ViewFrame> r =
      ApplyView(rows, DType::kFP32, *MakeCall("tile.reshape", {}), Tile({8, 8}, DType::kFP32));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->dims, (std::vector<int64_t>{8, 8}));
  ViewFrame t = *ApplyView(*r, DType::kFP32, *Slice({2, 4}, {1, 4}), Tile({2, 4}, DType::kFP32));
  EXPECT_EQ(*FrameByteOffset(t, DType::kFP32), 64 + 128 + (1 * 8 + 4) * 4);
}

// Offsets near 2^63 and unaligned 4-bit origins are errors, never wrapped values.
TEST(ViewLayoutTest, OverflowAndPackedOriginsAreErrors) {
  ViewFrame big = *OwnFrame(Tile({4, 4}, DType::kFP32), INT64_MAX - 8);
  ViewFrame moved =
      *ApplyView(big, DType::kFP32, *Slice({1, 1}, {3, 3}), Tile({1, 1}, DType::kFP32));
  EXPECT_FALSE(FrameByteOffset(moved, DType::kFP32).ok());
  ViewFrame packed = *OwnFrame(Tile({4, 4}, DType::kINT4), 0);
  ViewFrame odd =
      *ApplyView(packed, DType::kINT4, *Slice({1, 1}, {0, 1}), Tile({1, 1}, DType::kINT4));
  absl::StatusOr<int64_t> at = FrameByteOffset(odd, DType::kINT4);
  ASSERT_FALSE(at.ok());
  EXPECT_EQ(at.status().message(), "a packed 4-bit slice origin must be byte-aligned");
  EXPECT_FALSE(ApplyView(packed, DType::kINT4, *Slice({1}, {0}), Tile({1}, DType::kINT4)).ok());
}

// Whole rows, a part of one row and single elements are contiguous; a column block is not.
TEST(ViewLayoutTest, Contiguity) {
  ViewFrame root = *OwnFrame(Tile({8, 16}, DType::kFP32), 0);
  EXPECT_TRUE(IsContiguous(root, {8, 16}));
  EXPECT_TRUE(IsContiguous(root, {3, 16}));
  EXPECT_TRUE(IsContiguous(root, {1, 5}));
  EXPECT_TRUE(IsContiguous(root, {1, 1}));
  EXPECT_FALSE(IsContiguous(root, {2, 8}));
  EXPECT_FALSE(IsContiguous(root, {8, 1}));
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
