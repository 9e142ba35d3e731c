#include "ir/view_layout.h"

#include <utility>

#include "absl/status/status.h"
#include "ir/checked_math.h"

namespace accelmem {
namespace ir {

std::optional<ViewFrame> OwnFrame(const TileType& tile, int64_t offset) {
  std::optional<std::vector<int64_t>> dims = StaticDims(tile.shape);
  if (!dims) return std::nullopt;
  ViewFrame f;
  f.origin.assign(dims->size(), 0);
  f.dims = *std::move(dims);
  f.base = offset;
  return f;
}

absl::StatusOr<int64_t> FrameByteOffset(const ViewFrame& frame, DType dtype) {
  const absl::Status overflow =
      absl::InvalidArgumentError("the view's byte offset overflows a 64-bit integer");
  int64_t linear = 0;
  for (size_t i = 0; i < frame.origin.size() && i < frame.dims.size(); ++i) {
    std::optional<int64_t> scaled = CheckedMul(linear, frame.dims[i]);
    std::optional<int64_t> next = scaled ? CheckedAdd(*scaled, frame.origin[i]) : std::nullopt;
    if (!next) return overflow;
    linear = *next;
  }
  std::optional<int64_t> bits = CheckedMul(linear, DTypeBits(dtype));
  if (!bits) return overflow;
  if (*bits % 8 != 0) {
    return absl::InvalidArgumentError("a packed 4-bit slice origin must be byte-aligned");
  }
  std::optional<int64_t> bytes = CheckedAdd(frame.base, *bits / 8);
  if (!bytes) return overflow;
  return *bytes;
}

absl::StatusOr<ViewFrame> ApplyView(const ViewFrame& source, DType dtype, const Call& call,
                                    const TileType& result) {
  if (call.op == "tile.reshape") {
    absl::StatusOr<int64_t> at = FrameByteOffset(source, dtype);
    if (!at.ok()) return at.status();
    std::optional<ViewFrame> f = OwnFrame(result, *at);
    if (!f) return absl::InvalidArgumentError("a reshape needs a static shape to be planned");
    return *std::move(f);
  }
  std::vector<int64_t> offsets;
  if (call.args.size() < 3 || !GetIntList(*call.args[2], &offsets) ||
      offsets.size() != source.origin.size()) {
    return absl::InvalidArgumentError("a tile.slice needs a static origin to be planned");
  }
  ViewFrame f = source;
  for (size_t i = 0; i < offsets.size(); ++i) {
    std::optional<int64_t> o = CheckedAdd(f.origin[i], offsets[i]);
    if (!o) return absl::InvalidArgumentError("the view's byte offset overflows a 64-bit integer");
    f.origin[i] = *o;
  }
  return f;
}

bool IsContiguous(const ViewFrame& frame, const std::vector<int64_t>& shape) {
  if (shape.size() != frame.dims.size()) return true;  // a reshape's own frame
  size_t i = 0;
  while (i < shape.size() && shape[i] == 1) ++i;
  for (size_t j = i + 1; j < shape.size(); ++j) {
    if (shape[j] != frame.dims[j]) return false;
  }
  return true;
}

}  // namespace ir
}  // namespace accelmem
