// Memory spaces of the accelerator: DDR plus the on-chip buffers.
//
// Why: the memory passes plan addresses per space, and the text spells spaces as bare words.
#ifndef ACCELMEM_IR_MEMORY_SPACE_H_
#define ACCELMEM_IR_MEMORY_SPACE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace accelmem {
namespace ir {

// DDR = off-chip global memory; Vec = UB; Mat = L1; Left = L0A; Right = L0B; Acc = L0C;
// Bias = bias table.
enum class MemorySpace : uint8_t { kDDR, kVec, kMat, kLeft, kRight, kAcc, kBias };

inline constexpr int kNumMemorySpaces = 7;

// Canonical spelling, e.g. "Vec".
absl::string_view MemorySpaceName(MemorySpace space);
// Lower-case spelling used in MemRef names, e.g. "vec" (mem_vec_0).
std::string MemorySpaceLowerName(MemorySpace space);
// Parses a canonical spelling; unknown words are InvalidArgument "unknown memory space 'X'".
absl::StatusOr<MemorySpace> MemorySpaceFromName(absl::string_view name);
// True for every space but DDR.
inline bool IsOnChip(MemorySpace space) { return space != MemorySpace::kDDR; }

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_MEMORY_SPACE_H_
