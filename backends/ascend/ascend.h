// The Ascend backends: one Backend class driven by a row of the SoC table (ascend_soc.h) and an
// address-alignment mode.
//
// Linking this target registers two backends per row in BackendRegistry::Global(): `name`
// ("ascend910b", "ascend950": 32-byte alignment in every space, the default policy, as the
// upstream compiler aligns on these SoCs) and `soc_aligned_name` ("ascend910b-soc-aligned",
// "ascend950-soc-aligned": AscendMemoryAllocatorPolicy with the SoC's alignment table). Both
// have the row's capacities and pad the row count of Acc tiles as the row says.
#ifndef ACCELMEM_BACKENDS_ASCEND_ASCEND_H_
#define ACCELMEM_BACKENDS_ASCEND_ASCEND_H_

#include <cstdint>
#include <optional>
#include <string>

#include "backends/ascend/ascend_soc.h"
#include "backends/backend.h"
#include "ir/memory_space.h"
#include "ir/types.h"
#include "policy/memory_allocator_policy.h"

namespace accelmem {
namespace backends {

// How a SoC backend aligns buffer addresses: 32 bytes in every space (what the upstream
// compiler does on the Ascend SoCs, so programs that fit there fit here), or the SoC's own
// per-space alignment table (stricter; some programs that fit upstream no longer fit).
enum class AddressAlignment { kUniform32, kSocTable };

// The Acc (L0C) byte size with row padding: for rank >= 2, the row count (the
// penultimate dimension) is rounded up to `m_alignment`, then bytes = ceil(M_pad * N *
// prod(batch dims) * bits / 8). Rank < 2 tiles are not padded. nullopt for a dynamic shape.
std::optional<int64_t> PaddedAccTileBytes(const ir::TileType& tile, int64_t m_alignment);

class AscendBackend final : public Backend {
 public:
  // Keeps a copy of `soc`.
  explicit AscendBackend(const AscendSoc& soc,
                         AddressAlignment alignment = AddressAlignment::kUniform32)
      : soc_(soc), alignment_(alignment) {}
  // soc().name, or soc().soc_aligned_name with AddressAlignment::kSocTable.
  std::string Name() const override;
  // The default policy (32 bytes everywhere); with AddressAlignment::kSocTable,
  // AscendMemoryAllocatorPolicy (the SoC's table).
  policy::MemoryAllocatorPolicyPtr CreateMemoryAllocatorPolicy() const override;
  int64_t GetMemSize(ir::MemorySpace space) const override;
  // Acc tiles with their rows padded to soc().AccRowAlignment(dtype); the plain rule elsewhere.
  std::optional<int64_t> TileBytes(const ir::TileType& tile) const override;
  // The row's separate_layouts: Vec on the 950, nothing on the 910B.
  bool SeparatesLayouts(ir::MemorySpace space) const override;

  const AscendSoc& soc() const { return soc_; }
  AddressAlignment alignment() const { return alignment_; }

 private:
  AscendSoc soc_;
  AddressAlignment alignment_;
};

BackendPtr MakeAscendBackend(const AscendSoc& soc,
                             AddressAlignment alignment = AddressAlignment::kUniform32);

}  // namespace backends
}  // namespace accelmem

#endif  // ACCELMEM_BACKENDS_ASCEND_ASCEND_H_
