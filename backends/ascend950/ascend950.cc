#include "backends/ascend950/ascend950.h"

#include <memory>

#include "backends/ascend950/ascend950_policy.h"

namespace accelmem {
namespace backends {

policy::MemoryAllocatorPolicyPtr Ascend950Backend::CreateMemoryAllocatorPolicy() const {
  if (alignment_ == AddressAlignment::kSocTable) {
    return std::make_unique<Ascend950MemoryAllocatorPolicy>();
  }
  return Backend::CreateMemoryAllocatorPolicy();
}

int64_t Ascend950Backend::GetMemSize(ir::MemorySpace space) const {
  switch (space) {
    case ir::MemorySpace::kVec:
      return 245760;
    case ir::MemorySpace::kMat:
      return 524288;
    case ir::MemorySpace::kLeft:
    case ir::MemorySpace::kRight:
      return 65536;
    case ir::MemorySpace::kAcc:
      return 262144;
    case ir::MemorySpace::kBias:
      return 4096;
    case ir::MemorySpace::kDDR:
      return 0;
  }
  return 0;
}

int64_t Ascend950Backend::AccRowAlignment(ir::DType) { return 16; }

std::optional<int64_t> Ascend950Backend::TileBytes(const ir::TileType& tile) const {
  if (tile.space == ir::MemorySpace::kAcc) {
    return PaddedAccTileBytes(tile, AccRowAlignment(tile.dtype));
  }
  return Backend::TileBytes(tile);
}

BackendPtr MakeAscend950Backend(AddressAlignment alignment) {
  return std::make_shared<Ascend950Backend>(alignment);
}

namespace {
const BackendRegistrar kRegistrar(Ascend950Backend::kName, [] { return MakeAscend950Backend(); });
const BackendRegistrar kSocAlignedRegistrar(Ascend950Backend::kSocAlignedName, [] {
  return MakeAscend950Backend(AddressAlignment::kSocTable);
});
}  // namespace

}  // namespace backends
}  // namespace accelmem
