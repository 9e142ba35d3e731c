// Where a view's elements lie in its root: the rule init-memref plans views by and the IR
// verifier checks them by.
//
// A view's byte offset is where its first element physically lies in its root. Every tile value
// indexes into a row-major frame: a slice keeps its source's frame and adds its offsets to the
// source's origin in it, so a slice of a slice steps over the frame's rows, not over the
// intermediate slice's; a reshape starts a new frame (its own shape) at its source's first
// element; a value that shares another's MemRef (a loop's carried value and result, an if result,
// a write-into result) has that value's frame; any other value is its own frame (its shape, at
// its MemRef's offset). Example: slice [1, 8] of slice [2, 16] of a 64x64 FP32 root starts at row
// 3, column 24 of the root, byte (3 * 64 + 24) * 4 = 864.
#ifndef ACCELMEM_IR_VIEW_LAYOUT_H_
#define ACCELMEM_IR_VIEW_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/expr.h"
#include "ir/types.h"

namespace accelmem {
namespace ir {

struct ViewFrame {
  std::vector<int64_t> dims;    // the row-major array the value indexes into
  std::vector<int64_t> origin;  // the value's first element in it (same rank as dims)
  int64_t base = 0;             // byte offset of the frame's element 0 in the root
};

// The frame of a tile that is not a view, living at byte `offset` of its root; nullopt for a
// non-static shape.
std::optional<ViewFrame> OwnFrame(const TileType& tile, int64_t offset);

// The byte offset in the root of the first element of a value with frame `frame` and element
// type `dtype`; InvalidArgument when it overflows int64 or a packed (4-bit) origin is not
// byte-aligned.
absl::StatusOr<int64_t> FrameByteOffset(const ViewFrame& frame, DType dtype);

// The frame of the result of the view op `call` (tile.slice or tile.reshape) of a source with
// frame `source`, whose result type is `result`. InvalidArgument for a non-static origin or
// shape, a rank that differs from the source frame's, or overflow.
absl::StatusOr<ViewFrame> ApplyView(const ViewFrame& source, DType dtype, const Call& call,
                                    const TileType& result);

// True if a value of `shape` at `frame` occupies one contiguous run of row-major elements: past
// its leading extent-1 dimensions, every dimension but the first must span the whole frame.
bool IsContiguous(const ViewFrame& frame, const std::vector<int64_t>& shape);

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_VIEW_LAYOUT_H_
