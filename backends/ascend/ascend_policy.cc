#include "backends/ascend/ascend_policy.h"

namespace accelmem {
namespace backends {

AscendMemoryAllocatorPolicy::AscendMemoryAllocatorPolicy(const AscendSoc& soc)
    : AlignedMemoryAllocatorPolicy(soc.alignment) {}

}  // namespace backends
}  // namespace accelmem
