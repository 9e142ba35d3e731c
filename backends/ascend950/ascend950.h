// The Ascend 950 (A5) backend (2 dies x 18 mix clusters of 1 AIC + 2 AIV): capacities, Acc row
// padding and its allocator policy.
//
// Capacities in bytes (the SoC descriptor of the upstream PyPTO compiler,
// src/backend/common/soc.cpp, Create950SoC):
// Vec 245760 (240 KiB safe of 248 KiB physical, pypto #1804), Mat 524288, Left 65536, Right 65536,
// Acc 262144 (256 KiB), Bias 4096; DDR unknown (0, unchecked). (LeftScale/RightScale are not
// memory spaces of accelmem's IR.)
// Acc tiles pad their row count (the penultimate dimension) to 16 for every dtype (pypto
// backend_handler.h GetL0FractalAlignment). Linking this target registers the backend as
// "ascend950" in BackendRegistry::Global().
#ifndef ACCELMEM_BACKENDS_ASCEND950_ASCEND950_H_
#define ACCELMEM_BACKENDS_ASCEND950_ASCEND950_H_

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

class Ascend950Backend final : public Backend {
 public:
  static constexpr const char* kName = "ascend950";
  // The same SoC with the SoC's per-space alignment table instead of 32 bytes everywhere.
  static constexpr const char* kSocAlignedName = "ascend950-soc-aligned";
  explicit Ascend950Backend(AddressAlignment alignment = AddressAlignment::kUniform32)
      : alignment_(alignment) {}
  std::string Name() const override {
    return alignment_ == AddressAlignment::kUniform32 ? kName : kSocAlignedName;
  }
  // 32-byte alignment in every space (the default policy), as the upstream compiler aligns on
  // this SoC; with AddressAlignment::kSocTable, Ascend950MemoryAllocatorPolicy (the SoC table).
  policy::MemoryAllocatorPolicyPtr CreateMemoryAllocatorPolicy() const override;
  int64_t GetMemSize(ir::MemorySpace space) const override;
  std::optional<int64_t> TileBytes(const ir::TileType& tile) const override;
  // Row alignment of Acc (L0C) tiles of element type `dtype`.
  static int64_t AccRowAlignment(ir::DType dtype);

 private:
  AddressAlignment alignment_;
};

BackendPtr MakeAscend950Backend(AddressAlignment alignment = AddressAlignment::kUniform32);

}  // namespace backends
}  // namespace accelmem

#endif  // ACCELMEM_BACKENDS_ASCEND950_ASCEND950_H_
