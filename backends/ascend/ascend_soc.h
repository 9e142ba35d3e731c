// The Ascend SoC table: one row per SoC with everything the memory pipeline needs to know about
// it (capacities, the SoC's per-space address alignment, the row padding of Acc tiles and the
// names its backends register under). //backends/ascend:ascend builds a backend from a row.
//
// The figures come from the SoC descriptors of the upstream PyPTO compiler
// (https://github.com/hw-native-sys/pypto, src/backend/common/soc.cpp: Create910BSoC,
// Create950SoC) and its backend handlers:
//
// - 910B (A2/A3; 1 die, 24 AIC + 48 AIV): Vec 188416, Mat 524288, Left 65536, Right 65536,
//   Acc 131072, Bias 1024 bytes; Acc rows padded to 32 for INT32, 16 for other dtypes.
// - 950 (A5; 2 dies x 18 clusters of 1 AIC + 2 AIV): Vec 245760, Mat 524288, Left 65536,
//   Right 65536, Acc 262144, Bias 4096 bytes; Acc rows padded to 16 for every dtype.
//
// Vec is the safe part of the unified buffer: 8 KiB below the physical 192 KiB (910B) and 248 KiB
// (950), whose top PTO-ISA kernels overwrite (pypto #1804, pto-isa #170). Bias on the 910B is
// 1 KiB since pypto #2306. DDR is unknown (0, the capacity check is skipped). The 950's
// LeftScale/RightScale buffers are not memory spaces of accelmem's IR.
//
// Acc (L0C) tiles pad their row count (the penultimate dimension): to 32 for INT32 and 16 for
// other accumulators on the 910B (pypto backend_910b_handler.h, GetL0cMAlignment), to 16 for every
// dtype on the 950 (backend_handler.h, GetL0FractalAlignment).
//
// Storage layouts: on the 950 (A5), Vec tiles in ND and NZ layout must never share an address,
// even with disjoint lifetimes (pypto #2100 "Vec-only ND/NZ reuse gate", #2509 / #2517: the
// vector unit converts ND to NZ before a V->C push, and a reused buffer interpreted in the other
// layout gave silent numerical failures). Only Vec: the other spaces hold one layout each on
// that path. The 910B (A2/A3) has no such rule (#942: its V->C path stays ND), so it separates
// nothing.
//
// Both SoCs align addresses per space to 128 bytes in Vec (UB), Mat (L1) and Acc (L0C) and to 64
// in Left (L0A), Right (L0B) and Bias. The upstream allocator does not apply that table and
// aligns every space to 32 bytes; each SoC therefore registers two backends: `name` (32 bytes
// everywhere, as upstream) and `soc_aligned_name` (the SoC table, stricter).
#ifndef ACCELMEM_BACKENDS_ASCEND_ASCEND_SOC_H_
#define ACCELMEM_BACKENDS_ASCEND_ASCEND_SOC_H_

#include <array>
#include <cstdint>

#include "absl/types/span.h"
#include "ir/dtype.h"
#include "ir/memory_space.h"
#include "policy/aligned_memory_allocator_policy.h"

namespace accelmem {
namespace backends {

// Bytes per memory space, indexed by static_cast<int>(ir::MemorySpace).
using SpaceBytes = std::array<int64_t, ir::kNumMemorySpaces>;

// One row of the SoC table.
struct AscendSoc {
  // Backend name with 32-byte alignment in every space, e.g. "ascend910b".
  const char* name;
  // Backend name with the SoC's alignment table, e.g. "ascend910b-soc-aligned".
  const char* soc_aligned_name;
  // Capacity per space in bytes; 0 = unknown (unchecked).
  SpaceBytes capacity;
  // The SoC's address alignment per space in bytes (DDR: none, it is never planned).
  policy::AlignmentTable alignment;
  // Row padding of Acc tiles of INT32 accumulators, and of every other dtype.
  int64_t acc_row_alignment_int32;
  int64_t acc_row_alignment;
  // Per space: whether tiles of different storage layouts (ND, NZ) must never share bytes.
  std::array<bool, ir::kNumMemorySpaces> separate_layouts;

  // Capacity of `space` in bytes (0 when unknown).
  int64_t MemSize(ir::MemorySpace space) const;
  // Row alignment of Acc tiles of element type `dtype`.
  int64_t AccRowAlignment(ir::DType dtype) const;
  // separate_layouts of `space` (false outside the table).
  bool SeparatesLayouts(ir::MemorySpace space) const;
};

// Every row, 910B first.
absl::Span<const AscendSoc> AscendSocs();
const AscendSoc& Ascend910b();
const AscendSoc& Ascend950();

}  // namespace backends
}  // namespace accelmem

#endif  // ACCELMEM_BACKENDS_ASCEND_ASCEND_SOC_H_
