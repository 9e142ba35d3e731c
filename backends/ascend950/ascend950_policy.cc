#include "backends/ascend950/ascend950_policy.h"

namespace accelmem {
namespace backends {

policy::AlignmentTable Ascend950AlignmentTable() {
  policy::AlignmentTable t{};
  auto set = [&t](ir::MemorySpace s, uint64_t a) { t[static_cast<int>(s)] = a; };
  set(ir::MemorySpace::kVec, 128);
  set(ir::MemorySpace::kMat, 128);
  set(ir::MemorySpace::kLeft, 64);
  set(ir::MemorySpace::kRight, 64);
  set(ir::MemorySpace::kAcc, 128);
  set(ir::MemorySpace::kBias, 64);
  return t;
}

}  // namespace backends
}  // namespace accelmem
