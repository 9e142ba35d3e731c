// Overflow-checked int64 arithmetic for sizes, offsets and addresses.
//
// A memory plan computed with a wrapped sum is wrong on hardware without any error, so every
// size, offset and address the IR and the passes compute goes through these helpers: the
// Checked* forms return nullopt on overflow (the caller reports an error naming the value), the
// Saturating* forms clamp to the int64 range (for comparisons that only need to stay ordered,
// e.g. "does this range end past the root").
#ifndef ACCELMEM_IR_CHECKED_MATH_H_
#define ACCELMEM_IR_CHECKED_MATH_H_

#include <cstdint>
#include <limits>
#include <optional>

namespace accelmem {
namespace ir {

inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The smallest multiple of `alignment` (>= 1) that is >= `value` (>= 0), or nullopt if it does
// not fit in int64.
inline std::optional<int64_t> CheckedAlignUp(int64_t value, int64_t alignment) {
  if (value < 0 || alignment < 1) return std::nullopt;
  const int64_t rem = value % alignment;
  if (rem == 0) return value;
  return CheckedAdd(value, alignment - rem);
}

inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

inline int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                            : std::numeric_limits<int64_t>::max();
}

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_CHECKED_MATH_H_
