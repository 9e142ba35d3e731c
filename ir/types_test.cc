#include "ir/types.h"

#include "gtest/gtest.h"

namespace accelmem {
namespace ir {
namespace {

// The byte rule: ceil(prod(shape) * bits / 8); 4-bit types pack two per byte.
TEST(TypesTest, StaticTileBytes) {
  EXPECT_EQ(StaticTileBytes(StaticShape({64, 64}), DType::kFP32), 16384);
  EXPECT_EQ(StaticTileBytes(StaticShape({64, 64}), DType::kFP16), 8192);
  EXPECT_EQ(StaticTileBytes(StaticShape({3, 3}), DType::kINT4), 5);  // 9 nibbles -> 5 bytes
  EXPECT_EQ(StaticTileBytes(StaticShape({16}), DType::kFP4), 8);
  EXPECT_EQ(StaticTileBytes({Dim::Symbol("n"), Dim::Static(4)}, DType::kFP32), std::nullopt);
  EXPECT_EQ(StaticTileBytes(StaticShape({1LL << 40, 1LL << 40}), DType::kFP32), std::nullopt);
}

// A backend can override the size rule (e.g. pad Acc rows to 16).
TEST(TypesTest, ByteSizerCanBeOverridden) {
  struct PadRows : TileByteSizer {
    std::optional<int64_t> Bytes(const TileType& t) const override {
      if (t.space != MemorySpace::kAcc) return TileByteSizer::Bytes(t);
      auto dims = StaticDims(t.shape);
      return ((dims->at(0) + 15) / 16 * 16) * dims->at(1) * DTypeBits(t.dtype) / 8;
    }
  } pad;
  TileType acc(StaticShape({10, 16}), DType::kFP32, MemorySpace::kAcc);
  TileType vec(StaticShape({10, 16}), DType::kFP32, MemorySpace::kVec);
  EXPECT_EQ(pad.Bytes(acc), 16 * 16 * 4);
  EXPECT_EQ(pad.Bytes(vec), 10 * 16 * 4);
  EXPECT_EQ(DefaultTileByteSizer().Bytes(acc), 10 * 16 * 4);
}

// Text forms of every type kind, before and after planning.
TEST(TypesTest, ToString) {
  MemRefPtr root = MemRef::MakeRoot("mem_vec_0", MemorySpace::kVec, -1, 16384, 0);
  EXPECT_EQ(TypeToString(*MakeTile(StaticShape({64, 64}), DType::kFP32, MemorySpace::kVec)),
            "Tile[[64, 64], FP32, Vec]");
  EXPECT_EQ(TypeToString(*MakeTile(StaticShape({64, 64}), DType::kFP32, MemorySpace::kVec, root)),
            "Tile[[64, 64], FP32, memref=mem_vec_0]");
  EXPECT_EQ(TypeToString(*MakeTile(StaticShape({1, 64}), DType::kFP32, MemorySpace::kVec,
                                   MemRef::MakeView(root, 256, 256))),
            "Tile[[1, 64], FP32, memref=mem_vec_0+256]");
  EXPECT_EQ(TypeToString(*MakeTensor({Dim::Symbol("n"), Dim::Static(8)}, DType::kINT8)),
            "Tensor[[n, 8], INT8]");
  EXPECT_EQ(TypeToString(*MakeScalar(DType::kINT32)), "Scalar[INT32]");
  EXPECT_EQ(TypeToString(*MakeIndex()), "Index");
  EXPECT_EQ(TypeToString(*MakeMemRefType(root)), "MemRefType");
}

// SameType compares shape/dtype/space and, on request, the MemRef object.
TEST(TypesTest, SameType) {
  MemRefPtr m = MemRef::MakeRoot("mem_vec_0", MemorySpace::kVec, -1, 64, 0);
  TypePtr a = MakeTile(StaticShape({4, 4}), DType::kFP32, MemorySpace::kVec);
  TypePtr b = MakeTile(StaticShape({4, 4}), DType::kFP32, MemorySpace::kVec, m);
  TypePtr c = MakeTile(StaticShape({4, 4}), DType::kFP16, MemorySpace::kVec);
  EXPECT_TRUE(SameType(*a, *b, false));
  EXPECT_FALSE(SameType(*a, *b, true));
  EXPECT_FALSE(SameType(*a, *c, false));
  EXPECT_FALSE(SameType(*a, *MakeTensor(StaticShape({4, 4}), DType::kFP32), false));
  EXPECT_EQ(MemRefOf(*b), m);
  EXPECT_EQ(MemRefOf(*a), nullptr);
  EXPECT_EQ(AsTile(b)->WithMemRef(nullptr)->memref, nullptr);
}

// A stated layout is part of the type: printed last, compared by SameType unless the caller
// leaves it out, kept by WithMemRef.
TEST(TypesTest, Layout) {
  MemRefPtr m = MemRef::MakeRoot("mem_vec_0", MemorySpace::kVec, -1, 512, 0);
  TypePtr plain = MakeTile(StaticShape({16, 16}), DType::kFP16, MemorySpace::kVec);
  TypePtr nz =
      MakeTile(StaticShape({16, 16}), DType::kFP16, MemorySpace::kVec, nullptr, TileLayout::kNZ);
  TypePtr nd =
      MakeTile(StaticShape({16, 16}), DType::kFP16, MemorySpace::kVec, nullptr, TileLayout::kND);
  EXPECT_EQ(TypeToString(*nz), "Tile[[16, 16], FP16, Vec, layout=NZ]");
  EXPECT_EQ(TypeToString(*AsTile(nz)->WithMemRef(m)),
            "Tile[[16, 16], FP16, memref=mem_vec_0, layout=NZ]");
  EXPECT_EQ(AsTile(nz)->WithMemRef(m)->layout, TileLayout::kNZ);
  EXPECT_EQ(AsTile(nz)->WithMemRef(m)->WithMemRef(nullptr)->layout, TileLayout::kNZ);
  EXPECT_EQ(AsTile(nz)->WithLayout(std::nullopt)->layout, std::nullopt);
  EXPECT_FALSE(SameType(*nz, *nd, false));
  EXPECT_FALSE(SameType(*nz, *plain, false));  // no layout is not ND
  EXPECT_TRUE(SameType(*nz, *nd, false, /*with_layout=*/false));
  EXPECT_TRUE(SameType(*nz, *AsTile(nz)->WithMemRef(m), false));
  EXPECT_EQ(TileLayoutFromName("NZ"), TileLayout::kNZ);
  EXPECT_EQ(TileLayoutFromName("ND"), TileLayout::kND);
  EXPECT_EQ(TileLayoutFromName("nz"), std::nullopt);
  EXPECT_STREQ(TileLayoutName(TileLayout::kND), "ND");
}

}  // namespace
}  // namespace ir
}  // namespace accelmem
