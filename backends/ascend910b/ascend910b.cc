#include "backends/ascend910b/ascend910b.h"

#include <memory>

#include "backends/ascend910b/ascend910b_policy.h"

namespace accelmem {
namespace backends {

policy::MemoryAllocatorPolicyPtr Ascend910bBackend::CreateMemoryAllocatorPolicy() const {
  if (alignment_ == AddressAlignment::kSocTable) {
    return std::make_unique<Ascend910bMemoryAllocatorPolicy>();
  }
  return Backend::CreateMemoryAllocatorPolicy();
}

int64_t Ascend910bBackend::GetMemSize(ir::MemorySpace space) const {
  switch (space) {
    case ir::MemorySpace::kVec:
      return 188416;
    case ir::MemorySpace::kMat:
      return 524288;
    case ir::MemorySpace::kLeft:
    case ir::MemorySpace::kRight:
      return 65536;
    case ir::MemorySpace::kAcc:
      return 131072;
    case ir::MemorySpace::kBias:
      return 1024;
    case ir::MemorySpace::kDDR:
      return 0;
  }
  return 0;
}

int64_t Ascend910bBackend::AccRowAlignment(ir::DType dtype) {
  return dtype == ir::DType::kINT32 ? 32 : 16;
}

std::optional<int64_t> Ascend910bBackend::TileBytes(const ir::TileType& tile) const {
  if (tile.space == ir::MemorySpace::kAcc) {
    return PaddedAccTileBytes(tile, AccRowAlignment(tile.dtype));
  }
  return Backend::TileBytes(tile);
}

BackendPtr MakeAscend910bBackend(AddressAlignment alignment) {
  return std::make_shared<Ascend910bBackend>(alignment);
}

namespace {
const BackendRegistrar kRegistrar(Ascend910bBackend::kName, [] { return MakeAscend910bBackend(); });
const BackendRegistrar kSocAlignedRegistrar(Ascend910bBackend::kSocAlignedName, [] {
  return MakeAscend910bBackend(AddressAlignment::kSocTable);
});
}  // namespace

}  // namespace backends
}  // namespace accelmem
