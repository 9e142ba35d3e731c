#include "ir/types.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/checked_math.h"

namespace accelmem {
namespace ir {

Shape StaticShape(const std::vector<int64_t>& dims) {
  Shape s;
  s.reserve(dims.size());
  for (int64_t d : dims) s.push_back(Dim::Static(d));
  return s;
}

std::optional<std::vector<int64_t>> StaticDims(const Shape& shape) {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const Dim& d : shape) {
    if (!d.is_static()) return std::nullopt;
    out.push_back(d.value);
  }
  return out;
}

std::string ShapeToString(const Shape& shape) {
  return absl::StrCat("[",
                      absl::StrJoin(shape, ", ",
                                    [](std::string* out, const Dim& d) {
                                      if (d.is_static()) {
                                        absl::StrAppend(out, d.value);
                                      } else {
                                        absl::StrAppend(out, d.symbol);
                                      }
                                    }),
                      "]");
}

const char* TileLayoutName(TileLayout layout) {
  switch (layout) {
    case TileLayout::kND:
      return "ND";
    case TileLayout::kNZ:
      return "NZ";
  }
  return "?";
}

std::optional<TileLayout> TileLayoutFromName(absl::string_view name) {
  if (name == "ND") return TileLayout::kND;
  if (name == "NZ") return TileLayout::kNZ;
  return std::nullopt;
}

TypePtr MakeTile(Shape shape, DType dtype, MemorySpace space, MemRefPtr memref,
                 std::optional<TileLayout> layout) {
  return std::make_shared<TileType>(std::move(shape), dtype, space, std::move(memref), layout);
}
TypePtr MakeTensor(Shape shape, DType dtype) {
  return std::make_shared<TensorType>(std::move(shape), dtype);
}
TypePtr MakeScalar(DType dtype) { return std::make_shared<ScalarType>(dtype); }
TypePtr MakeIndex() {
  static const TypePtr* index = new TypePtr(std::make_shared<IndexType>());
  return *index;
}
TypePtr MakeMemRefType(MemRefPtr memref) { return std::make_shared<MemRefType>(std::move(memref)); }

const TileType* AsTile(const Type* t) {
  return t != nullptr && t->kind == TypeKind::kTile ? static_cast<const TileType*>(t) : nullptr;
}
const TensorType* AsTensor(const Type* t) {
  return t != nullptr && t->kind == TypeKind::kTensor ? static_cast<const TensorType*>(t) : nullptr;
}
const ScalarType* AsScalar(const Type* t) {
  return t != nullptr && t->kind == TypeKind::kScalar ? static_cast<const ScalarType*>(t) : nullptr;
}
const MemRefType* AsMemRefType(const Type* t) {
  return t != nullptr && t->kind == TypeKind::kMemRef ? static_cast<const MemRefType*>(t) : nullptr;
}

const MemRefPtr& MemRefOf(const Type& t) {
  static const MemRefPtr* none = new MemRefPtr();
  if (const TileType* tile = AsTile(&t)) return tile->memref;
  if (const MemRefType* m = AsMemRefType(&t)) return m->memref;
  return *none;
}

std::string TypeToString(const Type& t) {
  switch (t.kind) {
    case TypeKind::kTile: {
      const auto& tile = static_cast<const TileType&>(t);
      const std::string layout =
          tile.layout ? absl::StrCat(", layout=", TileLayoutName(*tile.layout)) : "";
      if (tile.memref != nullptr) {
        return absl::StrCat("Tile[", ShapeToString(tile.shape), ", ", DTypeName(tile.dtype),
                            ", memref=", MemRefToString(*tile.memref), layout, "]");
      }
      return absl::StrCat("Tile[", ShapeToString(tile.shape), ", ", DTypeName(tile.dtype), ", ",
                          MemorySpaceName(tile.space), layout, "]");
    }
    case TypeKind::kTensor: {
      const auto& tensor = static_cast<const TensorType&>(t);
      return absl::StrCat("Tensor[", ShapeToString(tensor.shape), ", ", DTypeName(tensor.dtype),
                          "]");
    }
    case TypeKind::kScalar:
      return absl::StrCat("Scalar[", DTypeName(static_cast<const ScalarType&>(t).dtype), "]");
    case TypeKind::kIndex:
      return "Index";
    case TypeKind::kMemRef:
      return "MemRefType";
  }
  return "?";
}

bool SameType(const Type& a, const Type& b, bool with_memref, bool with_layout) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case TypeKind::kTile: {
      const auto& x = static_cast<const TileType&>(a);
      const auto& y = static_cast<const TileType&>(b);
      if (x.shape != y.shape || x.dtype != y.dtype || x.space != y.space) return false;
      if (with_layout && x.layout != y.layout) return false;
      return !with_memref || x.memref == y.memref;
    }
    case TypeKind::kTensor: {
      const auto& x = static_cast<const TensorType&>(a);
      const auto& y = static_cast<const TensorType&>(b);
      return x.shape == y.shape && x.dtype == y.dtype;
    }
    case TypeKind::kScalar:
      return static_cast<const ScalarType&>(a).dtype == static_cast<const ScalarType&>(b).dtype;
    case TypeKind::kIndex:
      return true;
    case TypeKind::kMemRef:
      return !with_memref ||
             static_cast<const MemRefType&>(a).memref == static_cast<const MemRefType&>(b).memref;
  }
  return false;
}

std::optional<int64_t> StaticElementCount(const Shape& shape) {
  int64_t n = 1;
  for (const Dim& d : shape) {
    if (!d.is_static() || d.value < 0) return std::nullopt;
    std::optional<int64_t> next = CheckedMul(n, d.value);
    if (!next) return std::nullopt;
    n = *next;
  }
  return n;
}

std::optional<int64_t> StaticTileBytes(const Shape& shape, DType dtype) {
  std::optional<int64_t> n = StaticElementCount(shape);
  if (!n) return std::nullopt;
  std::optional<int64_t> bits = CheckedMul(*n, DTypeBits(dtype));
  if (!bits) return std::nullopt;
  std::optional<int64_t> rounded = CheckedAdd(*bits, 7);
  if (!rounded) return std::nullopt;
  return *rounded / 8;
}

std::optional<int64_t> TileByteSizer::Bytes(const TileType& tile) const {
  return StaticTileBytes(tile.shape, tile.dtype);
}

const TileByteSizer& DefaultTileByteSizer() {
  static const TileByteSizer* sizer = new TileByteSizer();
  return *sizer;
}

}  // namespace ir
}  // namespace accelmem
