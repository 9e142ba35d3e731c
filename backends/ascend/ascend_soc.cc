#include "backends/ascend/ascend_soc.h"

namespace accelmem {
namespace backends {
namespace {

using ir::MemorySpace;

static_assert(static_cast<int>(MemorySpace::kDDR) == 0 &&
                  static_cast<int>(MemorySpace::kVec) == 1 &&
                  static_cast<int>(MemorySpace::kMat) == 2 &&
                  static_cast<int>(MemorySpace::kLeft) == 3 &&
                  static_cast<int>(MemorySpace::kRight) == 4 &&
                  static_cast<int>(MemorySpace::kAcc) == 5 &&
                  static_cast<int>(MemorySpace::kBias) == 6 && ir::kNumMemorySpaces == 7,
              "OnChip() lists the spaces in the order of ir::MemorySpace");

// Bytes per on-chip space; DDR gets 0 (capacity unknown, no alignment).
constexpr SpaceBytes OnChip(int64_t vec, int64_t mat, int64_t left, int64_t right, int64_t acc,
                            int64_t bias) {
  return {0, vec, mat, left, right, acc, bias};
}

constexpr policy::AlignmentTable OnChipAlignment(uint64_t vec, uint64_t mat, uint64_t left,
                                                 uint64_t right, uint64_t acc, uint64_t bias) {
  return {0, vec, mat, left, right, acc, bias};
}

// Spaces where tiles of different layouts must not share bytes.
constexpr std::array<bool, ir::kNumMemorySpaces> kNoLayoutSeparation = {};
constexpr std::array<bool, ir::kNumMemorySpaces> kVecLayoutSeparation = {false, true};

constexpr AscendSoc kSocs[] = {
    {
        /*name=*/"ascend910b",
        /*soc_aligned_name=*/"ascend910b-soc-aligned",
        /*capacity=*/
        OnChip(/*vec=*/188416, /*mat=*/524288, /*left=*/65536, /*right=*/65536, /*acc=*/131072,
               /*bias=*/1024),
        /*alignment=*/
        OnChipAlignment(/*vec=*/128, /*mat=*/128, /*left=*/64, /*right=*/64, /*acc=*/128,
                        /*bias=*/64),
        /*acc_row_alignment_int32=*/32,
        /*acc_row_alignment=*/16,
        /*separate_layouts=*/kNoLayoutSeparation,
    },
    {
        /*name=*/"ascend950",
        /*soc_aligned_name=*/"ascend950-soc-aligned",
        /*capacity=*/
        OnChip(/*vec=*/245760, /*mat=*/524288, /*left=*/65536, /*right=*/65536, /*acc=*/262144,
               /*bias=*/4096),
        /*alignment=*/
        OnChipAlignment(/*vec=*/128, /*mat=*/128, /*left=*/64, /*right=*/64, /*acc=*/128,
                        /*bias=*/64),
        /*acc_row_alignment_int32=*/16,
        /*acc_row_alignment=*/16,
        /*separate_layouts=*/kVecLayoutSeparation,
    },
};

}  // namespace

int64_t AscendSoc::MemSize(ir::MemorySpace space) const {
  const int i = static_cast<int>(space);
  return i >= 0 && i < ir::kNumMemorySpaces ? capacity[i] : 0;
}

int64_t AscendSoc::AccRowAlignment(ir::DType dtype) const {
  return dtype == ir::DType::kINT32 ? acc_row_alignment_int32 : acc_row_alignment;
}

bool AscendSoc::SeparatesLayouts(ir::MemorySpace space) const {
  const int i = static_cast<int>(space);
  return i >= 0 && i < ir::kNumMemorySpaces && separate_layouts[i];
}

absl::Span<const AscendSoc> AscendSocs() { return kSocs; }

const AscendSoc& Ascend910b() { return kSocs[0]; }

const AscendSoc& Ascend950() { return kSocs[1]; }

}  // namespace backends
}  // namespace accelmem
