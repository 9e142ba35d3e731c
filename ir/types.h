// Types of tile-IR values: Tile, Tensor, Scalar, Index, MemRefType.
//
// A TileType lives in an on-chip memory space and, once InitMemRef has run, holds the MemRef
// it occupies. A TensorType lives in DDR and never holds a MemRef. A MemRefType is the type of
// the value a `tile.alloc` defines; it holds that (root) MemRef. Types are immutable and
// shared by pointer.
//
// Byte sizes: StaticTileBytes implements the contract's rule ceil(prod(shape) * bits / 8);
// a backend that pads (Acc rows on Ascend) overrides TileByteSizer.
#ifndef ACCELMEM_IR_TYPES_H_
#define ACCELMEM_IR_TYPES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/dtype.h"
#include "ir/memory_space.h"
#include "ir/memref.h"

namespace accelmem {
namespace ir {

// One dimension of a shape: a static extent, or a symbol naming a run-time Index value.
struct Dim {
  int64_t value = 0;
  std::string symbol;  // empty for a static dimension

  static Dim Static(int64_t v) { return Dim{v, {}}; }
  static Dim Symbol(std::string s) { return Dim{0, std::move(s)}; }
  bool is_static() const { return symbol.empty(); }
  bool operator==(const Dim& o) const { return value == o.value && symbol == o.symbol; }
  bool operator!=(const Dim& o) const { return !(*this == o); }
};
using Shape = std::vector<Dim>;

Shape StaticShape(const std::vector<int64_t>& dims);
// All dimensions static? Then their values, else nullopt.
std::optional<std::vector<int64_t>> StaticDims(const Shape& shape);
// "[64, 64]" / "[n, 64]".
std::string ShapeToString(const Shape& shape);

// How a tile's elements are laid out in its buffer (upstream PyPTO's storage layout): ND is
// row-major, NZ the fractal layout of the cube unit (16x16 blocks in column-major order, each
// row-major inside). A tile type may state one or none ("no layout stated"): the IR only carries
// it; a backend may keep tiles of different layouts out of each other's bytes
// (backends/backend.h, SeparatesLayouts), since the hardware reads the same bytes differently.
enum class TileLayout : uint8_t { kND, kNZ };
inline constexpr int kNumTileLayouts = 2;

// "ND", "NZ".
const char* TileLayoutName(TileLayout layout);
// The layout named `name` ("ND", "NZ"); nullopt for any other word.
std::optional<TileLayout> TileLayoutFromName(absl::string_view name);

enum class TypeKind : uint8_t { kTile, kTensor, kScalar, kIndex, kMemRef };

class Type {
 public:
  explicit Type(TypeKind kind) : kind(kind) {}
  virtual ~Type() = default;
  const TypeKind kind;
};
using TypePtr = std::shared_ptr<const Type>;

class TileType final : public Type {
 public:
  TileType(Shape shape, DType dtype, MemorySpace space, MemRefPtr memref = nullptr,
           std::optional<TileLayout> layout = std::nullopt)
      : Type(TypeKind::kTile),
        shape(std::move(shape)),
        dtype(dtype),
        space(space),
        memref(std::move(memref)),
        layout(layout) {}
  // The same tile type holding another MemRef (or none); the layout stays.
  std::shared_ptr<const TileType> WithMemRef(MemRefPtr m) const {
    return std::make_shared<TileType>(shape, dtype, space, std::move(m), layout);
  }
  // The same tile type with another layout (or none).
  std::shared_ptr<const TileType> WithLayout(std::optional<TileLayout> l) const {
    return std::make_shared<TileType>(shape, dtype, space, memref, l);
  }

  const Shape shape;
  const DType dtype;
  // The declared space. When a MemRef is present the verifier requires memref->space() == space.
  const MemorySpace space;
  const MemRefPtr memref;  // null before InitMemRef
  // The stated storage layout; nullopt when the text states none (`layout=` absent).
  const std::optional<TileLayout> layout;
};

class TensorType final : public Type {
 public:
  TensorType(Shape shape, DType dtype)
      : Type(TypeKind::kTensor), shape(std::move(shape)), dtype(dtype) {}
  const Shape shape;
  const DType dtype;
};

class ScalarType final : public Type {
 public:
  explicit ScalarType(DType dtype) : Type(TypeKind::kScalar), dtype(dtype) {}
  const DType dtype;
};

class IndexType final : public Type {
 public:
  IndexType() : Type(TypeKind::kIndex) {}
};

// Type of the value a `tile.alloc` defines; `memref` is the root it allocates.
class MemRefType final : public Type {
 public:
  explicit MemRefType(MemRefPtr memref) : Type(TypeKind::kMemRef), memref(std::move(memref)) {}
  const MemRefPtr memref;
};

// Convenience constructors.
TypePtr MakeTile(Shape shape, DType dtype, MemorySpace space, MemRefPtr memref = nullptr,
                 std::optional<TileLayout> layout = std::nullopt);
TypePtr MakeTensor(Shape shape, DType dtype);
TypePtr MakeScalar(DType dtype);
TypePtr MakeIndex();  // a shared singleton
TypePtr MakeMemRefType(MemRefPtr memref);

// Checked down-casts: null when the kind differs.
const TileType* AsTile(const Type* t);
const TensorType* AsTensor(const Type* t);
const ScalarType* AsScalar(const Type* t);
const MemRefType* AsMemRefType(const Type* t);
inline const TileType* AsTile(const TypePtr& t) { return AsTile(t.get()); }
inline const TensorType* AsTensor(const TypePtr& t) { return AsTensor(t.get()); }
inline const ScalarType* AsScalar(const TypePtr& t) { return AsScalar(t.get()); }
inline const MemRefType* AsMemRefType(const TypePtr& t) { return AsMemRefType(t.get()); }

// The MemRef a type holds (Tile or MemRefType), else null.
const MemRefPtr& MemRefOf(const Type& t);

// The text form of the contract, e.g. "Tile[[64, 64], FP32, Vec]",
// "Tile[[64, 64], FP32, memref=mem_vec_0+256]", "Tile[[16, 16], FP16, Vec, layout=NZ]",
// "Tensor[[8], INT8]", "Scalar[INT32]". A layout is written only when stated, last.
std::string TypeToString(const Type& t);

// Equal kind, shape, dtype, space and, for tiles, stated layout (unless `with_layout` is false:
// an op's result rule gives no layout, so the declared type is compared without it). MemRefs are
// compared (by object) only if `with_memref`.
bool SameType(const Type& a, const Type& b, bool with_memref, bool with_layout = true);

// ceil(prod(dims) * bits / 8); nullopt if a dimension is dynamic or negative, or when the
// element count or the bit count overflows int64.
std::optional<int64_t> StaticTileBytes(const Shape& shape, DType dtype);
// prod(dims); nullopt if a dimension is dynamic or negative, or on overflow.
std::optional<int64_t> StaticElementCount(const Shape& shape);

// Byte size of a tile in its memory space. The default is StaticTileBytes; a backend subclasses
// this to pad (Ascend Acc tiles round the row count up).
class TileByteSizer {
 public:
  virtual ~TileByteSizer() = default;
  virtual std::optional<int64_t> Bytes(const TileType& tile) const;
};
const TileByteSizer& DefaultTileByteSizer();

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_TYPES_H_
