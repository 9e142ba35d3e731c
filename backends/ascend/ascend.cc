#include "backends/ascend/ascend.h"

#include <memory>
#include <optional>
#include <vector>

#include "backends/ascend/ascend_policy.h"
#include "ir/checked_math.h"
#include "ir/types.h"

namespace accelmem {
namespace backends {

std::optional<int64_t> PaddedAccTileBytes(const ir::TileType& tile, int64_t m_alignment) {
  std::optional<std::vector<int64_t>> dims = ir::StaticDims(tile.shape);
  if (!dims) return std::nullopt;
  if (dims->size() < 2 || m_alignment <= 1) return ir::StaticTileBytes(tile.shape, tile.dtype);
  std::vector<int64_t> padded = *dims;
  int64_t& m = padded[padded.size() - 2];
  std::optional<int64_t> rows = ir::CheckedAlignUp(m, m_alignment);
  if (!rows) return std::nullopt;
  m = *rows;
  return ir::StaticTileBytes(ir::StaticShape(padded), tile.dtype);
}

std::string AscendBackend::Name() const {
  return alignment_ == AddressAlignment::kUniform32 ? soc_.name : soc_.soc_aligned_name;
}

policy::MemoryAllocatorPolicyPtr AscendBackend::CreateMemoryAllocatorPolicy() const {
  if (alignment_ == AddressAlignment::kSocTable) {
    return std::make_unique<AscendMemoryAllocatorPolicy>(soc_);
  }
  return Backend::CreateMemoryAllocatorPolicy();
}

int64_t AscendBackend::GetMemSize(ir::MemorySpace space) const { return soc_.MemSize(space); }

std::optional<int64_t> AscendBackend::TileBytes(const ir::TileType& tile) const {
  if (tile.space == ir::MemorySpace::kAcc) {
    return PaddedAccTileBytes(tile, soc_.AccRowAlignment(tile.dtype));
  }
  return Backend::TileBytes(tile);
}

bool AscendBackend::SeparatesLayouts(ir::MemorySpace space) const {
  return soc_.SeparatesLayouts(space);
}

BackendPtr MakeAscendBackend(const AscendSoc& soc, AddressAlignment alignment) {
  return std::make_shared<AscendBackend>(soc, alignment);
}

namespace {

// Both backends of every row of the table.
[[maybe_unused]] const bool kRegistered = [] {
  for (const AscendSoc& soc : AscendSocs()) {
    BackendRegistrar(soc.name, [&soc] { return MakeAscendBackend(soc); });
    BackendRegistrar(soc.soc_aligned_name,
                     [&soc] { return MakeAscendBackend(soc, AddressAlignment::kSocTable); });
  }
  return true;
}();

}  // namespace

}  // namespace backends
}  // namespace accelmem
