// Element data types of the tile IR: names, bit widths, parsing.
//
// Why: every byte-size computation (tile sizes, slice offsets, memory planning) starts from
// the bit width of the element type, and the text format spells dtypes as bare words.
#ifndef ACCELMEM_IR_DTYPE_H_
#define ACCELMEM_IR_DTYPE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace accelmem {
namespace ir {

// The contract's ten dtypes plus BOOL (8-bit storage), used for branch conditions.
enum class DType : uint8_t {
  kFP32,
  kFP16,
  kBF16,
  kINT8,
  kUINT8,
  kINT16,
  kINT32,
  kINT64,
  kINT4,
  kFP4,
  kBOOL,
};

inline constexpr int kNumDTypes = 11;

// Storage bits of one element (4-bit types pack two per byte).
int DTypeBits(DType dtype);
// Canonical spelling, e.g. "FP32".
absl::string_view DTypeName(DType dtype);
// Parses a canonical spelling; an unknown word is InvalidArgument "unknown dtype 'X'".
absl::StatusOr<DType> DTypeFromName(absl::string_view name);
bool IsFloatDType(DType dtype);
bool IsIntDType(DType dtype);  // signed or unsigned integers (not BOOL)

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_DTYPE_H_
