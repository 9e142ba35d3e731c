#include "backends/ascend/ascend.h"

#include <memory>

#include "backends/ascend/ascend_policy.h"

namespace accelmem {
namespace backends {

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
