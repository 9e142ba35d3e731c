// The Ascend 910B (A2/A3) backend (1 die, 24 AIC + 48 AIV clusters): capacities, Acc row
// padding and its allocator policy.
//
// Capacities in bytes (the SoC descriptor of the upstream PyPTO compiler,
// src/backend/common/soc.cpp, Create910BSoC):
// Vec 188416 (184 KiB safe of 192 KiB physical: PTO-ISA corrupts the top ~8 KiB, pypto #1804 and
// pto-isa#170), Mat 524288, Left 65536, Right 65536, Acc 131072 (128 KiB), Bias 1024 (since pypto
// #2306); DDR unknown (0, unchecked).
// Acc tiles pad their row count (the penultimate dimension) to 32 for INT32 accumulators, else 16
// (pypto backend_910b_handler.h GetL0cMAlignment). Linking this target registers the backend as
// "ascend910b" in BackendRegistry::Global().
#ifndef ACCELMEM_BACKENDS_ASCEND910B_ASCEND910B_H_
#define ACCELMEM_BACKENDS_ASCEND910B_ASCEND910B_H_

#include <cstdint>
#include <optional>
#include <string>

#include "backends/backend.h"
#include "ir/dtype.h"
#include "ir/memory_space.h"
#include "ir/types.h"
#include "policy/memory_allocator_policy.h"

namespace accelmem {
namespace backends {

class Ascend910bBackend final : public Backend {
 public:
  static constexpr const char* kName = "ascend910b";
  // The same SoC with the SoC's per-space alignment table instead of 32 bytes everywhere.
  static constexpr const char* kSocAlignedName = "ascend910b-soc-aligned";
  explicit Ascend910bBackend(AddressAlignment alignment = AddressAlignment::kUniform32)
      : alignment_(alignment) {}
  std::string Name() const override {
    return alignment_ == AddressAlignment::kUniform32 ? kName : kSocAlignedName;
  }
  // 32-byte alignment in every space (the default policy), as the upstream compiler aligns on
  // this SoC; with AddressAlignment::kSocTable, Ascend910bMemoryAllocatorPolicy (the SoC table).
  policy::MemoryAllocatorPolicyPtr CreateMemoryAllocatorPolicy() const override;
  int64_t GetMemSize(ir::MemorySpace space) const override;
  std::optional<int64_t> TileBytes(const ir::TileType& tile) const override;
  // Row alignment of Acc (L0C) tiles of element type `dtype`.
  static int64_t AccRowAlignment(ir::DType dtype);

 private:
  AddressAlignment alignment_;
};

BackendPtr MakeAscend910bBackend(AddressAlignment alignment = AddressAlignment::kUniform32);

}  // namespace backends
}  // namespace accelmem

#endif  // ACCELMEM_BACKENDS_ASCEND910B_ASCEND910B_H_
